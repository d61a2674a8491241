// spyre-stickify: layouts that contradict an op's stick rule are errors.
// RUN: not %spyre-opt %s --split-input-file -p spyre-stickify 2>&1 | %filecheck %s

// A matmul result must be sticked on N.
func.func @matmul_result_on_m(%a: tensor<64x64xf16>, %b: tensor<64x128xf16>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: result layout [1, 0] sticks dim 0, but 'spyre.matmul' needs its result sticked on one of [1]
  %c = spyre.matmul (%a, %b) : (tensor<64x64xf16>, tensor<64x128xf16>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
  func.return %c : tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
}

// -----

// A rank-1 concatenation whose second piece starts mid-stick has no dim to stick on.
func.func @cat_mid_stick(%a: tensor<32xf16>, %b: tensor<32xf16>) -> tensor<64xf16> {
  %full = tensor.empty() : tensor<64xf16>
  %c0 = spyre.pointwise "identity" (%a) : (tensor<32xf16>) -> tensor<32xf16>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: the pieces of a tensor of shape [64] start at offsets {{\[\[0\], \[32\]\]}}: no dim has them all at whole sticks of 64 elements, so no stick dim can hold them
  %part = tensor.insert_slice %c0 into %full[0] [32] [1] : tensor<32xf16> into tensor<64xf16>
  %c1 = spyre.pointwise "identity" (%b) : (tensor<32xf16>) -> tensor<32xf16>
  %cat = tensor.insert_slice %c1 into %part[32] [32] [1] : tensor<32xf16> into tensor<64xf16>
  func.return %cat : tensor<64xf16>
}

// -----

// A tiled program (the output of spyre-coarse-tile) is past this pass: a tile is
// a slice of its storage, which spyre-stickify does not lay out.
func.func @already_tiled(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<64x128xf16>
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %e) -> (tensor<64x128xf16>) {
    %o = affine.apply affine_map<(d0) -> (d0 * 32)> (%i)
    %t = tensor.extract_slice %x[%o, 0] [32, 128] [1, 1] : tensor<64x128xf16> to tensor<32x128xf16>
    %y = spyre.pointwise "exp" (%t) : (tensor<32x128xf16>) -> tensor<32x128xf16>
    %n = tensor.insert_slice %y into %acc[%o, 0] [32, 128] [1, 1] : tensor<32x128xf16> into tensor<64x128xf16>
    scf.yield %n : tensor<64x128xf16>
  }
  func.return %r : tensor<64x128xf16>
}
// CHECK: invalid.mlir:[[# @LINE - 6]]:5: error: operand #0 of 'spyre.pointwise' is a 'tensor.extract_slice' result without a layout: spyre-stickify lays out programs before spyre-coarse-tile tiles them
