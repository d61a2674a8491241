// Every diagnostic of the spyre dialect: parser errors of the attributes and
// op verifier messages, each at the location of the offending text or op.
// RUN: not %spyre-opt %s --split-input-file 2>&1 | %filecheck %s
// RUN: %spyre-opt %s --split-input-file --verify-diagnostics | %filecheck %s

//===----------------------------------------------------------------------===//
// #spyre.layout
//===----------------------------------------------------------------------===//

// CHECK: invalid.mlir:11:19: error: #spyre.layout: device sizes must be positive, got [0, 4, 64]
#L = #spyre.layout<device_size = [0, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">
func.func @layout_size(%x: tensor<4x64xf16, #L>) {
  func.return
}

// -----

// CHECK: invalid.mlir:19:59: error: #spyre.layout: dim_order must be a permutation of 0..1, got [1, 1]
func.func @layout_order(%x: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [1, 1], format = "SEN169_FP16">>) {
  func.return
}

// -----

// CHECK: invalid.mlir:26:60: error: #spyre.layout: unknown data format 'FP16', expected one of SEN169_FP16, SEN169_BFP16, IEEE_FP32, SENINT8, IEEE_INT32
func.func @layout_format(%x: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "FP16">>) {
  func.return
}

//===----------------------------------------------------------------------===//
// Tensor types of spyre ops
//===----------------------------------------------------------------------===//

// -----

func.func @dynamic_shape(%x: tensor<?x64xf16>) {
  // CHECK: invalid.mlir:38:3: error: 'spyre.pointwise' op operand #0 has a dynamic shape tensor<?x64xf16>; only static shapes are supported
  %0 = spyre.pointwise "exp" (%x) : (tensor<?x64xf16>) -> tensor<?x64xf16>
  func.return
}

// -----

func.func @empty_dim(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:46:3: error: 'spyre.reduce' op result has an empty dimension tensor<4x0xf16>; every dimension must be at least 1
  %0 = spyre.reduce "sum" (%x) dims [1] : (tensor<4x64xf16>) -> tensor<4x0xf16>
  func.return
}

// -----

func.func @element_type() {
  // CHECK: invalid.mlir:54:3: error: 'spyre.fill' op result has element type i64, expected one of f16, bf16, f32, i8, i32
  %0 = spyre.fill 0.0 : tensor<4x64xi64>
  func.return
}

// -----

