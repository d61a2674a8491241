// work_div splits that cannot be honoured are skipped with a located warning;
// the op is then divided as if they were absent.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' 2> %t.err | %filecheck %s
// RUN: %filecheck %s --check-prefix=WARN < %t.err

// M = 8 with N = 8 would need 64 cores: N is skipped, M = 8 stays, and the
// 32 / 8 = 4 cores left go to N by distribution.
// WARN: warnings.mlir:[[# @LINE + 4]]:3: warning: work_div split 8 for dim 'N' skipped: it would use 64 cores, more than the 32 available
// CHECK-LABEL: func.func @too_many_cores
// CHECK:         spyre.pointwise "exp" {{.*}} core_splits = array<i64: 8, 4>}
func.func @too_many_cores(%a: tensor<64x1024xf16>) -> tensor<64x1024xf16> {
  %y = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<0, work_div = {M = 8, N = 8}>], dims = [["M"], ["N"]]} : (tensor<64x1024xf16>) -> tensor<64x1024xf16>
  func.return %y : tensor<64x1024xf16>
}

// -----

// The span limit needs K split at least 4 on this matmul (A is 512 MiB): K = 2
// is skipped.
// WARN: warnings.mlir:[[# @LINE + 4]]:3: warning: work_div split 2 for dim 'K' skipped: the per-core span limit needs 'K' split at least 4
// CHECK-LABEL: func.func @below_span_minimum
// CHECK:         spyre.matmul {{.*}} core_splits = array<i64: 1, 1, 32>}
func.func @below_span_minimum(%a: tensor<8192x32768xf16>, %w: tensor<32768x4096xf16>) -> tensor<8192x4096xf16> {
  %c = spyre.matmul (%a, %w) {hints = [#spyre.hint<0, work_div = {K = 2}>], dims = [["M"], ["N"], ["K"]]} : (tensor<8192x32768xf16>, tensor<32768x4096xf16>) -> tensor<8192x4096xf16>
  func.return %c : tensor<8192x4096xf16>
}

// -----

// At most one reduction dim is split: R2 is skipped after R1 (the iteration
// space is the two reduced dims).
// WARN: warnings.mlir:[[# @LINE + 4]]:3: warning: work_div split 2 for dim 'R2' skipped: it would split a second reduction dim
// CHECK-LABEL: func.func @second_reduction_dim
// CHECK:         spyre.reduce "sum" {{.*}} core_splits = array<i64: 4, 1>}
func.func @second_reduction_dim(%a: tensor<4x256xf16>) -> tensor<f16> {
  %s = spyre.reduce "sum" (%a) dims [0, 1] {hints = [#spyre.hint<0, work_div = {R1 = 4}>, #spyre.hint<1, work_div = {R2 = 2}>], dims = [["R1"], ["R2"]]} : (tensor<4x256xf16>) -> tensor<f16>
  func.return %s : tensor<f16>
}
