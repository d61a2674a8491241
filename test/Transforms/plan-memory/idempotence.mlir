// The pass recomputes every placement: running it again changes nothing, and
// its output round-trips.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir -p spyre-plan-memory > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: %spyre-opt %t.once.mlir | %filecheck %s

// CHECK-LABEL: func.func @chain
// CHECK:         %x = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 0>
// CHECK:         %y = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, arg 2>
func.func @chain(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %x = spyre.pointwise "add" (%a, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %y = spyre.pointwise "exp" (%x) : (tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %y : tensor<256x256xf16>
}
