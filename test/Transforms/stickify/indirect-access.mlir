// A table read through an index: the result is sticked on a data dim of the table, the table
// shares it (restickified when its stick is the gathered dim), the int32 index keeps a stick of
// its own (32 entries), and the result's entry dim is padded to whole sticks of indices.
// RUN: not %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null | %filecheck %s
// RUN: not %spyre-opt %s --split-input-file -p spyre-stickify 2>&1 >/dev/null | %filecheck %s --check-prefix=ERR

// 100 token ids: the result's entry dim takes 128 rows (4 sticks of indices).
// CHECK-LABEL: func.func @embedding
// CHECK:         spyre.pointwise "identity" (%{{.*}}, %{{.*}}) {indirect_dim = 0 : i64} : (tensor<2x100xi32, #spyre.layout<device_size = [4, 2, 32], dim_order = [0, 1], format = "IEEE_INT32">>, tensor<1000x96xf16, #spyre.layout<device_size = [2, 1000, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<2x100x96xf16, #spyre.layout<device_size = [128, 2, 2, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>
func.func @embedding(%table: tensor<1000x96xf16> {spyre.role = "parameter", spyre.name = "table"},
                     %ids: tensor<2x100xi32> {spyre.role = "input", spyre.name = "ids"}) -> tensor<2x100x96xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
  func.return %rows : tensor<2x100x96xf16>
}

// -----

// index_select along the table's stick dim: the table is restickified onto its rows' other dim.
// CHECK-LABEL: func.func @select_columns
// CHECK:         %[[T:.*]] = spyre.restickify (%{{.*}}) : ({{.*}}) -> tensor<64x50xf16, #spyre.layout<device_size = [1, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK:         spyre.pointwise "identity" (%{{.*}}, %[[T]]) {indirect_dim = 1 : i64} : ({{.*}}) -> tensor<64x40xf16, #spyre.layout<device_size = [1, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
func.func @select_columns(%table: tensor<64x50xf16> {spyre.role = "input", spyre.name = "table"},
                          %rows: tensor<40xi32> {spyre.role = "input", spyre.name = "rows"}) -> tensor<64x40xf16> {
  %cols = spyre.pointwise "identity" (%rows, %table) {indirect_dim = 1 : i64} : (tensor<40xi32>, tensor<64x50xf16>) -> tensor<64x40xf16>
  func.return %cols : tensor<64x40xf16>
}

// -----

// ERR: indirect-access.mlir:[[# @LINE + 3]]:3: error: reading a table through an index needs a table dim besides the gathered one to carry the stick (a 1-d table has none)
func.func @one_dim_table(%table: tensor<50xf16> {spyre.role = "input", spyre.name = "table"},
                         %rows: tensor<40xi32> {spyre.role = "input", spyre.name = "rows"}) -> tensor<40xf16> {
  %picked = spyre.pointwise "identity" (%rows, %table) {indirect_dim = 0 : i64} : (tensor<40xi32>, tensor<50xf16>) -> tensor<40xf16>
  func.return %picked : tensor<40xf16>
}
