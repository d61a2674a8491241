// The three LX solvers on one function (DESIGN §9).  [256, 256] fp16 on 4 cores:
// 32 KiB per core per value.  %q dies at the op that writes %r: %r may take its
// block in place.
// RUN: %spyre-opt %s -p 'spyre-work-division{cores=4},spyre-plan-memory' | %filecheck %s --check-prefix=GREEDY
// RUN: %spyre-opt %s -p 'spyre-work-division{cores=4},spyre-plan-memory{lx-solver=greedy}' | %filecheck %s --check-prefix=GREEDY
// RUN: %spyre-opt %s -p 'spyre-work-division{cores=4},spyre-plan-memory{lx-solver=firstfit}' | %filecheck %s --check-prefix=FIT
// RUN: %spyre-opt %s -p 'spyre-work-division{cores=4},spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s --check-prefix=FIT

// greedy, in program order: %p at 0, %q above it, %r in %q's block.
// GREEDY-LABEL: func.func @solvers
// GREEDY:         %p = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 0>
// GREEDY:         %q = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 32768>
// GREEDY:         %r = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<lx, 32768>
// GREEDY:         %s = spyre.pointwise "add" {{.*}}placement = #spyre.placement<hbm, arg 2>

// first/best fit, by score: the short-lived %q and its in-place child %r
// first (at 0), then the long-lived %p.
// FIT-LABEL:    func.func @solvers
// FIT:            %p = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 32768>
// FIT:            %q = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// FIT:            %r = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<lx, 0>
// FIT:            %s = spyre.pointwise "add" {{.*}}placement = #spyre.placement<hbm, arg 2>
func.func @solvers(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %p = spyre.pointwise "add" (%a, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %q = spyre.pointwise "exp" (%a) : (tensor<256x256xf16>) -> tensor<256x256xf16>
  %r = spyre.pointwise "mul" (%q, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %s = spyre.pointwise "add" (%p, %r) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %s : tensor<256x256xf16>
}
