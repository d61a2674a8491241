// Round trip of every spyre op: custom form, generic form, and a fixed point.
// RUN: %spyre-opt %s --split-input-file | %spyre-opt --split-input-file | %filecheck %s
// RUN: %spyre-opt %s --split-input-file --print-op-generic | %spyre-opt --split-input-file | %filecheck %s
// RUN: %spyre-opt %s --split-input-file > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// CHECK-LABEL: func.func @pointwise_binary
// CHECK-SAME:    (%[[LHS:.*]]: tensor<4x64xf16>, %[[RHS:.*]]: tensor<4x64xf16>)
// CHECK-NEXT:    %[[SUM:.*]] = spyre.pointwise "add" (%[[LHS]], %[[RHS]]) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[PROD:.*]] = spyre.pointwise "mul" (%[[SUM]], %[[RHS]]) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[CMP:.*]] = spyre.pointwise "lesserequal" (%[[PROD]], %[[LHS]]) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[SEL:.*]] = spyre.pointwise "where3" (%[[CMP]], %[[LHS]], %[[RHS]]) : (tensor<4x64xf16>, tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    func.return %[[SEL]] : tensor<4x64xf16>
func.func @pointwise_binary(%lhs: tensor<4x64xf16>, %rhs: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %sum = spyre.pointwise "add" (%lhs, %rhs) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %prod = spyre.pointwise "mul" (%sum, %rhs) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %cmp = spyre.pointwise "lesserequal" (%prod, %lhs) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %sel = spyre.pointwise "where3" (%cmp, %lhs, %rhs) : (tensor<4x64xf16>, tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return %sel : tensor<4x64xf16>
}

// -----

// CHECK-LABEL: func.func @pointwise_unary
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xbf16>)
// CHECK-NEXT:    %[[EXP:.*]] = spyre.pointwise "exp" (%[[X]]) : (tensor<4x64xbf16>) -> tensor<4x64xbf16>
// CHECK-NEXT:    %[[GELU:.*]] = spyre.pointwise "gelufwd" (%[[EXP]]) : (tensor<4x64xbf16>) -> tensor<4x64xbf16>
// CHECK-NEXT:    func.return %[[GELU]]
func.func @pointwise_unary(%x: tensor<4x64xbf16>) -> tensor<4x64xbf16> {
  %e = spyre.pointwise "exp" (%x) : (tensor<4x64xbf16>) -> tensor<4x64xbf16>
  %g = spyre.pointwise "gelufwd" (%e) : (tensor<4x64xbf16>) -> tensor<4x64xbf16>
  func.return %g : tensor<4x64xbf16>
}

// -----

// A scalar constant replaces an input: `x * 2`, `1 - x` and `where(c, x, 0)`.
// CHECK-LABEL: func.func @pointwise_scalar_const
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16>, %[[COND:.*]]: tensor<4x64xf16>)
// CHECK-NEXT:    %[[TWICE:.*]] = spyre.pointwise "mul" (%[[X]]) consts {y = 2.000000e+00 : f64} : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[ONE_MINUS:.*]] = spyre.pointwise "sub" (%[[TWICE]]) consts {x = 1 : i64} : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[SEL:.*]] = spyre.pointwise "where3" (%[[COND]], %[[ONE_MINUS]]) consts {y = -5.000000e-01 : f32} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    func.return %[[SEL]]
func.func @pointwise_scalar_const(%x: tensor<4x64xf16>, %cond: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %twice = spyre.pointwise "mul" (%x) consts {y = 2.0} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %one_minus = spyre.pointwise "sub" (%twice) consts {x = 1} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %sel = spyre.pointwise "where3" (%cond, %one_minus) consts {y = -0.5 : f32} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return %sel : tensor<4x64xf16>
}

// -----

// Scalar parameters of an op func (clip's min/max, softplus's beta) live in consts too.
// CHECK-LABEL: func.func @pointwise_params
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16>)
// CHECK-NEXT:    %[[CLIP:.*]] = spyre.pointwise "clip" (%[[X]]) consts {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[SOFT:.*]] = spyre.pointwise "softplus" (%[[CLIP]]) consts {beta = 2.000000e+00 : f64} : (tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    func.return %[[SOFT]]
func.func @pointwise_params(%x: tensor<4x64xf16>) -> tensor<4x64xf16> {
  %clip = spyre.pointwise "clip" (%x) consts {min = 0.0, max = 6.0} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  %soft = spyre.pointwise "softplus" (%clip) consts {beta = 2.0} : (tensor<4x64xf16>) -> tensor<4x64xf16>
  func.return %soft : tensor<4x64xf16>
}

