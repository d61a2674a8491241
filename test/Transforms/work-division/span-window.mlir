// Span reduction of a tile that is a window of a bigger tensor: the tile is
// addressed with the strides of the tensor it is a window of, as the device
// (and the interpreter) address it.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-work-division' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division' | %filecheck %s --check-prefix=FOUR
// RUN: not %spyre-opt %s -p 'spyre-attach-target{cores=1},spyre-work-division' 2>&1 | %filecheck %s --check-prefix=ONE

// %x and the result are [1, 32, 2048, 2048] f32, laid out heads outermost
// (16 MiB a head); the loop runs over 512-row tiles, each read from and written
// into a window of them.  All 32 heads of a tile span 31 x 16 MiB + 4 MiB,
// over the limit although the tile itself is 128 MiB: the heads are split at
// least 2 (15 x 16 MiB + 4 MiB = 244 MiB), the cores left go to the rows.  On
// one core no split meets the limit (spyre-coarse-tile's span tiling would add
// a loop over the heads).
// CHECK-LABEL: func.func @span_of_a_window
// CHECK:         scf.for
// CHECK:           spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 2, 16, 1>}
// FOUR:            spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 2, 2, 1>}
// ONE: span-window.mlir:[[# @LINE + 9]]:5: error: 'spyre.pointwise' op: the per-core span of operand #0 (%t: tensor<1x32x512x2048xf32>, a window of tensor<1x32x2048x2048xf32>) is 524288000 bytes, over the limit of 268431360 bytes, and no split on 1 cores meets it; tile the op with spyre_hint(tiles=...) or use more cores
func.func @span_of_a_window(%x: tensor<1x32x2048x2048xf32>) -> tensor<1x32x2048x2048xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<1x32x2048x2048xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> (tensor<1x32x2048x2048xf32>) {
    %o = affine.apply affine_map<(d0) -> ((d0 * 512))> (%i)
    %t = tensor.extract_slice %x[0, 0, %o, 0] [1, 32, 512, 2048] [1, 1, 1, 1] : tensor<1x32x2048x2048xf32> to tensor<1x32x512x2048xf32>
    %y = spyre.pointwise "exp" (%t) : (tensor<1x32x512x2048xf32>) -> tensor<1x32x512x2048xf32>
    %n = tensor.insert_slice %y into %acc[0, 0, %o, 0] [1, 32, 512, 2048] [1, 1, 1, 1] : tensor<1x32x512x2048xf32> into tensor<1x32x2048x2048xf32>
    scf.yield %n : tensor<1x32x2048x2048xf32>
  }
  func.return %r : tensor<1x32x2048x2048xf32>
}
