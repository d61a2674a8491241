// Tile counts of grouped-query heads that spyre-coarse-tile refuses: the matmul
// iterates 4 heads as 2 key/value heads of 2 (grouped-heads.mlir).
// RUN: not spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile' -o /dev/null 2>&1 | %filecheck %s

// 8 tiles of 4 heads are no blocks of the 2 x 2 the matmul iterates.
// CHECK: grouped-heads-invalid.mlir:[[@LINE+9]]:3: error: 'spyre.matmul' op: cannot tile dim 'H' by 8: the op iterates it as 2 x 2 (outermost first), and 8 tiles are not whole blocks of those
func.func @too_many(%q: tensor<1x4x64x64xf16> {spyre.dims = [["B"], ["H"], ["S"], ["D"]]},
                    %k: tensor<1x2x64x64xf16> {spyre.dims = [["B"], ["KV"], ["T"], ["D"]]}) -> tensor<4x64x64xf16> {
  %0 = spyre.view %k affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)> : tensor<1x2x64x64xf16> -> tensor<1x2x1x64x64xf16>
  %1 = spyre.view %0 affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)> : tensor<1x2x1x64x64xf16> -> tensor<1x2x2x64x64xf16>
  %2 = spyre.view %1 affine_map<(d0, d1, d2, d3) -> (d0, (d1 floordiv 2), (d1 mod 2), d2, d3)> : tensor<1x2x2x64x64xf16> -> tensor<1x4x64x64xf16>
  %3 = spyre.view %2 affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)> : tensor<1x4x64x64xf16> -> tensor<1x4x64x64xf16>
  %4 = spyre.view %q affine_map<(d0, d1, d2) -> (0, d0, d1, d2)> : tensor<1x4x64x64xf16> -> tensor<4x64x64xf16>
  %5 = spyre.view %3 affine_map<(d0, d1, d2) -> (0, d0, d1, d2)> : tensor<1x4x64x64xf16> -> tensor<4x64x64xf16>
  %6 = spyre.matmul (%4, %5) {hints = [#spyre.hint<1, tiles = {H = 8}>]} : (tensor<4x64x64xf16>, tensor<4x64x64xf16>) -> tensor<4x64x64xf16>
  func.return %6 : tensor<4x64x64xf16>
}