// -----

// Operands broadcast numpy-style to the result: a missing leading dim, a size-1 dim.
// CHECK-LABEL: func.func @pointwise_broadcast
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x64xf16>, %[[ROW:.*]]: tensor<64xf16>, %[[COL:.*]]: tensor<4x1xf16>)
// CHECK-NEXT:    %[[BIAS:.*]] = spyre.pointwise "add" (%[[X]], %[[ROW]]) : (tensor<2x4x64xf16>, tensor<64xf16>) -> tensor<2x4x64xf16>
// CHECK-NEXT:    %[[SCALED:.*]] = spyre.pointwise "realdiv" (%[[BIAS]], %[[COL]]) : (tensor<2x4x64xf16>, tensor<4x1xf16>) -> tensor<2x4x64xf16>
// CHECK-NEXT:    func.return %[[SCALED]]
func.func @pointwise_broadcast(%x: tensor<2x4x64xf16>, %row: tensor<64xf16>, %col: tensor<4x1xf16>) -> tensor<2x4x64xf16> {
  %bias = spyre.pointwise "add" (%x, %row) : (tensor<2x4x64xf16>, tensor<64xf16>) -> tensor<2x4x64xf16>
  %scaled = spyre.pointwise "realdiv" (%bias, %col) : (tensor<2x4x64xf16>, tensor<4x1xf16>) -> tensor<2x4x64xf16>
  func.return %scaled : tensor<2x4x64xf16>
}

// -----

// identity is the one op func whose result element type may differ (a cast).
// CHECK-LABEL: func.func @pointwise_cast
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16>) -> tensor<4x64xf32>
// CHECK-NEXT:    %[[WIDE:.*]] = spyre.pointwise "identity" (%[[X]]) : (tensor<4x64xf16>) -> tensor<4x64xf32>
// CHECK-NEXT:    func.return %[[WIDE]] : tensor<4x64xf32>
func.func @pointwise_cast(%x: tensor<4x64xf16>) -> tensor<4x64xf32> {
  %wide = spyre.pointwise "identity" (%x) : (tensor<4x64xf16>) -> tensor<4x64xf32>
  func.return %wide : tensor<4x64xf32>
}

// -----

// CHECK-LABEL: func.func @reduce
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x64xf16>)
// CHECK-NEXT:    %[[SUM:.*]] = spyre.reduce "sum" (%[[X]]) dims [2] : (tensor<2x4x64xf16>) -> tensor<2x4xf16>
// CHECK-NEXT:    %[[MAX:.*]] = spyre.reduce "max" (%[[X]]) dims [2] : (tensor<2x4x64xf16>) -> tensor<2x4x1xf16>
// CHECK-NEXT:    %[[MIN:.*]] = spyre.reduce "min" (%[[X]]) dims [0] : (tensor<2x4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[MEAN:.*]] = spyre.reduce "mean" (%[[X]]) dims [0, 2] : (tensor<2x4x64xf16>) -> tensor<4xf16>
// CHECK-NEXT:    %[[MEAN_KEEP:.*]] = spyre.reduce "mean" (%[[X]]) dims [0, 2] : (tensor<2x4x64xf16>) -> tensor<1x4x1xf16>
// CHECK-NEXT:    %[[ALL:.*]] = spyre.reduce "sum" (%[[X]]) dims [0, 1, 2] : (tensor<2x4x64xf16>) -> tensor<f16>
// CHECK-NEXT:    func.return %[[SUM]], %[[MAX]], %[[MIN]], %[[MEAN]], %[[MEAN_KEEP]], %[[ALL]]
func.func @reduce(%x: tensor<2x4x64xf16>) -> (tensor<2x4xf16>, tensor<2x4x1xf16>, tensor<4x64xf16>, tensor<4xf16>, tensor<1x4x1xf16>, tensor<f16>) {
  %sum = spyre.reduce "sum" (%x) dims [2] : (tensor<2x4x64xf16>) -> tensor<2x4xf16>
  %max = spyre.reduce "max" (%x) dims [2] : (tensor<2x4x64xf16>) -> tensor<2x4x1xf16>
  %min = spyre.reduce "min" (%x) dims [0] : (tensor<2x4x64xf16>) -> tensor<4x64xf16>
  %mean = spyre.reduce "mean" (%x) dims [0, 2] : (tensor<2x4x64xf16>) -> tensor<4xf16>
  %mean_keep = spyre.reduce "mean" (%x) dims [0, 2] : (tensor<2x4x64xf16>) -> tensor<1x4x1xf16>
  %all = spyre.reduce "sum" (%x) dims [0, 1, 2] : (tensor<2x4x64xf16>) -> tensor<f16>
  func.return %sum, %max, %min, %mean, %mean_keep, %all : tensor<2x4xf16>, tensor<2x4x1xf16>, tensor<4x64xf16>, tensor<4xf16>, tensor<1x4x1xf16>, tensor<f16>
}

