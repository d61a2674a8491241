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

// -----

// A range the manifest cannot state (lo < hi) or that no integer input could take is refused
// when compiling.
func.func @main(%a: tensor<64x128xf16> {spyre.role = "input", spyre.name = "a", spyre.range = array<i64: 0, 64>})
    -> tensor<64x128xf16> {
  %y = spyre.pointwise "exp" (%a) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 5]]:1: error: function argument 'a' (#0) has spyre.range = array<i64: 0, 64>: expected array<i64: lo, hi> with lo < hi on an integer input

// -----

func.func @main(%pos: tensor<1xi32> {spyre.role = "input", spyre.name = "pos", spyre.range = array<i64: 4, 4>},
                %t: tensor<4x64xf16> {spyre.role = "parameter", spyre.name = "t"}) -> tensor<1x64xf16> {
  %y = spyre.pointwise "identity" (%pos, %t) {indirect_dim = 0 : i64, placement = #spyre.placement<hbm, arg 2>} : (tensor<1xi32>, tensor<4x64xf16>) -> tensor<1x64xf16>
  func.return %y : tensor<1x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 5]]:1: error: function argument 'pos' (#0) has spyre.range = array<i64: 4, 4>: expected array<i64: lo, hi> with lo < hi on an integer input

// -----

// The last check (spyre_mlir.codegen.limit_check): every tensor of every SDSC
// file within the device limits the interpreter checks, measured as it
// measures them.  Splits no work division would choose: each 512-row tile of
// the heads-outermost [1, 32, 2048, 2048] f32 tensors is a window of them (16
// MiB a head), and 4 cores on the rows leave each one all 32 heads.
func.func @main(%x: tensor<1x32x2048x2048xf32>) -> tensor<1x32x2048x2048xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<1x32x2048x2048xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> (tensor<1x32x2048x2048xf32>) {
    %o = affine.apply affine_map<(d0) -> ((d0 * 512))> (%i)
    %t = tensor.extract_slice %x[0, 0, %o, 0] [1, 32, 512, 2048] [1, 1, 1, 1] : tensor<1x32x2048x2048xf32> to tensor<1x32x512x2048xf32>
    %y = spyre.pointwise "exp" (%t) {core_splits = array<i64: 1, 1, 4, 1>} : (tensor<1x32x512x2048xf32>) -> tensor<1x32x512x2048xf32>
    %n = tensor.insert_slice %y into %acc[0, 0, %o, 0] [1, 32, 512, 2048] [1, 1, 1, 1] : tensor<1x32x512x2048xf32> into tensor<1x32x2048x2048xf32>
    scf.yield %n : tensor<1x32x2048x2048xf32>
  }
  func.return %r : tensor<1x32x2048x2048xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 6]]:5: error: 'spyre.pointwise' op (exp) breaks a device limit in sdsc_0.json: Tensor0 on core 0: per-core span 521142272 bytes exceeds the limit of 268431360

// -----

// A loop whose tiles run past the end of their tensor: the fifth 512-row tile
// of a 2048-row input starts at its end.
func.func @main(%x: tensor<2048x64xf16>) -> tensor<2560x64xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<2560x64xf16>
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%acc = %e) -> (tensor<2560x64xf16>) {
    %o = affine.apply affine_map<(d0) -> ((d0 * 512))> (%i)
    %t = tensor.extract_slice %x[%o, 0] [512, 64] [1, 1] : tensor<2048x64xf16> to tensor<512x64xf16>
    %y = spyre.pointwise "exp" (%t) : (tensor<512x64xf16>) -> tensor<512x64xf16>
    %n = tensor.insert_slice %y into %acc[%o, 0] [512, 64] [1, 1] : tensor<512x64xf16> into tensor<2560x64xf16>
    scf.yield %n : tensor<2560x64xf16>
  }
  func.return %r : tensor<2560x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 6]]:5: error: 'spyre.pointwise' op (exp) breaks a device limit in sdsc_0.json: Tensor0 on core 0: bytes [262144, 327680) fall outside their allocation of 262144 bytes

// -----

