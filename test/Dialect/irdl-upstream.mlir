// Upstream MLIR verifies every op and attribute of our dialects against their
// IRDL, generated from the xDSL definitions (spyre-opt --emit-irdl); a matmul's
// two operands are separate constraints, so they may differ in type.
// REQUIRES: mlir-opt
// RUN: %spyre-opt %s --split-input-file -t upstream-mlir | %mlir-opt --irdl-file=%spyre-irdl --verify-each --split-input-file | %filecheck %s

// CHECK-LABEL: func.func @spyre_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xf16, #spyre.layout<[2, 64, 64], [0, 1], "SEN169_FP16">>, %[[A:.*]]: tensor<64x64xf16>, %[[B:.*]]: tensor<64x64xf16>, %[[W:.*]]: tensor<128x64xf16>)
// CHECK-NEXT:    "spyre.pointwise"(%[[X]]) {hints = [#spyre.hint<0 : i64, {M = 2 : i64}, {}>], op_func_name = "exp", placement = #spyre.placement<"lx", 4096 : i64>}
// CHECK-NEXT:    "spyre.pointwise"(%[[A]], %[[B]]) {op_func_name = "add"}
// CHECK-NEXT:    "spyre.pointwise"(%[[A]]) {consts = {y = 5.000000e-01 : f64}, op_func_name = "mul"}
// CHECK-NEXT:    "spyre.restickify"(%[[X]])
// CHECK-NEXT:    %[[MM:.*]] = "spyre.matmul"(%[[X]], %[[W]]) {core_splits = array<i64: 1, 1, 32>}
// CHECK-NEXT:    "spyre.reduce"(%[[MM]]) {op_func_name = "sum", reduce_dims = array<i64: 1>}
// CHECK-NEXT:    "spyre.view"(%[[MM]]) {map = #{{.*}}}
// CHECK-NEXT:    "spyre.fill"() {placement = #spyre.placement<"zeroed", 0 : i64>, value = 0xFFF0000000000000 : f64}
// CHECK-NEXT:    return
func.func @spyre_ops(%x: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>,
                     %a: tensor<64x64xf16>, %b: tensor<64x64xf16>, %w: tensor<128x64xf16>) -> tensor<64x64xf16> {
  %e = spyre.pointwise "exp" (%x) {placement = #spyre.placement<lx, 4096>, hints = [#spyre.hint<0, tiles = {M = 2}>]} : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16>
  %s = spyre.pointwise "add" (%a, %b) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %h = spyre.pointwise "mul" (%a) consts {y = 0.5} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %r = spyre.restickify (%x) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
  %m = spyre.matmul (%x, %w) {core_splits = array<i64: 1, 1, 32>} : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>, tensor<128x64xf16>) -> tensor<64x64xf16>
  %d = spyre.reduce "sum" (%m) dims [1] : (tensor<64x64xf16>) -> tensor<64xf16>
  %v = spyre.view %m affine_map<(d0, d1) -> (d1, d0)> : tensor<64x64xf16> -> tensor<64x64xf16>
  %z = spyre.fill -inf {placement = #spyre.placement<hbm, zeroed>} : tensor<64x64xf16>
  func.return %m : tensor<64x64xf16>
}

// -----

// CHECK:       module attributes {spyre.target = #spyre.target<4 : i64, 2.000000e-01 : f64>}
// CHECK-NEXT:    func.func @targeted
module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.2>} {
  func.func @targeted() {
    func.return
  }
}

// -----

// CHECK-LABEL: func.func @sdscbundle_ops
// CHECK-SAME:    (%[[BASE:.*]]: !sdscbundle.input_arg<index, 64 : i64, 4096 : i64>)
// CHECK-NEXT:    %[[ARG:.*]] = "sdscbundle.input_arg_extract"(%[[BASE]]) : (!sdscbundle.input_arg<index, 64 : i64, 4096 : i64>) -> index
// CHECK-NEXT:    "sdscbundle.sdsc_execute"(%[[ARG]], %[[ARG]]) {op_func = "add", sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2]} : (index, index) -> ()
func.func @sdscbundle_ops(%base: !sdscbundle.input_arg<index, granularity = 64, max_value = 4096>) {
  %arg = sdscbundle.input_arg_extract value from %base : !sdscbundle.input_arg<index, granularity = 64, max_value = 4096> -> index
  sdscbundle.sdsc_execute (%arg, %arg) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2], op_func = "add"}
  func.return
}
