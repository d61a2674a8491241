// Compile-time evaluation: the causal mask and the positions are computed from
// arange alone, so the import evaluates them (8 ATen ops) and the add and the
// select read them as constant arguments holding their values; the bool mask is
// 0/1 in the select's float16.  The -inf the mask fills with is a 0-d fill.
// The values print exactly, so the module round-trips.
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/causal_positions.py:build | %filecheck %s
// RUN: %spyre-import %S/Inputs/causal_positions.py:build | %spyre-opt | %filecheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16> {spyre.role = "input", spyre.name = "x"},
// CHECK-SAME:    %[[MASK:.*]]: tensor<4x4xf16> {spyre.role = "constant", spyre.name = "const_bitwise_not", spyre.value = dense<{{\[\[}}0.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>},
// CHECK-SAME:    %[[POS:.*]]: tensor<4x1xf16> {spyre.role = "constant", spyre.name = "const_to_copy", spyre.value = dense<{{\[\[}}0.000000e+00], [1.000000e+00], [2.000000e+00], [3.000000e+00]]> : tensor<4x1xf32>})
// CHECK-SAME:    attributes {spyre.folded_ops = 8 : i64}
// CHECK:         %[[INF:.*]] = spyre.fill -inf : tensor<f16>
// CHECK-NEXT:    %{{.*}} = spyre.pointwise "where3" (%[[MASK]], %[[INF]], %{{.*}})
// CHECK:         spyre.pointwise "add" (%{{.*}}, %[[POS]])
