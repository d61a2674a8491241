// spyre-auto-tile: attention's scores q @ k^T, their query and key rows read
// from inputs named alike (both "S", as a model's input ids name both), then
// the mask's add and the softmax.  spyre-propagate-named-dims names the key rows
// apart, so the candidate group runs from the scores matmul through the
// division and the matmul by V, tiled by the query rows: no f32
// [32, 1024, 1024] value leaves LX.
// With both dims named "S" the group could not contain the matmul (one loop
// would divide both), and the scores went through HBM.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-auto-tile' | %filecheck %s

// CHECK-LABEL: func.func @attention
// CHECK:         spyre.matmul {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N:[0-9]+]]}>]
// CHECK-NEXT:    spyre.pointwise "add" {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
// CHECK-NEXT:    spyre.reduce "max" {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
// CHECK-NEXT:    spyre.pointwise "sub" {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
// CHECK-NEXT:    spyre.pointwise "exp" {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
// CHECK-NEXT:    spyre.reduce "sum" {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
// CHECK-NEXT:    spyre.pointwise "realdiv" {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
// CHECK-NEXT:    spyre.matmul {{.*}}hints = [#spyre.hint<1, tiles = {S = [[N]]}>]
func.func @attention(%q: tensor<32x1024x64xf32> {spyre.dims = [["H"], ["S"], ["D"]]},
                     %k: tensor<32x64x1024xf32> {spyre.dims = [["H"], ["D"], ["S"]]},
                     %m: tensor<1024x1024xf32>,
                     %v: tensor<32x1024x64xf32> {spyre.dims = [["H"], ["S"], ["D"]]}) -> tensor<32x1024x64xf32> {
  %s = spyre.matmul (%q, %k) : (tensor<32x1024x64xf32>, tensor<32x64x1024xf32>) -> tensor<32x1024x1024xf32>
  %x = spyre.pointwise "add" (%s, %m) : (tensor<32x1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %mx = spyre.reduce "max" (%x) dims [2] : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1xf32>
  %d = spyre.pointwise "sub" (%x, %mx) : (tensor<32x1024x1024xf32>, tensor<32x1024x1xf32>) -> tensor<32x1024x1024xf32>
  %e = spyre.pointwise "exp" (%d) : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1024xf32>
  %t = spyre.reduce "sum" (%e) dims [2] : (tensor<32x1024x1024xf32>) -> tensor<32x1024x1xf32>
  %p = spyre.pointwise "realdiv" (%e, %t) : (tensor<32x1024x1024xf32>, tensor<32x1024x1xf32>) -> tensor<32x1024x1024xf32>
  %o = spyre.matmul (%p, %v) : (tensor<32x1024x1024xf32>, tensor<32x1024x64xf32>) -> tensor<32x1024x64xf32>
  func.return %o : tensor<32x1024x64xf32>
}