func.func @foreign_encoding(%x: tensor<4x64xf16, "dense">) {
  // CHECK: invalid.mlir:62:3: error: 'spyre.pointwise' op operand #0 has encoding "dense", expected #spyre.layout
  %0 = spyre.pointwise "exp" (%x) : (tensor<4x64xf16, "dense">) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @layout_rank(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:70:3: error: 'spyre.pointwise' op result: layout dim_order [0] does not match rank 2
  %0 = spyre.pointwise "exp" (%x) : (tensor<4x64xf16>) -> tensor<4x64xf16, #spyre.layout<device_size = [1, 64], dim_order = [0], format = "SEN169_FP16">>
  func.return
}

// -----

func.func @layout_format_mismatch(%x: tensor<4x64xf32, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) {
  // CHECK: invalid.mlir:78:3: error: 'spyre.view' op source: layout format 'SEN169_FP16' does not match element type float32 ('IEEE_FP32')
  %0 = spyre.view %x affine_map<(d0, d1) -> (d0, d1)> : tensor<4x64xf32, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">> -> tensor<4x64xf32>
  func.return
}

// -----

// 128 f16 elements along the stick dim need 2 sticks.
func.func @layout_too_small(%x: tensor<4x128xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) {
  // CHECK: invalid.mlir:87:3: error: 'spyre.pointwise' op operand #0: layout device_size [1, 4, 64] cannot hold the tensor; needs at least [2, 4, 64]
  %0 = spyre.pointwise "exp" (%x) : (tensor<4x128xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<4x128xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// #spyre.hint
//===----------------------------------------------------------------------===//

// -----

func.func @hint_duplicate_key(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:99:77: error: duplicate 'tiles' in #spyre.hint
  %0 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0, tiles = {M = 2}, tiles = {N = 2}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @hint_duplicate_dim(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:107:79: error: duplicate dimension 'M' in #spyre.hint
  %0 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0, work_div = {M = 2, "M" = 4}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @hint_empty(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:115:56: error: #spyre.hint: a hint needs tiles or work_div
  %0 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @hint_count(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:123:56: error: #spyre.hint: work_div count for 'N' must be a positive integer
  %0 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0, tiles = {M = 2}, work_div = {N = 0}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// #spyre.placement
//===----------------------------------------------------------------------===//

// -----

func.func @placement_lx_alignment() {
  // CHECK: invalid.mlir:135:52: error: #spyre.placement: lx offset 100 is not 128-byte aligned
  %0 = spyre.fill 0.0 {placement = #spyre.placement<lx, 100>} : tensor<4x64xf16>
  func.return
}

// -----

func.func @placement_pool_alignment() {
  // CHECK: invalid.mlir:143:52: error: #spyre.placement: pool offset 64 is not 128-byte aligned
  %0 = spyre.fill 0.0 {placement = #spyre.placement<hbm, pool 64>} : tensor<4x64xf16>
  func.return
}

// -----

// The textual form has no way to spell an unknown kind: the parser rejects it.
func.func @placement_kind() {
  // CHECK: invalid.mlir:152:58: error: Expected one of 'arg', 'pool', 'zeroed'
  %0 = spyre.fill 0.0 {placement = #spyre.placement<hbm, offset 128>} : tensor<4x64xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// Op funcs
//===----------------------------------------------------------------------===//

// -----

func.func @unknown_op_func(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:164:3: error: 'spyre.pointwise' op unknown op func 'gelu'
  %0 = spyre.pointwise "gelu" (%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @reduction_as_pointwise(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:172:3: error: 'spyre.pointwise' op op func 'sum' is a reduction op func, expected pointwise
  %0 = spyre.pointwise "sum" (%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @pointwise_as_reduction(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:180:3: error: 'spyre.reduce' op op func 'maximum' is a pointwise op func, expected reduction
  %0 = spyre.reduce "maximum" (%x) dims [1] : (tensor<4x64xf16>) -> tensor<4xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// spyre.pointwise
//===----------------------------------------------------------------------===//

// -----

func.func @pointwise_unknown_const(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:192:3: error: 'spyre.pointwise' op op func 'clip' has no input or parameter 'lo' (expected one of: x, min, max)
  %0 = spyre.pointwise "clip" (%x) consts {lo = 0.0} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @pointwise_const_type(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:200:3: error: 'spyre.pointwise' op const 'y' must be a float or integer, got "two"
  %0 = spyre.pointwise "add" (%x) consts {y = "two"} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @pointwise_arity(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:208:3: error: 'spyre.pointwise' op op func 'add' takes 2 inputs (x, y); 0 given as consts leaves 2 tensor operands, got 1
  %0 = spyre.pointwise "add" (%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @pointwise_arity_with_const(%x: tensor<4x64xf16>, %y: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:216:3: error: 'spyre.pointwise' op op func 'sub' takes 2 inputs (x, y); 1 given as consts leaves 1 tensor operands, got 2
  %0 = spyre.pointwise "sub" (%x, %y) consts {x = 1.0} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

// Only identity may change the element type.
func.func @pointwise_element_type(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:225:3: error: 'spyre.pointwise' op operand #0 element type f16 differs from result element type f32
  %0 = spyre.pointwise "exp" (%x) : (tensor<4x64xf16>) -> tensor<4x64xf32>
  func.return
}

// -----

func.func @pointwise_broadcast(%x: tensor<4x64xf16>, %y: tensor<4x32xf16>) {
  // CHECK: invalid.mlir:233:3: error: 'spyre.pointwise' op operand #1 of shape [4, 32] does not broadcast to the result shape [4, 64]
  %0 = spyre.pointwise "add" (%x, %y) : (tensor<4x64xf16>, tensor<4x32xf16>) -> tensor<4x64xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// spyre.reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_operands(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:245:3: error: 'spyre.reduce' op expects one operand, got 2
  %0 = spyre.reduce "sum" (%x, %x) dims [1] : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4xf16>
  func.return
}

// -----

func.func @reduce_no_dims(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:253:3: error: 'spyre.reduce' op expects at least one reduced dim
  %0 = spyre.reduce "sum" (%x) dims [] : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @reduce_dims_order(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:261:3: error: 'spyre.reduce' op reduced dims [1, 0] must be increasing and within the operand rank 2
  %0 = spyre.reduce "sum" (%x) dims [1, 0] : (tensor<4x64xf16>) -> tensor<f16>
  func.return
}

// -----

func.func @reduce_dims_range(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:269:3: error: 'spyre.reduce' op reduced dims [2] must be increasing and within the operand rank 2
  %0 = spyre.reduce "sum" (%x) dims [2] : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @reduce_result_shape(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:277:3: error: 'spyre.reduce' op result shape [64] must be [4] or, keeping dims, [4, 1]
  %0 = spyre.reduce "max" (%x) dims [1] : (tensor<4x64xf16>) -> tensor<64xf16>
  func.return
}

// -----

func.func @reduce_element_type(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:285:3: error: 'spyre.reduce' op operand and result element types differ
  %0 = spyre.reduce "sum" (%x) dims [1] : (tensor<4x64xf16>) -> tensor<4xf32>
  func.return
}

//===----------------------------------------------------------------------===//
// spyre.matmul
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_operands(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:297:3: error: 'spyre.matmul' op expects two operands, got 1
  %0 = spyre.matmul (%x) : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @matmul_rank(%x: tensor<64xf16>, %w: tensor<64x8xf16>) {
  // CHECK: invalid.mlir:305:3: error: 'spyre.matmul' op operands must have rank >= 2, got [64] and [64, 8]
  %0 = spyre.matmul (%x, %w) : (tensor<64xf16>, tensor<64x8xf16>) -> tensor<8xf16>
  func.return
}

// -----

func.func @matmul_contraction(%x: tensor<4x64xf16>, %w: tensor<32x8xf16>) {
  // CHECK: invalid.mlir:313:3: error: 'spyre.matmul' op contraction sizes differ: lhs [4, 64] has K = 64, rhs [32, 8] has K = 32
  %0 = spyre.matmul (%x, %w) : (tensor<4x64xf16>, tensor<32x8xf16>) -> tensor<4x8xf16>
  func.return
}

// -----

func.func @matmul_result_shape(%x: tensor<4x64xf16>, %w: tensor<64x8xf16>) {
  // CHECK: invalid.mlir:321:3: error: 'spyre.matmul' op result shape [8, 4] does not match [4, 64] @ [64, 8]
  %0 = spyre.matmul (%x, %w) : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<8x4xf16>
  func.return
}

// -----

func.func @matmul_batch(%x: tensor<2x4x64xf16>, %w: tensor<3x64x8xf16>) {
  // CHECK: invalid.mlir:329:3: error: 'spyre.matmul' op result shape [2, 4, 8] does not match [2, 4, 64] @ [3, 64, 8]
  %0 = spyre.matmul (%x, %w) : (tensor<2x4x64xf16>, tensor<3x64x8xf16>) -> tensor<2x4x8xf16>
  func.return
}

// -----

func.func @matmul_element_type(%x: tensor<4x64xf16>, %w: tensor<64x8xbf16>) {
  // CHECK: invalid.mlir:337:3: error: 'spyre.matmul' op operand and result element types differ
  %0 = spyre.matmul (%x, %w) : (tensor<4x64xf16>, tensor<64x8xbf16>) -> tensor<4x8xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// spyre.restickify
//===----------------------------------------------------------------------===//

// -----

func.func @restickify_operands(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:349:3: error: 'spyre.restickify' op expects one operand, got 2
  %0 = spyre.restickify (%x, %x) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @restickify_shape(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:357:3: error: 'spyre.restickify' op operand type tensor<4x64xf16> and result type tensor<64x4xf16> must differ only in layout
  %0 = spyre.restickify (%x) : (tensor<4x64xf16>) -> tensor<64x4xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// spyre.view
//===----------------------------------------------------------------------===//

// -----

func.func @view_element_type(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:369:3: error: 'spyre.view' op source and result element types differ
  %0 = spyre.view %x affine_map<(d0, d1) -> (d0, d1)> : tensor<4x64xf16> -> tensor<4x64xbf16>
  func.return
}

// -----

func.func @view_map_rank(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:377:3: error: 'spyre.view' op map (d0, d1) -> (d0) must take 2 result coordinates to 2 source coordinates
  %0 = spyre.view %x affine_map<(d0, d1) -> (d0)> : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

func.func @view_map_symbols(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:385:3: error: 'spyre.view' op map (d0, d1)[s0] -> (d0, d1) must not have symbols
  %0 = spyre.view %x affine_map<(d0, d1)[s0] -> (d0, d1)> : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

// A slice that runs past the end of the source.
func.func @view_out_of_bounds(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:394:3: error: 'spyre.view' op map (d0, d1) -> (d0, (d1 + 48)) reads source dim 1 at [48, 79], outside its size 64
  %0 = spyre.view %x affine_map<(d0, d1) -> (d0, d1 + 48)> : tensor<4x64xf16> -> tensor<4x32xf16>
  func.return
}

// -----

func.func @view_divisor(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:402:3: error: 'spyre.view' op (d1 mod -4): the divisor must be positive
  %0 = spyre.view %x affine_map<(d0, d1) -> (d0, d1 mod -4)> : tensor<4x64xf16> -> tensor<4x64xf16>
  func.return
}

// -----

func.func @view_dims(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:410:3: error: 'spyre.view' op dims has 1 entries for a result of rank 2
  %0 = spyre.view %x affine_map<(d0, d1) -> (d1, d0)> {dims = [["N", "M"]]} : tensor<4x64xf16> -> tensor<64x4xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// spyre.fill
//===----------------------------------------------------------------------===//

// -----

func.func @fill_value() {
  // CHECK: invalid.mlir:422:19: error: expected a number, inf or nan as fill value
  %0 = spyre.fill zero : tensor<4x64xf16>
  func.return
}

// -----

func.func @fill_dims() {
  // CHECK: invalid.mlir:430:3: error: 'spyre.fill' op dims has 3 entries for a result of rank 2
  %0 = spyre.fill 0.0 {dims = [["M"], ["N"], ["K"]]} : tensor<4x64xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// The compute-op interface properties
//===----------------------------------------------------------------------===//

// -----

func.func @iteration_space_without_maps(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:442:3: error: 'spyre.pointwise' op an explicit iteration_space needs explicit indexing_maps
  %0 = spyre.pointwise "exp" (%x) {iteration_space = array<i64: 4, 64>} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @iteration_space_size(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:450:3: error: 'spyre.pointwise' op iteration space sizes must be positive, got [4, 0]
  %0 = spyre.pointwise "exp" (%x) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iteration_space = array<i64: 4, 0>} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @indexing_map_count(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:458:3: error: 'spyre.pointwise' op expected 2 indexing maps (operands then result), got 1
  %0 = spyre.pointwise "exp" (%x) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @indexing_map_rank(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:466:3: error: 'spyre.pointwise' op indexing map (d0, d1, d2) -> (d0, d1) of operand #0 must map 2 iteration dims to 2 coordinates
  %0 = spyre.pointwise "exp" (%x) {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @indexing_map_symbols(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:474:3: error: 'spyre.pointwise' op indexing map (d0, d1)[s0] -> (d0, d1) of result must not have symbols
  %0 = spyre.pointwise "exp" (%x) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1)[s0] -> (d0, d1)>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

// The default iteration space of a 4x64 result is (4, 64): the transposed map overruns.
func.func @indexing_map_bounds(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:483:3: error: 'spyre.pointwise' op indexing map (d0, d1) -> (d1, d0) of operand #0 reaches [0, 63] in dim 0 of size 4
  %0 = spyre.pointwise "exp" (%x) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @core_splits_rank(%x: tensor<4x64xf16>, %w: tensor<64x8xf16>) {
  // CHECK: invalid.mlir:491:3: error: 'spyre.matmul' op core_splits has 2 entries for an iteration space of rank 3
  %0 = spyre.matmul (%x, %w) {core_splits = array<i64: 1, 2>} : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
  func.return
}

// -----

func.func @core_splits_positive(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:499:3: error: 'spyre.reduce' op core_splits must be positive, got [0, 2]
  %0 = spyre.reduce "sum" (%x) dims [1] {core_splits = array<i64: 0, 2>} : (tensor<4x64xf16>) -> tensor<4xf16>
  func.return
}

// -----

func.func @dims_rank(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:507:3: error: 'spyre.reduce' op dims has 1 entries for an iteration space of rank 2
  %0 = spyre.reduce "sum" (%x) dims [1] {dims = [["M"]]} : (tensor<4x64xf16>) -> tensor<4xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// #spyre.target
//===----------------------------------------------------------------------===//

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:48: error: #spyre.target: cores must be an integer between 1 and 32, got 33
module attributes {spyre.target = #spyre.target<cores = 33, lx_fraction = 0.2>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:48: error: #spyre.target: cores must be an integer between 1 and 32, got 0
module attributes {spyre.target = #spyre.target<cores = 0, lx_fraction = 0.2>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:48: error: #spyre.target: backend_lx_fraction must satisfy 0 <= fraction < 1, got 1.0
module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 1.0>} {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:48: error: #spyre.target: backend_lx_fraction must satisfy 0 <= fraction < 1, got -0.1
module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = -0.1>} {
}

// -----

// Both parameters are required, in this order.
// CHECK: invalid.mlir:[[# @LINE + 1]]:58: error: Expected ','
module attributes {spyre.target = #spyre.target<cores = 4>} {
}

//===----------------------------------------------------------------------===//
// Indirect access (spyre.pointwise "identity" with indirect_dim)
//===----------------------------------------------------------------------===//

// -----

func.func @index_not_i32(%ids: tensor<2x100xf16>, %table: tensor<1000x96xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op index operand #0 must have element type i32, got f16
  %0 = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x100xf16>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
  func.return
}

// -----

func.func @indirect_result_shape(%ids: tensor<2x100xi32>, %table: tensor<1000x96xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op result shape [200, 96] must be [2, 100, 96]: the table's dims with dim 0 replaced by the index's
  %0 = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<200x96xf16>
  func.return
}

// -----

func.func @indirect_dim_outside(%ids: tensor<100xi32>, %table: tensor<1000x96xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op indirect_dim 2 is outside the table rank 2
  %0 = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 2 : i64} : (tensor<100xi32>, tensor<1000x96xf16>) -> tensor<100x96xf16>
  func.return
}

// -----

func.func @indirect_not_identity(%ids: tensor<100xi32>, %table: tensor<1000x96xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op indirect_dim needs op func 'identity' without consts, got 'exp'
  %0 = spyre.pointwise "exp" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<100xi32>, tensor<1000x96xf16>) -> tensor<100x96xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// Blocks of rows (index_step)
//===----------------------------------------------------------------------===//

// -----

func.func @step_without_index(%x: tensor<2x64xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op index_step must exceed 1 and goes with indirect_dim or scatter_dim, got 64
  %0 = spyre.pointwise "identity" (%x) {index_step = 64 : i64} : (tensor<2x64xf16>) -> tensor<2x64xf16>
  func.return
}

// -----

func.func @step_of_one(%blk: tensor<1xi32>, %cache: tensor<2x128x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op index_step must exceed 1 and goes with indirect_dim or scatter_dim, got 1
  %0 = spyre.pointwise "identity" (%blk, %cache) {indirect_dim = 1 : i64, index_step = 1 : i64} : (tensor<1xi32>, tensor<2x128x16xf16>) -> tensor<2x1x16xf16>
  func.return
}

// -----

func.func @step_not_dividing(%blk: tensor<1xi32>, %cache: tensor<2x100x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op index_step 64 does not divide the 100 rows of the table's dim 1
  %0 = spyre.pointwise "identity" (%blk, %cache) {indirect_dim = 1 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<2x100x16xf16>) -> tensor<2x1x64x16xf16>
  func.return
}

// -----

func.func @step_result_without_block(%blk: tensor<1xi32>, %cache: tensor<2x128x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op result shape [2, 1, 16] must be [2, 1, 64, 16]: the table's dims with dim 1 replaced by the index's and a block of 64 rows
  %0 = spyre.pointwise "identity" (%blk, %cache) {indirect_dim = 1 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<2x128x16xf16>) -> tensor<2x1x16xf16>
  func.return
}

// -----

func.func @step_rows_without_block(%blk: tensor<1xi32>, %rows: tensor<2x1x16xf16>, %cache: tensor<2x128x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op rows shape [2, 1, 16] must be [2, 1, 64, 16]: the destination's dims with dim 1 the index's entries and a block of 64 rows
  %0 = spyre.pointwise "identity" (%blk, %rows, %cache) {scatter_dim = 1 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<2x1x16xf16>, tensor<2x128x16xf16>) -> tensor<2x128x16xf16>
  func.return
}

// -----

func.func @step_map_past_block(%blk: tensor<1xi32>, %cache: tensor<2x128x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op the table map must hold a row inside the block of 64 in the gathered dim 1, got (d2 + 1)
  %0 = spyre.pointwise "identity" (%blk, %cache) {indirect_dim = 1 : i64, index_step = 64 : i64, iteration_space = array<i64: 2, 1, 64, 16>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2 + 1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]} : (tensor<1xi32>, tensor<2x128x16xf16>) -> tensor<2x1x64x16xf16>
  func.return
}

//===----------------------------------------------------------------------===//
// Row store (spyre.pointwise "identity" with scatter_dim)
//===----------------------------------------------------------------------===//

// -----

func.func @store_index_2d(%pos: tensor<1x1xi32>, %rows: tensor<2x1x16xf16>, %cache: tensor<2x64x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op index operand #0 must be a 1-D tensor of i32, got tensor<1x1xi32>
  %0 = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<1x1xi32>, tensor<2x1x16xf16>, tensor<2x64x16xf16>) -> tensor<2x64x16xf16>
  func.return
}

// -----

func.func @store_result_type(%pos: tensor<1xi32>, %rows: tensor<2x1x16xf16>, %cache: tensor<2x64x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op the result type tensor<2x1x16xf16> must be the destination's tensor<2x64x16xf16>: the result is the destination, written in place
  %0 = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x16xf16>, tensor<2x64x16xf16>) -> tensor<2x1x16xf16>
  func.return
}

// -----

func.func @store_rows_shape(%pos: tensor<2xi32>, %rows: tensor<2x1x16xf16>, %cache: tensor<2x64x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op rows shape [2, 1, 16] must be [2, 2, 16]: the destination's dims with dim 1 the index's entries
  %0 = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<2xi32>, tensor<2x1x16xf16>, tensor<2x64x16xf16>) -> tensor<2x64x16xf16>
  func.return
}

// -----

func.func @store_explicit_maps_scattered_dim(%pos: tensor<1xi32>, %rows: tensor<2x16xf16>, %cache: tensor<2x64x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op the destination map must hold 0 in the scattered dim 1, got d1
  %0 = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64, iteration_space = array<i64: 2, 1, 16>, indexing_maps = [affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]} : (tensor<1xi32>, tensor<2x16xf16>, tensor<2x64x16xf16>) -> tensor<2x64x16xf16>
  func.return
}

// -----

func.func @store_rows_type(%pos: tensor<1xi32>, %rows: tensor<2x1x16xf32>, %cache: tensor<2x64x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op rows operand #1 element type f32 differs from the destination's f16
  %0 = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x16xf32>, tensor<2x64x16xf16>) -> tensor<2x64x16xf16>
  func.return
}

// -----

func.func @store_two_operands(%pos: tensor<1xi32>, %rows: tensor<2x1x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op a row store takes an index, rows and a destination, got 2 operands
  %0 = spyre.pointwise "identity" (%pos, %rows) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x16xf16>) -> tensor<2x64x16xf16>
  func.return
}

// -----

func.func @store_and_gather(%pos: tensor<1xi32>, %rows: tensor<2x1x16xf16>, %cache: tensor<2x64x16xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op an identity either reads through an index (indirect_dim) or writes through one (scatter_dim), not both
  %0 = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64, indirect_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x16xf16>, tensor<2x64x16xf16>) -> tensor<2x64x16xf16>
  func.return
}

// -----

func.func @indirect_table_map(%index: tensor<4x40xi32>, %table: tensor<4x50xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op the table map must hold 0 in the gathered dim 1, got d1
  %0 = spyre.pointwise "identity" (%index, %table) {indirect_dim = 1 : i64, iteration_space = array<i64: 4, 40>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x40xi32>, tensor<4x50xf16>) -> tensor<4x40xf16>
  func.return
}

// -----

// i32 holds indices: a compute op takes it only as the index of an indirect access.
func.func @i32_not_an_index(%x: tensor<4x64xi32>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op operand #0 has element type i32, expected one of f16, bf16, f32, i8
  %0 = spyre.pointwise "exp" (%x) : (tensor<4x64xi32>) -> tensor<4x64xf16>
  func.return
}

// -----

// A map may reach the padding a layout holds (spyre-pad-dims: 3 sticks of 64 for 100 columns), not past it.
func.func @indexing_map_past_the_padding(%x: tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op indexing map (d0, d1) -> (d0, d1) of operand #0 reaches [0, 255] in dim 1 of size 192
  %0 = spyre.pointwise "exp" (%x) {iteration_space = array<i64: 4, 256>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<4x100xf16, #spyre.layout<device_size = [4, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>
  func.return
}

// -----

// A replica count of 1 is written by leaving core_replicas out.
func.func @core_replicas_at_least_two(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op core_replicas must be at least 2, got 1
  %0 = spyre.pointwise "exp" (%x) {core_splits = array<i64: 4, 1>, core_replicas = 1 : i64} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

func.func @core_replicas_without_splits(%x: tensor<4x64xf16>) {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op core_replicas needs core_splits
  %0 = spyre.pointwise "exp" (%x) {core_replicas = 2 : i64} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}
