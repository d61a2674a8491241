// The working-set-reduction seed, Example 1: the matmul is under M (outer)
// and K (inner), the add only under M.  Example 2: a flat x_1d named [M, K]
// carries both names on its one dim and is viewed as [M, K].
// REQUIRES: torch
// RUN: %spyre-import %S/../../examples/wsr_matmul.py:build | %filecheck %s
// RUN: %spyre-import %S/../../examples/wsr_matmul.py:build_view | %filecheck %s --check-prefix=VIEW
// RUN: %spyre-import %S/../../examples/wsr_matmul.py:build_view | %spyre-opt | %filecheck %s --check-prefix=VIEW

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %x: tensor<64x256xf16> {spyre.role = "input", spyre.name = "x", spyre.dims = {{\[\["M"\], \["K"\]\]}}}
// CHECK-SAME: %y: tensor<256x128xf16> {spyre.role = "input", spyre.name = "y", spyre.dims = {{\[\["K"\], \["N"\]\]}}}
// CHECK-SAME: %z: tensor<64x128xf16> {spyre.role = "input", spyre.name = "z", spyre.dims = {{\[\["M"\], \["N"\]\]}}}
// CHECK: %[[P:.*]] = spyre.matmul (%x, %y) {hints = [#spyre.hint<[[M:[0-9]+]], tiles = {M = 8}>, #spyre.hint<[[K:[0-9]+]], tiles = {K = 4}>]} : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
// CHECK: %[[S:.*]] = spyre.pointwise "add" (%[[P]], %z) {hints = [#spyre.hint<[[M]], tiles = {M = 8}>]} :
// CHECK: func.return %[[S]]

// VIEW-LABEL: func.func @main(
// VIEW-SAME: %x_1d: tensor<16384xf16> {spyre.role = "input", spyre.name = "x_1d", spyre.dims = {{\[\["M", "K"\]\]}}}
// VIEW: %[[X:.*]] = spyre.view %x_1d affine_map<(d0, d1) -> (((d0 * 256) + d1))> : tensor<16384xf16> -> tensor<64x256xf16>
// VIEW: %[[P:.*]] = spyre.matmul (%[[X]], %y) {hints = [#spyre.hint<[[H:[0-9]+]], tiles = {M = 8, K = 4}>]}
// VIEW: spyre.pointwise "add" (%[[P]], %z) {hints = [#spyre.hint<[[H]], tiles = {M = 8, K = 4}>]}
