// Step 5: once its readers are divided, a producer takes the split that lets
// them read its result from LX, when that makes it and its neighbours cheaper.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division,spyre-plan-memory' | %filecheck %s --check-prefix=PLACED

// The matmul splits K 16 ways (256 elements, 16 sticks): split on M it would
// read all of %w on every core.  The scaling then splits its columns the same
// way, so each core leaves in LX the K slice of %y it reads.
// CHECK-LABEL: func.func @scale_then_project
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 16>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 16>}
// PLACED-LABEL: func.func @scale_then_project
// PLACED:         spyre.pointwise "mul"{{.*}}placement = #spyre.placement<lx, 0>
func.func @scale_then_project(%x: tensor<256x1024xf16>, %s: tensor<256x1024xf16>, %w: tensor<1024x1024xf16>) -> tensor<256x1024xf16> {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %c = spyre.matmul (%y, %w) : (tensor<256x1024xf16>, tensor<1024x1024xf16>) -> tensor<256x1024xf16>
  func.return %c : tensor<256x1024xf16>
}

// -----

// Two readers that split differently (the exp by rows, the matmul by K): no
// split of the producer serves both, so it keeps its own and its result goes
// to HBM.
// CHECK-LABEL: func.func @two_readers_disagree
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 32, 1>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 16>}
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 32, 1>}
// PLACED-LABEL: func.func @two_readers_disagree
// PLACED:         spyre.pointwise "mul"{{.*}}placement = #spyre.placement<hbm
func.func @two_readers_disagree(%x: tensor<256x1024xf16>, %s: tensor<256x1024xf16>, %w: tensor<1024x1024xf16>) -> (tensor<256x1024xf16>, tensor<256x1024xf16>) {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %c = spyre.matmul (%y, %w) : (tensor<256x1024xf16>, tensor<1024x1024xf16>) -> tensor<256x1024xf16>
  %e = spyre.pointwise "exp" (%y) : (tensor<256x1024xf16>) -> tensor<256x1024xf16>
  func.return %c, %e : tensor<256x1024xf16>, tensor<256x1024xf16>
}
