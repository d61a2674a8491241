// spyre-fold-views: views that cannot be read in place become spyre.restickify
// copies with explicit maps; returned views are copied into the result.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views 2>&1 >/dev/null | %filecheck %s --check-prefix=WARN
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// [6, 100] viewed as [20, 30]: the stick coordinate ((d0 * 30) + d1) mod 100
// mixes both dims across sticks and no split removes it, so the view is
// copied (spyre-stickify already does, as no stick dim of x is driven by the
// add's d1; the copy reads through the division) and the add reads the copy.
// CHECK-LABEL: func.func @unreadable_reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<6x100xf16, {{.*}}, %[[Y:.*]]: tensor<20x30xf16,
// CHECK-NEXT:    %[[COPY:.*]] = spyre.restickify (%[[X]]) {iteration_space = array<i64: 20, 30>, indexing_maps = [affine_map<(d0, d1) -> ((((d0 * 30) + d1) floordiv 100), (((d0 * 30) + d1) mod 100))>, affine_map<(d0, d1) -> (d0, d1)>]}
// CHECK-SAME:      -> tensor<20x30xf16, #spyre.layout<device_size = [1, 20, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.pointwise "add" (%[[COPY]], %[[Y]]) :
// CHECK-NOT:     spyre.view
// WARN: materialise.mlir:[[# @LINE + 4]]:3: warning: operand #0 is a view that no stick dim of its storage [6, 100] can serve; it is copied by spyre.restickify
func.func @unreadable_reshape(%x: tensor<6x100xf16>, %y: tensor<20x30xf16>) -> tensor<20x30xf16> {
  %f = spyre.view %x affine_map<(d0) -> (d0 floordiv 100, d0 mod 100)> : tensor<6x100xf16> -> tensor<600xf16>
  %v = spyre.view %f affine_map<(d0, d1) -> (d0 * 30 + d1)> : tensor<600xf16> -> tensor<20x30xf16>
  %r = spyre.pointwise "add" (%v, %y) : (tensor<20x30xf16>, tensor<20x30xf16>) -> tensor<20x30xf16>
  func.return %r : tensor<20x30xf16>
}

// -----

// A slice that starts inside a stick (column 3) cannot be read in place, and a copy of
// it would start mid-stick: spyre-stickify drives the exp's stick by its rows instead,
// so x is restickified onto its rows and the slice is read in place, off the stick.
// CHECK-LABEL: func.func @misaligned_slice
// CHECK:         %[[ROWS:.*]] = spyre.restickify (%{{.*}}) : {{.*}} -> tensor<8x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.pointwise "exp" (%[[ROWS]]) {iteration_space = array<i64: 8, 64>, indexing_maps = [affine_map<(d0, d1) -> (d0, (d1 + 3))>, affine_map<(d0, d1) -> (d0, d1)>]}
// WARN: materialise.mlir:[[# @LINE + 3]]:3: warning: function argument #0 is copied by spyre.restickify to dim_order [1, 0]
func.func @misaligned_slice(%x: tensor<8x128xf16>) -> tensor<8x64xf16> {
  %s = spyre.view %x affine_map<(d0, d1) -> (d0, d1 + 3)> : tensor<8x128xf16> -> tensor<8x64xf16>
  %e = spyre.pointwise "exp" (%s) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  func.return %e : tensor<8x64xf16>
}

// -----

// A stick-aligned slice (column 64) and a row select are read in place.
// CHECK-LABEL: func.func @aligned_slice
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {iteration_space = array<i64: 64>, indexing_maps = [affine_map<(d0) -> (2, (d0 + 64))>, affine_map<(d0) -> (d0)>]}
func.func @aligned_slice(%x: tensor<8x128xf16>) -> tensor<64xf16> {
  %s = spyre.view %x affine_map<(d0, d1) -> (d0, d1 + 64)> : tensor<8x128xf16> -> tensor<8x64xf16>
  %r = spyre.view %s affine_map<(d0) -> (2, d0)> : tensor<8x64xf16> -> tensor<64xf16>
  %e = spyre.pointwise "exp" (%r) : (tensor<64xf16>) -> tensor<64xf16>
  func.return %e : tensor<64xf16>
}

// -----

// A returned view is copied into a value of the returned type; the compute op
// that also reads it reads the storage in place.
// CHECK-LABEL: func.func @returned_view
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16,
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise "exp" (%[[X]]) {iteration_space = array<i64: 2, 2, 64>, indexing_maps = [affine_map<(d0, d1, d2) -> (((d0 * 2) + d1), d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-NEXT:    %[[COPY:.*]] = spyre.restickify (%[[X]]) {iteration_space = array<i64: 2, 2, 64>, indexing_maps = [affine_map<(d0, d1, d2) -> (((d0 * 2) + d1), d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-NEXT:    func.return %[[E]], %[[COPY]]
func.func @returned_view(%x: tensor<4x64xf16>) -> (tensor<2x2x64xf16>, tensor<2x2x64xf16>) {
  %v = spyre.view %x affine_map<(d0, d1, d2) -> (d0 * 2 + d1, d2)> : tensor<4x64xf16> -> tensor<2x2x64xf16>
  %e = spyre.pointwise "exp" (%v) : (tensor<2x2x64xf16>) -> tensor<2x2x64xf16>
  func.return %e, %v : tensor<2x2x64xf16>, tensor<2x2x64xf16>
}
