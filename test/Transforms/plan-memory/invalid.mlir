// Bad options are one clear error.
// RUN: not %spyre-opt %s -p 'spyre-plan-memory{lx-solver=worstfit}' 2>&1 | %filecheck %s --check-prefix=SOLVER
// RUN: not %spyre-opt %s -p 'spyre-plan-memory{lx-fraction=1.5}' 2>&1 | %filecheck %s --check-prefix=FRACTION
// The named pipeline checks them before any stage runs.
// RUN: not %spyre-opt %s -p 'spyre-compile{lx-solver=worstfit}' 2>&1 | %filecheck %s --check-prefix=PIPELINE

// SOLVER: error: spyre-plan-memory: unknown lx-solver 'worstfit'; expected one of greedy, firstfit, bestfit
// FRACTION: error: spyre-plan-memory: lx-fraction: backend_lx_fraction must satisfy 0 <= fraction < 1, got 1.5
// PIPELINE: error: spyre-compile: unknown lx-solver 'worstfit'; expected one of greedy, firstfit, bestfit
// PIPELINE-NOT: error
func.func @f(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}
