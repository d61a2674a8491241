// Tabulation over an input's values: `pos`, an int64 [1] input, indexes a buffer of 4 rows, so it
// takes the values 0..3 (spyre.range = array<i64: 0, 4>).  What the program computes from `pos`
// alone (the buffer's row, the causal mask, the rotary cosine) is evaluated at compile time for
// each of them; the device reads each table's row through `pos`, a spyre.pointwise "identity"
// with indirect_dim = 0, viewed to the value's shape.  The mask is a float table of 0 and -inf.
// The row a KV cache is written at, `arange(1) + pos`, is `pos` itself: no table.  An index that
// is `pos` plus a constant is refused (Spyre has no integer arithmetic), and so is a value of an
// integer input that indexes nothing: its range is unknown.
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/tabulation.py:build | %filecheck %s
// RUN: %spyre-import %S/Inputs/tabulation.py:build | %spyre-opt | %filecheck %s
// RUN: %spyre-import %S/Inputs/tabulation.py:build_identity | %filecheck %s --check-prefix=IDENTITY
// RUN: not %spyre-import %S/Inputs/tabulation.py:build_offset 2>&1 | %filecheck %s --check-prefix=OFFSET
// RUN: not %spyre-import %S/Inputs/tabulation.py:build_unknown_range 2>&1 | %filecheck %s --check-prefix=UNKNOWN

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4xf32> {spyre.role = "input", spyre.name = "x"},
// CHECK-SAME:    %[[POS:.*]]: tensor<1xi32> {spyre.role = "input", spyre.name = "pos", spyre.range = array<i64: 0, 4>},
// CHECK-SAME:    %[[COS:.*]]: tensor<4x4xf32> {spyre.role = "constant", spyre.name = "table_cos", spyre.value = dense<{{\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], [0.540302336, 0.87758255, 0.968912423, 0.992197692], [-0.416146845, 0.540302336, 0.87758255, 0.968912423], [-0.989992499, 7.073720e-02, 0.731688857, 0.9305076]]> : tensor<4x4xf32>},
// CHECK-SAME:    %[[MASK:.*]]: tensor<4x4xf32> {spyre.role = "constant", spyre.name = "table_where", spyre.value = dense<{{\[\[}}0.000000e+00, 0xff800000, 0xff800000, 0xff800000], [0.000000e+00, 0.000000e+00, 0xff800000, 0xff800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xff800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>},
// CHECK-SAME:    %[[ROWS:.*]]: tensor<4x4xf32> {spyre.role = "constant", spyre.name = "table_index_select", spyre.value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00], {{.*}}]> : tensor<4x4xf32>})
// CHECK-NEXT:    %[[COS_ROW:.*]] = spyre.pointwise "identity" (%[[POS]], %[[COS]]) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[COS_VALUE:.*]] = spyre.view %[[COS_ROW]] affine_map<(d0) -> (0, d0)> : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[ROTATED:.*]] = spyre.pointwise "mul" (%[[X]], %[[COS_VALUE]])
// CHECK-NEXT:    %[[MASK_ROW:.*]] = spyre.pointwise "identity" (%[[POS]], %[[MASK]]) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[MASK_VALUE:.*]] = spyre.view %[[MASK_ROW]] affine_map<(d0) -> (0, d0)> : tensor<1x4xf32> -> tensor<4xf32>
// CHECK-NEXT:    %[[MASKED:.*]] = spyre.pointwise "add" (%[[ROTATED]], %[[MASK_VALUE]])
// CHECK-NEXT:    %[[ROW:.*]] = spyre.pointwise "identity" (%[[POS]], %[[ROWS]]) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<4x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = spyre.pointwise "add" (%[[MASKED]], %[[ROW]])
// CHECK-NEXT:    func.return %[[SUM]]

// IDENTITY-LABEL: func.func @main
// IDENTITY-SAME:    (%[[WEIGHT:.*]]: tensor<16x64xf32> {{.*}}, %[[POS:.*]]: tensor<1xi32> {spyre.role = "input", spyre.name = "pos", spyre.range = array<i64: 0, 16>}) -> (tensor<1x64xf32> {spyre.name = "index_select"})
// IDENTITY-NEXT:    %[[ROW:.*]] = spyre.pointwise "identity" (%[[POS]], %[[WEIGHT]]) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<16x64xf32>) -> tensor<1x64xf32>
// IDENTITY-NEXT:    func.return %[[ROW]]

// OFFSET: tabulation.py:28: error: 'aten.index_select.default' reads 'add_1' as an index, computed at compile time from input 'pos' but not the input itself (the input + 1): Spyre has no integer arithmetic, and reading an integer table through an index is not supported
// OFFSET-NOT: Traceback

// UNKNOWN: tabulation.py:32: error: the values of 'aten.cos.default' depend on input 'pos', an integer whose range is unknown: Spyre computes such values at compile time for every value of the input, which needs its range; it is known when the input (or a value computed from it) indexes a tensor (index_select, embedding, gather, index, index_put, index_copy)
// UNKNOWN-NOT: error:
// UNKNOWN-NOT: Traceback
