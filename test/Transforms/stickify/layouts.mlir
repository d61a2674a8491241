// spyre-stickify: default layouts, stick padding, stick-dim reductions (sparse
// outputs), fixed argument layouts, the func signature, and idempotence.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file | diff - %t.once.mlir

// A [100, 150] fp16 tensor is sticked on dim 1, padded to 3 sticks of 64.
// CHECK-LABEL: func.func @stick_padding
// CHECK-SAME:    (%[[X:.*]]: tensor<100x150xf16, #spyre.layout<device_size = [3, 100, 64], dim_order = [0, 1], format = "SEN169_FP16">>)
// CHECK-SAME:    -> tensor<100x150xf16, #spyre.layout<device_size = [3, 100, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise "exp" (%[[X]]) : (tensor<100x150xf16, #spyre.layout<device_size = [3, 100, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<100x150xf16, #spyre.layout<device_size = [3, 100, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[E]]
func.func @stick_padding(%x: tensor<100x150xf16>) -> tensor<100x150xf16> {
  %e = spyre.pointwise "exp" (%x) : (tensor<100x150xf16>) -> tensor<100x150xf16>
  func.return %e : tensor<100x150xf16>
}

// -----

// Every dtype gets its stick width: fp32 32 elements, int8 128.
// CHECK-LABEL: func.func @dtypes
// CHECK-SAME:    tensor<8x100xf32, #spyre.layout<device_size = [4, 8, 32], dim_order = [0, 1], format = "IEEE_FP32">>
// CHECK-SAME:    tensor<8x100xi8, #spyre.layout<device_size = [1, 8, 128], dim_order = [0, 1], format = "SENINT8">>
func.func @dtypes(%x: tensor<8x100xf32>, %y: tensor<8x100xi8>) -> tensor<8x100xf32> {
  %e = spyre.pointwise "exp" (%x) : (tensor<8x100xf32>) -> tensor<8x100xf32>
  func.return %e : tensor<8x100xf32>
}

// -----

// A reduction over the stick dim keeps its result sticked on the reduced
// (size-1) dim: one element per stick.  A non-stick reduction keeps the
// operand's stick dim.  The broadcast operand of the sub needs no restickify.
// CHECK-LABEL: func.func @reductions
// CHECK:         spyre.reduce "max" {{.*}} -> tensor<512x1xf16, #spyre.layout<device_size = [1, 512, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK:         spyre.pointwise "sub"
// CHECK:         spyre.reduce "sum" {{.*}} -> tensor<1x1024xf16, #spyre.layout<device_size = [16, 1, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NOT:     spyre.restickify
// CHECK:         func.return
func.func @reductions(%x: tensor<512x1024xf16>) -> (tensor<512x1024xf16>, tensor<1x1024xf16>) {
  %m = spyre.reduce "max" (%x) dims [1] : (tensor<512x1024xf16>) -> tensor<512x1xf16>
  %s = spyre.pointwise "sub" (%x, %m) : (tensor<512x1024xf16>, tensor<512x1xf16>) -> tensor<512x1024xf16>
  %c = spyre.reduce "sum" (%x) dims [0] : (tensor<512x1024xf16>) -> tensor<1x1024xf16>
  func.return %s, %c : tensor<512x1024xf16>, tensor<1x1024xf16>
}

// -----

