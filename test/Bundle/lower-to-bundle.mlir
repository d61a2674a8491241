// RUN: spyre-opt %s --split-input-file -p spyre-lower-to-bundle | %filecheck %s
// RUN: spyre-opt %s --split-input-file -p spyre-lower-to-bundle | spyre-opt --split-input-file | %filecheck %s

// Pointwise add on 2 cores: 32 rows x 128 B per core.
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 2, 1>} : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK-SAME: !sdscbundle.input_arg<index>, %{{.*}}: !sdscbundle.input_arg<index>, %{{.*}}: !sdscbundle.input_arg<index>)
// CHECK-SAME: {index = 2 : i64, role = "output", name = "add"
// CHECK-SAME: spyre.cores = 32 : i64
// CHECK: %[[A:.*]] = sdscbundle.input_arg_extract
// CHECK: %[[OFF:.*]] = arith.constant 4096 : index
// CHECK: %[[A1:.*]] = arith.addi %[[A]], %[[OFF]] : index
// CHECK: sdscbundle.sdsc_execute (%[[A]], %[[A1]], {{.*}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2, -3, -4, -5, -6], op_spec = {op_func = "add", sdsc_op = "add", ex_unit = "sfp", kind = "pointwise", labels = ["mb", "out"], sizes = array<i64: 64, 128>
// CHECK-SAME: splits = array<i64: 2, 1>
// CHECK-SAME: placement = #spyre.placement<hbm, arg 0>, core_offsets = array<i64: 0, 4096>, symbols = array<i64: -1, -2>

// -----

// An intermediate goes to the HBM pool (the last kernel argument); a stick
// reduction over a padded stick gets a mask; sum over dim 0 is "nonstick".
func.func @main(%a: tensor<256x150xf16> {spyre.name = "a", spyre.role = "input"})
    -> (tensor<256x1xf16> {spyre.name = "s"}) {
  %e = spyre.pointwise "exp" (%a) : (tensor<256x150xf16>) -> tensor<256x150xf16>
  %s = spyre.reduce "sum" (%e) dims [1] : (tensor<256x150xf16>) -> tensor<256x1xf16>
  func.return %s : tensor<256x1xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK-SAME: {index = 2 : i64, role = "pool", name = "pool", nbytes = 98304 : i64}
// CHECK: sdscbundle.sdsc_execute
// CHECK-SAME: sdsc_filename = "sdsc_0.json"
// CHECK-SAME: placement = #spyre.placement<hbm, pool 0>
// CHECK: sdscbundle.sdsc_execute
// CHECK-SAME: sdsc_filename = "sdsc_1.json"
// CHECK-SAME: sdsc_op = "sum"
// CHECK-SAME: sizes = array<i64: 256, 192>, valid_sizes = array<i64: 256, 150>
// CHECK-SAME: scale = array<i64: 1, -2>
// CHECK-SAME: mask = {label = "out", valid = 150 : i64, pad = 42 : i64, value = 0.000000e+00 : f64}

// -----

// LX placement: no bundle operand, the LX offset is the start of every core.
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "o"}) {
  %e = spyre.pointwise "exp" (%a) {placement = #spyre.placement<lx, 256>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %o = spyre.pointwise "neg" (%e) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %o : tensor<64x128xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK: sdscbundle.sdsc_execute (%{{[^,]*}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1]
// CHECK-SAME: memory = "lx", placement = #spyre.placement<lx, 256>, core_offsets = array<i64: 256>, symbols = []
// CHECK: sdscbundle.sdsc_execute (%{{[^,]*}}) {sdsc_filename = "sdsc_1.json", symbol_ids = [-2]
