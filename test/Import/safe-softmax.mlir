// The guard of torch's safe softmax (scaled_dot_product_attention's decomposition: a row whose
// keys are all -inf gets zeros, not NaN) reads whether scores + mask is -inf.  With the mask known
// at compile time, that is where the mask is -inf (the scores of finite inputs are finite), so the
// row test is evaluated on the host.  A causal mask keeps every row's own key: the guard selects
// the softmax everywhere and no op of it is emitted.  A mask that masks a whole row keeps the
// guard's "where3", its condition a constant row flag instead of four passes over the scores.
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/safe_softmax.py:build_causal | %filecheck %s --check-prefix=CAUSAL
// RUN: %spyre-import %S/Inputs/safe_softmax.py:build_causal | %spyre-opt | %filecheck %s --check-prefix=CAUSAL
// RUN: %spyre-import %S/Inputs/safe_softmax.py:build_first_row_masked | %filecheck %s --check-prefix=ROW
// RUN: %spyre-import %S/Inputs/safe_softmax.py:build_first_row_masked | %spyre-opt | %filecheck %s --check-prefix=ROW

// CAUSAL-LABEL: func.func @main
// CAUSAL:         %[[SCORES:.*]] = spyre.pointwise "add" (%{{.*}}, %const_where) : (tensor<1x2x16x16xf32>, tensor<16x16xf32>) -> tensor<1x2x16x16xf32>
// CAUSAL-NEXT:    %[[MAX:.*]] = spyre.reduce "max" (%[[SCORES]]) dims [3]
// CAUSAL-NEXT:    %[[SHIFTED:.*]] = spyre.pointwise "sub" (%[[SCORES]], %[[MAX]])
// CAUSAL-NEXT:    %[[EXP:.*]] = spyre.pointwise "exp" (%[[SHIFTED]])
// CAUSAL-NEXT:    %[[SUM:.*]] = spyre.reduce "sum" (%[[EXP]]) dims [3]
// CAUSAL-NEXT:    %[[PROBS:.*]] = spyre.pointwise "realdiv" (%[[EXP]], %[[SUM]])
// CAUSAL-NEXT:    %[[P:.*]] = spyre.view %[[PROBS]]
// CAUSAL-NEXT:    %[[V:.*]] = spyre.view %v
// CAUSAL-NEXT:    spyre.matmul (%[[P]], %[[V]])
// CAUSAL-NOT:     "equal"
// CAUSAL-NOT:     "where3"

// ROW-LABEL: func.func @main
// ROW-SAME:      %const_logical_not: tensor<1x2x16x1xf32> {spyre.role = "constant"
// ROW:           %[[PROBS:.*]] = spyre.pointwise "realdiv"
// ROW-NEXT:      %[[ZERO:.*]] = spyre.fill 0.0 : tensor<1x1x1x1xf32>
// ROW-NEXT:      %[[GUARDED:.*]] = spyre.pointwise "where3" (%const_logical_not, %[[ZERO]], %[[PROBS]])
// ROW-NEXT:      %[[P:.*]] = spyre.view %[[GUARDED]]
// ROW-NOT:       "equal"
