// Errors and warnings of spyre-work-division: one located line each.
// RUN: not %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' 2>&1 | %filecheck %s --check-prefix=ERR
// RUN: not %spyre-opt %s -p 'spyre-attach-target{cores=0},spyre-work-division' 2>&1 | %filecheck %s --check-prefix=CORES0
// RUN: not %spyre-opt %s -p 'spyre-attach-target{cores=33},spyre-work-division' 2>&1 | %filecheck %s --check-prefix=CORES33
// RUN: not %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=2},spyre-work-division' 2>&1 | %filecheck %s --check-prefix=TWO

// CORES0:  spyre-opt: error: spyre-attach-target: cores=0: cores must be an integer between 1 and 32, got 0
// CORES33: spyre-opt: error: spyre-attach-target: cores=33: cores must be an integer between 1 and 32, got 33

// A work_div split must divide the dim: 3 does not divide 256 rows.
func.func @non_divisor(%a: tensor<256x64xf16>) -> tensor<256x64xf16> {
  // ERR: errors.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op: work_div split 3 for dim 'M' does not divide its size 256
  %y = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<0, work_div = {M = 3}>], dims = [["M"], ["N"]]} : (tensor<256x64xf16>) -> tensor<256x64xf16>
  func.return %y : tensor<256x64xf16>
}

// -----

// On a stick dim the split counts sticks: 150 columns are 3 sticks, 2 does not divide them.
func.func @non_divisor_sticks(%a: tensor<4x150xf16>) -> tensor<4x150xf16> {
  // ERR: errors.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op: work_div split 2 for dim 'N' does not divide its size 150, counted in whole sticks: 3 pieces of 64 elements
  %y = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<0, work_div = {N = 2}>], dims = [["M"], ["N"]]} : (tensor<4x150xf16>) -> tensor<4x150xf16>
  func.return %y : tensor<4x150xf16>
}

// -----

// A [4194304, 2, 64] fp16 tensor summed over dims 0 and 1: the span limit needs
// both reduced dims split.
func.func @two_reduction_dims(%a: tensor<4194304x2x64xf16>) -> tensor<64xf16> {
  // ERR: errors.mlir:[[# @LINE + 1]]:3: error: 'spyre.reduce' op: the per-core span of operand #0 (%a: tensor<4194304x2x64xf16>) is 536870912 bytes, over the limit of 268431360 bytes, and meeting it would split more than one reduction dim
  %s = spyre.reduce "sum" (%a) dims [0, 1] : (tensor<4194304x2x64xf16>) -> tensor<64xf16>
  func.return %s : tensor<64xf16>
}

// -----

// The big matmul needs 4 cores for its spans (K by 4: by 2, A's per-core span
// is 256 MiB, 4 KiB over the limit): fine on 32, an error on 2.
// ERR-NOT: error: 'spyre.matmul'
func.func @span_needs_more_cores(%a: tensor<8192x32768xf16>, %w: tensor<32768x4096xf16>) -> tensor<8192x4096xf16> {
  // TWO: errors.mlir:[[# @LINE + 1]]:3: error: 'spyre.matmul' op: the per-core span of operand #0 (%a: tensor<8192x32768xf16>) is 268435456 bytes, over the limit of 268431360 bytes, and no split on 2 cores meets it; tile the op with spyre_hint(tiles=...) or use more cores
  %c = spyre.matmul (%a, %w) : (tensor<8192x32768xf16>, tensor<32768x4096xf16>) -> tensor<8192x4096xf16>
  func.return %c : tensor<8192x4096xf16>
}
