// spyre-fold-views rule 5: a copy whose source rows are a division of an
// iteration dim at an offset, or by a divisor of no whole number of its blocks,
// copies whole blocks into a wider tensor; its reader reads a slice of that.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-fold-views 2>/dev/null | %filecheck %s

// Rows of a tensor repeated three times, from row 1: 67 rows of blocks 0..22.
// CHECK-LABEL: func.func @repeated_rows
// CHECK-SAME:    (%[[X:.*]]: tensor<128x77xbf16,
// CHECK-NEXT:    %[[WIDE:.*]] = spyre.restickify (%[[X]]) {iteration_space = array<i64: 3, 23, 77>, indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (((d1 * 3) + d0), d2)>]}
// CHECK-SAME:    -> tensor<69x77xbf16,
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise "exp" (%[[WIDE]]) {iteration_space = array<i64: 67, 77>, indexing_maps = [affine_map<(d0, d1) -> ((d0 + 1), d1)>, affine_map<(d0, d1) -> (d0, d1)>]}
// CHECK-NEXT:    func.return %[[E]]
func.func @repeated_rows(%x: tensor<128x77xbf16>) -> tensor<67x77xbf16> {
  %v = spyre.view %x affine_map<(d0, d1) -> ((d0 + 1) floordiv 3, d1)> : tensor<128x77xbf16> -> tensor<67x77xbf16>
  %e = spyre.pointwise "exp" (%v) : (tensor<67x77xbf16>) -> tensor<67x77xbf16>
  func.return %e : tensor<67x77xbf16>
}

// -----

// Flattened rows from row 505 (row 25 of block 3 of 160): blocks 3 and 4.
// CHECK-LABEL: func.func @flattened_rows
// CHECK-SAME:    (%[[X:.*]]: tensor<6x160x64xf32,
// CHECK-NEXT:    %[[WIDE:.*]] = spyre.restickify (%[[X]]) {iteration_space = array<i64: 160, 2, 64>, indexing_maps = [affine_map<(d0, d1, d2) -> ((d1 + 3), d0, d2)>, affine_map<(d0, d1, d2) -> (((d1 * 160) + d0), d2)>]}
// CHECK-SAME:    -> tensor<320x64xf32,
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise "exp" (%[[WIDE]]) {iteration_space = array<i64: 269, 64>, indexing_maps = [affine_map<(d0, d1) -> ((d0 + 25), d1)>, affine_map<(d0, d1) -> (d0, d1)>]}
func.func @flattened_rows(%x: tensor<6x160x64xf32>) -> tensor<269x64xf32> {
  %v = spyre.view %x affine_map<(d0, d1) -> ((d0 + 505) floordiv 160, (d0 + 505) mod 160, d1)> : tensor<6x160x64xf32> -> tensor<269x64xf32>
  %e = spyre.pointwise "exp" (%v) : (tensor<269x64xf32>) -> tensor<269x64xf32>
  func.return %e : tensor<269x64xf32>
}

// -----

// Widened, the copy would read row -1 of dim 1 (its rows are also read as
// they are): it keeps its division, which the lowering refuses with a location.
// CHECK-LABEL: func.func @widened_past_storage
// CHECK-NEXT:    spyre.restickify (%{{.*}}) {iteration_space = array<i64: 5, 64>, indexing_maps = [affine_map<(d0, d1) -> (((d0 + 1) floordiv 3), d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]}
func.func @widened_past_storage(%x: tensor<2x6x64xf16>) -> tensor<5x64xf16> {
  %v = spyre.view %x affine_map<(d0, d1) -> ((d0 + 1) floordiv 3, d0, d1)> : tensor<2x6x64xf16> -> tensor<5x64xf16>
  %e = spyre.pointwise "exp" (%v) : (tensor<5x64xf16>) -> tensor<5x64xf16>
  func.return %e : tensor<5x64xf16>
}

// -----

// A column copied from inside a stick of its storage (b[16:32]): the copy
// starts at the stick, and the reader reads its rows 16 on.
// CHECK-LABEL: func.func @column_inside_a_stick
// CHECK:         %[[WIDE:.*]] = spyre.restickify (%{{.*}}) {iteration_space = array<i64: 32, 1>, indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:    -> tensor<32x1xf16,
// CHECK:         spyre.pointwise "add" (%{{.*}}, %[[WIDE]]) {iteration_space = array<i64: 16, 100>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ((d0 + 16), 0)>, affine_map<(d0, d1) -> (d0, d1)>]}
func.func @column_inside_a_stick(%x: tensor<16x100xf16>, %b: tensor<64xf16>) -> tensor<16x100xf16> {
  %s = spyre.view %b affine_map<(d0, d1) -> (d0 + 16)> : tensor<64xf16> -> tensor<16x1xf16>
  %e = spyre.pointwise "add" (%x, %s) : (tensor<16x100xf16>, tensor<16x1xf16>) -> tensor<16x100xf16>
  func.return %e : tensor<16x100xf16>
}

// -----

// Swin's window reverse of 3 x 3 windows of 4 x 4 tokens, cropped to 10 x 10 and flattened: the
// copy writes its rows flattened (10 * h + w), so it is widened as the copy of one dim per
// iteration dim (h and w each 3 blocks of 4, 12 x 12), and the add reads its 10 x 10 in place.
// CHECK-LABEL: func.func @cropped_window_reverse
// CHECK:         %[[W:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[WIDE:.*]] = spyre.restickify (%[[W]]) {iteration_space = array<i64: 1, 4, 3, 4, 3, 32>, indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (((d2 * 3) + d4), ((d1 * 4) + d3), d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d2 * 4) + d1), ((d4 * 4) + d3), d5)>]}
// CHECK-SAME:    -> tensor<1x12x12x32xf32,
// CHECK-NEXT:    spyre.pointwise "add" (%{{.*}}, %[[WIDE]]) {iteration_space = array<i64: 1, 10, 10, 32>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, ((d2 * 10) + d1), d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, ((d2 * 10) + d1), d3)>]}
func.func @cropped_window_reverse(%a: tensor<9x16x32xf32>, %s: tensor<1x100x32xf32>) -> tensor<1x100x32xf32> {
  %w = spyre.pointwise "exp" (%a) : (tensor<9x16x32xf32>) -> tensor<9x16x32xf32>
  %v = spyre.view %w affine_map<(d0, d1, d2) -> ((((d1 floordiv 10) floordiv 4) * 3 + (d1 mod 10) floordiv 4), ((d1 floordiv 10) mod 4) * 4 + (d1 mod 10) mod 4, d2)> : tensor<9x16x32xf32> -> tensor<1x100x32xf32>
  %r = spyre.pointwise "add" (%s, %v) : (tensor<1x100x32xf32>, tensor<1x100x32xf32>) -> tensor<1x100x32xf32>
  func.return %r : tensor<1x100x32xf32>
}
