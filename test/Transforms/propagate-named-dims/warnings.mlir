// spyre-propagate-named-dims warnings: each is one located line, and the pass
// goes on (keeping operand #0's names, or generating names for a view).
// RUN: %spyre-opt %s --split-input-file -p spyre-propagate-named-dims -o %t 2>&1 | %filecheck %s --check-prefix=WARN
// RUN: %filecheck %s < %t

// A matmul whose contracted dims carry different names: seed 002's rule
// x_names[-n:] == y_names[:n] fails; the op goes on with A's names.
// WARN: warnings.mlir:[[# @LINE + 5]]:3: warning: contracted iteration dim 2: operand #0 names it ["K"] but operand #1 names it ["C"]; contracted dims must carry the same names (x_names[-n:] == y_names[:n]); keeping ["K"]
// CHECK-LABEL: func.func @matmul_mismatch(
// CHECK: spyre.matmul (%x, %y) {dims = {{\[\["M"\], \["N"\], \["K"\]\]}}}
func.func @matmul_mismatch(%x: tensor<64x256xf16> {spyre.dims = [["M"], ["K"]]},
                           %y: tensor<256x128xf16> {spyre.dims = [["C"], ["N"]]}) -> tensor<64x128xf16> {
  %0 = spyre.matmul (%x, %y) : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
  func.return %0 : tensor<64x128xf16>
}

// -----

// Two operands naming one pointwise iteration dim differently.
// WARN: warnings.mlir:[[# @LINE + 5]]:3: warning: iteration dim 1: operand #0 names it ["B"] but operand #1 names it ["C", "D"]; keeping ["B"]
// CHECK-LABEL: func.func @pointwise_conflict(
// CHECK: spyre.pointwise "add" (%a, %b) {dims = {{\[\["A"\], \["B"\]\]}}}
func.func @pointwise_conflict(%a: tensor<4x8xf16> {spyre.dims = [["A"], ["B"]]},
                              %b: tensor<4x8xf16> {spyre.dims = [["A"], ["C", "D"]]}) -> tensor<4x8xf16> {
  %0 = spyre.pointwise "add" (%a, %b) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}

// -----

// A view splitting three names of unknown extents over two dims: the split
// cannot be decided, the view's dims get generated names.
// WARN: warnings.mlir:[[# @LINE + 4]]:3: warning: cannot distribute the names ["A", "B", "C"] of source dims [0] (extents [24]) over result dims [0, 1] (extents [4, 6]); generating names
// CHECK-LABEL: func.func @view_split(
// CHECK: spyre.view %x {{.*}} {dims = {{\[\["%0.0"\], \["%0.1"\]\]}}}
func.func @view_split(%x: tensor<24xf16> {spyre.dims = [["A", "B", "C"]]}) {
  %0 = spyre.view %x affine_map<(d0, d1) -> (d0 * 6 + d1)> : tensor<24xf16> -> tensor<4x6xf16>
  func.return
}

// -----

// A malformed spyre.dims on an argument is ignored (with a warning at the function).
// WARN: warnings.mlir:[[# @LINE + 4]]:1: warning: argument %x: spyre.dims must be a list of name lists, one per dim of its rank-2 type, got
// WARN-SAME: {{\[\["A"\]\]}}; generating names
// CHECK-LABEL: func.func @bad_arg_dims(
// CHECK: spyre.pointwise "exp" (%x) {dims = {{\[\["%x.0"\], \["%x.1"\]\]}}}
func.func @bad_arg_dims(%x: tensor<4x8xf16> {spyre.dims = [["A"]]}) -> tensor<4x8xf16> {
  %0 = spyre.pointwise "exp" (%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  func.return %0 : tensor<4x8xf16>
}
