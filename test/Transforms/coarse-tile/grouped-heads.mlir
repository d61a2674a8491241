// Coarse tiling of grouped-query heads.  The scores matmul reads 2 key/value
// heads for 4 query heads (torch's expand and reshape, folded by
// spyre-fold-views), so it iterates the heads H as two dims named H, the
// key/value head and the query head within its group (`d1 * 2 + d0`).  A tile
// count of H is taken over them outermost first: 2 tiles are one loop over the
// key/value heads; 4 tiles are a loop over the key/value heads around a loop
// within the group.  The ops that iterate H as one dim take both loops in turn.
// RUN: spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile' 2>/dev/null | %filecheck %s
// The invalid tile counts: grouped-heads-invalid.mlir.

// CHECK-LABEL: func.func @kv_heads
// CHECK: %[[KT:.*]] = spyre.restickify (%k)
// CHECK-DAG: %[[B:loop_bound]] = arith.constant 2 : index
// CHECK: scf.for %[[I:i]] = %{{.*}} to %[[B]] step
// CHECK-NOT: scf.for
// CHECK: %[[H:.*]] = affine.apply affine_map<(d0) -> ((d0 * 2))> (%[[I]])
// CHECK-NEXT: %[[Q:.*]] = tensor.extract_slice %q[0, %[[H]], 0, 0] [1, 2, 64, 64] [1, 1, 1, 1]
// CHECK-NEXT: %[[KV:.*]] = affine.apply affine_map<(d0) -> (d0)> (%[[I]])
// CHECK-NEXT: %[[K:.*]] = tensor.extract_slice %[[KT]][0, %[[KV]], 0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
// CHECK-NEXT: %[[S:.*]] = spyre.matmul (%[[Q]], %[[K]]) {dims = {{\[\["H"\], \["H"\], \["S"\], \["T"\], \["D"\]\]}}, iteration_space = array<i64: 2, 1, 64, 64, 64>, indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (0, (d0 + (d1 * 2)), d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> ((d0 + (d1 * 2)), d2, d3)>]}
// CHECK-NEXT: %[[E:.*]] = spyre.pointwise "exp" (%[[S]])
// CHECK-SAME: iteration_space = array<i64: 1, 2, 64, 64>
// CHECK-NEXT: tensor.insert_slice %[[E]] into %{{.*}}[0, %[[H]], 0, 0] [1, 2, 64, 64]
func.func @kv_heads(%q: tensor<1x4x64x64xf16> {spyre.dims = [["B"], ["H"], ["S"], ["D"]]},
                    %k: tensor<1x2x64x64xf16> {spyre.dims = [["B"], ["KV"], ["T"], ["D"]]}) -> tensor<1x4x64x64xf16> {
  %0 = spyre.view %k affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)> : tensor<1x2x64x64xf16> -> tensor<1x2x1x64x64xf16>
  %1 = spyre.view %0 affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)> : tensor<1x2x1x64x64xf16> -> tensor<1x2x2x64x64xf16>
  %2 = spyre.view %1 affine_map<(d0, d1, d2, d3) -> (d0, (d1 floordiv 2), (d1 mod 2), d2, d3)> : tensor<1x2x2x64x64xf16> -> tensor<1x4x64x64xf16>
  %3 = spyre.view %2 affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)> : tensor<1x4x64x64xf16> -> tensor<1x4x64x64xf16>
  %4 = spyre.view %q affine_map<(d0, d1, d2) -> (0, d0, d1, d2)> : tensor<1x4x64x64xf16> -> tensor<4x64x64xf16>
  %5 = spyre.view %3 affine_map<(d0, d1, d2) -> (0, d0, d1, d2)> : tensor<1x4x64x64xf16> -> tensor<4x64x64xf16>
  %6 = spyre.matmul (%4, %5) {hints = [#spyre.hint<1, tiles = {H = 2}>]} : (tensor<4x64x64xf16>, tensor<4x64x64xf16>) -> tensor<4x64x64xf16>
  %7 = spyre.view %6 affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)> : tensor<4x64x64xf16> -> tensor<1x4x64x64xf16>
  %8 = spyre.pointwise "exp" (%7) {hints = [#spyre.hint<1, tiles = {H = 2}>]} : (tensor<1x4x64x64xf16>) -> tensor<1x4x64x64xf16>
  func.return %8 : tensor<1x4x64x64xf16>
}

// -----

// CHECK-LABEL: func.func @query_heads
// CHECK: %[[KT:.*]] = spyre.restickify (%k)
// CHECK-DAG: %[[B0:loop_bound]] = arith.constant 2 : index
// CHECK-DAG: %[[B1:loop_bound_1]] = arith.constant 2 : index
// CHECK: scf.for %[[I:i]] = %{{.*}} to %[[B0]] step
// CHECK-NEXT: scf.for %[[J:i_1]] = %{{.*}} to %[[B1]] step
// CHECK-NEXT: %[[H:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%[[I]], %[[J]])
// CHECK-NEXT: %[[Q:.*]] = tensor.extract_slice %q[0, %[[H]], 0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
// CHECK-NEXT: %[[KV:.*]] = affine.apply affine_map<(d0) -> (d0)> (%[[I]])
// CHECK-NEXT: %[[K:.*]] = tensor.extract_slice %[[KT]][0, %[[KV]], 0, 0] [1, 1, 64, 64] [1, 1, 1, 1]
// Dims the tile takes one step of index one element: d0 + d1, not d0 + d1 * 2.
// CHECK-NEXT: %[[S:.*]] = spyre.matmul (%[[Q]], %[[K]]) {dims = {{.*}}, iteration_space = array<i64: 1, 1, 64, 64, 64>, indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (0, (d0 + d1), d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> ((d0 + d1), d2, d3)>]}
// CHECK-NEXT: %[[E:.*]] = spyre.pointwise "exp" (%[[S]])
// CHECK-SAME: iteration_space = array<i64: 1, 1, 64, 64>
// CHECK-NEXT: tensor.insert_slice %[[E]] into %{{.*}}[0, %[[H]], 0, 0] [1, 1, 64, 64]
func.func @query_heads(%q: tensor<1x4x64x64xf16> {spyre.dims = [["B"], ["H"], ["S"], ["D"]]},
                       %k: tensor<1x2x64x64xf16> {spyre.dims = [["B"], ["KV"], ["T"], ["D"]]}) -> tensor<1x4x64x64xf16> {
  %0 = spyre.view %k affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)> : tensor<1x2x64x64xf16> -> tensor<1x2x1x64x64xf16>
  %1 = spyre.view %0 affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)> : tensor<1x2x1x64x64xf16> -> tensor<1x2x2x64x64xf16>
  %2 = spyre.view %1 affine_map<(d0, d1, d2, d3) -> (d0, (d1 floordiv 2), (d1 mod 2), d2, d3)> : tensor<1x2x2x64x64xf16> -> tensor<1x4x64x64xf16>
  %3 = spyre.view %2 affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)> : tensor<1x4x64x64xf16> -> tensor<1x4x64x64xf16>
  %4 = spyre.view %q affine_map<(d0, d1, d2) -> (0, d0, d1, d2)> : tensor<1x4x64x64xf16> -> tensor<4x64x64xf16>
  %5 = spyre.view %3 affine_map<(d0, d1, d2) -> (0, d0, d1, d2)> : tensor<1x4x64x64xf16> -> tensor<4x64x64xf16>
  %6 = spyre.matmul (%4, %5) {hints = [#spyre.hint<1, tiles = {H = 4}>]} : (tensor<4x64x64xf16>, tensor<4x64x64xf16>) -> tensor<4x64x64xf16>
  %7 = spyre.view %6 affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)> : tensor<4x64x64xf16> -> tensor<1x4x64x64xf16>
  %8 = spyre.pointwise "exp" (%7) {hints = [#spyre.hint<1, tiles = {H = 4}>]} : (tensor<1x4x64x64xf16>) -> tensor<1x4x64x64xf16>
  func.return %8 : tensor<1x4x64x64xf16>
}