// -----

// CHECK-LABEL: func.func @matmul
// CHECK-SAME:    (%[[A:.*]]: tensor<4x64xf16>, %[[B:.*]]: tensor<64x8xf16>, %[[BA:.*]]: tensor<2x4x64xf16>, %[[BB:.*]]: tensor<2x64x8xf16>, %[[BC:.*]]: tensor<3x1x4x64xf16>, %[[BD:.*]]: tensor<5x64x8xf16>)
// CHECK-NEXT:    %[[MM:.*]] = spyre.matmul (%[[A]], %[[B]]) : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[BMM:.*]] = spyre.matmul (%[[BA]], %[[BB]]) : (tensor<2x4x64xf16>, tensor<2x64x8xf16>) -> tensor<2x4x8xf16>
// CHECK-NEXT:    %[[BCAST_RHS:.*]] = spyre.matmul (%[[BA]], %[[B]]) : (tensor<2x4x64xf16>, tensor<64x8xf16>) -> tensor<2x4x8xf16>
// CHECK-NEXT:    %[[BCAST_BOTH:.*]] = spyre.matmul (%[[BC]], %[[BD]]) : (tensor<3x1x4x64xf16>, tensor<5x64x8xf16>) -> tensor<3x5x4x8xf16>
// CHECK-NEXT:    func.return %[[MM]], %[[BMM]], %[[BCAST_RHS]], %[[BCAST_BOTH]]
func.func @matmul(%a: tensor<4x64xf16>, %b: tensor<64x8xf16>, %ba: tensor<2x4x64xf16>, %bb: tensor<2x64x8xf16>, %bc: tensor<3x1x4x64xf16>, %bd: tensor<5x64x8xf16>) -> (tensor<4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<3x5x4x8xf16>) {
  %mm = spyre.matmul (%a, %b) : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
  %bmm = spyre.matmul (%ba, %bb) : (tensor<2x4x64xf16>, tensor<2x64x8xf16>) -> tensor<2x4x8xf16>
  %bcast_rhs = spyre.matmul (%ba, %b) : (tensor<2x4x64xf16>, tensor<64x8xf16>) -> tensor<2x4x8xf16>
  %bcast_both = spyre.matmul (%bc, %bd) : (tensor<3x1x4x64xf16>, tensor<5x64x8xf16>) -> tensor<3x5x4x8xf16>
  func.return %mm, %bmm, %bcast_rhs, %bcast_both : tensor<4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<3x5x4x8xf16>
}

// -----

