// A batched matmul's operands and result put their row dim just outside the stick (the first
// entry of the dim order), where the default layout puts the batch: M of the left-hand operand
// and of the result, K of the right-hand one, the other dims in order.  The array runs a batch of
// matrices several times faster so (torch-spyre's measured batched rates).
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify,spyre-stage-layouts > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Values the pass lays out: [B, M, K] and [B, K, N] become dim order [1, 0, 2], and so does the
// [B, M, N] result; the user inputs keep the layout the runtime stages them in.
// CHECK-LABEL: func.func @computed_operands
// CHECK-SAME:    %x: tensor<8x64x128xf16, #spyre.layout<device_size = [64, 2, 8, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %a = spyre.pointwise "exp" (%x) : ({{.*}}) -> tensor<8x64x128xf16, #spyre.layout<device_size = [8, 2, 64, 64], dim_order = [1, 0, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %b = spyre.pointwise "exp" (%y) : ({{.*}}) -> tensor<8x128x96xf16, #spyre.layout<device_size = [8, 2, 128, 64], dim_order = [1, 0, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %c = spyre.matmul (%a, %b) : ({{.*}}) -> tensor<8x64x96xf16, #spyre.layout<device_size = [8, 2, 64, 64], dim_order = [1, 0, 2], format = "SEN169_FP16">>
func.func @computed_operands(%x: tensor<8x64x128xf16> {spyre.name = "x", spyre.role = "input"},
                             %y: tensor<8x128x96xf16> {spyre.name = "y", spyre.role = "input"}) -> tensor<8x64x96xf16> {
  %a = spyre.pointwise "exp" (%x) : (tensor<8x64x128xf16>) -> tensor<8x64x128xf16>
  %b = spyre.pointwise "exp" (%y) : (tensor<8x128x96xf16>) -> tensor<8x128x96xf16>
  %c = spyre.matmul (%a, %b) : (tensor<8x64x128xf16>, tensor<8x128x96xf16>) -> tensor<8x64x96xf16>
  func.return %c : tensor<8x64x96xf16>
}

// -----

// Expert weights [E, N, K] read transposed (a mixture of experts computed densely): staged sticked
// on N with K, their row, first (dim order [2, 0, 1], the experts outermost); the view that reads
// them shows the same device order.
// CHECK-LABEL: func.func @expert_weights
// CHECK-SAME:    %w: tensor<4x192x128xf16, #spyre.layout<device_size = [4, 3, 128, 64], dim_order = [2, 0, 1], format = "SEN169_FP16">> {spyre.name = "w", spyre.role = "parameter"}
// CHECK-NOT:     spyre.restickify
// CHECK:         %wt = spyre.view %w {{.*}} -> tensor<4x128x192xf16, #spyre.layout<device_size = [4, 3, 128, 64], dim_order = [1, 0, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %y = spyre.matmul (%h, %wt) : ({{.*}}) -> tensor<4x256x192xf16, #spyre.layout<device_size = [4, 3, 256, 64], dim_order = [1, 0, 2], format = "SEN169_FP16">>
func.func @expert_weights(%x: tensor<4x256x128xf16> {spyre.name = "x", spyre.role = "input"},
                          %w: tensor<4x192x128xf16> {spyre.name = "w", spyre.role = "parameter"}) -> tensor<4x256x192xf16> {
  %h = spyre.pointwise "exp" (%x) : (tensor<4x256x128xf16>) -> tensor<4x256x128xf16>
  %wt = spyre.view %w affine_map<(d0, d1, d2) -> (d0, d2, d1)> : tensor<4x192x128xf16> -> tensor<4x128x192xf16>
  %y = spyre.matmul (%h, %wt) : (tensor<4x256x128xf16>, tensor<4x128x192xf16>) -> tensor<4x256x192xf16>
  func.return %y : tensor<4x256x192xf16>
}

// -----

// Attention's heads behind a unit batch: dim 0 (one element) sits just outside the stick, no
// batch of more than one, and every layout keeps the default order.
// CHECK-LABEL: func.func @heads
// CHECK-NOT:     dim_order = [{{[1-9]}}
// CHECK:         func.return
func.func @heads(%q: tensor<1x8x64x128xf16> {spyre.name = "q", spyre.role = "input"},
                 %k: tensor<1x8x128x64xf16> {spyre.name = "k", spyre.role = "input"}) -> tensor<1x8x64x64xf16> {
  %a = spyre.pointwise "exp" (%q) : (tensor<1x8x64x128xf16>) -> tensor<1x8x64x128xf16>
  %s = spyre.matmul (%a, %k) : (tensor<1x8x64x128xf16>, tensor<1x8x128x64xf16>) -> tensor<1x8x64x64xf16>
  func.return %s : tensor<1x8x64x64xf16>
}
