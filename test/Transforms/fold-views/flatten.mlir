// spyre-fold-views on seed 001's flatten example `x.flatten(0, 1) + y`, x
// [50, 10, 200], y [500, 200]: the view folds into the add's maps and the
// iteration space splits p (500) into {10, 50}: no division is left.
// REQUIRES: torch
// RUN: %spyre-opt %s -p spyre-stickify,spyre-fold-views | %filecheck %s
// RUN: %spyre-import %S/Inputs/flatten.py:build | %spyre-opt -p spyre-stickify,spyre-fold-views | %filecheck %s
// RUN: %spyre-opt %s -p spyre-stickify,spyre-fold-views > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir -p spyre-fold-views > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: %spyre-opt %t.once.mlir | diff - %t.once.mlir

// CHECK-LABEL: func.func
// CHECK-SAME:    (%[[X:.*]]: tensor<50x10x200xf16, #spyre.layout<device_size = [10, 4, 50, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>{{.*}}, %[[Y:.*]]: tensor<500x200xf16, #spyre.layout<device_size = [4, 500, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NOT:     spyre.view
// CHECK:         spyre.pointwise "add" (%[[X]], %[[Y]])
// CHECK-SAME:      iteration_space = array<i64: 10, 50, 200>
// CHECK-SAME:      indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (((d1 * 10) + d0), d2)>, affine_map<(d0, d1, d2) -> (((d1 * 10) + d0), d2)>]
// CHECK-NOT:     floordiv
// CHECK-NOT:     mod
// CHECK-NOT:     spyre.view
// CHECK:         func.return
func.func @flatten_add(%x: tensor<50x10x200xf16>, %y: tensor<500x200xf16>) -> tensor<500x200xf16> {
  %v = spyre.view %x affine_map<(d0, d1) -> (d0 floordiv 10, d0 mod 10, d1)> : tensor<50x10x200xf16> -> tensor<500x200xf16>
  %r = spyre.pointwise "add" (%v, %y) : (tensor<500x200xf16>, tensor<500x200xf16>) -> tensor<500x200xf16>
  func.return %r : tensor<500x200xf16>
}
