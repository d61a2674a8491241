// Bad options are one clear error.
// RUN: not %spyre-opt %s -p 'spyre-plan-memory{lx-solver=worstfit}' 2>&1 | %filecheck %s --check-prefix=SOLVER
// The LX fraction is a target fact, not a plan-memory option.
// RUN: not %spyre-opt %s -p 'spyre-plan-memory{lx-fraction=0.5}' 2>&1 | %filecheck %s --check-prefix=FRACTION
// The named pipeline checks them before any stage runs.
// RUN: not %spyre-opt %s -p 'spyre-compile{lx-solver=worstfit}' 2>&1 | %filecheck %s --check-prefix=PIPELINE

// SOLVER: error: spyre-plan-memory: unknown lx-solver 'worstfit'; expected one of auto, greedy, firstfit, bestfit, valuefit
// FRACTION: spyre-opt: error: pass 'spyre-plan-memory': Provided arguments ["lx_fraction"] not found in expected arguments ["lx_solver"]
// PIPELINE: error: spyre-compile: unknown lx-solver 'worstfit'; expected one of auto, greedy, firstfit, bestfit, valuefit
// PIPELINE-NOT: error
func.func @f(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}
