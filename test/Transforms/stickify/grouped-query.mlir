// spyre-stickify and spyre-fold-views: grouped-query attention.  transformers'
// repeat_kv expands the K and V heads over a group of query heads
// (unsqueeze, expand, reshape): query head h reads K/V head h floordiv g.  A
// matmul's batch dim split in two is two batch dims, so the view folds: head
// h = 2 * d1 + d0 of the queries and the result reads K/V head d1, broadcast
// along d0; the cache is read in place (a restickify of the storage where the
// matmul needs another stick, never a copy of the expanded view).
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-fold-views 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-fold-views 2>&1 >/dev/null | %filecheck %s --allow-empty --check-prefix=WARN
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-fold-views 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify,spyre-fold-views 2>&1 > %t.twice.mlir | %filecheck %s --allow-empty --check-prefix=AGAIN
// RUN: diff %t.once.mlir %t.twice.mlir
// No view is copied; a second run changes nothing and warns about nothing.
// WARN-NOT: warning
// AGAIN-NOT: warning

// Scores @ V: the values, sticked on the head dim (the matmul's N), are read
// in place, V head d1 broadcast over the group dim d0.
// CHECK-LABEL: func.func @grouped_values
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul (%p, %cache) {iteration_space = array<i64: 2, 2, 1, 64, 64>, indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 2) + d0), d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 2) + d0), d2, d3)>]}
// CHECK-NOT:     spyre.restickify
func.func @grouped_values(%p: tensor<4x1x64xf16>, %cache: tensor<2x64x64xf16>) -> tensor<4x1x64xf16> {
  %u = spyre.view %cache affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)> : tensor<2x64x64xf16> -> tensor<2x1x64x64xf16>
  %e = spyre.view %u affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<2x1x64x64xf16> -> tensor<2x2x64x64xf16>
  %v = spyre.view %e affine_map<(d0, d1, d2) -> (d0 floordiv 2, d0 mod 2, d1, d2)> : tensor<2x2x64x64xf16> -> tensor<4x64x64xf16>
  %r = spyre.matmul (%p, %v) : (tensor<4x1x64xf16>, tensor<4x64x64xf16>) -> tensor<4x1x64xf16>
  func.return %r : tensor<4x1x64xf16>
}

// -----

// Q @ K^T: the keys, sticked on the head dim, are needed sticked on the
// sequence (N): the cache of 2 heads is restickified (not the expanded view of
// 4), and read in place, K head d1 broadcast over the group dim d0.
// CHECK-LABEL: func.func @grouped_keys
// CHECK:         %[[K:.*]] = spyre.restickify (%cache) : (tensor<2x128x64xf16, {{.*}}) -> tensor<2x128x64xf16, #spyre.layout<device_size = [64, 2, 2, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%q, %[[K]]) {iteration_space = array<i64: 2, 2, 1, 128, 64>, indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 2) + d0), d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (((d1 * 2) + d0), d2, d3)>]}
func.func @grouped_keys(%q: tensor<4x1x64xf16>, %cache: tensor<2x128x64xf16>) -> tensor<4x1x128xf16> {
  %u = spyre.view %cache affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)> : tensor<2x128x64xf16> -> tensor<2x1x128x64xf16>
  %e = spyre.view %u affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<2x1x128x64xf16> -> tensor<2x2x128x64xf16>
  %k = spyre.view %e affine_map<(d0, d1, d2) -> (d0 floordiv 2, d0 mod 2, d1, d2)> : tensor<2x2x128x64xf16> -> tensor<4x128x64xf16>
  %t = spyre.view %k affine_map<(d0, d1, d2) -> (d0, d2, d1)> : tensor<4x128x64xf16> -> tensor<4x64x128xf16>
  %r = spyre.matmul (%q, %t) : (tensor<4x1x64xf16>, tensor<4x64x128xf16>) -> tensor<4x1x128xf16>
  func.return %r : tensor<4x1x128xf16>
}
