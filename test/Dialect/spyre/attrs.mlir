// Round trip of the spyre attributes: layout, hint, placement, target.
// RUN: %spyre-opt %s --split-input-file | %spyre-opt --split-input-file | %filecheck %s
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %spyre-opt --split-input-file | %filecheck %s

// #spyre.layout is a tensor encoding: f16 sticks hold 64 elements, f32 sticks 32.
// CHECK-LABEL: func.func @layout
// CHECK-SAME:    (%{{.*}}: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_BFP16">>,
// CHECK-SAME:     %{{.*}}: tensor<64x128xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>,
// CHECK-SAME:     %{{.*}}: tensor<64x128xbf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_BFP16">>,
// CHECK-SAME:     %{{.*}}: tensor<4x64xi8, #spyre.layout<device_size = [1, 4, 128], dim_order = [0, 1], format = "SENINT8">>,
// CHECK-SAME:     %{{.*}}: tensor<4xf16, #spyre.layout<device_size = [1, 64], dim_order = [0], format = "SEN169_BFP16">>,
// A device size larger than the minimum (padding) is allowed.
// CHECK-SAME:     %{{.*}}: tensor<4x64xf16, #spyre.layout<device_size = [1, 8, 64], dim_order = [0, 1], format = "SEN169_FP16">>)
func.func @layout(%a: tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_BFP16">>,
                  %b: tensor<64x128xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>,
                  %c: tensor<64x128xbf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_BFP16">>,
                  %d: tensor<4x64xi8, #spyre.layout<device_size = [1, 4, 128], dim_order = [0, 1], format = "SENINT8">>,
                  %e: tensor<4xf16, #spyre.layout<device_size = [1, 64], dim_order = [0], format = "SEN169_BFP16">>,
                  %f: tensor<4x64xf16, #spyre.layout<device_size = [1, 8, 64], dim_order = [0, 1], format = "SEN169_FP16">>) {
  func.return
}

// -----

// An attribute alias is expanded where it is used; the layout is checked on
// the op that uses the tensor.
#L0 = #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">
#L1 = #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">

