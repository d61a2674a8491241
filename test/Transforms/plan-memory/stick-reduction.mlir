// A reduction over the stick dim writes one element per stick (a sparse
// result); its readers read whole sticks of it: the add padded to a stick, the
// scaling broadcasting it along the stick dim.  Each core reads the sticks it
// wrote, so every value of the row statistics lives in LX (RMS norm on 4 cores,
// rows divided).
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-stickify,spyre-work-division,spyre-plan-memory' | %filecheck %s

// CHECK-LABEL: func.func @rms_norm
// CHECK:         %sq = spyre.pointwise "mul" {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx,
// CHECK-NEXT:    %ms = spyre.reduce "mean" {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx,
// CHECK-NEXT:    %eps = spyre.pointwise "add" {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx,
// CHECK-NEXT:    %r = spyre.pointwise "rsqrt" {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx,
// CHECK-NEXT:    %y = spyre.pointwise "mul" {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<hbm, arg 1>
func.func @rms_norm(%x: tensor<256x512xf16>) -> tensor<256x512xf16> {
  %sq = spyre.pointwise "mul" (%x, %x) : (tensor<256x512xf16>, tensor<256x512xf16>) -> tensor<256x512xf16>
  %ms = spyre.reduce "mean" (%sq) dims [1] : (tensor<256x512xf16>) -> tensor<256x1xf16>
  %eps = spyre.pointwise "add" (%ms) consts {y = 1.0e-06 : f64} : (tensor<256x1xf16>) -> tensor<256x1xf16>
  %r = spyre.pointwise "rsqrt" (%eps) : (tensor<256x1xf16>) -> tensor<256x1xf16>
  %y = spyre.pointwise "mul" (%x, %r) : (tensor<256x512xf16>, tensor<256x1xf16>) -> tensor<256x512xf16>
  func.return %y : tensor<256x512xf16>
}