// The map takes result coordinates to source coordinates.
// CHECK-LABEL: func.func @view
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16>, %[[FLAT:.*]]: tensor<256xf16>, %[[ROW:.*]]: tensor<1x64xf16>)
// CHECK-NEXT:    %[[T:.*]] = spyre.view %[[X]] affine_map<(d0, d1) -> (d1, d0)> : tensor<4x64xf16> -> tensor<64x4xf16>
// CHECK-NEXT:    %[[SPLIT:.*]] = spyre.view %[[FLAT]] affine_map<(d0, d1) -> (((d0 * 64) + d1))> : tensor<256xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %[[MERGE:.*]] = spyre.view %[[X]] affine_map<(d0) -> ((d0 floordiv 64), (d0 mod 64))> {dims = {{\[}}["M", "N"]]} : tensor<4x64xf16> -> tensor<256xf16>
// CHECK-NEXT:    %[[EXPAND:.*]] = spyre.view %[[ROW]] affine_map<(d0, d1) -> (0, d1)> : tensor<1x64xf16> -> tensor<4x64xf16>
// CHECK-NEXT:    %[[SLICE:.*]] = spyre.view %[[X]] affine_map<(d0, d1) -> ((d0 + 2), (d1 + 32))> : tensor<4x64xf16> -> tensor<2x32xf16>
// CHECK-NEXT:    func.return %[[T]], %[[SPLIT]], %[[MERGE]], %[[EXPAND]], %[[SLICE]]
func.func @view(%x: tensor<4x64xf16>, %flat: tensor<256xf16>, %row: tensor<1x64xf16>) -> (tensor<64x4xf16>, tensor<4x64xf16>, tensor<256xf16>, tensor<4x64xf16>, tensor<2x32xf16>) {
  %t = spyre.view %x affine_map<(d0, d1) -> (d1, d0)> : tensor<4x64xf16> -> tensor<64x4xf16>
  %split = spyre.view %flat affine_map<(d0, d1) -> (d0 * 64 + d1)> : tensor<256xf16> -> tensor<4x64xf16>
  %merge = spyre.view %x affine_map<(d0) -> (d0 floordiv 64, d0 mod 64)> {dims = [["M", "N"]]} : tensor<4x64xf16> -> tensor<256xf16>
  %expand = spyre.view %row affine_map<(d0, d1) -> (0, d1)> : tensor<1x64xf16> -> tensor<4x64xf16>
  %slice = spyre.view %x affine_map<(d0, d1) -> (d0 + 2, d1 + 32)> : tensor<4x64xf16> -> tensor<2x32xf16>
  func.return %t, %split, %merge, %expand, %slice : tensor<64x4xf16>, tensor<4x64xf16>, tensor<256xf16>, tensor<4x64xf16>, tensor<2x32xf16>
}

// -----

