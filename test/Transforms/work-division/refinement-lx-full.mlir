// Step 5 moves a value into LX only where the values already there leave room
// for it: here %b1, %b2 and %b3 (512 KiB per core each on 4 cores) fill the LX
// while %y would be live, so the scaling keeps its rows split and %y stays in
// HBM, rather than taking the matmul's K split for an LX that is full.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' | %filecheck %s

// CHECK-LABEL: func.func @lx_full
// CHECK:         spyre.pointwise "exp"{{.*}}placement = #spyre.placement<lx, 0>
// CHECK-NEXT:    spyre.pointwise "neg"{{.*}}placement = #spyre.placement<lx, 524288>
// CHECK-NEXT:    spyre.pointwise "abs"{{.*}}placement = #spyre.placement<lx, 1048576>
// CHECK-NEXT:    spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 4, 1>, placement = #spyre.placement<hbm, pool 0>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 4>
func.func @lx_full(%x: tensor<1024x1024xf16>, %u: tensor<512x1024xf16>, %s: tensor<512x1024xf16>, %w: tensor<1024x1024xf16>) -> (tensor<1024x1024xf16>, tensor<512x1024xf16>) {
  %b1 = spyre.pointwise "exp" (%x) : (tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %b2 = spyre.pointwise "neg" (%x) : (tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %b3 = spyre.pointwise "abs" (%x) : (tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %y = spyre.pointwise "mul" (%u, %s) : (tensor<512x1024xf16>, tensor<512x1024xf16>) -> tensor<512x1024xf16>
  %c = spyre.matmul (%y, %w) : (tensor<512x1024xf16>, tensor<1024x1024xf16>) -> tensor<512x1024xf16>
  %o1 = spyre.pointwise "add" (%b1, %b2) : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %o = spyre.pointwise "add" (%o1, %b3) : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  func.return %o, %c : tensor<1024x1024xf16>, tensor<512x1024xf16>
}
