// spyre-fold-views on seed 002's `x_1d.view(M, K) @ y`: the view folds into
// A's map (d0 * 256 + d2): x_1d is read in place, sticked on K; the matmul
// keeps its (M, N, K) iteration space.
// REQUIRES: torch
// RUN: %spyre-import %S/../../../examples/wsr_matmul.py:build_view | %spyre-opt -p spyre-stickify,spyre-fold-views | %filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<16384xf16, #spyre.layout<device_size = [256, 64], dim_order = [0], format = "SEN169_FP16">>
// CHECK-NOT:     spyre.view
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul (%[[X]], %{{[a-z0-9_]+}})
// CHECK-SAME:      iteration_space = array<i64: 64, 128, 256>
// CHECK-SAME:      indexing_maps = [affine_map<(d0, d1, d2) -> (((d0 * 256) + d2))>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK:         spyre.pointwise "add"
// CHECK-NOT:     indexing_maps
// CHECK:         func.return
