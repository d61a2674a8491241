// The four LX solvers on one function (DESIGN §9).  [256, 256] fp16 on 4 cores:
// 32 KiB per core per value.  %q dies at the op that writes %r: %r may take its
// block in place.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' | %filecheck %s --check-prefix=GREEDY
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=greedy}' | %filecheck %s --check-prefix=GREEDY
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=firstfit}' | %filecheck %s --check-prefixes=FIT,FIRST
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s --check-prefixes=FIT,BEST
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=valuefit}' | %filecheck %s --check-prefix=VALUE

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
// value fit, by bytes times uses: all equal here, so program order; %r takes
// %q's block.
// VALUE-LABEL:  func.func @solvers
// VALUE:          %p = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 0>
// VALUE:          %q = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 32768>
// VALUE:          %r = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<lx, 32768>
func.func @solvers(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %p = spyre.pointwise "add" (%a, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %q = spyre.pointwise "exp" (%a) : (tensor<256x256xf16>) -> tensor<256x256xf16>
  %r = spyre.pointwise "mul" (%q, %b) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  %s = spyre.pointwise "add" (%p, %r) : (tensor<256x256xf16>, tensor<256x256xf16>) -> tensor<256x256xf16>
  func.return %s : tensor<256x256xf16>
}

// First fit and best fit choose different gaps.  [64, 64] fp16 is 2 KiB per
// core, [192, 64] 6 KiB.  By score (%o* are outputs, not candidates) %r, %q1,
// %s and %q2 are placed first, stacked; %r and %s die before %x is written,
// leaving around the live %q1 and %q2 a 6 KiB hole at 0 and an exact 2 KiB
// hole at 8192: first fit takes the lowest, best fit the exact one.  greedy,
// at %x's write, finds the bottom free.
// GREEDY-LABEL: func.func @gaps
// GREEDY:         %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// FIT-LABEL:    func.func @gaps
// FIT:            %r = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// FIT-NEXT:       %q1 = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 6144>
// FIT-NEXT:       %s = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 8192>
// FIT-NEXT:       %q2 = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 10240>
// FIRST:          %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// BEST:           %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 8192>
// value fit, by bytes times uses: the 6 KiB %r (three uses) at 0, %q1 (six)
// and %q2 (five) above it, then %x at the bottom, free once %r has died, and
// %s last, above everything it overlaps.
// VALUE-LABEL:  func.func @gaps
// VALUE:          %r = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// VALUE-NEXT:     %q1 = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 6144>
// VALUE-NEXT:     %s = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 10240>
// VALUE-NEXT:     %q2 = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 8192>
// VALUE:          %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
func.func @gaps(%a: tensor<64x64xf16>, %g: tensor<192x64xf16>)
    -> (tensor<192x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>,
        tensor<64x64xf16>, tensor<64x64xf16>) {
  %r = spyre.pointwise "exp" (%g) : (tensor<192x64xf16>) -> tensor<192x64xf16>
  %q1 = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %s = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %q2 = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %o1 = spyre.pointwise "add" (%r, %r) : (tensor<192x64xf16>, tensor<192x64xf16>) -> tensor<192x64xf16>
  %o2 = spyre.pointwise "add" (%s, %q1) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %x = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %o3 = spyre.pointwise "add" (%q1, %q1) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %o4 = spyre.pointwise "add" (%q2, %q2) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %o5 = spyre.pointwise "add" (%q1, %q2) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %o6 = spyre.pointwise "add" (%x, %q1) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %o7 = spyre.pointwise "add" (%x, %q2) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %o1, %o2, %o3, %o4, %o5, %o6, %o7 : tensor<192x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>,
      tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf16>
}
