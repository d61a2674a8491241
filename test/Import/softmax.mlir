// Row softmax decomposes into max, sub, exp, sum, realdiv, all under the row hint.
// REQUIRES: torch
// RUN: %spyre-import %S/../../examples/softmax.py:build | %filecheck %s
// RUN: %spyre-import %S/../../examples/softmax.py:build | %spyre-opt | %filecheck %s

// CHECK-LABEL: func.func @main(%x: tensor<512x1024xf16> {spyre.role = "input", spyre.name = "x", spyre.dims = {{\[\["R"\], \["C"\]\]}}})
// CHECK: %[[MAX:.*]] = spyre.reduce "max" (%x) dims [1] {hints = [#spyre.hint<[[H:[0-9]+]], tiles = {R = 4}>]} : (tensor<512x1024xf16>) -> tensor<512x1xf16>
// CHECK: %[[SUB:.*]] = spyre.pointwise "sub" (%x, %[[MAX]]) {hints = [#spyre.hint<[[H]], tiles = {R = 4}>]}
// CHECK: %[[EXP:.*]] = spyre.pointwise "exp" (%[[SUB]]) {hints = [#spyre.hint<[[H]], tiles = {R = 4}>]}
// CHECK: %[[SUM:.*]] = spyre.reduce "sum" (%[[EXP]]) dims [1] {hints = [#spyre.hint<[[H]], tiles = {R = 4}>]}
// CHECK: %[[DIV:.*]] = spyre.pointwise "realdiv" (%[[EXP]], %[[SUM]]) {hints = [#spyre.hint<[[H]], tiles = {R = 4}>]} : (tensor<512x1024xf16>, tensor<512x1xf16>) -> tensor<512x1024xf16>
// CHECK: func.return %[[DIV]]
