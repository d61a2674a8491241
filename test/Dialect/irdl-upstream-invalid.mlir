// Upstream MLIR rejects malformed ops of our dialects once it knows their IRDL
// (spyre-opt --emit-irdl); as unregistered ops it accepted them.
// REQUIRES: mlir-opt
// RUN: %mlir-opt --allow-unregistered-dialect --split-input-file %s > /dev/null
// RUN: not %mlir-opt --irdl-file=%spyre-irdl --split-input-file %s 2>&1 | %filecheck %s

// Wrong operand count.
// CHECK: irdl-upstream-invalid.mlir:[[# @LINE + 2]]:8: error: op expects exactly 1 operands, but got 2
func.func @view_two_sources(%a: tensor<4x64xf16>) -> tensor<64x4xf16> {
  %v = "spyre.view"(%a, %a) {map = affine_map<(d0, d1) -> (d1, d0)>} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<64x4xf16>
  func.return %v : tensor<64x4xf16>
}

// -----

// Missing required attribute.
// CHECK: irdl-upstream-invalid.mlir:[[# @LINE + 2]]:8: error: 'spyre.reduce' op attribute "reduce_dims" is expected but not provided
func.func @reduce_without_dims(%a: tensor<4x64xf16>) -> tensor<4xf16> {
  %s = "spyre.reduce"(%a) {op_func_name = "sum"} : (tensor<4x64xf16>) -> tensor<4xf16>
  func.return %s : tensor<4xf16>
}

// -----

// Wrong attribute kind.
// CHECK: irdl-upstream-invalid.mlir:[[# @LINE + 2]]:3: error: expected base attribute 'builtin.string' but got 'builtin.integer'
func.func @execute_numbered_file(%i: index) {
  "sdscbundle.sdsc_execute"(%i) {sdsc_filename = 3 : i64, symbol_ids = [-1]} : (index) -> ()
  func.return
}

// -----

// Wrong operand type.
// CHECK: irdl-upstream-invalid.mlir:[[# @LINE + 2]]:8: error: expected base type 'builtin.tensor' but got 'builtin.index'
func.func @view_of_index(%i: index) -> index {
  %v = "spyre.view"(%i) {map = affine_map<(d0) -> (d0)>} : (index) -> index
  func.return %v : index
}

// -----

// A matmul takes exactly its two operands (ComputeOp.OPERANDS: lhs, rhs).
// CHECK: irdl-upstream-invalid.mlir:[[# @LINE + 2]]:8: error: op expects exactly 2 operands, but got 3
func.func @matmul_of_three(%a: tensor<4x64xf16>, %b: tensor<64x8xf16>) -> tensor<4x8xf16> {
  %c = "spyre.matmul"(%a, %b, %b) : (tensor<4x64xf16>, tensor<64x8xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
  func.return %c : tensor<4x8xf16>
}

// -----

// A limit of IRDL (spyre_mlir/irdl.py): one constraint variable per variadic, so
// a pointwise op (whose tensor operand count depends on its constants) is
// rejected when its operands differ in type, although a broadcast is valid.
// CHECK: irdl-upstream-invalid.mlir:[[# @LINE + 2]]:8: error: expected 'tensor<4x64xf16>' but got 'tensor<1x64xf16>'
func.func @broadcasting_add(%a: tensor<4x64xf16>, %b: tensor<1x64xf16>) -> tensor<4x64xf16> {
  %c = "spyre.pointwise"(%a, %b) {op_func_name = "add"} : (tensor<4x64xf16>, tensor<1x64xf16>) -> tensor<4x64xf16>
  func.return %c : tensor<4x64xf16>
}
