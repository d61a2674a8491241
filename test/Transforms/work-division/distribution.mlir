// Work distribution without span pressure: stick adjustment, the cost model's
// choice (ties: output dims first), at most one reduction dim, work_div hints.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-work-division > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Rows (1024) take all 32 cores; the 64 stick columns are not split.
// CHECK-LABEL: func.func @add_1024x4096
// CHECK:         spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 32, 1>}
func.func @add_1024x4096(%a: tensor<1024x4096xf16>, %b: tensor<1024x4096xf16>) -> tensor<1024x4096xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  func.return %y : tensor<1024x4096xf16>
}

// -----

// 6 rows and 2 sticks (128 elements): 6 x 2 = 12 cores, the product may stay below 32.
// CHECK-LABEL: func.func @rows_and_sticks
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 6, 2>}
func.func @rows_and_sticks(%a: tensor<6x128xf16>) -> tensor<6x128xf16> {
  %y = spyre.pointwise "exp" (%a) : (tensor<6x128xf16>) -> tensor<6x128xf16>
  func.return %y : tensor<6x128xf16>
}

// -----

// An existing #spyre.layout sticked on dim 0: rows are counted in sticks
// (1024 = 16 sticks), columns in elements.
// CHECK-LABEL: func.func @transposed_layout
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 32>}
func.func @transposed_layout(%a: tensor<1024x64xf16, #spyre.layout<device_size = [16, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>) -> tensor<1024x64xf16, #spyre.layout<device_size = [16, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">> {
  %y = spyre.pointwise "exp" (%a) : (tensor<1024x64xf16, #spyre.layout<device_size = [16, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>) -> tensor<1024x64xf16, #spyre.layout<device_size = [16, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
  func.return %y : tensor<1024x64xf16, #spyre.layout<device_size = [16, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
}

// -----

// Sum over the stick dim: the rank-1 result is sticked on the kept dim, so the
// 256 kept rows count as 4 sticks; the reduced 150 columns are 3 (padded) sticks.
// CHECK-LABEL: func.func @stick_sum
// CHECK:         spyre.reduce "sum" (%{{.*}}) dims [1] {core_splits = array<i64: 4, 3>}
func.func @stick_sum(%a: tensor<256x150xf16>) -> tensor<256xf16> {
  %s = spyre.reduce "sum" (%a) dims [1] : (tensor<256x150xf16>) -> tensor<256xf16>
  func.return %s : tensor<256xf16>
}

// -----

// The same sum keeping the reduced dim: the result's stick dim is the size-1
// dim, so the 256 rows count in elements and take all the cores.
// CHECK-LABEL: func.func @stick_sum_keepdim
// CHECK:         spyre.reduce "sum" (%{{.*}}) dims [1] {core_splits = array<i64: 32, 1>}
func.func @stick_sum_keepdim(%a: tensor<256x150xf16>) -> tensor<256x1xf16> {
  %s = spyre.reduce "sum" (%a) dims [1] : (tensor<256x150xf16>) -> tensor<256x1xf16>
  func.return %s : tensor<256x1xf16>
}

// -----

// Sum over the non-stick dim 0: the kept 1024 columns are 16 sticks, and the
// reduced 512 rows take the 2 cores left.
// CHECK-LABEL: func.func @nonstick_sum
// CHECK:         spyre.reduce "sum" (%{{.*}}) dims [0] {core_splits = array<i64: 16, 2>}
func.func @nonstick_sum(%a: tensor<512x1024xf16>) -> tensor<1024xf16> {
  %s = spyre.reduce "sum" (%a) dims [0] : (tensor<512x1024xf16>) -> tensor<1024xf16>
  func.return %s : tensor<1024xf16>
}

// -----

// Two reduction dims: only the one with the largest core_split is split.  The
// 2 kept rows are one stick of the rank-1 result; of the reduced dims (5, and
// 128 = 2 sticks) the 5 takes 5 cores.
// CHECK-LABEL: func.func @one_reduction_dim
// CHECK:         spyre.reduce "sum" (%{{.*}}) dims [1, 2] {core_splits = array<i64: 1, 5, 1>}
func.func @one_reduction_dim(%a: tensor<2x5x128xf16>) -> tensor<2xf16> {
  %s = spyre.reduce "sum" (%a) dims [1, 2] : (tensor<2x5x128xf16>) -> tensor<2xf16>
  func.return %s : tensor<2xf16>
}

// -----

// A work_div hint splits M by exactly 2 and K by exactly 4; N (16 sticks) takes
// the remaining 4 cores.
// CHECK-LABEL: func.func @matmul_work_div
// CHECK:         spyre.matmul {{.*}} core_splits = array<i64: 2, 4, 4>}
func.func @matmul_work_div(%a: tensor<256x512xf16>, %w: tensor<512x1024xf16>) -> tensor<256x1024xf16> {
  %c = spyre.matmul (%a, %w) {hints = [#spyre.hint<1, work_div = {M = 2, K = 4}>], dims = [["M"], ["N"], ["K"]]} : (tensor<256x512xf16>, tensor<512x1024xf16>) -> tensor<256x1024xf16>
  func.return %c : tensor<256x1024xf16>
}

// -----

// Without the hint the cost model splits K (8 sticks) and leaves 24 cores idle:
// 15 us predicted, against 58 us for M 4 x K 8 (every M group re-reads %w at the
// replicated-read rate), 26 us for N 4 x K 8 (%a re-read) and 457 us for the
// M 32 of a largest-dim-first division.
// CHECK-LABEL: func.func @matmul_no_hint
// CHECK:         spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 8>}
func.func @matmul_no_hint(%a: tensor<256x512xf16>, %w: tensor<512x1024xf16>) -> tensor<256x1024xf16> {
  %c = spyre.matmul (%a, %w) : (tensor<256x512xf16>, tensor<512x1024xf16>) -> tensor<256x1024xf16>
  func.return %c : tensor<256x1024xf16>
}

// -----

// Hints apply in hint-id order: the inner scope's M = 8 replaces the outer M = 2;
// names the op does not iterate (X) are ignored.
// CHECK-LABEL: func.func @hint_order
// CHECK:         spyre.pointwise "exp" {{.*}} core_splits = array<i64: 8, 4>}
func.func @hint_order(%a: tensor<64x256xf16>) -> tensor<64x256xf16> {
  %y = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<3, work_div = {M = 8}>, #spyre.hint<2, work_div = {M = 2, X = 4}>], dims = [["M"], ["N"]]} : (tensor<64x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// -----

// Every compute op of a tiled loop body gets its own splits; core_splits already
// present are recomputed.
// CHECK-LABEL: func.func @in_loop
// CHECK:         scf.for
// CHECK:           spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 32, 1>}
func.func @in_loop(%a: tensor<512x64xf16>, %lb: index, %ub: index, %step: index) -> tensor<512x64xf16> {
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %a) -> (tensor<512x64xf16>) {
    %y = spyre.pointwise "add" (%acc, %a) {core_splits = array<i64: 1, 1>} : (tensor<512x64xf16>, tensor<512x64xf16>) -> tensor<512x64xf16>
    scf.yield %y : tensor<512x64xf16>
  }
  func.return %r : tensor<512x64xf16>
}
