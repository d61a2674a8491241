// spyre-fold-views: a view that reads one index of a dim lying inside a dim it
// steps along on the device (x[1] of [2, 64, 192]: dim 0 lies between dim 1 and
// the sticks) cannot be read in place, since no layout label describes the fixed
// dim and the label outside it would step as if it were not there; the copy
// iterates the fixed dim too (extent 1) so that it has a label.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-fold-views 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-fold-views 2>&1 >/dev/null | %filecheck %s --check-prefix=WARN

// CHECK-LABEL: func.func @select_inner
// CHECK-SAME:    (%[[X:.*]]: tensor<2x64x192xf16, #spyre.layout<device_size = [64, 3, 2, 64], dim_order = [0, 1, 2]
// CHECK-NEXT:    %[[COPY:.*]] = spyre.restickify (%[[X]]) {iteration_space = array<i64: 64, 192, 1>, indexing_maps = [affine_map<(d0, d1, d2) -> ((d2 + 1), d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]}
// CHECK-NEXT:    spyre.pointwise "exp" (%[[COPY]]) :
// WARN: fixed-dim.mlir:[[# @LINE + 3]]:3: warning: operand #0 is a view which fixes host dim 0 (2 elements) inside a dim it iterates; it is copied by spyre.restickify
func.func @select_inner(%x: tensor<2x64x192xf16>) -> tensor<64x192xf16> {
  %s = spyre.view %x affine_map<(d0, d1) -> (1, d0, d1)> : tensor<2x64x192xf16> -> tensor<64x192xf16>
  %e = spyre.pointwise "exp" (%s) : (tensor<64x192xf16>) -> tensor<64x192xf16>
  func.return %e : tensor<64x192xf16>
}

// -----

// A fixed dim that lies outside every dim the read steps along is a start offset:
// one row of [8, 128] read within one stick is read in place.
// CHECK-LABEL: func.func @row_in_one_stick
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {iteration_space = array<i64: 64>, indexing_maps = [affine_map<(d0) -> (2, (d0 + 64))>, affine_map<(d0) -> (d0)>]}
func.func @row_in_one_stick(%x: tensor<8x128xf16>) -> tensor<64xf16> {
  %r = spyre.view %x affine_map<(d0) -> (2, d0 + 64)> : tensor<8x128xf16> -> tensor<64xf16>
  %e = spyre.pointwise "exp" (%r) : (tensor<64xf16>) -> tensor<64xf16>
  func.return %e : tensor<64xf16>
}
