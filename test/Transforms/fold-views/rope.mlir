// spyre-fold-views on seed 001's RoPE block: the two views and the unsqueeze
// of q and the expand of cached_freqs fold into the mul's maps (q is read in
// place: its stick coordinate is d5 plus whole sticks); the returned flatten
// is a function result, so it is copied into the [B, L, H, D] result by a
// spyre.restickify whose iteration space splits D into {64, 2}.
// REQUIRES: torch
// RUN: %spyre-import %S/../../../examples/rope.py:build | %spyre-opt -p spyre-stickify,spyre-fold-views | %filecheck %s
// RUN: %spyre-import %S/../../../examples/rope.py:build | %spyre-opt -p spyre-stickify,spyre-fold-views > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir -p spyre-stickify,spyre-fold-views | diff - %t.once.mlir

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[FREQS:[^:]*]]: tensor<2x256x2x2x64xf16, {{.*}}, %[[Q:[^:]*]]: tensor<2x256x4096xf16,
// CHECK-NOT:     spyre.view
// CHECK:         %[[MUL:.*]] = spyre.pointwise "mul" (%[[FREQS]], %[[Q]])
// CHECK-SAME:      iteration_space = array<i64: 2, 256, 32, 2, 2, 64>
// CHECK-SAME:      indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (((d2 * 128) + (d4 * 64)) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>]
// CHECK:         %[[SUM:.*]] = spyre.reduce "sum" (%[[MUL]]) dims [4]
// CHECK-SAME:      -> tensor<2x256x32x2x1x64xf16, #spyre.layout<device_size = [256, 32, 2, 1, 1, 2, 64], dim_order = [0, 1, 2, 3, 4, 5], format = "SEN169_FP16">>
// CHECK:         %[[OUT:.*]] = spyre.restickify (%[[SUM]])
// CHECK-SAME:      iteration_space = array<i64: 2, 256, 32, 64, 2>
// CHECK-SAME:      indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4, 0, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, ((d4 * 64) + d3))>]
// CHECK-SAME:      -> tensor<2x256x32x128xf16, #spyre.layout<device_size = [256, 32, 2, 2, 64], dim_order = [0, 1, 2, 3], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[OUT]]
