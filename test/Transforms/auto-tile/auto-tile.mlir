// spyre-auto-tile: a program without tiles hints whose intermediate does not fit
// LX gets the tiling the cost model predicts fastest; one that fits, or that
// carries the user's tiles, is left alone.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=1},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-auto-tile' | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-auto-tile' | %filecheck %s --check-prefix=FITS
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=1},spyre-compile' | %filecheck %s --check-prefix=LOOP

// On one core %y (8 MiB) is 6 times the usable LX: tiling A (1024 rows) in 8
// keeps each 1 MiB tile of %y in LX (355 us predicted against the untiled
// plan's 431 us), and in 16 the per-tile working set of 1.5 MiB spills less
// beyond the practical 512 KiB of LX (320 us).  B in 16 would do as well; the
// first candidate wins the tie.
// CHECK-LABEL: func.func @add_mul
// CHECK:         spyre.pointwise "add" {{.*}}hints = [#spyre.hint<1, tiles = {A = 16}>]
// CHECK:         spyre.pointwise "mul" {{.*}}hints = [#spyre.hint<1, tiles = {A = 16}>]
// On 32 cores each core's share of %y (256 KiB) fits: nothing to tile.
// FITS-LABEL:  func.func @add_mul
// FITS-NOT:      hints
// The whole pipeline runs the tiled group in one loop of 16.
// LOOP:          %[[COUNT:.*]] = arith.constant 16 : index
// LOOP:          scf.for %{{.*}} = %{{.*}} to %[[COUNT]]
// LOOP-COUNT-2:    sdscbundle.sdsc_execute
func.func @add_mul(%a: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]}, %b: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]},
                   %c: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]}) -> tensor<1024x4096xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  %z = spyre.pointwise "mul" (%y, %c) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  func.return %z : tensor<1024x4096xf16>
}

// -----

// The user's tiles are binding: the pass adds nothing, even where it would tile
// otherwise.
// CHECK-LABEL: func.func @hinted
// CHECK:         spyre.pointwise "add" {{.*}}hints = [#spyre.hint<1, tiles = {B = 2}>]
// CHECK-NOT:     tiles = {A
// FITS-LABEL:  func.func @hinted
func.func @hinted(%a: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]}, %b: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]},
                  %c: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]}) -> tensor<1024x4096xf16> {
  %y = spyre.pointwise "add" (%a, %b) {hints = [#spyre.hint<1, tiles = {B = 2}>]} : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  %z = spyre.pointwise "mul" (%y, %c) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  func.return %z : tensor<1024x4096xf16>
}
