// Work division at one token (a decode step, M = 1; batch up to 8): the weights
// stream.  Each core reads its own slice of every weight, which no other core
// reads (K or N split, never M), at its share of the HBM bandwidth, so every
// projection takes all the cores it can (the partitioned-read rate of
// analysis/cost.py), even when the LX neighbours of a one-core plan would
// keep their values on chip.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-work-division' | %filecheck %s --check-prefix=FOUR
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-work-division > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// A normalised token projected by a 4096 x 4096 weight: the projection splits N
// 32 ways (each core reads 128 columns of the weight, and writes no partial
// sums), the exp follows, and the token's normalisation is replicated on every
// core into its own LX (core_replicas), which is faster than splitting K.
// CHECK-LABEL: func.func @norm_then_project
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1>, core_replicas = 32 : i64}
// CHECK:         %[[PROJECTED:.*]] = spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32, 1>}
// CHECK:         spyre.pointwise "exp" (%[[PROJECTED]]) {core_splits = array<i64: 1, 32>}
// FOUR-LABEL:  func.func @norm_then_project
// FOUR:          spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1>, core_replicas = 4 : i64}
// FOUR:          spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 4, 1>}
func.func @norm_then_project(%x: tensor<1x4096xf16>, %g: tensor<1x4096xf16>, %w: tensor<4096x4096xf16>) -> tensor<1x4096xf16> {
  %h = spyre.pointwise "mul" (%x, %g) : (tensor<1x4096xf16>, tensor<1x4096xf16>) -> tensor<1x4096xf16>
  %y = spyre.matmul (%h, %w) : (tensor<1x4096xf16>, tensor<4096x4096xf16>) -> tensor<1x4096xf16>
  %z = spyre.pointwise "exp" (%y) : (tensor<1x4096xf16>) -> tensor<1x4096xf16>
  func.return %z : tensor<1x4096xf16>
}

// -----

// A Granite-8B-shaped SwiGLU MLP at one token: gate and up split K 32 ways; the
// down projection's K (12800 = 200 sticks) has no divisor 32, so it splits N 32
// ways to stream on all 32 cores, every core computing the silu and the mul of
// the whole token into its own LX (replicated), rather than N 4 and K 8 ways.
// CHECK-LABEL: func.func @swiglu_mlp
// CHECK:         %[[GATE:.*]] = spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 32>}
// CHECK:         %[[UP:.*]] = spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 32>}
// CHECK:         spyre.pointwise "silu" (%[[GATE]]) {core_splits = array<i64: 1, 1>, core_replicas = 32 : i64}
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %[[UP]]) {core_splits = array<i64: 1, 1>, core_replicas = 32 : i64}
// CHECK:         %[[DOWN:.*]] = spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32, 1>}
// FOUR-LABEL:  func.func @swiglu_mlp
// FOUR-COUNT-3:  spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 4>}
func.func @swiglu_mlp(%x: tensor<1x4096xf16>, %wg: tensor<4096x12800xf16>, %wu: tensor<4096x12800xf16>, %wd: tensor<12800x4096xf16>) -> tensor<1x4096xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<1x4096xf16>, tensor<4096x12800xf16>) -> tensor<1x12800xf16>
  %u = spyre.matmul (%x, %wu) : (tensor<1x4096xf16>, tensor<4096x12800xf16>) -> tensor<1x12800xf16>
  %s = spyre.pointwise "silu" (%g) : (tensor<1x12800xf16>) -> tensor<1x12800xf16>
  %m = spyre.pointwise "mul" (%s, %u) : (tensor<1x12800xf16>, tensor<1x12800xf16>) -> tensor<1x12800xf16>
  %y = spyre.matmul (%m, %wd) : (tensor<1x12800xf16>, tensor<12800x4096xf16>) -> tensor<1x4096xf16>
  func.return %y : tensor<1x4096xf16>
}

// -----

// Batch 8 (M = 8, within stream_pass_rows): still no M split, which would have
// every core re-read the whole weight.
// CHECK-LABEL: func.func @batch8
// CHECK:         spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 32>}
// FOUR-LABEL:  func.func @batch8
// FOUR:          spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 4>}
func.func @batch8(%x: tensor<8x4096xf16>, %w: tensor<4096x4096xf16>) -> tensor<8x4096xf16> {
  %y = spyre.matmul (%x, %w) : (tensor<8x4096xf16>, tensor<4096x4096xf16>) -> tensor<8x4096xf16>
  func.return %y : tensor<8x4096xf16>
}
