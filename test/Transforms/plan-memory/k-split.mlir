// A matmul whose K is split across cores writes partial sums that the cores
// combine in HBM: its result never lives in LX (DESIGN §9), whoever reads it.
// The splits are given: [2, 8192] @ [8192, 64] on 2 rows, one stick of columns
// and K over 16 cores.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-plan-memory' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-plan-memory{lx-solver=firstfit}' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s

// %m goes to the pool; %e, read by one op on the same per-core rows, to LX.
// CHECK-LABEL: func.func @k_split
// CHECK:         %m = spyre.matmul (%a, %b) {core_splits = array<i64: 2, 1, 16>, placement = #spyre.placement<hbm, pool 0>}
// CHECK:         %e = spyre.pointwise "exp" (%m) {core_splits = array<i64: 2, 1>, placement = #spyre.placement<lx, 0>}
// CHECK:         %n = spyre.pointwise "neg" (%e) {{.*}}placement = #spyre.placement<hbm, arg 2>
func.func @k_split(%a: tensor<2x8192xf16>, %b: tensor<8192x64xf16>) -> tensor<2x64xf16> {
  %m = spyre.matmul (%a, %b) {core_splits = array<i64: 2, 1, 16>} : (tensor<2x8192xf16>, tensor<8192x64xf16>) -> tensor<2x64xf16>
  %e = spyre.pointwise "exp" (%m) {core_splits = array<i64: 2, 1>} : (tensor<2x64xf16>) -> tensor<2x64xf16>
  %n = spyre.pointwise "neg" (%e) {core_splits = array<i64: 2, 1>} : (tensor<2x64xf16>) -> tensor<2x64xf16>
  func.return %n : tensor<2x64xf16>
}

// Split on M only, the same matmul result fits LX.
// CHECK-LABEL: func.func @m_split
// CHECK:         %m = spyre.matmul (%a, %b) {core_splits = array<i64: 32, 1, 1>, placement = #spyre.placement<lx, 0>}
func.func @m_split(%a: tensor<64x8192xf16>, %b: tensor<8192x64xf16>) -> tensor<64x64xf16> {
  %m = spyre.matmul (%a, %b) {core_splits = array<i64: 32, 1, 1>} : (tensor<64x8192xf16>, tensor<8192x64xf16>) -> tensor<64x64xf16>
  %e = spyre.pointwise "exp" (%m) {core_splits = array<i64: 32, 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %e : tensor<64x64xf16>
}

// In a loop body, a K-split tile result that leaves the loop and is read by
// exp gets no copy-out: it is not an LX candidate, so it is written straight
// into its accumulator and exp reads it there.
// CHECK-LABEL: func.func @k_split_in_loop
// CHECK-NOT:     "identity"
// CHECK:         %mt = spyre.matmul (%at, %b) {core_splits = array<i64: 2, 1, 16>, placement = #spyre.placement<hbm, pool
// CHECK-NOT:     "identity"
// CHECK:         tensor.insert_slice %mt into %macc
func.func @k_split_in_loop(%a: tensor<4x8192xf16>, %b: tensor<8192x64xf16>) -> (tensor<4x64xf16>, tensor<4x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %minit = tensor.empty() : tensor<4x64xf16>
  %einit = tensor.empty() : tensor<4x64xf16>
  %m, %e = scf.for %i = %c0 to %c2 step %c1 iter_args(%macc = %minit, %eacc = %einit)
      -> (tensor<4x64xf16>, tensor<4x64xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 2)> (%i)
    %at = tensor.extract_slice %a[%r, 0] [2, 8192] [1, 1] : tensor<4x8192xf16> to tensor<2x8192xf16>
    %mt = spyre.matmul (%at, %b) {core_splits = array<i64: 2, 1, 16>} : (tensor<2x8192xf16>, tensor<8192x64xf16>) -> tensor<2x64xf16>
    %et = spyre.pointwise "exp" (%mt) {core_splits = array<i64: 2, 1>} : (tensor<2x64xf16>) -> tensor<2x64xf16>
    %mnext = tensor.insert_slice %mt into %macc[%r, 0] [2, 64] [1, 1] : tensor<2x64xf16> into tensor<4x64xf16>
    %enext = tensor.insert_slice %et into %eacc[%r, 0] [2, 64] [1, 1] : tensor<2x64xf16> into tensor<4x64xf16>
    scf.yield %mnext, %enext : tensor<4x64xf16>, tensor<4x64xf16>
  }
  func.return %m, %e : tensor<4x64xf16>, tensor<4x64xf16>
}
