// RUN: not spyre-opt %s --split-input-file -p spyre-lower-to-bundle 2>&1 | %filecheck %s

func.func @main(%a: tensor<64x128xf16>) -> tensor<128x64xf16> {
  %v = spyre.view %a affine_map<(d0, d1) -> (d1, d0)> : tensor<64x128xf16> -> tensor<128x64xf16>
  %y = spyre.pointwise "exp" (%v) : (tensor<128x64xf16>) -> tensor<128x64xf16>
  func.return %y : tensor<128x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:3: error: 'spyre.view' cannot be lowered to the SDSC bundle

// -----

func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {
  func.return %a : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 2]]:3: error: result #0 must be computed by a compute op

// -----

func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %y = spyre.pointwise "exp" (%a) {core_splits = array<i64: 3, 1>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.pointwise' (exp) to SDSC: core split 3 does not divide the padded size 64