// The stick dim moves from dim 1 (dim_order [0, 1]) to dim 0 (dim_order [1, 0]).
// CHECK-LABEL: func.func @restickify
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>)
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify (%[[X]]) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[R]]
func.func @restickify(%x: tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">> {
  %r = spyre.restickify (%x) : (tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
  func.return %r : tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
}

// -----

// CHECK-LABEL: func.func @fill
// CHECK-NEXT:    %[[ZERO:.*]] = spyre.fill 0.0 : tensor<4x64xf16>
// CHECK-NEXT:    %[[HALF:.*]] = spyre.fill -0.5 : tensor<4x64xf16>
// CHECK-NEXT:    %[[INT:.*]] = spyre.fill 3.0 : tensor<4xf32>
// CHECK-NEXT:    %[[NEG_INF:.*]] = spyre.fill -inf : tensor<4x1xf16>
// CHECK-NEXT:    %[[POS_INF:.*]] = spyre.fill inf : tensor<4x1xf16>
// CHECK-NEXT:    %[[BIG:.*]] = spyre.fill 1.0e+20 : tensor<4xf32>
// CHECK-NEXT:    %[[TINY:.*]] = spyre.fill 1.0e-05 : tensor<4xf32>
// CHECK-NEXT:    %[[PLACED:.*]] = spyre.fill 1.0 {dims = {{\[}}["M"], ["N"]], placement = #spyre.placement<lx, 4096>} : tensor<4x64xf16>
// CHECK-NEXT:    func.return
func.func @fill() -> (tensor<4x64xf16>, tensor<4x64xf16>, tensor<4xf32>, tensor<4x1xf16>, tensor<4x1xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4x64xf16>) {
  %zero = spyre.fill 0.0 : tensor<4x64xf16>
  %half = spyre.fill -0.5 : tensor<4x64xf16>
  %int = spyre.fill 3 : tensor<4xf32>
  %neg_inf = spyre.fill -inf : tensor<4x1xf16>
  %pos_inf = spyre.fill inf : tensor<4x1xf16>
  %big = spyre.fill 1.0e20 : tensor<4xf32>
  %tiny = spyre.fill 0.00001 : tensor<4xf32>
  %placed = spyre.fill 1.0 {dims = [["M"], ["N"]], placement = #spyre.placement<lx, 4096>} : tensor<4x64xf16>
  func.return %zero, %half, %int, %neg_inf, %pos_inf, %big, %tiny, %placed : tensor<4x64xf16>, tensor<4x64xf16>, tensor<4xf32>, tensor<4x1xf16>, tensor<4x1xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4x64xf16>
}

// -----

// The optional properties of the compute-op interface, as passes write them.
// CHECK-LABEL: func.func @interface_properties
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16>, %[[Y:.*]]: tensor<4x64xf16>, %[[W:.*]]: tensor<64x8xf16>)
// CHECK-NEXT:    %[[ADD:.*]] = spyre.pointwise "add" (%[[X]], %[[Y]]) {dims = {{\[}}["M"], ["N"]], core_splits = array<i64: 2, 1>, core_replicas = 16 : i64, placement = #spyre.placement<lx, 4096>, hints = [#spyre.hint<0, tiles = {M = 2}>, #spyre.hint<1, work_div = {N = 16}>]} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    %[[MM:.*]] = spyre.matmul (%[[ADD]], %[[W]]) {dims = {{\[}}["M"], ["N"], ["K"]], core_splits = array<i64: 1, 1, 32>, placement = #spyre.placement<hbm, arg 2>} : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %[[SUM:.*]] = spyre.reduce "sum" (%[[MM]]) dims [1] {placement = #spyre.placement<hbm, pool 8192>} : (tensor<4x8xf16>) -> tensor<4xf16>
// CHECK-NEXT:    func.return %[[SUM]]
func.func @interface_properties(%x: tensor<4x64xf16>, %y: tensor<4x64xf16>, %w: tensor<64x8xf16>) -> tensor<4xf16> {
  %add = spyre.pointwise "add" (%x, %y) {dims = [["M"], ["N"]], core_splits = array<i64: 2, 1>, core_replicas = 16 : i64, placement = #spyre.placement<lx, 4096>, hints = [#spyre.hint<0, tiles = {M = 2}>, #spyre.hint<1, work_div = {N = 16}>]} : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %mm = spyre.matmul (%add, %w) {dims = [["M"], ["N"], ["K"]], core_splits = array<i64: 1, 1, 32>, placement = #spyre.placement<hbm, arg 2>} : (tensor<4x64xf16>, tensor<64x8xf16>) -> tensor<4x8xf16>
  %sum = spyre.reduce "sum" (%mm) dims [1] {placement = #spyre.placement<hbm, pool 8192>} : (tensor<4x8xf16>) -> tensor<4xf16>
  func.return %sum : tensor<4xf16>
}

// -----

// An op iterating the padding its tensors' layouts hold (spyre-pad-dims: 100
// columns padded to 3 sticks).
// CHECK-LABEL: func.func @padded_iteration
// CHECK-NEXT:    spyre.pointwise "silu" (%{{.*}}) {iteration_space = array<i64: 4, 192>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>
func.func @padded_iteration(%x: tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">> {
  %y = spyre.pointwise "silu" (%x) {iteration_space = array<i64: 4, 192>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>
  func.return %y : tensor<4x100xf16, #spyre.layout<device_size = [3, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>
}

// -----

// Explicit iteration space and indexing maps, as view folding writes them: a
// sum over a transposed view of %x, iterating (kept N, reduced M).
// CHECK-LABEL: func.func @explicit_indexing
// CHECK-SAME:    (%[[X:.*]]: tensor<4x64xf16>, %[[ROW:.*]]: tensor<1x64xf16>)
// CHECK-NEXT:    %[[SUM:.*]] = spyre.reduce "sum" (%[[X]]) dims [0] {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iteration_space = array<i64: 64, 4>} : (tensor<4x64xf16>) -> tensor<64xf16>
// CHECK-NEXT:    %[[ADD:.*]] = spyre.pointwise "add" (%[[X]], %[[ROW]]) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x64xf16>, tensor<1x64xf16>) -> tensor<4x64xf16>
// CHECK-NEXT:    func.return %[[SUM]], %[[ADD]]
func.func @explicit_indexing(%x: tensor<4x64xf16>, %row: tensor<1x64xf16>) -> (tensor<64xf16>, tensor<4x64xf16>) {
  %sum = spyre.reduce "sum" (%x) dims [0] {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iteration_space = array<i64: 64, 4>} : (tensor<4x64xf16>) -> tensor<64xf16>
  %add = spyre.pointwise "add" (%x, %row) {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x64xf16>, tensor<1x64xf16>) -> tensor<4x64xf16>
  func.return %sum, %add : tensor<64xf16>, tensor<4x64xf16>
}

// -----

// Indirect access: operand #0 is an int32 index (32 per stick), operand #1 the table read along
// indirect_dim at the index's values; explicit maps read one element per entry (torch.gather).
// CHECK-LABEL: func.func @indirect_access
// CHECK-SAME:    (%[[IDS:.*]]: tensor<2x100xi32, #spyre.layout<device_size = [4, 2, 32], dim_order = [0, 1], format = "IEEE_INT32">>, %[[TABLE:.*]]: tensor<1000x96xf16>, %[[INDEX:.*]]: tensor<4x40xi32>, %[[SMALL:.*]]: tensor<4x50xf16>)
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.pointwise "identity" (%[[IDS]], %[[TABLE]]) {indirect_dim = 0 : i64} : (tensor<2x100xi32, #spyre.layout<device_size = [4, 2, 32], dim_order = [0, 1], format = "IEEE_INT32">>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
// CHECK-NEXT:    %[[ELEMS:.*]] = spyre.pointwise "identity" (%[[INDEX]], %[[SMALL]]) {indirect_dim = 1 : i64, iteration_space = array<i64: 4, 40>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x40xi32>, tensor<4x50xf16>) -> tensor<4x40xf16>
// CHECK-NEXT:    func.return %[[ROWS]], %[[ELEMS]]
func.func @indirect_access(%ids: tensor<2x100xi32, #spyre.layout<device_size = [4, 2, 32], dim_order = [0, 1], format = "IEEE_INT32">>, %table: tensor<1000x96xf16>, %index: tensor<4x40xi32>, %small: tensor<4x50xf16>) -> (tensor<2x100x96xf16>, tensor<4x40xf16>) {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64} : (tensor<2x100xi32, #spyre.layout<device_size = [4, 2, 32], dim_order = [0, 1], format = "IEEE_INT32">>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
  %elems = spyre.pointwise "identity" (%index, %small) {indirect_dim = 1 : i64, iteration_space = array<i64: 4, 40>, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]} : (tensor<4x40xi32>, tensor<4x50xf16>) -> tensor<4x40xf16>
  func.return %rows, %elems : tensor<2x100x96xf16>, tensor<4x40xf16>
}

// -----

// Row store: operand #1 (rows) is written along scatter_dim at the values of operand #0 (a 1-D
// int32 index) into operand #2, whose storage the result takes (a KV-cache update).
// CHECK-LABEL: func.func @row_store
// CHECK-SAME:    (%[[POS:.*]]: tensor<1xi32>, %[[ROWS:.*]]: tensor<1x2x1x16xf16>, %[[CACHE:.*]]: tensor<1x2x64x16xf16>)
// CHECK-NEXT:    %[[NEW:.*]] = spyre.pointwise "identity" (%[[POS]], %[[ROWS]], %[[CACHE]]) {scatter_dim = 2 : i64} : (tensor<1xi32>, tensor<1x2x1x16xf16>, tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16>
// CHECK-NEXT:    func.return %[[NEW]]
func.func @row_store(%pos: tensor<1xi32>, %rows: tensor<1x2x1x16xf16>, %cache: tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16> {
  %new = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 2 : i64} : (tensor<1xi32>, tensor<1x2x1x16xf16>, tensor<1x2x64x16xf16>) -> tensor<1x2x64x16xf16>
  func.return %new : tensor<1x2x64x16xf16>
}

// -----

// Blocks of rows: with index_step the index holds block numbers; a read gets each block's rows
// as a dim after the index's, a store writes them (a KV cache sticked on its positions read
// and written as whole sticks).
// CHECK-LABEL: func.func @blocks_of_rows
// CHECK-SAME:    (%[[BLK:.*]]: tensor<1xi32>, %[[CACHE:.*]]: tensor<1x2x128x16xf16>, %[[ROWS:.*]]: tensor<1x2x1x64x16xf16>)
// CHECK-NEXT:    %[[BLOCK:.*]] = spyre.pointwise "identity" (%[[BLK]], %[[CACHE]]) {indirect_dim = 2 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<1x2x128x16xf16>) -> tensor<1x2x1x64x16xf16>
// CHECK-NEXT:    %[[NEW:.*]] = spyre.pointwise "identity" (%[[BLK]], %[[ROWS]], %[[CACHE]]) {scatter_dim = 2 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16>) -> tensor<1x2x128x16xf16>
// CHECK-NEXT:    func.return %[[BLOCK]], %[[NEW]]
func.func @blocks_of_rows(%blk: tensor<1xi32>, %cache: tensor<1x2x128x16xf16>, %rows: tensor<1x2x1x64x16xf16>) -> (tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16>) {
  %block = spyre.pointwise "identity" (%blk, %cache) {indirect_dim = 2 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<1x2x128x16xf16>) -> tensor<1x2x1x64x16xf16>
  %new = spyre.pointwise "identity" (%blk, %rows, %cache) {scatter_dim = 2 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16>) -> tensor<1x2x128x16xf16>
  func.return %block, %new : tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16>
}
