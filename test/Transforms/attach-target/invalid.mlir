// Bad target options are one clear error, reported before any input is read.
// RUN: not %spyre-opt %s -p 'spyre-attach-target{cores=0}' 2>&1 | %filecheck %s --check-prefix=CORES0
// RUN: not %spyre-opt %s -p 'spyre-attach-target{cores=33}' 2>&1 | %filecheck %s --check-prefix=CORES33
// RUN: not %spyre-opt %s -p 'spyre-attach-target{lx-fraction=1.5}' 2>&1 | %filecheck %s --check-prefix=FRACTION
// RUN: not %spyre-opt %s -p 'spyre-attach-target{cores=many}' 2>&1 | %filecheck %s --check-prefix=TYPE
// The named pipeline checks its target options the same way.
// RUN: not %spyre-opt %s -p 'spyre-compile{cores=33}' 2>&1 | %filecheck %s --check-prefix=PIPELINE
// A module attribute spyre.target that is not a #spyre.target is an error at the module.
// RUN: not %spyre-opt %s -p spyre-work-division 2>&1 | %filecheck %s --check-prefix=NOT-A-TARGET

// CORES0:   spyre-opt: error: spyre-attach-target: cores=0: cores must be an integer between 1 and 32, got 0
// CORES0-NOT: error
// CORES33:  spyre-opt: error: spyre-attach-target: cores=33: cores must be an integer between 1 and 32, got 33
// CORES33-NOT: error
// FRACTION: spyre-opt: error: spyre-attach-target: lx-fraction: backend_lx_fraction must satisfy 0 <= fraction < 1, got 1.5
// FRACTION-NOT: error
// TYPE:     spyre-opt: error: pass 'spyre-attach-target': Incompatible types: given ('many',), expected int | None
// PIPELINE: spyre-opt: error: spyre-compile: cores=33: cores must be an integer between 1 and 32, got 33
// PIPELINE-NOT: error

// NOT-A-TARGET: invalid.mlir:[[# @LINE + 2]]:1: error: module attribute 'spyre.target' must be a #spyre.target<...>, got 4 : i64
// NOT-A-TARGET-NOT: error
module attributes {spyre.target = 4 : i64} {
  func.func @f(%a: tensor<64x64xf16>) -> tensor<64x64xf16> {
    %y = spyre.pointwise "exp" (%a) : (tensor<64x64xf16>) -> tensor<64x64xf16>
    func.return %y : tensor<64x64xf16>
  }
}
