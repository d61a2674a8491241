// Attention masks as data.  An integer or bool input read as data (not as an index) is held as 0/1
// flags in f16, with its host dtype and the range [0, 2) the runtime checks; its conversion to bool
// is "notequal" 0.  aten.index.Tensor with compile-time index tensors affine in the result's
// coordinates (transformers' padding_mask[batch_idx, kv_idx]) is a view; with one index tensor,
// data or any compile-time one, an indirect read.  cumsum is a matmul with a triangle of ones; the
// integers it gives, read as an index, are converted to i32 by an "identity".
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_padding_mask | %filecheck %s --check-prefix=MASK
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_padding_mask | %spyre-opt | %filecheck %s --check-prefix=MASK
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_masked_rows | %filecheck %s --check-prefix=BOOL
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_data_index | %filecheck %s --check-prefix=DATA
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_shuffled | %filecheck %s --check-prefix=SHUFFLED
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_positions | %filecheck %s --check-prefix=CUMSUM
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_positions | %spyre-opt | %filecheck %s --check-prefix=CUMSUM
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_position_rows | %filecheck %s --check-prefix=POSROWS
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_position_rows | %spyre-opt | %filecheck %s --check-prefix=POSROWS
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_index_and_data | %filecheck %s --check-prefix=TWO-WAYS
// RUN: %spyre-import %S/Inputs/padding_masks.py:build_index_and_data | %spyre-opt | %filecheck %s --check-prefix=TWO-WAYS
// RUN: not %spyre-import %S/Inputs/padding_masks.py:build_shuffled_pairs 2>&1 | %filecheck %s --check-prefix=PAIRS
// RUN: not %spyre-import %S/Inputs/padding_masks.py:build_uint16_mask 2>&1 | %filecheck %s --check-prefix=UINT16

// MASK-LABEL: func.func @main(%scores: tensor<2x1x8x8xf32> {{.*}}, %attention_mask: tensor<2x8xf16> {spyre.role = "input", spyre.name = "attention_mask", spyre.host_dtype = "int64", spyre.range = array<i64: 0, 2>}, %const_le: tensor<1x1x8x8xf16> {{.*}}) -> (tensor<2x1x8x8xf32> {spyre.name = "add"})
// MASK-NEXT:    %[[FLAGS:.*]] = spyre.pointwise "notequal" (%attention_mask) consts {y = 0.000000e+00 : f64} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// MASK-NEXT:    %[[PADDING:.*]] = spyre.view %[[FLAGS]] affine_map<(d0, d1, d2, d3) -> (d0, d3)> : tensor<2x8xf16> -> tensor<2x1x1x8xf16>
// MASK-NEXT:    %[[ALLOWED:.*]] = spyre.pointwise "mul" (%const_le, %[[PADDING]]) : (tensor<1x1x8x8xf16>, tensor<2x1x1x8xf16>) -> tensor<2x1x8x8xf16>
// MASK-NEXT:    %[[ZERO:.*]] = spyre.fill 0.0 : tensor<f32>
// MASK-NEXT:    %[[NINF:.*]] = spyre.fill -inf : tensor<f32>
// MASK-NEXT:    %[[COND:.*]] = spyre.pointwise "identity" (%[[ALLOWED]]) : (tensor<2x1x8x8xf16>) -> tensor<2x1x8x8xf32>
// MASK-NEXT:    %[[BIAS:.*]] = spyre.pointwise "where3" (%[[COND]], %[[ZERO]], %[[NINF]]) : (tensor<2x1x8x8xf32>, tensor<f32>, tensor<f32>) -> tensor<2x1x8x8xf32>
// MASK-NEXT:    %[[SUM:.*]] = spyre.pointwise "add" (%scores, %[[BIAS]])
// MASK-NEXT:    func.return %[[SUM]]

// BOOL-LABEL: func.func @main(%x: tensor<2x8x64xf16> {{.*}}, %mask: tensor<2x8xf16> {spyre.role = "input", spyre.name = "mask", spyre.host_dtype = "bool", spyre.range = array<i64: 0, 2>}) -> (tensor<2x8x64xf16> {spyre.name = "mul"})
// BOOL-NEXT:    %[[ROWS:.*]] = spyre.view %mask affine_map<(d0, d1, d2) -> (d0, d1)> : tensor<2x8xf16> -> tensor<2x8x1xf16>
// BOOL-NEXT:    %[[MASKED:.*]] = spyre.pointwise "mul" (%x, %[[ROWS]]) : (tensor<2x8x64xf16>, tensor<2x8x1xf16>) -> tensor<2x8x64xf16>
// BOOL-NEXT:    func.return %[[MASKED]]

