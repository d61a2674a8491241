// Upstream MLIR reads our dialects in generic form: mlir-opt parses and
// verifies a spyre module and an sdscbundle module (as unregistered ops),
// lowers the upstream ops around them, and spyre-opt reads mlir-opt's output back.
// They stay unregistered here: spyre-opt reads back our attributes in our syntax
// only, not in the parameter form mlir-opt prints for IRDL attributes (the IRDL
// checks are irdl-upstream.mlir and the other *-upstream.mlir tests).
// REQUIRES: mlir-opt
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %mlir-opt --allow-unregistered-dialect --verify-each --split-input-file | %filecheck %s
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %mlir-opt --allow-unregistered-dialect --verify-each --split-input-file -lower-affine -convert-scf-to-cf | %filecheck %s --check-prefix=LOWER
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %mlir-opt --allow-unregistered-dialect --split-input-file | %spyre-opt --split-input-file | %filecheck %s --check-prefix=BACK
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %mlir-opt --allow-unregistered-dialect --split-input-file -lower-affine -convert-scf-to-cf | %spyre-opt --split-input-file | %filecheck %s --check-prefix=BACK-LOWER

// Upstream keeps our ops, properties and attributes opaque; it sorts the
// properties of an unregistered op by name.
// CHECK-LABEL: func.func @spyre_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>, %[[W:.*]]: tensor<128x8xf16>)
// CHECK-NEXT:    %[[EXP:.*]] = "spyre.pointwise"(%[[X]]) <{hints = [#spyre.hint<0, tiles = {M = 2}>], op_func_name = "exp", placement = #spyre.placement<lx, 4096>}> : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16>
// CHECK-NEXT:    %[[MUL:.*]] = "spyre.pointwise"(%[[EXP]]) <{consts = {y = 5.000000e-01 : f64}, op_func_name = "mul"}> : (tensor<64x128xf16>) -> tensor<64x128xf16>
// CHECK-NEXT:    %{{.*}} = "spyre.restickify"(%[[X]]) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[MM:.*]] = "spyre.matmul"(%[[MUL]], %[[W]]) <{core_splits = array<i64: 1, 1, 32>}> : (tensor<64x128xf16>, tensor<128x8xf16>) -> tensor<64x8xf16>
// CHECK-NEXT:    %{{.*}} = "spyre.reduce"(%[[MM]]) <{op_func_name = "sum", reduce_dims = array<i64: 1>}> : (tensor<64x8xf16>) -> tensor<64xf16>
// CHECK-NEXT:    %{{.*}} = "spyre.view"(%[[MM]]) <{map = affine_map<(d0, d1) -> (d1, d0)>}> : (tensor<64x8xf16>) -> tensor<8x64xf16>
// CHECK-NEXT:    %{{.*}} = "spyre.fill"() <{value = 0xFFF0000000000000 : f64}> : () -> tensor<64x8xf16>
// CHECK-NEXT:    return %[[MM]] : tensor<64x8xf16>

// There are no upstream ops in this function to lower.
// LOWER-LABEL: func.func @spyre_ops
// LOWER:         "spyre.matmul"
// LOWER:         return

