// spyre-propagate-named-dims through an assembly (torch.cat): along the dims its pieces
// span whole, the pieces' names; along the cat dim, a generated name.
// RUN: %spyre-opt %s -p spyre-propagate-named-dims | %filecheck %s
// RUN: %spyre-opt %s -p spyre-propagate-named-dims,spyre-propagate-named-dims | %filecheck %s

// CHECK-LABEL: func.func @rows
// CHECK: %c0 = spyre.pointwise "identity" (%a) {dims = {{\[\["M"\], \["K"\]\]}}}
// CHECK: %c1 = spyre.pointwise "identity" (%b) {dims = {{\[\["N"\], \["K"\]\]}}}
// CHECK: %e = spyre.pointwise "exp" (%cat) {dims = {{\[\["%0.0"\], \["K"\]\]}}}
func.func @rows(%a: tensor<8x64xf16> {spyre.dims = [["M"], ["K"]]}, %b: tensor<16x64xf16> {spyre.dims = [["N"], ["K"]]}) -> tensor<24x64xf16> {
  %full = tensor.empty() : tensor<24x64xf16>
  %c0 = spyre.pointwise "identity" (%a) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %part = tensor.insert_slice %c0 into %full[0, 0] [8, 64] [1, 1] : tensor<8x64xf16> into tensor<24x64xf16>
  %c1 = spyre.pointwise "identity" (%b) : (tensor<16x64xf16>) -> tensor<16x64xf16>
  %cat = tensor.insert_slice %c1 into %part[8, 0] [16, 64] [1, 1] : tensor<16x64xf16> into tensor<24x64xf16>
  %e = spyre.pointwise "exp" (%cat) : (tensor<24x64xf16>) -> tensor<24x64xf16>
  func.return %e : tensor<24x64xf16>
}