// DATA-LABEL: func.func @main(%x: tensor<4x50x64xf32> {{.*}}, %rows: tensor<40xi32> {spyre.role = "input", spyre.name = "rows"})
// DATA-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%rows, %x) {indirect_dim = 1 : i64} : (tensor<40xi32>, tensor<4x50x64xf32>) -> tensor<4x40x64xf32>
// DATA-NEXT:    func.return %[[ROWS]]

// SHUFFLED-LABEL: func.func @main(%x: tensor<3x64xf32> {{.*}}, %const_clone: tensor<3xi32> {spyre.role = "constant", spyre.name = "const_clone", spyre.value = dense<[0, 2, 1]> : tensor<3xi32>})
// SHUFFLED-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%const_clone, %x) {indirect_dim = 0 : i64} : (tensor<3xi32>, tensor<3x64xf32>) -> tensor<3x64xf32>
// SHUFFLED-NEXT:    func.return %[[ROWS]]

// CUMSUM-LABEL: func.func @main(%mask: tensor<2x8xf16> {spyre.role = "input", spyre.name = "mask", spyre.host_dtype = "int64", spyre.range = array<i64: 0, 2>}, %const_cumsum: tensor<8x8xf16> {{.*}}dense<{{\[\[}}1.000000e+00, 1.000000e+00
// CUMSUM-NEXT:    %[[SUMS:.*]] = spyre.matmul (%mask, %const_cumsum) : (tensor<2x8xf16>, tensor<8x8xf16>) -> tensor<2x8xf16>
// CUMSUM-NEXT:    %[[POS_IDS:.*]] = spyre.pointwise "mul" (%[[SUMS]], %mask) : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x8xf16>
// CUMSUM-NEXT:    func.return %[[POS_IDS]]

// POSROWS-LABEL: func.func @main(%table: tensor<16x64xf32> {{.*}}, %mask: tensor<2x8xf16> {{.*}}, %const_cumsum: tensor<8x8xf16>
// POSROWS-NEXT:    %[[SUMS:.*]] = spyre.matmul (%mask, %const_cumsum) : (tensor<2x8xf16>, tensor<8x8xf16>) -> tensor<2x8xf16>
// POSROWS-NEXT:    %[[FROM_ZERO:.*]] = spyre.pointwise "sub" (%[[SUMS]]) consts {y = 1.000000e+00 : f64}
// POSROWS-NEXT:    %[[POS_IDS:.*]] = spyre.pointwise "clip" (%[[FROM_ZERO]]) consts {min = 0.000000e+00 : f64} : (tensor<2x8xf16>) -> tensor<2x8xf16>
// POSROWS-NEXT:    %[[INDEX:.*]] = spyre.pointwise "identity" (%[[POS_IDS]]) : (tensor<2x8xf16>) -> tensor<2x8xi32>
// POSROWS-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%[[INDEX]], %table) {indirect_dim = 0 : i64} : (tensor<2x8xi32>, tensor<16x64xf32>) -> tensor<2x8x64xf32>
// POSROWS-NEXT:    func.return %[[ROWS]]

// Token ids read both as an index and as data: the input stays an int32 index, and its data is
// the table of the values below the indexed table's 8 rows, read through it.
// TWO-WAYS-LABEL: func.func @main(%table: tensor<8x64xf32> {{.*}}, %ids: tensor<2x4xi32> {{.*}}, %const_index_values: tensor<8x1xf32> {spyre.role = "constant", {{.*}} spyre.value = dense<{{\[\[}}0.000000e+00], [1.000000e+00], [2.000000e+00]
// TWO-WAYS-NEXT:    %[[VALUES:.*]] = spyre.pointwise "identity" (%ids, %const_index_values) {indirect_dim = 0 : i64} : (tensor<2x4xi32>, tensor<8x1xf32>) -> tensor<2x4x1xf32>
// TWO-WAYS-NEXT:    %[[FLOATS:.*]] = spyre.view %[[VALUES]] affine_map<(d0, d1) -> (d0, d1, 0)> : tensor<2x4x1xf32> -> tensor<2x4xf32>
// TWO-WAYS-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64}
// TWO-WAYS-NEXT:    %[[COLUMN:.*]] = spyre.view %[[FLOATS]]
// TWO-WAYS-NEXT:    spyre.pointwise "mul" (%[[ROWS]], %[[COLUMN]])

// PAIRS: padding_masks.py:40: error: unsupported ATen op 'aten.index.Tensor': 2 index tensors that are not a view of the indexed value
// PAIRS-NOT: Traceback

// UINT16: padding_masks.py:15: error: graph input 'mask' has unsupported dtype torch.uint16 (Spyre has float16, bfloat16, float32, int8 and int32; integer inputs are staged as int32 indices, or as 0/1 flags where they are read as data)
// UINT16-NOT: Traceback
