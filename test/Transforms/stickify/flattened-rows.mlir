// spyre-stickify: rows of several batches flattened into one dim.  A [B * L,
// H * D] projection sticked on its hidden dim is read as [B, H, L, D] at rows
// b * 100 + l: sticked on those rows, l would be padded to whole sticks and
// its padding would reach the next batch, which no layout label describes.
// The projection is unflattened instead: a copy that keeps its stick writes
// [B, L, H * D], and a restickify of it sticks l, padded per batch.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>&1 >/dev/null | %filecheck %s --check-prefix=WARN
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify 2>&1 > %t.twice.mlir | %filecheck %s --allow-empty --check-prefix=AGAIN
// RUN: diff %t.once.mlir %t.twice.mlir
// A second run inserts nothing and warns about nothing.
// AGAIN-NOT: warning

// rotate_half's second half of 16 fp32 elements starts mid-stick: the op is
// driven by l and reads it in place from the unflattened projection.
// CHECK-LABEL: func.func @half_heads_of_two_batches
// CHECK:         %[[Q:.*]] = spyre.matmul
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[Q]]) {iteration_space = array<i64: 2, 100, 128>, indexing_maps = [affine_map<(d0, d1, d2) -> (((d0 * 100) + d1), d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-SAME:      -> tensor<2x100x128xf32, #spyre.layout<device_size = [128, 4, 2, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[L:.*]] = spyre.restickify (%[[ROWS]]) : {{.*}} -> tensor<2x100x128xf32, #spyre.layout<device_size = [128, 4, 2, 32], dim_order = [0, 2, 1], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[H:.*]] = spyre.view %[[L]] affine_map<(d0, d1, d2, d3) -> (d0, d2, (((d1 * 32) + d3) + 16))>
// CHECK-NEXT:    spyre.pointwise "neg" (%[[H]]) : {{.*}} -> tensor<2x4x100x16xf32, #spyre.layout<device_size = [4, 16, 4, 2, 32], dim_order = [0, 1, 3, 2], format = "IEEE_FP32">>
func.func @half_heads_of_two_batches(%x: tensor<200x64xf32>, %w: tensor<64x128xf32>) -> tensor<2x4x100x16xf32> {
  %q = spyre.matmul (%x, %w) : (tensor<200x64xf32>, tensor<64x128xf32>) -> tensor<200x128xf32>
  %h = spyre.view %q affine_map<(d0, d1, d2, d3) -> (d0 * 100 + d2, d1 * 32 + d3 + 16)> : tensor<200x128xf32> -> tensor<2x4x100x16xf32>
  %r = spyre.pointwise "neg" (%h) : (tensor<2x4x100x16xf32>) -> tensor<2x4x100x16xf32>
  func.return %r : tensor<2x4x100x16xf32>
}

// -----

// Values of heads of 32 fp16 elements (half a stick), B of a matmul sticked on
// D: the copy of the heads reads the unflattened projection sticked on l and
// writes them sticked on l; a restickify sticks them on D.
// CHECK-LABEL: func.func @values_of_two_batches
// CHECK:         %[[V:.*]] = spyre.matmul
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[V]]) {iteration_space = array<i64: 2, 100, 128>, indexing_maps = [affine_map<(d0, d1, d2) -> (((d0 * 100) + d1), d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-NEXT:    %[[L:.*]] = spyre.restickify (%[[ROWS]]) : {{.*}} -> tensor<2x100x128xf16, #spyre.layout<device_size = [128, 2, 2, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[HEADS:.*]] = spyre.restickify (%[[L]]) {iteration_space = array<i64: 2, 4, 100, 32>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, ((d1 * 32) + d3))>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]}
// CHECK-SAME:      -> tensor<2x4x100x32xf16, #spyre.layout<device_size = [4, 64, 2, 2, 64], dim_order = [0, 1, 3, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[B:.*]] = spyre.restickify (%[[HEADS]]) : {{.*}} -> tensor<2x4x100x32xf16, #spyre.layout<device_size = [4, 128, 1, 2, 64], dim_order = [0, 1, 2, 3], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %[[B]])
// WARN: flattened-rows.mlir:[[# @LINE + 4]]:3: warning: operand #1 is a view that no stick dim of its storage [200, 128] can serve; it is copied by spyre.restickify
func.func @values_of_two_batches(%p: tensor<2x4x100x100xf16>, %x: tensor<200x64xf16>, %w: tensor<64x128xf16>) -> tensor<2x4x100x32xf16> {
  %v = spyre.matmul (%x, %w) : (tensor<200x64xf16>, tensor<64x128xf16>) -> tensor<200x128xf16>
  %h = spyre.view %v affine_map<(d0, d1, d2, d3) -> (d0 * 100 + d2, d1 * 32 + d3)> : tensor<200x128xf16> -> tensor<2x4x100x32xf16>
  %r = spyre.matmul (%p, %h) : (tensor<2x4x100x100xf16>, tensor<2x4x100x32xf16>) -> tensor<2x4x100x32xf16>
  func.return %r : tensor<2x4x100x32xf16>
}
