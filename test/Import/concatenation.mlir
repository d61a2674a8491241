// torch.cat imports as a tensor.empty of the result and, per piece, a spyre.pointwise
// "identity" copy inserted at its offset along the cat dim; torch.stack is a cat along a
// new dim of extent 1 (viewed back to the stacked shape).  Llama's rotate_half of halves
// narrower than a stick, cat((-x2, x1), -1), is x @ R instead: one matmul by a constant
// signed permutation.  Of halves of whole sticks, q * cos + rotate_half(q) * sin is
// computed on the halves, each inserted into its window of the result (unless a product
// is read elsewhere too).
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/concatenation.py:build_swapped_halves | %filecheck %s --check-prefix=HALVES
// RUN: %spyre-import %S/Inputs/concatenation.py:build_swapped_halves | %spyre-opt | %filecheck %s --check-prefix=HALVES
// RUN: %spyre-import %S/Inputs/concatenation.py:build_rotate_half | %spyre-opt | %filecheck %s --check-prefix=ROTATE
// RUN: %spyre-import %S/Inputs/concatenation.py:build_stack | %filecheck %s --check-prefix=STACK
// RUN: %spyre-import %S/Inputs/concatenation.py:build_rotary | %spyre-opt | %filecheck %s --check-prefix=ROTARY
// RUN: %spyre-import %S/Inputs/concatenation.py:build_rotary_product_read_twice | %filecheck %s --check-prefix=READ-TWICE

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

// ROTARY-LABEL: func.func @main(%q: tensor<1x2x16x128xf16>
// ROTARY-SAME:    %[[COS:[a-z_0-9]+]]: tensor<16x128xf16>
// ROTARY-SAME:    %[[SIN:[a-z_0-9]+]]: tensor<16x128xf16>
// ROTARY-NEXT:    %[[Q1:.*]] = spyre.view %q affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)> : tensor<1x2x16x128xf16> -> tensor<1x2x16x64xf16>
// ROTARY-NEXT:    %[[Q2:.*]] = spyre.view %q affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 64))> : tensor<1x2x16x128xf16> -> tensor<1x2x16x64xf16>
// ROTARY-NEXT:    %[[COS1:.*]] = spyre.view %[[COS]] affine_map<(d0, d1) -> (d0, d1)> : tensor<16x128xf16> -> tensor<16x64xf16>
// ROTARY-NEXT:    %[[COS2:.*]] = spyre.view %[[COS]] affine_map<(d0, d1) -> (d0, (d1 + 64))> : tensor<16x128xf16> -> tensor<16x64xf16>
// ROTARY-NEXT:    %[[SIN1:.*]] = spyre.view %[[SIN]] affine_map<(d0, d1) -> (d0, d1)> : tensor<16x128xf16> -> tensor<16x64xf16>
// ROTARY-NEXT:    %[[SIN2:.*]] = spyre.view %[[SIN]] affine_map<(d0, d1) -> (d0, (d1 + 64))> : tensor<16x128xf16> -> tensor<16x64xf16>
// ROTARY-NEXT:    %[[A:.*]] = spyre.pointwise "mul" (%[[Q1]], %[[COS1]])
// ROTARY-NEXT:    %[[B:.*]] = spyre.pointwise "mul" (%[[Q2]], %[[SIN1]])
// ROTARY-NEXT:    %[[LOW:.*]] = spyre.pointwise "sub" (%[[A]], %[[B]]) : (tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16>
// ROTARY-NEXT:    %[[C:.*]] = spyre.pointwise "mul" (%[[Q2]], %[[COS2]])
// ROTARY-NEXT:    %[[D:.*]] = spyre.pointwise "mul" (%[[Q1]], %[[SIN2]])
// ROTARY-NEXT:    %[[HIGH:.*]] = spyre.pointwise "add" (%[[C]], %[[D]]) : (tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16>
// ROTARY-NEXT:    %[[FULL:.*]] = tensor.empty() : tensor<1x2x16x128xf16>
// ROTARY-NEXT:    %[[PART:.*]] = tensor.insert_slice %[[LOW]] into %[[FULL]][0, 0, 0, 0] [1, 2, 16, 64] [1, 1, 1, 1]
// ROTARY-NEXT:    %[[OUT:.*]] = tensor.insert_slice %[[HIGH]] into %[[PART]][0, 0, 0, 64] [1, 2, 16, 64] [1, 1, 1, 1]
// ROTARY-NEXT:    func.return %[[OUT]] : tensor<1x2x16x128xf16>

// READ-TWICE-LABEL: func.func @main(%q: tensor<1x2x16x128xf16>
// READ-TWICE:         spyre.pointwise "neg"
// READ-TWICE:         tensor.empty() : tensor<1x2x16x128xf16>
// READ-TWICE-COUNT-2: tensor.insert_slice
// READ-TWICE:         %[[SUM:.*]] = spyre.pointwise "add"
// READ-TWICE-NEXT:    func.return %[[SUM]], %{{.*}} : tensor<1x2x16x128xf16>, tensor<1x2x16x128xf16>
// READ-TWICE-NOT:     spyre.pointwise "sub"