// CHECK-LABEL: func.func @layout_alias
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>)
// CHECK-NEXT:    %[[EXP:.*]] = spyre.pointwise "exp" (%[[X]]) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify (%[[EXP]]) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[R]]
func.func @layout_alias(%x: tensor<64x128xf16, #L0>) -> tensor<64x128xf16, #L1> {
  %e = spyre.pointwise "exp" (%x) : (tensor<64x128xf16, #L0>) -> tensor<64x128xf16, #L0>
  %r = spyre.restickify (%e) : (tensor<64x128xf16, #L0>) -> tensor<64x128xf16, #L1>
  func.return %r : tensor<64x128xf16, #L1>
}

// -----

// CHECK-LABEL: func.func @hint
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {hints = [#spyre.hint<0, tiles = {M = 2}>]}
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {hints = [#spyre.hint<1, work_div = {M = 2, N = 4}>]}
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {hints = [#spyre.hint<2, tiles = {M = 2, N = 8}, work_div = {N = 4}>]}
// Work_div written before tiles prints in the canonical order.
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {hints = [#spyre.hint<3, tiles = {N = 8}, work_div = {M = 2}>]}
// Names that are not bare identifiers stay quoted; bare ones lose their quotes.
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {hints = [#spyre.hint<4, tiles = {"batch size" = 2, "0" = 2, N = 2}>]}
// Nested scopes: outermost (smallest id) first.
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {hints = [#spyre.hint<5, tiles = {M = 4}>, #spyre.hint<6, work_div = {N = 32}>]}
// CHECK-NEXT:    func.return
func.func @hint(%x: tensor<4x64xf16>) {
  %0 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0, tiles = {M = 2}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %1 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<1, work_div = {M = 2, N = 4}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %2 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<2, tiles = {M = 2, N = 8}, work_div = {N = 4}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %3 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<3, work_div = {M = 2}, tiles = {N = 8}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %4 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<4, tiles = {"batch size" = 2, "0" = 2, "N" = 2}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %5 = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<5, tiles = {M = 4}>, #spyre.hint<6, work_div = {N = 32}>]} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

// CHECK-LABEL: func.func @placement
// CHECK-NEXT:    spyre.fill 0.0 {placement = #spyre.placement<lx, 0>} : tensor<4x64xf16>
// CHECK-NEXT:    spyre.fill 0.0 {placement = #spyre.placement<lx, 1048448>} : tensor<4x64xf16>
// CHECK-NEXT:    spyre.fill 0.0 {placement = #spyre.placement<hbm, arg 0>} : tensor<4x64xf16>
// Kernel argument indices need no alignment.
// CHECK-NEXT:    spyre.fill 0.0 {placement = #spyre.placement<hbm, arg 3>} : tensor<4x64xf16>
// CHECK-NEXT:    spyre.fill 0.0 {placement = #spyre.placement<hbm, pool 4096>} : tensor<4x64xf16>
// CHECK-NEXT:    spyre.pointwise "neg" (%{{.*}}) {placement = #spyre.placement<hbm, pool 128>} : (tensor<4x64xf16>) -> tensor<4x64xf16>
// A zeroed buffer of its own has no offset or index.
// CHECK-NEXT:    spyre.pointwise "exp" (%{{.*}}) {placement = #spyre.placement<hbm, zeroed>} : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    func.return
func.func @placement(%x: tensor<4x64xf16>) {
  %0 = spyre.fill 0.0 {placement = #spyre.placement<lx, 0>} : tensor<4x64xf16>
  %1 = spyre.fill 0.0 {placement = #spyre.placement<lx, 1048448>} : tensor<4x64xf16>
  %2 = spyre.fill 0.0 {placement = #spyre.placement<hbm, arg 0>} : tensor<4x64xf16>
  %3 = spyre.fill 0.0 {placement = #spyre.placement<hbm, arg 3>} : tensor<4x64xf16>
  %4 = spyre.fill 0.0 {placement = #spyre.placement<hbm, pool 4096>} : tensor<4x64xf16>
  %5 = spyre.pointwise "neg" (%x) {placement = #spyre.placement<hbm, pool 128>} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %6 = spyre.pointwise "exp" (%x) {placement = #spyre.placement<hbm, zeroed>} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return
}

// -----

// #spyre.target is the module's target description (the module attribute
// spyre.target); the LX fraction prints as a float literal that reads back.
// CHECK-LABEL: builtin.module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.2>}
// CHECK-NEXT:    func.func @target
module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.2>} {
  func.func @target() {
    func.return
  }
}

// -----

// CHECK-LABEL: builtin.module attributes {spyre.target = #spyre.target<cores = 32, lx_fraction = 0.0>}
// CHECK-NEXT:    func.func @target_integer_fraction
module attributes {spyre.target = #spyre.target<cores = 32, lx_fraction = 0>} {
  func.func @target_integer_fraction() {
    func.return
  }
}

// -----

// CHECK-LABEL: builtin.module attributes {spyre.target = #spyre.target<cores = 1, lx_fraction = 1.0e-05>}
// CHECK-NEXT:    func.func @target_small_fraction
module attributes {spyre.target = #spyre.target<cores = 1, lx_fraction = 0.00001>} {
  func.func @target_small_fraction() {
    func.return
  }
}

// -----

// A compile-time constant holding -inf and nan (a causal mask's) prints each as its bits and reads
// them back as the same floats, not as the integers the bits spell (4286578688).
// CHECK-LABEL: func.func @non_finite_constant
// CHECK-SAME:    spyre.value = dense<[0.000000e+00, 0xff800000, 0x7fc00000]> : tensor<3xf32>
func.func @non_finite_constant(%m: tensor<3xf32> {spyre.role = "constant", spyre.name = "mask",
                                                  spyre.value = dense<[0.0, 0xFF800000, 0x7FC00000]> : tensor<3xf32>}) {
  func.return
}
