// embedding, index_select and gather import as a spyre.pointwise "identity" whose operand #0 is
// the index, an int32 tensor (int64 token ids are staged as int32), and operand #1 the table it
// reads along indirect_dim; gather reads one element per index entry (explicit maps, the table's
// holding 0 in the gathered dim).
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/indirect_access.py:build_embedding | %filecheck %s --check-prefix=EMB
// RUN: %spyre-import %S/Inputs/indirect_access.py:build_embedding | %spyre-opt | %filecheck %s --check-prefix=EMB
// RUN: %spyre-import %S/Inputs/indirect_access.py:build_index_select | %filecheck %s --check-prefix=SELECT
// RUN: %spyre-import %S/Inputs/indirect_access.py:build_gather | %filecheck %s --check-prefix=GATHER
// RUN: %spyre-import %S/Inputs/indirect_access.py:build_gather | %spyre-opt | %filecheck %s --check-prefix=GATHER
// RUN: not %spyre-import %S/Inputs/indirect_access.py:build_integer_table 2>&1 | %filecheck %s --check-prefix=INTEGER

// EMB-LABEL: func.func @main(%p_wte_weight: tensor<1000x96xf16> {{.*}}, %input_ids: tensor<2x100xi32> {spyre.role = "input", spyre.name = "input_ids"}) -> (tensor<2x100x96xf16> {spyre.name = "embedding"})
// EMB-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%input_ids, %p_wte_weight) {indirect_dim = 0 : i64} : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
// EMB-NEXT:    func.return %[[ROWS]]

// SELECT-LABEL: func.func @main(%table: tensor<4x50x64xf32>
// SELECT-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%rows, %table) {indirect_dim = 1 : i64} : (tensor<40xi32>, tensor<4x50x64xf32>) -> tensor<4x40x64xf32>
// SELECT-NEXT:    func.return %[[ROWS]]

// GATHER-LABEL: func.func @main(%table: tensor<4x50xf16>
// GATHER-NEXT:    %[[ELEMS:.*]] = spyre.pointwise "identity" (%index, %table) {indirect_dim = 1 : i64, iteration_space = array<i64: 4, 40>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x40xi32>, tensor<4x50xf16>) -> tensor<4x40xf16>
// GATHER-NEXT:    func.return %[[ELEMS]]

// INTEGER: indirect_access.py:22: error: unsupported ATen op 'aten.index_select.default': reading an integer table through an index is supported for a table known at compile time, of values below 2**24
// INTEGER-NOT: Traceback