// BACK-LABEL: func.func @spyre_ops
// BACK-SAME:    (%[[X:.*]]: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>, %[[W:.*]]: tensor<128x8xf16>)
// BACK-NEXT:    %[[EXP:.*]] = spyre.pointwise "exp" (%[[X]]) {hints = [#spyre.hint<0, tiles = {M = 2}>], placement = #spyre.placement<lx, 4096>}
// BACK-NEXT:    %[[MUL:.*]] = spyre.pointwise "mul" (%[[EXP]]) consts {y = 5.000000e-01 : f64}
// BACK-NEXT:    spyre.restickify (%[[X]])
// BACK-NEXT:    %[[MM:.*]] = spyre.matmul (%[[MUL]], %[[W]]) {core_splits = array<i64: 1, 1, 32>}
// BACK-NEXT:    spyre.reduce "sum" (%[[MM]]) dims [1]
// BACK-NEXT:    spyre.view %[[MM]] affine_map<(d0, d1) -> (d1, d0)>
// BACK-NEXT:    spyre.fill -inf : tensor<64x8xf16>
// BACK-NEXT:    func.return %[[MM]]
func.func @spyre_ops(%x: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>, %w: tensor<128x8xf16>) -> tensor<64x8xf16> {
  %e = spyre.pointwise "exp" (%x) {placement = #spyre.placement<lx, 4096>, hints = [#spyre.hint<0, tiles = {M = 2}>]} : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16>
  %h = spyre.pointwise "mul" (%e) consts {y = 0.5} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %r = spyre.restickify (%x) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
  %m = spyre.matmul (%h, %w) {core_splits = array<i64: 1, 1, 32>} : (tensor<64x128xf16>, tensor<128x8xf16>) -> tensor<64x8xf16>
  %s = spyre.reduce "sum" (%m) dims [1] : (tensor<64x8xf16>) -> tensor<64xf16>
  %v = spyre.view %m affine_map<(d0, d1) -> (d1, d0)> : tensor<64x8xf16> -> tensor<8x64xf16>
  %z = spyre.fill -inf : tensor<64x8xf16>
  func.return %m : tensor<64x8xf16>
}

// -----

// CHECK-LABEL: func.func @sdsc_bundle
// CHECK-SAME:    (%[[BASE:.*]]: !sdscbundle.input_arg<index, granularity = 64, max_value = 4096>)
// CHECK-NEXT:    %[[ARG:.*]] = "sdscbundle.input_arg_extract"(%[[BASE]]) : (!sdscbundle.input_arg<index, granularity = 64, max_value = 4096>) -> index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:      %[[ADDR:.*]] = affine.apply #{{.*}}(%[[I]])[%[[ARG]]]
// CHECK-NEXT:      "sdscbundle.sdsc_execute"(%[[ADDR]], %[[ARG]]) <{sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2]}> {op_func = "add"} : (index, index) -> ()
// CHECK-NEXT:    }
// CHECK-NEXT:    return

// The loop becomes a CFG and the address arithmetic; the executes stay.
// LOWER-LABEL: func.func @sdsc_bundle
// LOWER-SAME:    (%[[BASE:.*]]: !sdscbundle.input_arg<index, granularity = 64, max_value = 4096>)
// LOWER-NEXT:    %[[ARG:.*]] = "sdscbundle.input_arg_extract"(%[[BASE]])
// LOWER:         cf.br ^[[HEADER:.*]](%{{.*}} : index)
// LOWER:       ^[[HEADER]](%[[I:.*]]: index):
// LOWER:         cf.cond_br %{{.*}}, ^[[BODY:.*]], ^[[EXIT:[a-z0-9]+]]
// LOWER:       ^[[BODY]]:
// LOWER-NEXT:    %[[STRIDE:.*]] = arith.constant 2048 : index
// LOWER-NEXT:    %[[SCALED:.*]] = arith.muli %[[I]], %[[STRIDE]]
// LOWER-NEXT:    %[[ADDR:.*]] = arith.addi %[[SCALED]], %[[ARG]] : index
// LOWER-NEXT:    "sdscbundle.sdsc_execute"(%[[ADDR]], %[[ARG]]) <{sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2]}> {op_func = "add"} : (index, index) -> ()
// LOWER:       ^[[EXIT]]:
// LOWER-NEXT:    return
// LOWER-NOT:     scf.for
// LOWER-NOT:     affine.apply

// BACK-LABEL: func.func @sdsc_bundle
// BACK:           scf.for
// BACK-NEXT:        %[[ADDR:.*]] = affine.apply affine_map<(d0)[s0] -> (((d0 * 2048) + s0))>
// BACK-NEXT:        sdscbundle.sdsc_execute (%[[ADDR]], %{{.*}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2], op_func = "add"}

// BACK-LOWER-LABEL: func.func @sdsc_bundle
// BACK-LOWER:         %[[ADDR:.*]] = arith.addi
// BACK-LOWER-NEXT:    sdscbundle.sdsc_execute (%[[ADDR]], %{{.*}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2], op_func = "add"}
func.func @sdsc_bundle(%base: !sdscbundle.input_arg<index, granularity = 64, max_value = 4096>) {
  %arg = sdscbundle.input_arg_extract value from %base : !sdscbundle.input_arg<index, granularity = 64, max_value = 4096> -> index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bound = arith.constant 4 : index
  scf.for %i = %c0 to %bound step %c1 {
    %addr = affine.apply affine_map<(d0)[s0] -> (s0 + 2048 * d0)>(%i)[%arg]
    sdscbundle.sdsc_execute (%addr, %arg) {sdsc_filename="sdsc_0.json", "symbol_ids"=[-1, -2], op_func = "add"}
  }
  func.return
}
