// spyre-fold-views must not split the iteration space of an op that work
// division has already split across cores.
// RUN: not %spyre-opt %s -p spyre-fold-views 2>&1 | %filecheck %s

func.func @after_work_division(%x: tensor<50x10x200xf16>, %y: tensor<500x200xf16>) -> tensor<500x200xf16> {
  %v = spyre.view %x affine_map<(d0, d1) -> (d0 floordiv 10, d0 mod 10, d1)> : tensor<50x10x200xf16> -> tensor<500x200xf16>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: spyre-fold-views must run before spyre-work-division: splitting iteration dims [0] would invalidate core_splits
  %r = spyre.pointwise "add" (%v, %y) {core_splits = array<i64: 4, 1>} : (tensor<500x200xf16>, tensor<500x200xf16>) -> tensor<500x200xf16>
  func.return %r : tensor<500x200xf16>
}
