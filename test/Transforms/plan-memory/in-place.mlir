// In-place reuse: a pointwise result of the same type and map takes the LX
// block of an operand that dies at its op (DESIGN §9).  [256, 256] fp16 on 4
// cores: 32 KiB per core.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' | %filecheck %s --check-prefixes=CHECK,GREEDY
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=firstfit}' | %filecheck %s --check-prefixes=CHECK,FIT
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s --check-prefixes=CHECK,FIT

// %x dies at exp: %y overwrites it.  %y lives on (read by mul and the last
// add), so %w gets its own block.
// CHECK-LABEL: func.func @chain
// CHECK:         %x = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, [[X:[0-9]+]]>
// CHECK:         %y = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, [[X]]>
// CHECK-NOT:     placement = #spyre.placement<lx, [[X]]>
// CHECK:         %w = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<lx,
// CHECK:         %z = spyre.pointwise "add" {{.*}}placement = #spyre.placement<hbm, arg 3>
func.func @chain(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>, %c: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %x = spyre.pointwise "add" (%a, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %y = spyre.pointwise "exp" (%x) : (tensor<256x256xf16>) -> tensor<256x256xf16>
  %w = spyre.pointwise "mul" (%y, %c) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %z = spyre.pointwise "add" (%w, %y) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %z : tensor<256x256xf16>
}

// No in-place reuse when the operand lives on (%x is read again by the last op).
// greedy places in program order; first/best fit place the shorter-lived %y first.
// CHECK-LABEL: func.func @operand_lives_on
// GREEDY:        %x = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 0>
// GREEDY:        %y = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 32768>
// FIT:           %x = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 32768>
// FIT:           %y = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// CHECK:         %z = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<hbm, arg 2>
func.func @operand_lives_on(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %x = spyre.pointwise "add" (%a, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %y = spyre.pointwise "exp" (%x) : (tensor<256x256xf16>) -> tensor<256x256xf16>
  %z = spyre.pointwise "mul" (%y, %x) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %z : tensor<256x256xf16>
}
