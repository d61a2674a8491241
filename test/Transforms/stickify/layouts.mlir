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
