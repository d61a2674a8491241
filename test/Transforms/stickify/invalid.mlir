// spyre-stickify: layouts that contradict an op's stick rule are errors.
// RUN: not %spyre-opt %s --split-input-file -p spyre-stickify 2>&1 | %filecheck %s

// A matmul result must be sticked on N.
func.func @matmul_result_on_m(%a: tensor<64x64xf16>, %b: tensor<64x128xf16>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: result layout [1, 0] sticks dim 0, but 'spyre.matmul' needs its result sticked on one of [1]
  %c = spyre.matmul (%a, %b) : (tensor<64x64xf16>, tensor<64x128xf16>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
  func.return %c : tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
}

