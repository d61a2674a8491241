// spyre-lower-to-bundle translates planned IR: every value carries the placement
// spyre-plan-memory gave it (constants listed in spyre.constants).
// RUN: spyre-opt %s --split-input-file -p spyre-lower-to-bundle | %filecheck %s
// RUN: spyre-opt %s --split-input-file -p spyre-lower-to-bundle | spyre-opt --split-input-file | %filecheck %s

// Pointwise add on 2 cores: 32 rows x 128 B per core.
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 2, 1>, placement = #spyre.placement<hbm, arg 2>} : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
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
  %e = spyre.pointwise "exp" (%a) {placement = #spyre.placement<hbm, pool 0>} : (tensor<256x150xf16>) -> tensor<256x150xf16>
  %s = spyre.reduce "sum" (%e) dims [1] {placement = #spyre.placement<hbm, arg 1>} : (tensor<256x150xf16>) -> tensor<256x1xf16>
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

// A reduction without keepdim, off the stick: the output keeps the reduced
// label with scale -1, in the input's layout order and entry (torch-spyre's form).
func.func @main(%a: tensor<512x1024xf16> {spyre.name = "a", spyre.role = "input"})
    -> (tensor<1024xf16> {spyre.name = "s"}) {
  %s = spyre.reduce "sum" (%a) dims [0] {core_splits = array<i64: 16, 1>, placement = #spyre.placement<hbm, arg 1>} : (tensor<512x1024xf16>) -> tensor<1024xf16>
  func.return %s : tensor<1024xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK: sdscbundle.sdsc_execute
// CHECK-SAME: sdsc_op = "sumnonstick"
// CHECK-SAME: name = "Tensor0", role = "input", ds_type = "OUTPUT"
// CHECK-SAME: layout_labels = ["out", "mb"], stick_label = "mb", stick_size = 64 : i64, scale = array<i64: 1, 1>
// CHECK-SAME: name = "Tensor1", role = "output", ds_type = "OUTPUT"
// CHECK-SAME: device_size = array<i64: 16, 64>, layout_labels = ["out", "mb"], stick_label = "mb", stick_size = 64 : i64, scale = array<i64: -1, 1>

// -----

// LX placement: no bundle operand, the LX offset is the start of every core.
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "o"}) {
  %e = spyre.pointwise "exp" (%a) {placement = #spyre.placement<lx, 256>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %o = spyre.pointwise "neg" (%e) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %o : tensor<64x128xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK: sdscbundle.sdsc_execute (%{{[^,]*}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1]
// CHECK-SAME: memory = "lx", placement = #spyre.placement<lx, 256>, core_offsets = array<i64: 256>, symbols = []
// CHECK: sdscbundle.sdsc_execute (%{{[^,]*}}) {sdsc_filename = "sdsc_1.json", symbol_ids = [-2]

// -----

// A zeroed value is a constant argument of its own that the runtime fills with
// zeros (its padded layout described by its padded extents); a kernel output
// padded beyond its shape keeps its shape, says its padding, and is filled
// with zeros too.
func.func @main(%x: tensor<64x96xf16> {spyre.name = "x", spyre.role = "input"})
    -> (tensor<64x96xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">> {spyre.name = "w"})
    attributes {spyre.constants = [{type = tensor<64x96xf16, #spyre.layout<device_size = [2, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>, fill = 0.0 : f64, counts = []}]} {
  %e = spyre.pointwise "exp" (%x) {placement = #spyre.placement<hbm, arg 2>} : (tensor<64x96xf16>) -> tensor<64x96xf16, #spyre.layout<device_size = [2, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>
  %w = spyre.pointwise "identity" (%e) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x96xf16, #spyre.layout<device_size = [2, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x96xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>
  func.return %w : tensor<64x96xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK-SAME: {index = 1 : i64, role = "output", name = "w", nbytes = 32768 : i64, padded_shape = [64 : i64, 128 : i64], shape = [64 : i64, 96 : i64], {{[^}]*}}, fill = 0.000000e+00 : f64}
// CHECK-SAME: {index = 2 : i64, role = "constant", name = "fill_2", nbytes = 32768 : i64, shape = [128 : i64, 96 : i64], {{[^}]*}}, fill = 0.000000e+00 : f64}
// CHECK: sdscbundle.sdsc_execute
// CHECK-SAME: sdsc_filename = "sdsc_0.json"
// CHECK-SAME: name = "Tensor1", role = "output", {{.*}}placement = #spyre.placement<hbm, arg 2>
