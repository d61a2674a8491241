// spyre-fold-views on a KV-cache row store whose rows are a view (a projection's [1, 64]
// output split into 2 heads of 32): the view folds into the rows' map, and the destination's
// map holds 0 in the scattered dim.  The folded op prints and parses back (its rows operand
// is no longer of the destination's shape with the index's entries; the maps say how it is
// read).
// RUN: %spyre-opt %s -p spyre-stickify,spyre-fold-views | %spyre-opt | %filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-NOT:     spyre.view
// CHECK:         %[[P:.*]] = spyre.pointwise "mul"
// CHECK-NEXT:    spyre.pointwise "identity" (%pos, %[[P]], %cache) {scatter_dim = 2 : i64
// CHECK-SAME:      iteration_space = array<i64: 1, 2, 1, 32>
// CHECK-SAME:      indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2)>, affine_map<(d0, d1, d2, d3) -> (d0, ((d1 * 32) + d3))>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>]
// CHECK-SAME:      (tensor<1xi32, {{.*}}>, tensor<1x64xf32, {{.*}}>, tensor<1x2x64x32xf32, {{.*}}>)
// CHECK-NEXT:    func.return
func.func @main(%cache: tensor<1x2x64x32xf32> {spyre.role = "buffer", spyre.name = "key_cache_0"},
                %pos: tensor<1xi32> {spyre.role = "input", spyre.name = "pos"},
                %flat: tensor<1x64xf32> {spyre.role = "input", spyre.name = "rows"})
    -> (tensor<1x2x64x32xf32> {spyre.updates = "key_cache_0"}) {
  %p = spyre.pointwise "mul" (%flat, %flat) : (tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<1x64xf32>
  %rows = spyre.view %p affine_map<(d0, d1, d2, d3) -> (d0, ((d1 * 32) + d3))> : tensor<1x64xf32> -> tensor<1x2x1x32xf32>
  %k = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 2 : i64} : (tensor<1xi32>, tensor<1x2x1x32xf32>, tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>
  func.return %k : tensor<1x2x64x32xf32>
}
