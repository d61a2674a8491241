// Every diagnostic of the sdscbundle dialect.
// RUN: not %spyre-opt %s --split-input-file 2>&1 | %filecheck %s
// RUN: %spyre-opt %s --split-input-file --verify-diagnostics | %filecheck %s

//===----------------------------------------------------------------------===//
// !sdscbundle.input_arg
//===----------------------------------------------------------------------===//

// CHECK: invalid.mlir:10:52: error: !sdscbundle.input_arg holds index values, got i64
func.func @input_arg_elem(%x: !sdscbundle.input_arg<i64>) {
  func.return
}

// -----

// CHECK: invalid.mlir:17:83: error: duplicate 'granularity' in !sdscbundle.input_arg
func.func @input_arg_duplicate(%x: !sdscbundle.input_arg<index, granularity = 64, granularity = 32>) {
  func.return
}

// -----

// CHECK: invalid.mlir:24:59: error: !sdscbundle.input_arg: granularity must be positive
func.func @input_arg_granularity(%x: !sdscbundle.input_arg<index, granularity = 0>) {
  func.return
}

// -----

// CHECK: invalid.mlir:31:57: error: !sdscbundle.input_arg: max_value 100 is not a multiple of granularity 64
func.func @input_arg_max_value(%x: !sdscbundle.input_arg<index, granularity = 64, max_value = 100>) {
  func.return
}

// -----

// An alias is checked where it is defined.
// CHECK: invalid.mlir:39:29: error: !sdscbundle.input_arg: max_value 96 is not a multiple of granularity 64
!arg = !sdscbundle.input_arg<index, max_value = 96, granularity = 64>
func.func @input_arg_alias(%x: !arg) {
  func.return
}

//===----------------------------------------------------------------------===//
// sdscbundle.input_arg_extract
//===----------------------------------------------------------------------===//

// -----

func.func @extract_from_index(%x: index) {
  // CHECK: invalid.mlir:53:3: error: 'sdscbundle.input_arg_extract' op operand 'arg' at position 0 does not verify:
  // CHECK-NEXT: index should be of base attribute sdscbundle.input_arg
  %0 = "sdscbundle.input_arg_extract"(%x) : (index) -> index
  func.return
}

//===----------------------------------------------------------------------===//
// sdscbundle.sdsc_execute
//===----------------------------------------------------------------------===//

// -----

func.func @execute_no_attributes(%a: index) {
  // CHECK: invalid.mlir:65:27: error: sdscbundle.sdsc_execute expects a 'sdsc_filename' attribute
  sdscbundle.sdsc_execute (%a)
  func.return
}

// -----

func.func @execute_no_symbol_ids(%a: index) {
  // CHECK: invalid.mlir:73:32: error: sdscbundle.sdsc_execute expects a 'symbol_ids' attribute
  sdscbundle.sdsc_execute (%a) {sdsc_filename = "a.json"}
  func.return
}

// -----

func.func @execute_filename_type(%a: index) {
  // CHECK: invalid.mlir:81:32: error: sdscbundle.sdsc_execute expects 'sdsc_filename' to be a string, got 0 : i64
  sdscbundle.sdsc_execute (%a) {sdsc_filename = 0, symbol_ids = [-1]}
  func.return
}

// -----

func.func @execute_ids_type(%a: index) {
  // CHECK: invalid.mlir:89:32: error: sdscbundle.sdsc_execute expects 'symbol_ids' to be an array of integers, got ["-1"]
  sdscbundle.sdsc_execute (%a) {sdsc_filename = "a.json", symbol_ids = ["-1"]}
  func.return
}

// -----

// The generic form checks the property types too.
func.func @execute_ids_type_generic(%a: index) {
  // CHECK: invalid.mlir:98:3: error: 'sdscbundle.sdsc_execute' op expected ArrayAttr attribute, but got
  "sdscbundle.sdsc_execute"(%a) <{sdsc_filename = "a.json", symbol_ids = -1}> : (index) -> ()
  func.return
}

// -----

func.func @execute_id_count(%a: index, %b: index) {
  // CHECK: invalid.mlir:106:3: error: 'sdscbundle.sdsc_execute' op expects one symbol id per operand, got 1 ids for 2 operands
  sdscbundle.sdsc_execute (%a, %b) {sdsc_filename = "a.json", symbol_ids = [-1]}
  func.return
}

// -----

func.func @execute_id_sign(%a: index, %b: index) {
  // CHECK: invalid.mlir:114:3: error: 'sdscbundle.sdsc_execute' op symbol ids must be negative, got 0
  sdscbundle.sdsc_execute (%a, %b) {sdsc_filename="a.json", "symbol_ids"=[-1, 0]}
  func.return
}

// -----

func.func @execute_id_twice(%a: index, %b: index, %c: index) {
  // CHECK: invalid.mlir:122:3: error: 'sdscbundle.sdsc_execute' op symbol id -2 is bound more than once
  sdscbundle.sdsc_execute (%a, %b, %c) {sdsc_filename = "a.json", symbol_ids = [-2, -1, -2]}
  func.return
}

// -----

func.func @execute_empty_filename(%a: index) {
  // CHECK: invalid.mlir:130:3: error: 'sdscbundle.sdsc_execute' op sdsc_filename must not be empty
  sdscbundle.sdsc_execute (%a) {sdsc_filename = "", symbol_ids = [-1]}
  func.return
}

// -----

// Operands are always index: an i64 does not resolve.
func.func @execute_operand_type(%a: i64) {
  // CHECK: invalid.mlir:139:28: error: operand is used with type index, but has been previously used or defined with type i64
  sdscbundle.sdsc_execute (%a) {sdsc_filename = "a.json", symbol_ids = [-1]}
  func.return
}