// An LX value must fit the usable LX of a core (1,625,344 bytes at the default
// LX fraction): 8 KiB from 1,617,280 end 128 bytes past it.
func.func @main(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %e = spyre.pointwise "exp" (%x) {placement = #spyre.placement<lx, 1617280>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = spyre.pointwise "neg" (%e) {placement = #spyre.placement<hbm, arg 1>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  func.return %y : tensor<64x64xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:3: error: 'spyre.pointwise' op (exp) breaks a device limit in sdsc_0.json: Tensor1 on core 0: LX offset 1617280 + 8192 bytes exceeds the usable LX of 1625344 bytes

// -----

// A program's kernel arguments and pool share the card's 128 GB of device memory.
func.func @main(%x: tensor<65536x1048576xf16>) -> tensor<65536x1048576xf16> {
  %y = spyre.pointwise "neg" (%x) {placement = #spyre.placement<hbm, arg 1>} : (tensor<65536x1048576xf16>) -> tensor<65536x1048576xf16>
  func.return %y : tensor<65536x1048576xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:1: error: the HBM allocations take 274877906944 bytes, more than the 137438953472 bytes of device memory (arguments arg0 137438953472, output0 137438953472)

// -----

// spyre.updates names the argument a result is the new value of: one that exists.
func.func @main(%cache: tensor<2x64x32xf32> {spyre.role = "buffer", spyre.name = "cache"}, %pos: tensor<1xi32>, %rows: tensor<2x1x32xf32>) -> (tensor<2x64x32xf32> {spyre.updates = "kache"}) {
  %k = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x32xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  func.return %k : tensor<2x64x32xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:1: error: result #0 has spyre.updates = "kache", which names no argument

// -----

// Only a buffer is state a program writes in place: not a graph input.
func.func @main(%cache: tensor<2x64x32xf32> {spyre.name = "cache"}, %pos: tensor<1xi32>, %rows: tensor<2x1x32xf32>) -> (tensor<2x64x32xf32> {spyre.updates = "cache"}) {
  %k = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x32xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  func.return %k : tensor<2x64x32xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:1: error: result #0 updates argument #0 'cache', whose role is not 'buffer': only a buffer is state a program writes in place

// -----

// An update is written in place, by row stores into the buffer: not a new value of the whole buffer.
func.func @main(%cache: tensor<2x64x32xf32> {spyre.role = "buffer", spyre.name = "cache"}) -> (tensor<2x64x32xf32> {spyre.updates = "cache"}) {
  %k = spyre.pointwise "exp" (%cache) : (tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  func.return %k : tensor<2x64x32xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 2]]:3: error: result #0 updates buffer 'cache' in place, so it must be built by row stores (spyre.pointwise "identity" with scatter_dim) into that argument

// -----

// Nothing reads a buffer after a row store overwrote it in place: it would read the new rows.
func.func @main(%cache: tensor<2x64x32xf32> {spyre.role = "buffer", spyre.name = "cache"}, %pos: tensor<1xi32>, %rows: tensor<2x1x32xf32>) -> (tensor<2x64x32xf32> {spyre.updates = "cache"}, tensor<2x64x32xf32> {spyre.name = "old"}) {
  %k = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x32xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  %old = spyre.pointwise "exp" (%cache) : (tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  func.return %k, %old : tensor<2x64x32xf32>, tensor<2x64x32xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: 'spyre.pointwise' reads buffer 'cache' after a row store overwrote it in place; read it before the store, or store into a copy

// -----

// A row store writes its destination in place: into a computed value it would lose that value's other rows.
func.func @main(%x: tensor<2x64x32xf32>, %pos: tensor<1xi32>, %rows: tensor<2x1x32xf32>) -> tensor<2x64x32xf32> {
  %e = spyre.pointwise "exp" (%x) : (tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  %k = spyre.pointwise "identity" (%pos, %rows, %e) {scatter_dim = 1 : i64} : (tensor<1xi32>, tensor<2x1x32xf32>, tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  func.return %k : tensor<2x64x32xf32>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: a row store writes its destination in place: its destination must be a buffer argument that a result updates (spyre.updates), through row stores only

// -----

// A copy of rows b * 100 + l into a tensor sticked on l iterates l over 128
// (whole sticks), more than the 100 rows between two values of b: no label
// can step b by 100 rows then, so the read is refused, not miscounted.
func.func @main(%x: tensor<400x128xf16>) -> tensor<2x100x128xf16, #spyre.layout<device_size = [128, 2, 2, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">> {
  %r = spyre.restickify (%x) {iteration_space = array<i64: 2, 100, 128>, indexing_maps = [affine_map<(d0, d1, d2) -> (d0 * 100 + d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], placement = #spyre.placement<hbm, arg 1>} : (tensor<400x128xf16>) -> tensor<2x100x128xf16, #spyre.layout<device_size = [128, 2, 2, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
  func.return %r : tensor<2x100x128xf16, #spyre.layout<device_size = [128, 2, 2, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.restickify' (ReStickifyOpHBM) to SDSC: host dim 0 of operand #0 is indexed by ((d0 * 100) + d1): iteration dim d1 is padded to 128 elements, more than the 100 d0 steps over

// -----

// One channel of a tensor sticked on its two channels, copied into a tensor
// sticked on a dim of one element: the copy iterates the whole stick of
// channels, and its result would hold one element per stick of it.
func.func @main(%x: tensor<1x2x33xf16, #spyre.layout<device_size = [33, 1, 1, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>) -> tensor<1x1x33xf16, #spyre.layout<device_size = [33, 1, 1, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">> {
  %c = spyre.pointwise "identity" (%x) {iteration_space = array<i64: 1, 1, 33>, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], placement = #spyre.placement<hbm, arg 1>} : (tensor<1x2x33xf16, #spyre.layout<device_size = [33, 1, 1, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>) -> tensor<1x1x33xf16, #spyre.layout<device_size = [33, 1, 1, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
  func.return %c : tensor<1x1x33xf16, #spyre.layout<device_size = [33, 1, 1, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.pointwise' (identity) to SDSC: the result is not stepped along (it holds one element per stick of) iteration dim d1, which the op iterates over 64 elements

// -----

// A mean over rows of an operand sticked on a dim of one element (one element per stick): its
// result would be sparse, which only a reduction over the stick writes ('meannonstick' has no
// scale_ -2; the interpreter refused the output before the lowering did).
func.func @main(%x: tensor<16x1x300x1xf32, #spyre.layout<device_size = [1, 300, 1, 16, 32], dim_order = [0, 1, 2, 3], format = "IEEE_FP32">>) -> tensor<16x1x1xf32, #spyre.layout<device_size = [1, 1, 16, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">> {
  %m = spyre.reduce "mean" (%x) dims [2] {placement = #spyre.placement<hbm, arg 1>} : (tensor<16x1x300x1xf32, #spyre.layout<device_size = [1, 300, 1, 16, 32], dim_order = [0, 1, 2, 3], format = "IEEE_FP32">>) -> tensor<16x1x1xf32, #spyre.layout<device_size = [1, 1, 16, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
  func.return %m : tensor<16x1x1xf32, #spyre.layout<device_size = [1, 1, 16, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.reduce' (mean) to SDSC: its operand is sticked on '{{[a-z]+}}', a dim of one element (one element per stick), and it reduces another dim: its result would be sparse, which only a reduction over the stick writes

// -----

// A matmul reading every other head of its left-hand side: SDSC has no gap label
// for a matmul, so the lowering refuses it (it crashed on the missing gap dim).
func.func @main(%q: tensor<4x64x64xf32, #spyre.layout<device_size = [64, 2, 4, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>, %k: tensor<2x64x64xf32, #spyre.layout<device_size = [64, 2, 2, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>) -> tensor<2x64x64xf32, #spyre.layout<device_size = [64, 2, 2, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">> {
  %s = spyre.matmul (%q, %k) {iteration_space = array<i64: 2, 64, 64, 64>, indexing_maps = [affine_map<(d0, d1, d2, d3) -> ((d0 * 2), d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], core_splits = array<i64: 1, 1, 1, 1>, placement = #spyre.placement<hbm, arg 2>} : (tensor<4x64x64xf32, #spyre.layout<device_size = [64, 2, 4, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>, tensor<2x64x64xf32, #spyre.layout<device_size = [64, 2, 2, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>) -> tensor<2x64x64xf32, #spyre.layout<device_size = [64, 2, 2, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
  func.return %s : tensor<2x64x64xf32, #spyre.layout<device_size = [64, 2, 2, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.matmul' (batchmatmul) to SDSC: operand #0 is read or written every k-th element along host dim 0 (indexing map (d0, d1, d2, d3) -> ((d0 * 2), d1, d3)), which a matmul cannot address

// -----

// Replicas write each slice into their own LX; into HBM they would write it
// several times.  (spyre-plan-memory takes the replicas of a result it puts in HBM.)
func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %y = spyre.pointwise "exp" (%a) {core_splits = array<i64: 1, 1>, core_replicas = 4 : i64, placement = #spyre.placement<hbm, arg 1>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 3]]:3: error: cannot lower 'spyre.pointwise' (exp) to SDSC: it is replicated on 4 cores per slice (core_replicas), which only a result in each core's LX allows; its result is in HBM

// -----

func.func @main(%a: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %y = spyre.pointwise "exp" (%a) {core_splits = array<i64: 2, 1>, core_replicas = 32 : i64, placement = #spyre.placement<lx, 0>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %z = spyre.pointwise "exp" (%y) {core_splits = array<i64: 2, 1>, placement = #spyre.placement<hbm, arg 1>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %z : tensor<64x128xf16>
}
// CHECK: lower-to-bundle-invalid.mlir:[[# @LINE - 4]]:3: error: cannot lower 'spyre.pointwise' (exp) to SDSC: core_splits [2, 1] times core_replicas 32 need 64 cores, only 32 available
