// Pins the stages of the named pipeline spyre-compile, in order, and runs it.
// RUN: spyre-compile %s -o %t.dir --force --print-ir-after-all 2>&1 | %filecheck %s --check-prefix=ORDER
// RUN: spyre-opt %s -p 'spyre-compile{cores=4}' | %filecheck %s
// RUN: %filecheck %s --check-prefix=BUNDLE < %t.dir/bundle.mlir
// RUN: spyre-opt %t.dir/bundle.mlir | %filecheck %s --check-prefix=REPARSE

// ORDER: IR Dump After spyre-attach-target
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-mask-contractions
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-propagate-named-dims
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-stickify
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-stage-layouts
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-fold-views
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-auto-tile
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-coarse-tile
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-pad-dims
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-work-division
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-plan-memory
// ORDER-NOT: IR Dump After
// ORDER: IR Dump After spyre-lower-to-bundle
// ORDER-NOT: IR Dump After

func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<64x128xf16> {spyre.name = "add"}) {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: func.func @sdsc_bundle
// CHECK: sdscbundle.sdsc_execute
// CHECK-SAME: splits = array<i64: 4, 1>

// BUNDLE: module {
// BUNDLE-NEXT: {{^}}	func.func @sdsc_bundle(%arg_0_base_addr: !sdscbundle.input_arg<index>, %arg_1_base_addr: !sdscbundle.input_arg<index>, %arg_2_base_addr: !sdscbundle.input_arg<index>) {
// BUNDLE-NEXT: {{^}}		%arg_0 = sdscbundle.input_arg_extract value from %arg_0_base_addr : !sdscbundle.input_arg<index> -> index
// BUNDLE: %arg_0_core_offset_{{[0-9]+}} = arith.constant
// BUNDLE: sdscbundle.sdsc_execute (%arg_0, {{.*}}) {sdsc_filename="sdsc_0.json", "symbol_ids"=[-1,
// BUNDLE-NEXT: {{^}}		return

// REPARSE: func.func @sdsc_bundle
// REPARSE: sdscbundle.sdsc_execute
