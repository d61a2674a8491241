// Round trip of the sdscbundle dialect, in our spelling and in the back end's.
// RUN: %spyre-opt %s --split-input-file | %spyre-opt --split-input-file | %filecheck %s
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %spyre-opt --split-input-file | %filecheck %s
// RUN: %spyre-opt %s --split-input-file > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// CHECK-LABEL: func.func @input_arg
// CHECK-SAME:    (%[[PLAIN:.*]]: !sdscbundle.input_arg<index>,
// CHECK-SAME:     %[[GRAN:.*]]: !sdscbundle.input_arg<index, granularity = 64>,
// CHECK-SAME:     %[[MAX:.*]]: !sdscbundle.input_arg<index, max_value = 1000>,
// CHECK-SAME:     %[[BOTH:.*]]: !sdscbundle.input_arg<index, granularity = 64, max_value = 512>,
// The keys may come in either order; they print granularity first.
// CHECK-SAME:     %[[SWAPPED:.*]]: !sdscbundle.input_arg<index, granularity = 32, max_value = 256>)
// CHECK-NEXT:    %[[V0:.*]] = sdscbundle.input_arg_extract value from %[[PLAIN]] : !sdscbundle.input_arg<index> -> index
// CHECK-NEXT:    %[[V1:.*]] = sdscbundle.input_arg_extract value from %[[BOTH]] : !sdscbundle.input_arg<index, granularity = 64, max_value = 512> -> index
// CHECK-NEXT:    return %[[V0]], %[[V1]] : index, index
func.func @input_arg(%plain: !sdscbundle.input_arg<index>,
                     %gran: !sdscbundle.input_arg<index, granularity = 64>,
                     %max: !sdscbundle.input_arg<index, max_value = 1000>,
                     %both: !sdscbundle.input_arg<index, granularity = 64, max_value = 512>,
                     %swapped: !sdscbundle.input_arg<index, max_value = 256, granularity = 32>) -> (index, index) {
  %v0 = sdscbundle.input_arg_extract value from %plain : !sdscbundle.input_arg<index> -> index
  %v1 = sdscbundle.input_arg_extract value from %both : !sdscbundle.input_arg<index, granularity = 64, max_value = 512> -> index
  func.return %v0, %v1 : index, index
}

// -----

// Operand i of sdsc_execute binds symbol symbol_ids[i]; operands are untyped
// (always index).  Discardable attributes follow the two properties.
// CHECK-LABEL: func.func @sdsc_execute
// CHECK-SAME:    (%[[ARG0:.*]]: !sdscbundle.input_arg<index>, %[[ARG1:.*]]: !sdscbundle.input_arg<index>)
// CHECK-NEXT:    %[[A:.*]] = sdscbundle.input_arg_extract value from %[[ARG0]]
// CHECK-NEXT:    %[[B:.*]] = sdscbundle.input_arg_extract value from %[[ARG1]]
// CHECK-NEXT:    sdscbundle.sdsc_execute (%[[A]], %[[B]]) {sdsc_filename = "a.json", symbol_ids = [-1, -2]}
// CHECK-NEXT:    sdscbundle.sdsc_execute (%[[A]], %[[B]]) {sdsc_filename = "a.json", symbol_ids = [-1, -2]}
// CHECK-NEXT:    sdscbundle.sdsc_execute (%[[B]], %[[A]]) {sdsc_filename = "b.json", symbol_ids = [-3, -4], op_func = "add", "core count" = 32 : i64}
// CHECK-NEXT:    sdscbundle.sdsc_execute () {sdsc_filename = "c.json", symbol_ids = []}
// CHECK-NEXT:    func.return
func.func @sdsc_execute(%arg0: !sdscbundle.input_arg<index>, %arg1: !sdscbundle.input_arg<index>) {
  %a = sdscbundle.input_arg_extract value from %arg0 : !sdscbundle.input_arg<index> -> index
  %b = sdscbundle.input_arg_extract value from %arg1 : !sdscbundle.input_arg<index> -> index
  sdscbundle.sdsc_execute (%a, %b) {sdsc_filename = "a.json", symbol_ids = [-1, -2]}
  sdscbundle.sdsc_execute (%a, %b) {sdsc_filename="a.json", "symbol_ids"=[-1, -2]}
  sdscbundle.sdsc_execute (%b, %a) {"symbol_ids"=[-3, -4], op_func = "add", sdsc_filename="b.json", "core count" = 32}
  sdscbundle.sdsc_execute () {sdsc_filename = "c.json", symbol_ids = []}
  func.return
}

// -----

// The addresses an sdsc_execute binds are ordinary index values: loop-carried
// affine.apply results, as in the bundles the back end reads.
// CHECK-LABEL: func.func @sdsc_bundle
// CHECK-SAME:    (%[[BASE:.*]]: !sdscbundle.input_arg<index>)
// CHECK-NEXT:    %[[ARG:.*]] = sdscbundle.input_arg_extract value from %[[BASE]]
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[BOUND:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[I:.*]] = %[[C0]] to %[[BOUND]] step %[[C1]] {
// CHECK-NEXT:      %[[ADDR:.*]] = affine.apply affine_map<(d0)[s0] -> ((s0 + (d0 * 2048)))> (%[[I]])[%[[ARG]]]
// CHECK-NEXT:      sdscbundle.sdsc_execute (%[[ADDR]]) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1]}
// CHECK-NEXT:    }
func.func @sdsc_bundle(%base: !sdscbundle.input_arg<index>) {
  %arg = sdscbundle.input_arg_extract value from %base : !sdscbundle.input_arg<index> -> index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bound = arith.constant 4 : index
  scf.for %i = %c0 to %bound step %c1 {
    %addr = affine.apply affine_map<(d0)[s0] -> (s0 + 2048 * d0)>(%i)[%arg]
    sdscbundle.sdsc_execute (%addr) {sdsc_filename="sdsc_0.json", "symbol_ids"=[-1]}
  }
  func.return
}
