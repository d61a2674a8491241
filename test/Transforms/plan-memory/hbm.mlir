// What stays in HBM: graph outputs (kernel arguments, numbered after the
// function arguments), K-split matmul results (partial sums), values whose
// readers divide them across cores differently (a broadcast along a divided
// dim among them); the HBM pool reuses offsets by lifetime.  core_splits are
// written by hand.
// RUN: %spyre-opt %s -p spyre-plan-memory | %filecheck %s

// Two outputs: arguments 2 and 3; %o1 is also read by the next op, still an output.
// CHECK-LABEL: func.func @outputs
// CHECK:         %o1 = spyre.pointwise "add" {{.*}}placement = #spyre.placement<hbm, arg 2>
// CHECK:         %o2 = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, arg 3>
func.func @outputs(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> (tensor<64x64xf16>, tensor<64x64xf16>) {
  %o1 = spyre.pointwise "add" (%a, %b) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %o2 = spyre.pointwise "exp" (%o1) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %o1, %o2 : tensor<64x64xf16>, tensor<64x64xf16>
}

// K split over 32 cores: %m holds partial sums, so the pool; %e is a plain
// intermediate, in LX.
// CHECK-LABEL: func.func @k_split
// CHECK:         %m = spyre.matmul {{.*}}placement = #spyre.placement<hbm, pool 0>
// CHECK:         %e = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// CHECK:         %n = spyre.pointwise "neg" {{.*}}placement = #spyre.placement<hbm, arg 2>
func.func @k_split(%a: tensor<64x4096xf16>, %b: tensor<4096x64xf16>) -> tensor<64x64xf16> {
  %m = spyre.matmul (%a, %b) {core_splits = array<i64: 1, 1, 32>} : (tensor<64x4096xf16>, tensor<4096x64xf16>) -> tensor<64x64xf16>
  %e = spyre.pointwise "exp" (%m) {core_splits = array<i64: 1, 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %n = spyre.pointwise "neg" (%e) {core_splits = array<i64: 1, 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %n : tensor<64x64xf16>
}

// The same matmul split on M only: its result may live in LX.
// CHECK-LABEL: func.func @m_split
// CHECK:         %m = spyre.matmul {{.*}}placement = #spyre.placement<lx, 0>
func.func @m_split(%a: tensor<64x4096xf16>, %b: tensor<4096x64xf16>) -> tensor<64x64xf16> {
  %m = spyre.matmul (%a, %b) {core_splits = array<i64: 4, 1, 1>} : (tensor<64x4096xf16>, tensor<4096x64xf16>) -> tensor<64x64xf16>
  %e = spyre.pointwise "exp" (%m) {core_splits = array<i64: 4, 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %e : tensor<64x64xf16>
}

// Writer on 4 row slices, reader on 2: cores disagree on the slice, so the pool.
// CHECK-LABEL: func.func @different_division
// CHECK:         %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, pool 0>
func.func @different_division(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %x = spyre.pointwise "exp" (%a) {core_splits = array<i64: 4, 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = spyre.pointwise "neg" (%x) {core_splits = array<i64: 2, 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}

// A broadcast read ([1, 128] over [64, 128]) whose reader divides the rows
// it is broadcast along: every core reads all of %r, which two cores wrote.
// CHECK-LABEL: func.func @broadcast_across_cores
// CHECK:         %r = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, pool 0>
func.func @broadcast_across_cores(%a: tensor<64x128xf16>, %b: tensor<1x128xf16>) -> tensor<64x128xf16> {
  %r = spyre.pointwise "exp" (%b) {core_splits = array<i64: 1, 2>} : (tensor<1x128xf16>) -> tensor<1x128xf16>
  %y = spyre.pointwise "add" (%a, %r) {core_splits = array<i64: 2, 1>}
      : (tensor<64x128xf16>, tensor<1x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}

// Pool reuse: 128 MiB values do not fit LX; %y1 [0, 2) and %y3 [2, 4) share
// offset 0, %y2 overlaps both and sits above.
// CHECK-LABEL: func.func @pool_reuse
// CHECK:         %y1 = spyre.pointwise "add" {{.*}}placement = #spyre.placement<hbm, pool 0>
// CHECK:         %y2 = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, pool 134217728>
// CHECK:         %y3 = spyre.pointwise "neg" {{.*}}placement = #spyre.placement<hbm, pool 0>
// CHECK:         %z = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<hbm, arg 2>
func.func @pool_reuse(%a: tensor<8192x8192xf16>, %b: tensor<8192x8192xf16>) -> tensor<8192x8192xf16> {
  %y1 = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 32, 1>} : (tensor<8192x8192xf16>, tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  %y2 = spyre.pointwise "exp" (%y1) {core_splits = array<i64: 32, 1>} : (tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  %y3 = spyre.pointwise "neg" (%y2) {core_splits = array<i64: 32, 1>} : (tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  %z = spyre.pointwise "mul" (%y3, %b) {core_splits = array<i64: 32, 1>} : (tensor<8192x8192xf16>, tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  func.return %z : tensor<8192x8192xf16>
}
