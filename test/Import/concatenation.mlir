// torch.cat imports as a tensor.empty of the result and, per piece, a spyre.pointwise
// "identity" copy inserted at its offset along the cat dim; torch.stack is a cat along a
// new dim of extent 1 (viewed back to the stacked shape).  Llama's rotate_half of halves
// narrower than a stick, cat((-x2, x1), -1), is x @ R instead: one matmul by a constant
// signed permutation.
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/concatenation.py:build_swapped_halves | %filecheck %s --check-prefix=HALVES
// RUN: %spyre-import %S/Inputs/concatenation.py:build_swapped_halves | %spyre-opt | %filecheck %s --check-prefix=HALVES
// RUN: %spyre-import %S/Inputs/concatenation.py:build_rotate_half | %spyre-opt | %filecheck %s --check-prefix=ROTATE
// RUN: %spyre-import %S/Inputs/concatenation.py:build_stack | %filecheck %s --check-prefix=STACK

// HALVES-LABEL: func.func @main(%x: tensor<2x16x64xf16>
// HALVES:         %[[HIGH:.*]] = spyre.view %x affine_map<(d0, d1, d2) -> (d0, d1, (d2 + 32))> : tensor<2x16x64xf16> -> tensor<2x16x32xf16>
// HALVES-NEXT:    %[[LOW:.*]] = spyre.view %x affine_map<(d0, d1, d2) -> (d0, d1, d2)> : tensor<2x16x64xf16> -> tensor<2x16x32xf16>
// HALVES-NEXT:    %[[FULL:.*]] = tensor.empty() : tensor<2x16x64xf16>
// HALVES-NEXT:    %[[COPY0:.*]] = spyre.pointwise "identity" (%[[HIGH]]) : (tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
// HALVES-NEXT:    %[[PART:.*]] = tensor.insert_slice %[[COPY0]] into %[[FULL]][0, 0, 0] [2, 16, 32] [1, 1, 1] : tensor<2x16x32xf16> into tensor<2x16x64xf16>
// HALVES-NEXT:    %[[COPY1:.*]] = spyre.pointwise "identity" (%[[LOW]]) : (tensor<2x16x32xf16>) -> tensor<2x16x32xf16>
// HALVES-NEXT:    %[[JOINED:.*]] = tensor.insert_slice %[[COPY1]] into %[[PART]][0, 0, 32] [2, 16, 32] [1, 1, 1] : tensor<2x16x32xf16> into tensor<2x16x64xf16>
// HALVES-NEXT:    func.return %[[JOINED]] : tensor<2x16x64xf16>

// ROTATE-LABEL: func.func @main(%x: tensor<2x16x64xf16>
// ROTATE-SAME:    %[[R:.*]]: tensor<64x64xf16> {spyre.role = "constant"
// ROTATE-NEXT:    %[[ROTATED:.*]] = spyre.matmul (%x, %[[R]]) : (tensor<2x16x64xf16>, tensor<64x64xf16>) -> tensor<2x16x64xf16>
// ROTATE-NEXT:    func.return %[[ROTATED]] : tensor<2x16x64xf16>

// STACK-LABEL: func.func @main(%a: tensor<8x64xf32>
// STACK:         %[[B2:.*]] = spyre.pointwise "mul" (%b)
// STACK-NEXT:    %[[FULL:.*]] = tensor.empty() : tensor<16x64xf32>
// STACK-NEXT:    %[[COPY0:.*]] = spyre.pointwise "identity" (%a)
// STACK-NEXT:    %[[PART:.*]] = tensor.insert_slice %[[COPY0]] into %[[FULL]][0, 0] [8, 64] [1, 1]
// STACK-NEXT:    %[[COPY1:.*]] = spyre.pointwise "identity" (%[[B2]])
// STACK-NEXT:    %[[JOINED:.*]] = tensor.insert_slice %[[COPY1]] into %[[PART]][8, 0] [8, 64] [1, 1]
// STACK-NEXT:    %[[STACK:.*]] = spyre.view %[[JOINED]] affine_map<(d0, d1, d2) -> (((d0 * 8) + d1), d2)> : tensor<16x64xf32> -> tensor<2x8x64xf32>
// STACK-NEXT:    func.return %[[STACK]]
