// Memory planning places every buffer, not only compute results: a fill is a
// constant kernel argument the runtime fills (listed in the function's
// spyre.constants, after the inputs and the outputs), unless it is a reduction
// accumulator that ends in an output, which the runtime initialises instead; a
// loop accumulator started from a tensor.empty that ends in no output and no
// enclosing window gets a buffer of its own, recorded per loop result in the
// loop's spyre.buffers: a fresh pool block, or the constant a fill accumulator
// inside it starts from.  spyre-lower-to-bundle then only reads these records,
// also from a separate spyre-opt run.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=1},spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile,spyre-work-division,spyre-plan-memory' 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=1},spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile,spyre-work-division,spyre-plan-memory' 2>/dev/null | %spyre-opt --split-input-file -p spyre-lower-to-bundle | %filecheck %s --check-prefix=BUNDLE

// CHECK-LABEL: func.func @fill_read
// CHECK-SAME:    attributes {spyre.constants = [{type = tensor<64x128xf16, #spyre.layout<{{.*}}>>, fill = 2.000000e+00 : f64, counts = []}]}
// CHECK-NEXT:    %f = spyre.fill 2.0 {{.*}}placement = #spyre.placement<hbm, arg 2>}
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-SAME:    {index = 2 : i64, role = "constant", name = "fill_2", {{[^}]*}}fill = 2.000000e+00 : f64}
func.func @fill_read(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %f = spyre.fill 2.0 : tensor<64x128xf16>
  %y = spyre.pointwise "mul" (%x, %f) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @sum_into_output
// CHECK-NOT:     spyre.constants
// CHECK:         spyre.fill 0.0 {placement = #spyre.placement<hbm, arg 1>}
// CHECK-NOT:     spyre.buffers
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-SAME:    {index = 1 : i64, role = "output", name = "output0", {{[^}]*}}fill = 0.000000e+00 : f64}
func.func @sum_into_output(%x: tensor<64x256xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x1xf16> {
  %s = spyre.reduce "sum" (%x) dims [1] {hints = [#spyre.hint<0, tiles = {C = 2}>]} : (tensor<64x256xf16>) -> tensor<64x1xf16>
  func.return %s : tensor<64x1xf16>
}

// -----

// CHECK-LABEL: func.func @tiled_then_read
// CHECK-NOT:     spyre.constants
// CHECK:         %[[E:.*]] = tensor.empty()
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[E]])
// CHECK:         } {spyre.buffers = [#spyre.placement<hbm, pool 0>]}
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-SAME:    {index = 2 : i64, role = "pool", name = "pool", nbytes = 16384 : i64}]
func.func @tiled_then_read(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  %e = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %n = spyre.pointwise "neg" (%e) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %n : tensor<64x128xf16>
}

// -----

// The inner fill accumulates into its rows' window of the outer buffer: both
// are constant argument 2, which the runtime fills with the fill's value.
// CHECK-LABEL: func.func @rows_and_sum
// CHECK-SAME:    attributes {spyre.constants = [{type = tensor<64x1xf16, #spyre.layout<{{.*}}>>, fill = 0.000000e+00 : f64, counts = []}]}
// CHECK:         scf.for
// CHECK-NEXT:      spyre.fill 0.0 {placement = #spyre.placement<hbm, arg 2>} : tensor<32x1xf16
// CHECK:         } {spyre.buffers = [#spyre.placement<hbm, arg 2>]}
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-SAME:    {index = 2 : i64, role = "constant", name = "fill_2", {{[^}]*}}fill = 0.000000e+00 : f64}
func.func @rows_and_sum(%x: tensor<64x256xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x1xf16> {
  %s = spyre.reduce "sum" (%x) dims [1] {hints = [#spyre.hint<0, tiles = {R = 2, C = 2}>]} : (tensor<64x256xf16>) -> tensor<64x1xf16>
  %e = spyre.pointwise "exp" (%s) : (tensor<64x1xf16>) -> tensor<64x1xf16>
  func.return %e : tensor<64x1xf16>
}
