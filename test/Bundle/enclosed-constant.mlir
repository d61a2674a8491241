// Code generation of a copy of one column of a [33, 2] fp32 tensor sticked on its 33 rows
// (two sticks of rows, each holding both columns: device [2, 2, 32]).  The copy reads the
// column at the constant 1; left unlabelled, that dim vanished from the stride between the
// two sticks of rows and rows 32 on were read from the wrong column.  It takes an iteration
// dim of one element (label "x") spanning both columns (its back gap the other column), and
// the column is the start offset (128 bytes: one fp32 stick).
// RUN: %spyre-opt %s -p 'spyre-compile{cores=1}' | %filecheck %s

// CHECK-LABEL: func.func @sdsc_bundle
// CHECK:       op_func = "ReStickifyOpHBM", {{.*}}, labels = ["mb", "out", "x"], sizes = array<i64: 64, 1, 1>, valid_sizes = array<i64: 33, 1, 1>
// CHECK-SAME:    {name = "Tensor0", role = "input", {{.*}}, device_size = array<i64: 2, 2, 32>, layout_labels = ["x", "mb"], stick_label = "mb", {{.*}}, core_offsets = array<i64: 128>, {{.*}}, back_gap = {x = 1 : i64, mb = 0 : i64}}
// CHECK-SAME:    {name = "Tensor1", role = "output", {{.*}}, layout_labels = ["mb", "out"], {{.*}}, back_gap = {}}
func.func @second_column(%x: tensor<33x4xf32>) -> tensor<33x4xf32> {
  %max = spyre.reduce "max" (%x) dims [1] : (tensor<33x4xf32>) -> tensor<33x1xf32>
  %min = spyre.reduce "min" (%x) dims [1] : (tensor<33x4xf32>) -> tensor<33x1xf32>
  %e = tensor.empty() : tensor<33x2xf32>
  %a = spyre.pointwise "identity" (%max) : (tensor<33x1xf32>) -> tensor<33x1xf32>
  %top = tensor.insert_slice %a into %e[0, 0] [33, 1] [1, 1] : tensor<33x1xf32> into tensor<33x2xf32>
  %b = spyre.pointwise "identity" (%min) : (tensor<33x1xf32>) -> tensor<33x1xf32>
  %both = tensor.insert_slice %b into %top[0, 1] [33, 1] [1, 1] : tensor<33x1xf32> into tensor<33x2xf32>
  %column = spyre.view %both affine_map<(d0, d1) -> (d0, 1)> : tensor<33x2xf32> -> tensor<33x1xf32>
  %r = spyre.pointwise "mul" (%column, %x) : (tensor<33x1xf32>, tensor<33x4xf32>) -> tensor<33x4xf32>
  func.return %r : tensor<33x4xf32>
}
