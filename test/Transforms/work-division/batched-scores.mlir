// Attention scores of 32 heads tiled by 256 query rows on 32 cores, the scores matmul in the
// default layout of a batch of matrices ([H, S, D] @ [H, D, S]): it computes at the batched
// rate, longer than its reads take under any split that uses every core, so splitting the heads
// alone and splitting them 16 ways with the keys in halves tie on price.  Work division takes
// the split that reads every operand once (the heads); the other read each query row twice and
// left the softmax's reductions split across the keys, their partial results in HBM.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile,spyre-work-division' | %filecheck %s

// CHECK-LABEL: func.func @attention
// CHECK:         scf.for
// CHECK:         spyre.matmul {{.*}}core_splits = array<i64: 32, 1, 1, 1>
// CHECK:         spyre.pointwise "add" {{.*}}core_splits = array<i64: 32, 1, 1>
// CHECK:         spyre.reduce "max" {{.*}}core_splits = array<i64: 32, 1, 1>
// CHECK:         spyre.reduce "sum" {{.*}}core_splits = array<i64: 32, 1, 1>
// CHECK:         spyre.pointwise "realdiv" {{.*}}core_splits = array<i64: 32, 1, 1>
func.func @attention(%q: tensor<32x1024x64xf32> {spyre.dims = [["H"], ["S"], ["D"]]},
                     %k: tensor<32x64x1024xf32> {spyre.dims = [["H"], ["D"], ["S"]]},
                     %m: tensor<1024x1024xf32>) -> tensor<32x1024x1024xf32> {
  %s = spyre.matmul (%q, %k) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x64xf32>, tensor<32x64x1024xf32>) -> tensor<32x1024x1024xf32>
  %x = spyre.pointwise "add" (%s, %m) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %mx = spyre.reduce "max" (%x) dims [2] {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1xf32>
  %d = spyre.pointwise "sub" (%x, %mx) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x1024xf32>, tensor<32x1024x1xf32>) -> tensor<32x1024x1024xf32>
  %e = spyre.pointwise "exp" (%d) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %t = spyre.reduce "sum" (%e) dims [2] {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1xf32>
  %p = spyre.pointwise "realdiv" (%e, %t) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<32x1024x1024xf32>, tensor<32x1024x1xf32>) -> tensor<32x1024x1024xf32>
  func.return %p : tensor<32x1024x1024xf32>
}
