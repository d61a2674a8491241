// Hand-written `dims` that spyre-coarse-tile refuses (spyre-propagate-named-dims never writes
// them: it names the second of two dims its operands name alike apart).
// RUN: not spyre-opt %s -p spyre-stickify,spyre-coarse-tile -o /dev/null 2>&1 | %filecheck %s

// Query and key rows named alike: one loop over 'S' would index both dims by the same tile and
// compute only the diagonal blocks (a wrong number).
func.func @two_dims_one_name(%q: tensor<256x64xf16>, %kt: tensor<64x256xf16>) -> tensor<256x256xf16> {
  // CHECK: named-dims-invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.matmul' op: cannot tile dim 'S': it names iteration dims [0, 1], and one loop would only visit the tiles where they are equal
  %s = spyre.matmul (%q, %kt) {dims = [["S"], ["S"], ["D"]], hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  func.return %s : tensor<256x256xf16>
}
