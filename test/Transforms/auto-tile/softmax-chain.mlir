// spyre-auto-tile: a chain of intermediates that overflow LX, each read only by
// the next ops of the chain (attention's softmax: scores plus the mask, their
// row max, the shifted scores, their exponentials, the row sums and the
// probabilities), is one candidate group from the first writer to the last op
// before a matmul, so that no intermediate of it leaves LX.  Each f32 [32, 1024,
// 1024] value is 4 MiB per core on 32 cores.  Tiling the query rows in 8 keeps
// the whole chain in LX: 3,076 us predicted, where the group of the first
// value's readers alone (add, max, sub) left exp, sum and realdiv streaming
// their 134 MB values through HBM (9,084 us).  The matmul by V ends the chain.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-auto-tile' | %filecheck %s

// CHECK-LABEL: func.func @attention
// CHECK:         spyre.pointwise "add" {{.*}}hints = [#spyre.hint<1, tiles = {Q = 8}>]
// CHECK-NEXT:    spyre.reduce "max" {{.*}}hints = [#spyre.hint<1, tiles = {Q = 8}>]
// CHECK-NEXT:    spyre.pointwise "sub" {{.*}}hints = [#spyre.hint<1, tiles = {Q = 8}>]
// CHECK-NEXT:    spyre.pointwise "exp" {{.*}}hints = [#spyre.hint<1, tiles = {Q = 8}>]
// CHECK-NEXT:    spyre.reduce "sum" {{.*}}hints = [#spyre.hint<1, tiles = {Q = 8}>]
// CHECK-NEXT:    spyre.pointwise "realdiv" {{.*}}hints = [#spyre.hint<1, tiles = {Q = 8}>]
// CHECK-NEXT:    spyre.matmul
// CHECK-NOT:     hints
func.func @attention(%s: tensor<32x1024x1024xf32> {spyre.dims = [["H"], ["Q"], ["K"]]}, %m: tensor<1024x1024xf32> {spyre.dims = [["Q"], ["K"]]},
                     %v: tensor<32x1024x64xf32> {spyre.dims = [["H"], ["K"], ["D"]]}) -> tensor<32x1024x64xf32> {
  %x = spyre.pointwise "add" (%s, %m) : (tensor<32x1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %mx = spyre.reduce "max" (%x) dims [2] : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1xf32>
  %d = spyre.pointwise "sub" (%x, %mx) : (tensor<32x1024x1024xf32>, tensor<32x1024x1xf32>) -> tensor<32x1024x1024xf32>
  %e = spyre.pointwise "exp" (%d) : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %t = spyre.reduce "sum" (%e) dims [2] : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1xf32>
  %p = spyre.pointwise "realdiv" (%e, %t) : (tensor<32x1024x1024xf32>, tensor<32x1024x1xf32>) -> tensor<32x1024x1024xf32>
  %o = spyre.matmul (%p, %v) : (tensor<32x1024x1024xf32>, tensor<32x1024x64xf32>) -> tensor<32x1024x64xf32>
  func.return %o : tensor<32x1024x64xf32>
}