// A reduction over the stick without keepdim keeps its reduced dims (size 1),
// so that its result is sparse; a view drops them (here copied densely for the
// return).  Off the stick, the result keeps the operand's stick dim.
// CHECK-LABEL: func.func @reductions_without_keepdim
// CHECK:         %[[S:.*]] = spyre.reduce "sum" (%{{.*}}) dims [1, 2] : {{.*}} -> tensor<4x1x1xf16, #spyre.layout<device_size = [1, 1, 64, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[C:.*]] = spyre.reduce "max" (%{{.*}}) dims [0] : {{.*}} -> tensor<8x150xf16, #spyre.layout<device_size = [3, 8, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[D:.*]] = spyre.restickify (%[[S]]) {{.*}} -> tensor<4xf16, #spyre.layout<device_size = [1, 64], dim_order = [0], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[D]], %[[C]]
func.func @reductions_without_keepdim(%x: tensor<4x8x150xf16>) -> (tensor<4xf16>, tensor<8x150xf16>) {
  %s = spyre.reduce "sum" (%x) dims [1, 2] : (tensor<4x8x150xf16>) -> tensor<4xf16>
  %c = spyre.reduce "max" (%x) dims [0] : (tensor<4x8x150xf16>) -> tensor<8x150xf16>
  func.return %s, %c : tensor<4xf16>, tensor<8x150xf16>
}

// -----

// An argument staged with another layout (as the manifest records it) keeps
// it; the pointwise result follows the argument's stick, so nothing is copied.
// CHECK-LABEL: func.func @staged_argument
// CHECK-SAME:    (%[[X:.*]]: tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>)
// CHECK-NEXT:    spyre.pointwise "exp" (%[[X]]) {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
func.func @staged_argument(%x: tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>) -> tensor<64x128xf16> {
  %e = spyre.pointwise "exp" (%x) : (tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>) -> tensor<64x128xf16>
  func.return %e : tensor<64x128xf16>
}

// -----

// Views get the layout of their read pattern: the transposed view of %x is
// sticked on its dim 0 (x's dim 1); fills are laid out like any result.
// CHECK-LABEL: func.func @views_and_fills
// CHECK:         spyre.view {{.*}} -> tensor<128x64xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK:         spyre.fill 0.0 : tensor<4x64xf16, #spyre.layout<device_size = [1, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>
func.func @views_and_fills(%x: tensor<64x128xf16>) -> (tensor<128x64xf16>, tensor<4x64xf16>) {
  %t = spyre.view %x affine_map<(d0, d1) -> (d1, d0)> : tensor<64x128xf16> -> tensor<128x64xf16>
  %e = spyre.pointwise "exp" (%t) : (tensor<128x64xf16>) -> tensor<128x64xf16>
  %z = spyre.fill 0.0 : tensor<4x64xf16>
  func.return %e, %z : tensor<128x64xf16>, tensor<4x64xf16>
}

// -----

// One op, two element sizes: 96 columns are 1.5 fp16 sticks, padded to 128,
// so an fp32 tensor beside them is addressed over 128 columns too: four fp32
// sticks, not three.  The result (a kernel output) carries that padding; an
// fp32 argument is read through a padded copy.
// CHECK-LABEL: func.func @mixed_element_sizes
// CHECK-SAME:    -> (tensor<64x96xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>, tensor<64x96xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>)
// CHECK-NEXT:    %[[YP:.*]] = spyre.restickify (%{{.*}}) : (tensor<64x96xf32, #spyre.layout<device_size = [3, 64, 32], {{.*}}>>) -> tensor<64x96xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[W:.*]] = spyre.pointwise "identity" (%{{.*}}) : (tensor<64x96xf16, {{.*}}) -> tensor<64x96xf32, #spyre.layout<device_size = [4, 64, 32], dim_order = [0, 1], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[N:.*]] = spyre.pointwise "identity" (%[[YP]]) : {{.*}} -> tensor<64x96xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[W]], %[[N]]
func.func @mixed_element_sizes(%x: tensor<64x96xf16>, %y: tensor<64x96xf32>) -> (tensor<64x96xf32>, tensor<64x96xf16>) {
  %w = spyre.pointwise "identity" (%x) : (tensor<64x96xf16>) -> tensor<64x96xf32>
  %n = spyre.pointwise "identity" (%y) : (tensor<64x96xf32>) -> tensor<64x96xf16>
  func.return %w, %n : tensor<64x96xf32>, tensor<64x96xf16>
}
