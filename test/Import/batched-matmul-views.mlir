// torch writes a matmul of [1, H, S, D] tensors as a bmm of [H, S, D] views and views its
// [H, S, S] result back as [1, H, S, S].  A matmul read only through a view that inserts dims of
// one element writes that shape itself (a constant 0 in its result map), so that the ops that
// read it (the softmax) share its layout: the view is gone.  At batch 2 the view splits the
// batch dim, and the matmul keeps its bmm shape.
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/attention_scores.py:build_one | %filecheck %s --check-prefix=ONE
// RUN: %spyre-import %S/Inputs/attention_scores.py:build_one | %spyre-opt | %filecheck %s --check-prefix=ONE
// RUN: %spyre-import %S/Inputs/attention_scores.py:build_two | %filecheck %s --check-prefix=TWO

// ONE-LABEL: func.func @main
// ONE:         %[[S:.*]] = spyre.matmul (%{{.*}}, %{{.*}}) {iteration_space = array<i64: 2, 16, 16, 32>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>]} : (tensor<2x16x32xf32>, tensor<2x32x16xf32>) -> tensor<1x2x16x16xf32>
// ONE-NEXT:    %[[MAX:.*]] = spyre.reduce "max" (%[[S]]) dims [3] : (tensor<1x2x16x16xf32>) -> tensor<1x2x16x1xf32>
// ONE-NEXT:    spyre.pointwise "sub" (%[[S]], %[[MAX]])
// ONE:         %[[O:.*]] = spyre.matmul {{.*}} -> tensor<1x2x16x32xf32>
// ONE-NEXT:    func.return %[[O]] : tensor<1x2x16x32xf32>

// TWO-LABEL: func.func @main
// TWO:         %[[S:.*]] = spyre.matmul (%{{.*}}, %{{.*}}) : (tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<4x16x16xf32>
// TWO-NEXT:    spyre.view %[[S]] affine_map<(d0, d1, d2, d3) -> (((d0 * 2) + d1), d2, d3)> : tensor<4x16x16xf32> -> tensor<2x2x16x16xf32>
