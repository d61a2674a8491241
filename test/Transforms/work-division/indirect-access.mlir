// A table read through an index divides its work by the index entries, in whole sticks of 32
// int32 indices, never by the table's data dims: a few entries leave cores idle.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-propagate-named-dims,spyre-stickify,spyre-work-division' 2>%t.err | %filecheck %s
// RUN: %filecheck %s --check-prefix=WARN < %t.err
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-stickify,spyre-work-division' | %filecheck %s --check-prefix=FOUR

// [2, 128] ids: 2 rows times 4 sticks of indices = 8 cores of 32; the 96 hidden columns stay whole.
// CHECK-LABEL: func.func @embedding
// CHECK:         spyre.pointwise "identity" {{.*}}core_splits = array<i64: 2, 4, 1>
// FOUR-LABEL:  func.func @embedding
// FOUR:          spyre.pointwise "identity" {{.*}}core_splits = array<i64: 1, 4, 1>
func.func @embedding(%table: tensor<1000x4096xf16> {spyre.role = "parameter", spyre.name = "table"},
                     %ids: tensor<2x128xi32> {spyre.role = "input", spyre.name = "ids"}) -> tensor<2x128x4096xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x128xi32>, tensor<1000x4096xf16>) -> tensor<2x128x4096xf16>
  func.return %rows : tensor<2x128x4096xf16>
}

// -----

// [2, 100] ids are 4 sticks per row too, the last one padded: split, the cores would also
// gather (and write) the 28 padding entries, so the cost model keeps each row on one core.
// CHECK-LABEL: func.func @padded_ids
// CHECK:         spyre.pointwise "identity" {{.*}}core_splits = array<i64: 2, 1, 1>
// FOUR-LABEL:  func.func @padded_ids
// FOUR:          spyre.pointwise "identity" {{.*}}core_splits = array<i64: 2, 1, 1>
func.func @padded_ids(%table: tensor<1000x4096xf16> {spyre.role = "parameter", spyre.name = "table"},
                      %ids: tensor<2x100xi32> {spyre.role = "input", spyre.name = "ids"}) -> tensor<2x100x4096xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x100xi32>, tensor<1000x4096xf16>) -> tensor<2x100x4096xf16>
  func.return %rows : tensor<2x100x4096xf16>
}

// -----

// 20 ids are one stick: one core, however wide the rows.
// CHECK-LABEL: func.func @few_ids
// CHECK:         spyre.pointwise "identity" {{.*}}core_splits = array<i64: 1, 1>
func.func @few_ids(%table: tensor<500x4096xf16> {spyre.role = "parameter", spyre.name = "table"},
                   %ids: tensor<20xi32> {spyre.role = "input", spyre.name = "ids"}) -> tensor<20x4096xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<20xi32>, tensor<500x4096xf16>) -> tensor<20x4096xf16>
  func.return %rows : tensor<20x4096xf16>
}

// -----

// A work_div hint on the table's data is skipped with a warning: the table stays whole.
// WARN: indirect-access.mlir:[[# @LINE + 5]]:3: warning: work_div split 2 for dim 'H' skipped: it would split the data of a table read through an index
// CHECK-LABEL: func.func @hinted_data
// CHECK:         spyre.pointwise "identity" {{.*}}core_splits = array<i64: 1, 1, 1>
func.func @hinted_data(%table: tensor<500x4096xf16> {spyre.role = "parameter", spyre.name = "table", spyre.dims = [["V"], ["H"]]},
                       %ids: tensor<1x20xi32> {spyre.role = "input", spyre.name = "ids"}) -> tensor<1x20x4096xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64, hints = [#spyre.hint<1, work_div = {H = 2}>]} : (tensor<1x20xi32>, tensor<500x4096xf16>) -> tensor<1x20x4096xf16>
  func.return %rows : tensor<1x20x4096xf16>
}
