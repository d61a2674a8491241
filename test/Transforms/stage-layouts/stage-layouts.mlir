// spyre-stage-layouts: a parameter whose one use is a restickify is staged in
// that layout (its type and the func signature change, the copy is gone); a
// user input keeps its copy and a warning unless stage-inputs is set.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts 2>%t.err | %filecheck %s
// RUN: %filecheck %s --check-prefix=WARN < %t.err
// RUN: %spyre-opt %s --split-input-file -p 'spyre-stickify,spyre-stage-layouts{stage-inputs=true}' 2>%t.inputs.err | %filecheck %s --check-prefix=INPUTS
// RUN: %filecheck %s --check-prefix=INPUTS-WARN --implicit-check-not=warning < %t.inputs.err
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify,spyre-stage-layouts 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// An nn.Linear weight [out, in] read transposed by the matmul: staged sticked on
// its dim 0 (the matmul's N), the view reads it in place.
// CHECK-LABEL: func.func @linear_weight
// CHECK-SAME:    %[[W:[a-z0-9]+]]: tensor<128x256xf16, #spyre.layout<device_size = [2, 256, 64], dim_order = [1, 0], format = "SEN169_FP16">> {spyre.name = "weight", spyre.role = "parameter"}
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.view %[[W]] affine_map<(d0, d1) -> (d1, d0)>
// CHECK-NOT:     spyre.restickify
// CHECK:         func.return
func.func @linear_weight(%x: tensor<32x256xf16> {spyre.name = "x", spyre.role = "input"},
                         %w: tensor<128x256xf16> {spyre.name = "weight", spyre.role = "parameter"}) -> tensor<32x128xf16> {
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<128x256xf16> -> tensor<256x128xf16>
  %y = spyre.matmul (%x, %wt) : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  func.return %y : tensor<32x128xf16>
}

// -----

// A user input in the same place keeps its copy, with a warning at its reader;
// with stage-inputs it is staged like a parameter.
// CHECK-LABEL: func.func @transposed_input
// CHECK-SAME:    %{{.*}}: tensor<128x256xf16, #spyre.layout<device_size = [4, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">> {spyre.name = "w", spyre.role = "input"}
// CHECK-NEXT:    spyre.restickify
// WARN: stage-layouts.mlir:[[# @LINE + 8]]:3: warning: function argument 'w' (#1) is copied by spyre.restickify to dim_order [1, 0], device_size [2, 256, 64]; stage it that way to avoid the copy
// INPUTS-LABEL:  func.func @transposed_input
// INPUTS-SAME:     %{{.*}}: tensor<128x256xf16, #spyre.layout<device_size = [2, 256, 64], dim_order = [1, 0], format = "SEN169_FP16">> {spyre.name = "w", spyre.role = "input"}
// INPUTS-NOT:      spyre.restickify
// INPUTS:          func.return
func.func @transposed_input(%x: tensor<32x256xf16> {spyre.name = "x", spyre.role = "input"},
                            %w: tensor<128x256xf16> {spyre.name = "w", spyre.role = "input"}) -> tensor<32x128xf16> {
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<128x256xf16> -> tensor<256x128xf16>
  %y = spyre.matmul (%x, %wt) : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  func.return %y : tensor<32x128xf16>
}

// -----

// A parameter also read in its own layout (the add) cannot be staged in both:
// it keeps its layout and its copy, with a warning.
// CHECK-LABEL: func.func @two_layouts
// CHECK-SAME:    %{{.*}}: tensor<256x256xf16, #spyre.layout<device_size = [4, 256, 64], dim_order = [0, 1], format = "SEN169_FP16">> {spyre.name = "w", spyre.role = "parameter"}
// CHECK-NEXT:    spyre.restickify
// WARN: stage-layouts.mlir:[[# @LINE + 5]]:3: warning: function argument 'w' (#1) is copied by spyre.restickify to dim_order [1, 0]
// INPUTS-WARN: stage-layouts.mlir:[[# @LINE + 4]]:3: warning: function argument 'w' (#1) is copied by spyre.restickify to dim_order [1, 0]
func.func @two_layouts(%x: tensor<256x256xf16> {spyre.name = "x", spyre.role = "input"},
                       %w: tensor<256x256xf16> {spyre.name = "w", spyre.role = "parameter"}) -> (tensor<256x256xf16>, tensor<256x256xf16>) {
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<256x256xf16> -> tensor<256x256xf16>
  %y = spyre.matmul (%x, %wt) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %z = spyre.pointwise "add" (%x, %w) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %y, %z : tensor<256x256xf16>, tensor<256x256xf16>
}

// -----

// A weight whose K (100) is not whole sticks: its padded copy (K to 128) is
// staged, the runtime writing zeros in the padding.
// CHECK-LABEL: func.func @padded_k
// CHECK-SAME:    %[[B:[a-z0-9]+]]: tensor<100x150xf16, #spyre.layout<device_size = [3, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">> {spyre.name = "b", spyre.role = "parameter"}) -> tensor<32x150xf16
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul (%{{.*}}, %[[B]])
func.func @padded_k(%a: tensor<32x100xf16> {spyre.name = "a", spyre.role = "input"},
                    %b: tensor<100x150xf16> {spyre.name = "b", spyre.role = "parameter"}) -> tensor<32x150xf16> {
  %c = spyre.matmul (%a, %b) : (tensor<32x100xf16>, tensor<100x150xf16>) -> tensor<32x150xf16>
  func.return %c : tensor<32x150xf16>
}

// -----

// A table compile-time evaluation made (role constant, the runtime stages it
// from the output directory) read transposed: staged like a parameter, without
// a warning, since nobody but the compiler could stage it otherwise.
// CHECK-LABEL: func.func @transposed_constant
// CHECK-SAME:    %[[T:[a-z0-9]+]]: tensor<128x256xf16, #spyre.layout<device_size = [2, 256, 64], dim_order = [1, 0], format = "SEN169_FP16">> {spyre.name = "const_table", spyre.role = "constant"}
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.view %[[T]] affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_constant(%x: tensor<32x256xf16> {spyre.name = "x", spyre.role = "input"},
                               %t: tensor<128x256xf16> {spyre.name = "const_table", spyre.role = "constant"}) -> tensor<32x128xf16> {
  %tt = spyre.view %t affine_map<(d0, d1) -> (d1, d0)> : tensor<128x256xf16> -> tensor<256x128xf16>
  %y = spyre.matmul (%x, %tt) : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  func.return %y : tensor<32x128xf16>
}
