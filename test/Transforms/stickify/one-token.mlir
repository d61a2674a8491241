// spyre-stickify: a sequence of one token.  A head narrower than a stick (or
// half a head, rotate_half's) of a [1, H * D] projection sticked on its hidden
// dim has no sequence dim of more than one element to be read from: the
// projection is restickified onto a dim of one element (one element per
// stick), where h * 32 + d is an ordinary coordinate; heads merged back are
// written the same way, then restickified as the reader needs.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify 2>&1 > %t.twice.mlir | %filecheck %s --allow-empty --check-prefix=AGAIN
// RUN: diff %t.once.mlir %t.twice.mlir
// A second run inserts nothing and warns about nothing.
// AGAIN-NOT: warning

// Llama's rotate_half of one token: both halves (16 fp32 elements, half a
// stick) are copied from the projection sticked on its single row.
// CHECK-LABEL: func.func @rotate_half_of_one_token
// CHECK:         %[[Q:.*]] = spyre.matmul
// CHECK-NEXT:    %[[ROW:.*]] = spyre.restickify (%[[Q]]) : {{.*}} -> tensor<1x128xf32, #spyre.layout<device_size = [1, 128, 32], dim_order = [1, 0], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[X2:.*]] = spyre.restickify (%[[ROW]]) {iteration_space = array<i64: 1, 4, 1, 16>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, (((d1 * 32) + d3) + 16))>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]}
// CHECK-NEXT:    spyre.pointwise "neg" (%[[X2]])
// CHECK:         %[[X1:.*]] = spyre.restickify (%[[ROW]]) {iteration_space = array<i64: 1, 4, 1, 16>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, ((d1 * 32) + d3))>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]}
// CHECK-NEXT:    spyre.pointwise "identity" (%[[X1]])
func.func @rotate_half_of_one_token(%x: tensor<1x64xf32>, %w: tensor<64x128xf32>) -> tensor<1x4x1x32xf32> {
  %q = spyre.matmul (%x, %w) : (tensor<1x64xf32>, tensor<64x128xf32>) -> tensor<1x128xf32>
  %s = spyre.view %q affine_map<(d0, d1, d2) -> (d0, d2)> : tensor<1x128xf32> -> tensor<1x1x128xf32>
  %h = spyre.view %s affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 * 32 + d3)> : tensor<1x1x128xf32> -> tensor<1x4x1x32xf32>
  %x2 = spyre.view %h affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3 + 16)> : tensor<1x4x1x32xf32> -> tensor<1x4x1x16xf32>
  %n = spyre.pointwise "neg" (%x2) : (tensor<1x4x1x16xf32>) -> tensor<1x4x1x16xf32>
  %x1 = spyre.view %h affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : tensor<1x4x1x32xf32> -> tensor<1x4x1x16xf32>
  %e = tensor.empty() : tensor<1x4x1x32xf32>
  %c2 = spyre.pointwise "identity" (%n) : (tensor<1x4x1x16xf32>) -> tensor<1x4x1x16xf32>
  %i2 = tensor.insert_slice %c2 into %e[0, 0, 0, 0] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<1x4x1x16xf32> into tensor<1x4x1x32xf32>
  %c1 = spyre.pointwise "identity" (%x1) : (tensor<1x4x1x16xf32>) -> tensor<1x4x1x16xf32>
  %i1 = tensor.insert_slice %c1 into %i2[0, 0, 0, 16] [1, 4, 1, 16] [1, 1, 1, 1] : tensor<1x4x1x16xf32> into tensor<1x4x1x32xf32>
  func.return %i1 : tensor<1x4x1x32xf32>
}

// -----

// Grouped-query values of one token, heads of 16 fp32 elements, read at a
// constant row: the copy gets an iteration dim of one element for the row the
// projection is sticked on.
// CHECK-LABEL: func.func @grouped_values_of_one_token
// CHECK:         %[[V:.*]] = spyre.matmul
// CHECK-NEXT:    %[[ROW:.*]] = spyre.restickify (%[[V]]) : {{.*}} -> tensor<1x32xf32, #spyre.layout<device_size = [1, 32, 32], dim_order = [1, 0], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[HEADS:.*]] = spyre.restickify (%[[ROW]]) {iteration_space = array<i64: 2, 2, 1, 16, 1>, indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d4, ((d1 * 16) + d3))>, affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 2) + d0), d2, d3)>]}
// CHECK-NEXT:    %[[B:.*]] = spyre.restickify (%[[HEADS]]) : {{.*}} -> tensor<4x1x16xf32, #spyre.layout<device_size = [1, 1, 4, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %[[B]])
func.func @grouped_values_of_one_token(%p: tensor<4x1x1xf32>, %x: tensor<1x64xf32>, %w: tensor<64x32xf32>) -> tensor<4x1x16xf32> {
  %v = spyre.matmul (%x, %w) : (tensor<1x64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  %g = spyre.view %v affine_map<(d0, d1, d2) -> (0, (d0 floordiv 2) * 16 + d2)> : tensor<1x32xf32> -> tensor<4x1x16xf32>
  %r = spyre.matmul (%p, %g) : (tensor<4x1x1xf32>, tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  func.return %r : tensor<4x1x16xf32>
}

// -----

// Heads of 32 fp16 elements merged back into the hidden dim of one token for
// a matmul (A sticked on K): the copy writes the merged row sticked on its
// single row, and a restickify sticks it on K.
// CHECK-LABEL: func.func @heads_merged_of_one_token
// CHECK:         %[[MERGED:.*]] = spyre.restickify (%{{.*}}) {iteration_space = array<i64: 1, 32, 4, 1>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, ((d2 * 32) + d1))>]}
// CHECK-SAME:      -> tensor<1x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[A:.*]] = spyre.restickify (%[[MERGED]]) : {{.*}} -> tensor<1x128xf16, #spyre.layout<device_size = [2, 1, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%[[A]], %{{.*}})
func.func @heads_merged_of_one_token(%x: tensor<1x4x1x32xf16>, %w: tensor<128x64xf16>) -> tensor<1x64xf16> {
  %o = spyre.pointwise "exp" (%x) : (tensor<1x4x1x32xf16>) -> tensor<1x4x1x32xf16>
  %m = spyre.view %o affine_map<(d0, d1) -> (d0, d1 floordiv 32, 0, d1 mod 32)> : tensor<1x4x1x32xf16> -> tensor<1x128xf16>
  %r = spyre.matmul (%m, %w) : (tensor<1x128xf16>, tensor<128x64xf16>) -> tensor<1x64xf16>
  func.return %r : tensor<1x64xf16>
}
