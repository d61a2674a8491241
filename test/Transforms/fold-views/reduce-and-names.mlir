// spyre-fold-views: a reduction read through a view gets its reduce_dims in
// storage dims; a split iteration dim splits its names (the last name goes to
// the remainder dim) and a reduction splits the same way.
// RUN: %spyre-opt %s --split-input-file -p spyre-fold-views | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-fold-views | %spyre-opt --split-input-file -p spyre-fold-views | %filecheck %s

// sum over dim 0 of x^T: the reduced iteration dim reads x's dim 1.
// CHECK-LABEL: func.func @reduce_transposed
// CHECK-NEXT:    spyre.reduce "sum" (%{{.*}}) dims [1] {iteration_space = array<i64: 4, 64>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>]} : (tensor<4x64xf16>) -> tensor<4xf16>
func.func @reduce_transposed(%x: tensor<4x64xf16>) -> tensor<4xf16> {
  %t = spyre.view %x affine_map<(d0, d1) -> (d1, d0)> : tensor<4x64xf16> -> tensor<64x4xf16>
  %s = spyre.reduce "sum" (%t) dims [0] : (tensor<64x4xf16>) -> tensor<4xf16>
  func.return %s : tensor<4xf16>
}

// -----

// x [6, 64] flattened to [384] and summed: the reduced dim splits into {64, 6}.
// CHECK-LABEL: func.func @reduce_flat
// CHECK-NEXT:    spyre.reduce "sum" (%{{.*}}) dims [0, 1] {dims = {{\[\[}}"C"], ["R"]], iteration_space = array<i64: 64, 6>, indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (0)>]} : (tensor<6x64xf16>) -> tensor<1xf16>
func.func @reduce_flat(%x: tensor<6x64xf16>) -> tensor<1xf16> {
  %f = spyre.view %x affine_map<(d0) -> (d0 floordiv 64, d0 mod 64)> : tensor<6x64xf16> -> tensor<384xf16>
  %s = spyre.reduce "sum" (%f) dims [0] {dims = [["R", "C"]]} : (tensor<384xf16>) -> tensor<1xf16>
  func.return %s : tensor<1xf16>
}
