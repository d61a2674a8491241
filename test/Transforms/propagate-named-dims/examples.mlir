// spyre-propagate-named-dims on imported examples: the coarse-tiling seed,
// seed 002's x_1d.view(M, K) @ y, a flatten, and the RoPE block's views.
// REQUIRES: torch
// RUN: %spyre-import %S/../../../examples/add_mul_nested.py:build | %spyre-opt -p spyre-propagate-named-dims | %filecheck %s --check-prefix=ADDMUL
// RUN: %spyre-import %S/../../../examples/wsr_matmul.py:build_view > %t.view.mlir
// RUN: %spyre-opt %t.view.mlir -p spyre-propagate-named-dims | %filecheck %s --check-prefix=VIEW
// RUN: %spyre-opt %t.view.mlir -p spyre-propagate-named-dims,spyre-propagate-named-dims | %filecheck %s --check-prefix=VIEW
// RUN: %spyre-import %S/Inputs/flatten.py:build | %spyre-opt -p spyre-propagate-named-dims | %filecheck %s --check-prefix=FLATTEN
// RUN: %spyre-import %S/../../../examples/rope.py:build | %spyre-opt -p spyre-propagate-named-dims 2>&1 | %filecheck %s --check-prefix=ROPE

// ADDMUL-LABEL: func.func @main(
// ADDMUL: %[[Y:.*]] = spyre.pointwise "add" (%a, %b) {hints = {{.*}}, dims = {{\[\["A"\], \["B"\]\]}}}
// ADDMUL-NEXT: spyre.pointwise "mul" (%[[Y]], %c) {hints = {{.*}}, dims = {{\[\["A"\], \["B"\]\]}}}

// The view splits x_1d's ["M", "K"]; the matmul iterates (M, N, K).
// VIEW-LABEL: func.func @main(
// VIEW: %[[X:.*]] = spyre.view %x_1d affine_map<(d0, d1) -> (((d0 * 256) + d1))> {dims = {{\[\["M"\], \["K"\]\]}}} : tensor<16384xf16> -> tensor<64x256xf16>
// VIEW-NEXT: %[[P:.*]] = spyre.matmul (%[[X]], %y) {hints = {{.*}}, dims = {{\[\["M"\], \["N"\], \["K"\]\]}}}
// VIEW-NEXT: spyre.pointwise "add" (%[[P]], %z) {hints = {{.*}}, dims = {{\[\["M"\], \["N"\]\]}}}

// x [50, 10, 200] named [C, D, E] flattened to [500, 200]: the merged dim carries ["C", "D"].
// FLATTEN-LABEL: func.func @main(
// FLATTEN: %[[F:.*]] = spyre.view %x {{.*}} {dims = {{\[\["C", "D"\], \["E"\]\]}}} : tensor<50x10x200xf16> -> tensor<500x200xf16>
// FLATTEN-NEXT: spyre.pointwise "add" (%[[F]], %y) {dims = {{\[\["C", "D"\], \["E"\]\]}}}

// RoPE: q [B, L, H*D] viewed as [B, L, H, D] then [B, L, H, 2, D/2] (D split
// into "D/64" and "D%64"); cached_freqs is unnamed ("%cached_freqs.<d>").  The
// mul takes the user names over the generated ones, quietly; the sum reduces
// "D/64"; the flatten merges the rotation dim and "D%64".
// ROPE-NOT: warning
// ROPE-LABEL: func.func @main(
// ROPE: %[[Q4:.*]] = spyre.view %q {{.*}} {dims = {{\[\["B"\], \["L"\], \["H"\], \["D"\]\]}}}
// ROPE-NEXT: %[[Q5:.*]] = spyre.view %[[Q4]] {{.*}} {dims = {{\[\["B"\], \["L"\], \["H"\], \["D/64"\], \["D%64"\]\]}}}
// ROPE-NEXT: %[[F:.*]] = spyre.view %cached_freqs {{.*}} {dims = {{\[\["%cached_freqs.0"\], \["%cached_freqs.1"\], \[\], \["%cached_freqs.2"\], \["%cached_freqs.3"\], \["%cached_freqs.4"\]\]}}}
// ROPE-NEXT: %[[QU:.*]] = spyre.view %[[Q5]] {{.*}} {dims = {{\[\["B"\], \["L"\], \["H"\], \[\], \["D/64"\], \["D%64"\]\]}}}
// ROPE-NEXT: %[[M:.*]] = spyre.pointwise "mul" (%[[F]], %[[QU]]) {dims = {{\[\["B"\], \["L"\], \["H"\], \["%cached_freqs.2"\], \["D/64"\], \["D%64"\]\]}}}
// ROPE-NEXT: %[[S:.*]] = spyre.reduce "sum" (%[[M]]) dims [4] {dims = {{\[\["B"\], \["L"\], \["H"\], \["%cached_freqs.2"\], \["D%64"\], \["D/64"\]\]}}}
// ROPE-NEXT: spyre.view %[[S]] {{.*}} {dims = {{\[\["B"\], \["L"\], \["H"\], \["%cached_freqs.2", "D%64"\]\]}}} : tensor<2x256x32x2x1x64xf16> -> tensor<2x256x32x128xf16>
// ROPE-NOT: warning
