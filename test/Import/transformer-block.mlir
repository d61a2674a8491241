// A Granite-like decoder block: parameters become arguments, RMS norm, the
// projections as matmuls, attention softmax, SiLU-gated MLP under the L hint.
// REQUIRES: torch
// RUN: %spyre-import %S/../../examples/transformer_block.py:build | %filecheck %s
// RUN: %spyre-import %S/../../examples/transformer_block.py:build | %spyre-opt | %filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %p_layers_0_attn_norm_weight: tensor<256xf16> {spyre.role = "parameter", spyre.name = "p_layers_0_attn_norm_weight", spyre.target = "layers.0.attn_norm.weight"}
// CHECK-SAME: %p_layers_0_q_proj_weight: tensor<256x256xf16> {spyre.role = "parameter"
// CHECK-SAME: %x: tensor<1x128x256xf16> {spyre.role = "input", spyre.name = "x", spyre.dims = {{\[\["B"\], \["L"\], \["E"\]\]}}}
// CHECK-SAME: %mask: tensor<128x128xf16> {spyre.role = "input", spyre.name = "mask"}
// RMS norm: pow 2 -> mul, mean, add eps, rsqrt, mul.
// CHECK: %[[SQ:.*]] = spyre.pointwise "mul" (%x, %x)
// CHECK: %[[MS:.*]] = spyre.reduce "mean" (%[[SQ]]) dims [2] : (tensor<1x128x256xf16>) -> tensor<1x128x1xf16>
// CHECK: spyre.pointwise "add" (%[[MS]]) consts {y = 1.000000e-06 : f64}
// CHECK: spyre.pointwise "rsqrt"
// CHECK: spyre.matmul
// Attention softmax.
// CHECK: spyre.reduce "max"
// CHECK: spyre.pointwise "exp"
// CHECK: spyre.reduce "sum"
// CHECK: spyre.pointwise "realdiv"
// The MLP under the hint.
// CHECK: spyre.pointwise "silu" ({{.*}}) {hints = [#spyre.hint<{{[0-9]+}}, tiles = {L = 2}>]}
// CHECK: func.return
