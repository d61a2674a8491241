// The coarse-tiling seed: named dims on the arguments, both ops under the
// outer (A) and the inner (B) hint, outer id first; the module round-trips.
// REQUIRES: torch
// RUN: %spyre-import %S/../../examples/add_mul_nested.py:build | %filecheck %s
// RUN: %spyre-import %S/../../examples/add_mul_nested.py:build | %spyre-opt | %filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %a: tensor<1024x4096xf16> {spyre.role = "input", spyre.name = "a", spyre.dims = {{\[\["A"\], \["B"\]\]}}}
// CHECK-SAME: %b: tensor<1024x4096xf16> {spyre.role = "input", spyre.name = "b", spyre.dims = {{\[\["A"\], \["B"\]\]}}}
// CHECK-SAME: %c: tensor<1024x4096xf16> {spyre.role = "input", spyre.name = "c", spyre.dims = {{\[\["A"\], \["B"\]\]}}}
// CHECK-SAME: -> (tensor<1024x4096xf16> {spyre.name = "mul"})
// CHECK: %[[Y:.*]] = spyre.pointwise "add" (%a, %b) {hints = [#spyre.hint<[[OUTER:[0-9]+]], tiles = {A = 2}>, #spyre.hint<[[INNER:[0-9]+]], tiles = {B = 4}>]}
// CHECK-SAME: (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
// CHECK: %[[Z:.*]] = spyre.pointwise "mul" (%[[Y]], %c) {hints = [#spyre.hint<[[OUTER]], tiles = {A = 2}>, #spyre.hint<[[INNER]], tiles = {B = 4}>]}
// CHECK: func.return %[[Z]] : tensor<1024x4096xf16>
