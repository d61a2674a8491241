// A value whose layout is padded beyond what its writer reaches (padded_shape:
// a matmul B operand's K rows, K not a whole stick) must read as zeros there:
// it gets a zeroed HBM buffer of its own, never LX (LX starts as garbage) and
// never a pool block another value used: a constant kernel argument (#3, after
// the two inputs and the output) that the runtime fills with zeros, listed in
// the function's spyre.constants.  A padded kernel output stays an argument
// (spyre-lower-to-bundle gives it a fill of 0).
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=1},spyre-stickify,spyre-work-division,spyre-plan-memory' 2>/dev/null | %filecheck %s

// CHECK-LABEL: func.func @matmul_k_padding
// CHECK-SAME:    attributes {spyre.constants = [{type = tensor<100x64xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>, fill = 0.000000e+00 : f64, counts = []}]}
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, arg 3>} : {{.*}} -> tensor<100x64xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[N:.*]] = spyre.pointwise "neg" {{.*}}placement = #spyre.placement<lx, 0>}
// CHECK-NEXT:    spyre.matmul (%[[N]], %[[E]]) {{.*}}placement = #spyre.placement<hbm, arg 2>}
func.func @matmul_k_padding(%a: tensor<32x100xf16>, %b: tensor<100x64xf16>) -> tensor<32x64xf16> {
  %e = spyre.pointwise "exp" (%b) : (tensor<100x64xf16>) -> tensor<100x64xf16>
  %n = spyre.pointwise "neg" (%a) : (tensor<32x100xf16>) -> tensor<32x100xf16>
  %c = spyre.matmul (%n, %e) : (tensor<32x100xf16>, tensor<100x64xf16>) -> tensor<32x64xf16>
  func.return %c : tensor<32x64xf16>
}
