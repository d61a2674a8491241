// An argument the runtime stages once (a parameter, buffer or constant) takes the stick dim its
// readers want before any op is visited, as a buffer updated in place does: wav2vec2's positional
// convolution kernel [O, C, K] (weight normalisation: summed over O and C, scaled per tap, then read
// per tap as a matmul's [O, C] left-hand side) is staged sticked on C, unpadded, and no op copies
// it; sticked on its innermost K (4 taps in a stick of 64) it was copied on every run.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts 2>%t.err | %filecheck %s
// RUN: %filecheck %s --check-prefix=WARN --allow-empty < %t.err

// WARN-NOT: warning
// CHECK-LABEL: func.func @normalised_kernel
// CHECK-SAME:    %v: tensor<128x64x4xf16, #spyre.layout<device_size = [4, 1, 128, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">> {spyre.name = "v", spyre.role = "parameter"}
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.reduce "sum" (%v) dims [0, 1]
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.pointwise "mul" (%v, %{{.*}})
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.matmul
func.func @normalised_kernel(%x: tensor<2x64x32xf16> {spyre.name = "x", spyre.role = "input"},
                             %v: tensor<128x64x4xf16> {spyre.name = "v", spyre.role = "parameter"},
                             %g: tensor<1x1x4xf16> {spyre.name = "g", spyre.role = "parameter"}) -> tensor<2x128x32xf16> {
  %n = spyre.reduce "sum" (%v) dims [0, 1] : (tensor<128x64x4xf16>) -> tensor<1x1x4xf16>
  %s = spyre.pointwise "realdiv" (%g, %n) : (tensor<1x1x4xf16>, tensor<1x1x4xf16>) -> tensor<1x1x4xf16>
  %w = spyre.pointwise "mul" (%v, %s) : (tensor<128x64x4xf16>, tensor<1x1x4xf16>) -> tensor<128x64x4xf16>
  %tap = spyre.view %w affine_map<(d0, d1) -> (d0, d1, 0)> : tensor<128x64x4xf16> -> tensor<128x64xf16>
  %y = spyre.matmul (%tap, %x) : (tensor<128x64xf16>, tensor<2x64x32xf16>) -> tensor<2x128x32xf16>
  func.return %y : tensor<2x128x32xf16>
}

// -----

// The same kernel as a user input keeps the layout of its type, the default: the runtime stages
// what the user hands it.
// CHECK-LABEL: func.func @input_kernel
// CHECK-SAME:    %v: tensor<128x64x4xf16, #spyre.layout<device_size = [64, 1, 128, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">> {spyre.name = "v", spyre.role = "input"}
// CHECK:         spyre.restickify
func.func @input_kernel(%x: tensor<2x64x32xf16> {spyre.name = "x", spyre.role = "input"},
                        %v: tensor<128x64x4xf16> {spyre.name = "v", spyre.role = "input"},
                        %g: tensor<1x1x4xf16> {spyre.name = "g", spyre.role = "parameter"}) -> tensor<2x128x32xf16> {
  %n = spyre.reduce "sum" (%v) dims [0, 1] : (tensor<128x64x4xf16>) -> tensor<1x1x4xf16>
  %s = spyre.pointwise "realdiv" (%g, %n) : (tensor<1x1x4xf16>, tensor<1x1x4xf16>) -> tensor<1x1x4xf16>
  %w = spyre.pointwise "mul" (%v, %s) : (tensor<128x64x4xf16>, tensor<1x1x4xf16>) -> tensor<128x64x4xf16>
  %tap = spyre.view %w affine_map<(d0, d1) -> (d0, d1, 0)> : tensor<128x64x4xf16> -> tensor<128x64xf16>
  %y = spyre.matmul (%tap, %x) : (tensor<128x64xf16>, tensor<2x64x32xf16>) -> tensor<2x128x32xf16>
  func.return %y : tensor<2x128x32xf16>
}

// -----

// A scalar buffer (Gemma's embedding normalizer, a 0-d tensor) has no stick to choose: it keeps the
// default layout.  Regression: choosing among its dims (none) failed with "min() arg is an empty
// sequence".
// CHECK-LABEL: func.func @scalar_buffer
// CHECK-SAME:    %s: tensor<f16, #spyre.layout<device_size = [1, 64], dim_order = [], format = "SEN169_FP16">> {spyre.name = "normalizer", spyre.role = "buffer"}
// CHECK:         spyre.pointwise "mul" (%x, %s)
func.func @scalar_buffer(%x: tensor<4x64xf16> {spyre.name = "x", spyre.role = "input"},
                         %s: tensor<f16> {spyre.name = "normalizer", spyre.role = "buffer"}) -> tensor<4x64xf16> {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<4x64xf16>, tensor<f16>) -> tensor<4x64xf16>
  func.return %y : tensor<4x64xf16>
}
