// spyre-pad-dims pads a group only where its padding holds zeros and no op
// iterates it but the group's.  Each function here has the 50-stick dim of
// swiglu.mlir (2 of 4 cores at best) and one reason to keep it unpadded.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-stickify,spyre-pad-dims' | %filecheck %s

// exp(0) = 1: the down projection's padded K would add exp(0) * 0, but the
// group's padding would no longer be zeros.
// CHECK-LABEL: func.func @not_zero_preserving
// CHECK-NOT:     iteration_space
// CHECK-NOT:     3328
// CHECK:         func.return
func.func @not_zero_preserving(%x: tensor<64x256xf16> {spyre.role = "input"}, %wg: tensor<256x3200xf16> {spyre.role = "parameter"},
                               %wd: tensor<3200x256xf16> {spyre.role = "parameter"}) -> tensor<64x256xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3200xf16>) -> tensor<64x3200xf16>
  %e = spyre.pointwise "exp" (%g) : (tensor<64x3200xf16>) -> tensor<64x3200xf16>
  %y = spyre.matmul (%e, %wd) : (tensor<64x3200xf16>, tensor<3200x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// x + 1 along the dim: a scalar that is not zero.
// CHECK-LABEL: func.func @plus_one
// CHECK-NOT:     iteration_space
// CHECK:         func.return
func.func @plus_one(%x: tensor<64x256xf16> {spyre.role = "input"}, %wg: tensor<256x3200xf16> {spyre.role = "parameter"},
                    %wd: tensor<3200x256xf16> {spyre.role = "parameter"}) -> tensor<64x256xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3200xf16>) -> tensor<64x3200xf16>
  %e = spyre.pointwise "add" (%g) consts {y = 1.0 : f64} : (tensor<64x3200xf16>) -> tensor<64x3200xf16>
  %y = spyre.matmul (%e, %wd) : (tensor<64x3200xf16>, tensor<3200x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// A max along the dim would see the padding.
// CHECK-LABEL: func.func @reduced_along
// CHECK-NOT:     iteration_space
// CHECK:         func.return
func.func @reduced_along(%x: tensor<64x256xf16> {spyre.role = "input"}, %wg: tensor<256x3200xf16> {spyre.role = "parameter"})
    -> tensor<64x1xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3200xf16>) -> tensor<64x3200xf16>
  %s = spyre.pointwise "silu" (%g) : (tensor<64x3200xf16>) -> tensor<64x3200xf16>
  %r = spyre.reduce "max" (%s) dims [1] : (tensor<64x3200xf16>) -> tensor<64x1xf16>
  func.return %r : tensor<64x1xf16>
}

// A function result is staged in the layout of its host shape.
// CHECK-LABEL: func.func @returned
// CHECK-NOT:     iteration_space
// CHECK:         func.return
func.func @returned(%x: tensor<64x256xf16> {spyre.role = "input"}, %wg: tensor<256x3200xf16> {spyre.role = "parameter"},
                    %wd: tensor<3200x256xf16> {spyre.role = "parameter"}) -> (tensor<64x256xf16>, tensor<64x3200xf16>) {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3200xf16>) -> tensor<64x3200xf16>
  %s = spyre.pointwise "silu" (%g) : (tensor<64x3200xf16>) -> tensor<64x3200xf16>
  %y = spyre.matmul (%s, %wd) : (tensor<64x3200xf16>, tensor<3200x256xf16>) -> tensor<64x256xf16>
  func.return %y, %s : tensor<64x256xf16>, tensor<64x3200xf16>
}

// A user input is staged on every run from the host, in its own shape.
// CHECK-LABEL: func.func @user_input
// CHECK-NOT:     iteration_space
// CHECK:         func.return
func.func @user_input(%h: tensor<64x3200xf16> {spyre.role = "input"}, %wd: tensor<3200x256xf16> {spyre.role = "parameter"})
    -> tensor<64x256xf16> {
  %s = spyre.pointwise "silu" (%h) : (tensor<64x3200xf16>) -> tensor<64x3200xf16>
  %y = spyre.matmul (%s, %wd) : (tensor<64x3200xf16>, tensor<3200x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// A row broadcast along the dim is no zero in the padding.
// CHECK-LABEL: func.func @broadcast_operand
// CHECK-NOT:     iteration_space
// CHECK:         func.return
func.func @broadcast_operand(%x: tensor<64x256xf16> {spyre.role = "input"}, %wg: tensor<256x3200xf16> {spyre.role = "parameter"},
                             %c: tensor<64x1xf16> {spyre.role = "input"}, %wd: tensor<3200x256xf16> {spyre.role = "parameter"})
    -> tensor<64x256xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3200xf16>) -> tensor<64x3200xf16>
  %s = spyre.pointwise "mul" (%g, %c) : (tensor<64x3200xf16>, tensor<64x1xf16>) -> tensor<64x3200xf16>
  %y = spyre.matmul (%s, %wd) : (tensor<64x3200xf16>, tensor<3200x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// 48 sticks split 4 ways already: nothing to gain.
// CHECK-LABEL: func.func @divisible
// CHECK-NOT:     iteration_space
// CHECK:         func.return
func.func @divisible(%x: tensor<64x256xf16> {spyre.role = "input"}, %wg: tensor<256x3072xf16> {spyre.role = "parameter"},
                     %wd: tensor<3072x256xf16> {spyre.role = "parameter"}) -> tensor<64x256xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<64x256xf16>, tensor<256x3072xf16>) -> tensor<64x3072xf16>
  %s = spyre.pointwise "silu" (%g) : (tensor<64x3072xf16>) -> tensor<64x3072xf16>
  %y = spyre.matmul (%s, %wd) : (tensor<64x3072xf16>, tensor<3072x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}
