// Coarse tiling of a table read through an index: the gathered dim is no iteration dim, so no
// loop runs across it.  Tiling the entries slices the index and reads the whole table in every
// iteration; tiling the table's data slices its columns and keeps all its rows.
// RUN: spyre-opt %s --split-input-file -p spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile | %filecheck %s

// CHECK-LABEL: func.func @tile_entries
// CHECK:         scf.for
// CHECK:           %[[IDS:.*]] = tensor.extract_slice %ids[0, %{{.*}}] [1, 64] [1, 1]
// CHECK-NEXT:      spyre.pointwise "identity" (%[[IDS]], %table) {indirect_dim = 0 : i64
func.func @tile_entries(%table: tensor<300x128xf16> {spyre.role = "parameter", spyre.name = "table"},
                        %ids: tensor<1x128xi32> {spyre.role = "input", spyre.name = "ids", spyre.dims = [["B"], ["S"]]})
    -> tensor<1x128x128xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64, hints = [#spyre.hint<1, tiles = {S = 2}>]} : (tensor<1x128xi32>, tensor<300x128xf16>) -> tensor<1x128x128xf16>
  func.return %rows : tensor<1x128x128xf16>
}

// -----

// CHECK-LABEL: func.func @tile_table_columns
// CHECK:         scf.for
// CHECK:           %[[COLUMNS:.*]] = tensor.extract_slice %table[0, %{{.*}}] [300, 128] [1, 1]
// CHECK-NEXT:      spyre.pointwise "identity" (%ids, %[[COLUMNS]]) {indirect_dim = 0 : i64
func.func @tile_table_columns(%table: tensor<300x256xf16> {spyre.role = "parameter", spyre.name = "table", spyre.dims = [["V"], ["H"]]},
                              %ids: tensor<1x64xi32> {spyre.role = "input", spyre.name = "ids"})
    -> tensor<1x64x256xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64, hints = [#spyre.hint<1, tiles = {H = 2}>]} : (tensor<1x64xi32>, tensor<300x256xf16>) -> tensor<1x64x256xf16>
  %twice = spyre.pointwise "mul" (%rows) consts {y = 2.0 : f64} {hints = [#spyre.hint<1, tiles = {H = 2}>]} : (tensor<1x64x256xf16>) -> tensor<1x64x256xf16>
  func.return %twice : tensor<1x64x256xf16>
}
