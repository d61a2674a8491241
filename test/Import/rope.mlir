// The Granite RoPE block: two views, the broadcast index, unsqueeze, a
// keepdim sum and the flatten, each view with its coordinate map.
// REQUIRES: torch
// RUN: %spyre-import %S/../../examples/rope.py:build | %filecheck %s
// RUN: %spyre-import %S/../../examples/rope.py:build | %spyre-opt | %filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %cached_freqs: tensor<2x256x2x2x64xf16> {spyre.role = "input", spyre.name = "cached_freqs"}
// CHECK-SAME: %q: tensor<2x256x4096xf16> {spyre.role = "input", spyre.name = "q", spyre.dims = {{\[\["B"\], \["L"\], \["H", "D"\]\]}}}
// CHECK: %[[Q4:.*]] = spyre.view %q affine_map<(d0, d1, d2, d3) -> (d0, d1, ((d2 * 128) + d3))> : tensor<2x256x4096xf16> -> tensor<2x256x32x128xf16>
// CHECK: %[[Q5:.*]] = spyre.view %[[Q4]] affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, ((d3 * 64) + d4))> : tensor<2x256x32x128xf16> -> tensor<2x256x32x2x64xf16>
// CHECK: %[[F:.*]] = spyre.view %cached_freqs affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4, d5)> : tensor<2x256x2x2x64xf16> -> tensor<2x256x1x2x2x64xf16>
// CHECK: %[[QU:.*]] = spyre.view %[[Q5]] affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4, d5)> : tensor<2x256x32x2x64xf16> -> tensor<2x256x32x1x2x64xf16>
// CHECK: %[[M:.*]] = spyre.pointwise "mul" (%[[F]], %[[QU]]) : (tensor<2x256x1x2x2x64xf16>, tensor<2x256x32x1x2x64xf16>) -> tensor<2x256x32x2x2x64xf16>
// CHECK: %[[S:.*]] = spyre.reduce "sum" (%[[M]]) dims [4] : (tensor<2x256x32x2x2x64xf16>) -> tensor<2x256x32x2x1x64xf16>
// CHECK: %[[O:.*]] = spyre.view %[[S]] affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 floordiv 64), 0, (d3 mod 64))> : tensor<2x256x32x2x1x64xf16> -> tensor<2x256x32x128xf16>
// CHECK: func.return %[[O]] : tensor<2x256x32x128xf16>
