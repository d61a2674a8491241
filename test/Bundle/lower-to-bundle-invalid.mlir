// RUN: not spyre-opt %s --split-input-file -p spyre-lower-to-bundle 2>&1 | %filecheck %s

func.func @main(%a: tensor<64x128xf16>) -> tensor<128x64xf16> {
  %v = spyre.view %a affine_map<(d0, d1) -> (d1, d0)> : tensor<64x128xf16> -> tensor<128x64xf16>
  %y = spyre.pointwise "exp" (%v) : (tensor<128x64xf16>) -> tensor<128x64xf16>
  func.return %y : tensor<128x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:3: error: 'spyre.view' cannot be lowered to the SDSC bundle

// -----

func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {
  func.return %a : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 2]]:3: error: result #0 must be computed by a compute op

// -----

func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %y = spyre.pointwise "exp" (%a) {core_splits = array<i64: 3, 1>, placement = #spyre.placement<hbm, arg 1>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.pointwise' (exp) to SDSC: core split 3 does not divide the padded size 64

// -----

// A reduction over the stick into a dense result (not sticked on the reduced
// dim): the back end's stick reductions write a sparse one.
func.func @main(%a: tensor<256x128xf16>) -> tensor<256xf16> {
  %s = spyre.reduce "sum" (%a) dims [1] {placement = #spyre.placement<hbm, arg 1>} : (tensor<256x128xf16>) -> tensor<256xf16>
  func.return %s : tensor<256xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.reduce' (sum) to SDSC: the result is sticked on 'mb', its operand on 'out': a reduction keeps its operand's stick

// -----

// K = 100 is not a whole stick, so the matmul iterates 128 rows of B; a B
// whose layout holds 100 (spyre-stickify would have padded it) is refused
// rather than read past its end.
func.func @main(%a: tensor<32x100xf16>, %b: tensor<100x64xf16>) -> tensor<32x64xf16> {
  %c = spyre.matmul (%a, %b) {placement = #spyre.placement<hbm, arg 2>} : (tensor<32x100xf16>, tensor<100x64xf16>) -> tensor<32x64xf16>
  func.return %c : tensor<32x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.matmul' (batchmatmul) to SDSC: operand #1 is addressed up to element 127 of host dim 0, past its storage extent 100 (the op iterates the padded sizes [32, 64, 128]); its layout lacks the padding the op needs

// -----

// An fp16 -> fp32 cast of 96 columns iterates two fp16 sticks, 128 columns:
// an fp32 result of three sticks cannot hold them.
func.func @main(%x: tensor<64x96xf16>) -> tensor<64x96xf32> {
  %y = spyre.pointwise "identity" (%x) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x96xf16>) -> tensor<64x96xf32>
  func.return %y : tensor<64x96xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.pointwise' (identity) to SDSC: the result is addressed up to element 127 of host dim 1, past its storage extent 96

// -----

// An fp16 op's constants are DLFloat16 in the SDSC, which has no infinity.
func.func @main(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = spyre.pointwise "add" (%x) consts {y = 0x7FF0000000000000 : f64} {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.pointwise' (add) to SDSC: constant 'y': the constant inf has no SEN169_FP16 encoding (DLFloat16 holds no infinity or NaN); compute in float32

// -----

// The lowering translates placements; memory planning decides them.
func.func @main(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %e = spyre.pointwise "exp" (%x) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = spyre.pointwise "neg" (%e) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:3: error: the result of 'spyre.pointwise' is not placed: run spyre-plan-memory before spyre-lower-to-bundle

// -----

// A fill is a kernel argument memory planning creates (spyre.constants).
func.func @main(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %f = spyre.fill 1.0 : tensor<64x64xf16>
  %y = spyre.pointwise "add" (%x, %f) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:3: error: 'spyre.fill' is not placed: run spyre-plan-memory before spyre-lower-to-bundle

// -----

// The manifest names every argument once: `spyre-run --inputs` with one `a` would feed both.
func.func @main(%a: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x128xf16> {spyre.name = "a", spyre.role = "input"}) -> tensor<64x128xf16> {
  %y = spyre.pointwise "sub" (%a, %b) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 5]]:1: error: argument #1 is named 'a' like argument #0: the manifest names every argument and result once (spyre.name)

// -----

func.func @main(%a: tensor<64x128xf16> {spyre.name = "a"}) -> (tensor<64x128xf16> {spyre.name = "a"}) {
  %y = spyre.pointwise "exp" (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:1: error: result #0 is named 'a' like argument #0

// -----

// A role the manifest reader does not know is refused when compiling, not when running.
func.func @main(%a: tensor<64x128xf16> {spyre.role = "weight"}) -> tensor<64x128xf16> {
  %y = spyre.pointwise "exp" (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:1: error: argument #0 has spyre.role = "weight", expected one of input, parameter, buffer, constant
