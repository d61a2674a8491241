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

// -----

// SwiGLU: the down projection splits K 32 ways.  The mul can give it its K
// slice in LX only if the silu it reads follows, and moved alone either one
// would send their value through HBM instead: step 5 moves the mul and the silu
// together, by columns, so both values stay in LX.
// CHECK-LABEL: func.func @swiglu
// CHECK:         spyre.pointwise "silu" (%{{.*}}) {core_splits = array<i64: 1, 32>}
// CHECK-NEXT:    spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 32>}
// PLACED-LABEL: func.func @swiglu
// PLACED:         spyre.pointwise "silu"{{.*}}placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.pointwise "mul"{{.*}}placement = #spyre.placement<lx
func.func @swiglu(%x: tensor<256x1024xf16>, %wg: tensor<1024x2048xf16>, %wu: tensor<1024x2048xf16>, %wd: tensor<2048x1024xf16>) -> tensor<256x1024xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<256x1024xf16>, tensor<1024x2048xf16>) -> tensor<256x2048xf16>
  %u = spyre.matmul (%x, %wu) : (tensor<256x1024xf16>, tensor<1024x2048xf16>) -> tensor<256x2048xf16>
  %s = spyre.pointwise "silu" (%g) : (tensor<256x2048xf16>) -> tensor<256x2048xf16>
  %m = spyre.pointwise "mul" (%s, %u) : (tensor<256x2048xf16>, tensor<256x2048xf16>) -> tensor<256x2048xf16>
  %y = spyre.matmul (%m, %wd) : (tensor<256x2048xf16>, tensor<2048x1024xf16>) -> tensor<256x1024xf16>
  func.return %y : tensor<256x1024xf16>
}

// -----

// A rotary embedding's shape: a tree of pointwise ops (two products of %x
// summed, then scaled) feeding a matmul that splits K 16 ways.  Moved one at a
// time, or the scaling with the sum alone, each would trade one value in LX for
// another in HBM; step 5 moves the scaling and every producer only the tree
// reads together, by columns, so all four values stay in LX.
// CHECK-LABEL: func.func @rotary_chain
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 16>}
// CHECK-NEXT:    spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 16>}
// CHECK-NEXT:    spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 16>}
// CHECK-NEXT:    spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 16>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 16>}
// PLACED-LABEL: func.func @rotary_chain
// PLACED:         spyre.pointwise "mul"{{.*}}placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.pointwise "mul"{{.*}}placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.pointwise "add"{{.*}}placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.pointwise "mul"{{.*}}placement = #spyre.placement<lx
func.func @rotary_chain(%x: tensor<256x1024xf16>, %cos: tensor<256x1024xf16>, %sin: tensor<256x1024xf16>, %s: tensor<256x1024xf16>, %w: tensor<1024x1024xf16>) -> tensor<256x1024xf16> {
  %a = spyre.pointwise "mul" (%x, %cos) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %b = spyre.pointwise "mul" (%x, %sin) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %r = spyre.pointwise "add" (%a, %b) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %q = spyre.pointwise "mul" (%r, %s) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %c = spyre.matmul (%q, %w) : (tensor<256x1024xf16>, tensor<1024x1024xf16>) -> tensor<256x1024xf16>
  func.return %c : tensor<256x1024xf16>
}
