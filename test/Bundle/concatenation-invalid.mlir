// Assemblies spyre-lower-to-bundle refuses, each with one located error.
// RUN: not spyre-opt %s --split-input-file -p spyre-lower-to-bundle 2>&1 | %filecheck %s

// A piece's copy that something else reads too cannot be written in place only.
func.func @main(%a: tensor<8x64xf16>) -> tensor<16x64xf16> {
  %full = tensor.empty() : tensor<16x64xf16>
  %ca = spyre.pointwise "identity" (%a) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %part = tensor.insert_slice %ca into %full[0, 0] [8, 64] [1, 1] : tensor<8x64xf16> into tensor<16x64xf16>
  %e = spyre.pointwise "exp" (%ca) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %cat = tensor.insert_slice %e into %part[8, 0] [8, 64] [1, 1] : tensor<8x64xf16> into tensor<16x64xf16>
  func.return %cat : tensor<16x64xf16>
}
// CHECK: concatenation-invalid.mlir:[[# @LINE - 5]]:3: error: a piece inserted into a full buffer must be the result of a compute op (spyre.pointwise "identity") that nothing else reads

// -----

// A piece that starts mid-stick (column 32 of 64-element fp16 sticks): its copy writes
// whole sticks, past the buffer.  spyre-stickify sticks such a buffer on another dim.
func.func @main(%a: tensor<8x32xf16>, %b: tensor<8x32xf16>) -> tensor<8x64xf16> {
  %full = tensor.empty() : tensor<8x64xf16>
  %ca = spyre.pointwise "identity" (%a) : (tensor<8x32xf16>) -> tensor<8x32xf16>
  %part = tensor.insert_slice %ca into %full[0, 0] [8, 32] [1, 1] : tensor<8x32xf16> into tensor<8x64xf16>
  %cb = spyre.pointwise "identity" (%b) : (tensor<8x32xf16>) -> tensor<8x32xf16>
  %cat = tensor.insert_slice %cb into %part[0, 32] [8, 32] [1, 1] : tensor<8x32xf16> into tensor<8x64xf16>
  func.return %cat : tensor<8x64xf16>
}
// CHECK: concatenation-invalid.mlir:[[# @LINE - 4]]:3: error: cannot lower 'spyre.pointwise' (identity) to SDSC: the result is addressed up to element 95 of host dim 1, past its storage extent 64
