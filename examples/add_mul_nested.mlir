// The coarse-tiling seed example as imported into the spyre dialect:
// y = a + b; z = y * c over fp16 [1024, 4096], named dims A (rows) and B
// (columns), traced inside spyre_hint(tiles={"A": 2}) around
// spyre_hint(tiles={"B": 4}).
//
//   spyre-opt examples/add_mul_nested.mlir
func.func @main(%a: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]], spyre.name = "a", spyre.role = "input"},
                %b: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]], spyre.name = "b", spyre.role = "input"},
                %c: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]], spyre.name = "c", spyre.role = "input"})
    -> tensor<1024x4096xf16> {
  %y = spyre.pointwise "add" (%a, %b) {hints = [#spyre.hint<0, tiles = {A = 2}>, #spyre.hint<1, tiles = {B = 4}>]}
      : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  %z = spyre.pointwise "mul" (%y, %c) {hints = [#spyre.hint<0, tiles = {A = 2}>, #spyre.hint<1, tiles = {B = 4}>]}
      : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  func.return %z : tensor<1024x4096xf16>
}
