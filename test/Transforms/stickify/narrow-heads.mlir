// spyre-stickify: attention heads narrower than a stick.  A head of 32 fp16
// elements read from a [64, 128] projection sticked on its hidden dim is
// indexed there by h * 32 + d: half a stick per head, which no layout label
// describes.  The projection is restickified onto its rows, where h * 32 + d is
// an ordinary coordinate; heads merged back into the hidden dim are written the
// same way, then restickified as the reader needs.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>&1 >/dev/null | %filecheck %s --check-prefix=WARN
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify 2>&1 > %t.twice.mlir | %filecheck %s --allow-empty --check-prefix=AGAIN
// RUN: diff %t.once.mlir %t.twice.mlir
// A second run inserts nothing and warns about nothing.
// AGAIN-NOT: warning

// A matmul needs its A operand sticked on K, the head dim: the heads are
// copied from the projection sticked on its rows into a tensor sticked on its
// rows (the head dim padded to a stick), which a restickify sticks on K.
// CHECK-LABEL: func.func @heads_read_by_matmul
// CHECK:         %[[Q:.*]] = spyre.pointwise "exp" (%{{.*}}) : (tensor<64x128xf16, {{.*}}) -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[Q]]) : {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[HEADS:.*]] = spyre.restickify (%[[ROWS]]) {iteration_space = array<i64: 4, 64, 32>, indexing_maps = [affine_map<(d0, d1, d2) -> (d1, ((d0 * 32) + d2))>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-SAME:      -> tensor<4x64x32xf16, #spyre.layout<device_size = [64, 1, 4, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[K:.*]] = spyre.restickify (%[[HEADS]]) : {{.*}} -> tensor<4x64x32xf16, #spyre.layout<device_size = [64, 1, 4, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%[[K]], %{{.*}}) :
// WARN: narrow-heads.mlir:[[# @LINE + 5]]:3: warning: operand #0 is a view that no stick dim of its storage [64, 128] can serve; it is copied by spyre.restickify
func.func @heads_read_by_matmul(%x: tensor<64x128xf16>, %y: tensor<4x32x64xf16>) -> tensor<4x64x64xf16> {
  %w = spyre.pointwise "exp" (%y) : (tensor<4x32x64xf16>) -> tensor<4x32x64xf16>
  %q = spyre.pointwise "exp" (%x) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %h = spyre.view %q affine_map<(d0, d1, d2) -> (d1, d0 * 32 + d2)> : tensor<64x128xf16> -> tensor<4x64x32xf16>
  %r = spyre.matmul (%h, %w) : (tensor<4x64x32xf16>, tensor<4x32x64xf16>) -> tensor<4x64x64xf16>
  func.return %r : tensor<4x64x64xf16>
}

// -----

// A pointwise op is driven by the rows instead of the head dim, and reads the
// heads in place from the projection restickified onto its rows.
// CHECK-LABEL: func.func @heads_read_by_pointwise
// CHECK:         %[[Q:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[Q]]) : {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[H:.*]] = spyre.view %[[ROWS]] affine_map<(d0, d1, d2) -> (d1, ((d0 * 32) + d2))>
// CHECK-NEXT:    spyre.pointwise "neg" (%[[H]]) : {{.*}} -> tensor<4x64x32xf16, #spyre.layout<device_size = [32, 1, 4, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
func.func @heads_read_by_pointwise(%x: tensor<64x128xf16>) -> tensor<4x64x32xf16> {
  %q = spyre.pointwise "exp" (%x) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %h = spyre.view %q affine_map<(d0, d1, d2) -> (d1, d0 * 32 + d2)> : tensor<64x128xf16> -> tensor<4x64x32xf16>
  %r = spyre.pointwise "neg" (%h) : (tensor<4x64x32xf16>) -> tensor<4x64x32xf16>
  func.return %r : tensor<4x64x32xf16>
}

// -----

// Heads merged back into the hidden dim, A of a matmul sticked on K: the copy
// reads the heads sticked on their rows and writes the merged tensor sticked
// on its rows; a restickify sticks it on K.
// CHECK-LABEL: func.func @heads_merged_for_matmul
// CHECK:         %[[O:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[O]]) : {{.*}} -> tensor<4x64x32xf16, #spyre.layout<device_size = [64, 1, 4, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[MERGED:.*]] = spyre.restickify (%[[ROWS]]) {iteration_space = array<i64: 64, 32, 4>, indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0, d1)>, affine_map<(d0, d1, d2) -> (d0, ((d2 * 32) + d1))>]}
// CHECK-SAME:      -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[K:.*]] = spyre.restickify (%[[MERGED]]) : {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%[[K]], %{{.*}}) :
// WARN: narrow-heads.mlir:[[# @LINE + 4]]:3: warning: operand #0 is a view that no stick dim of its storage [4, 64, 32] can serve; it is copied by spyre.restickify
func.func @heads_merged_for_matmul(%x: tensor<4x64x32xf16>, %w: tensor<128x64xf16>) -> tensor<64x64xf16> {
  %o = spyre.pointwise "exp" (%x) : (tensor<4x64x32xf16>) -> tensor<4x64x32xf16>
  %m = spyre.view %o affine_map<(d0, d1) -> (d1 floordiv 32, d0, d1 mod 32)> : tensor<4x64x32xf16> -> tensor<64x128xf16>
  %r = spyre.matmul (%m, %w) : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  func.return %r : tensor<64x64xf16>
}

// -----

// The rotary part of GPT-NeoX's heads: 16 of each head's 64 fp32 elements, in a fused QKV
// projection whose rows hold the 2 heads' q, k and v (h * 192 + d).  The copy of the view
// (the reader pads d, 16 elements, to a stick of 32) reads the projection restickified onto
// its rows: sticked on its hidden dim, d would fill half a stick shared with the rest of the
// head.
// CHECK-LABEL: func.func @rotary_part_of_fused_heads
// CHECK:         %[[Q:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[Q]]) : {{.*}} -> tensor<16x384xf32, #spyre.layout<device_size = [1, 384, 32], dim_order = [1, 0], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[PART:.*]] = spyre.restickify (%[[ROWS]]) {iteration_space = array<i64: 2, 16, 16>, indexing_maps = [affine_map<(d0, d1, d2) -> (d1, ((d0 * 192) + d2))>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-NEXT:    spyre.pointwise "neg" (%[[PART]])
func.func @rotary_part_of_fused_heads(%x: tensor<16x384xf32>) -> tensor<2x16x16xf32> {
  %q = spyre.pointwise "exp" (%x) : (tensor<16x384xf32>) -> tensor<16x384xf32>
  %h = spyre.view %q affine_map<(d0, d1, d2) -> (d1, d0 * 192 + d2)> : tensor<16x384xf32> -> tensor<2x16x16xf32>
  %r = spyre.pointwise "neg" (%h) : (tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  func.return %r : tensor<2x16x16xf32>
}

// -----

// Heads of 80 from a projection of 160 outputs, which the matmul writes as 3 sticks (192).
// Restickified onto its rows for the heads' reads, the hidden dim is padded to 240, whole
// heads: a layout label describes h * 80 + d in a dim of 240, not in one of 192.
// CHECK-LABEL: func.func @heads_of_80
// CHECK:         %[[P:.*]] = spyre.matmul
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[P]]) : {{.*}} -> tensor<16x160xf16, #spyre.layout<device_size = [1, 240, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[H:.*]] = spyre.view %[[ROWS]] affine_map<(d0, d1, d2) -> (d1, ((d0 * 80) + d2))>
// CHECK-NEXT:    spyre.pointwise "neg" (%[[H]])
func.func @heads_of_80(%x: tensor<16x64xf16>, %w: tensor<64x160xf16>) -> tensor<2x16x80xf16> {
  %p = spyre.matmul (%x, %w) : (tensor<16x64xf16>, tensor<64x160xf16>) -> tensor<16x160xf16>
  %h = spyre.view %p affine_map<(d0, d1, d2) -> (d1, d0 * 80 + d2)> : tensor<16x160xf16> -> tensor<2x16x80xf16>
  %r = spyre.pointwise "neg" (%h) : (tensor<2x16x80xf16>) -> tensor<2x16x80xf16>
  func.return %r : tensor<2x16x80xf16>
}

// -----

// Regression (ConvBERT's dynamic-convolution kernels): two heads of 9 taps share each
// row's stick of 18 and are read as rows of 9 taps, reduced over the taps.  Reading
// (d1 * 9) + d2 from a stick tangles two dims; restickified onto its rows, the copy
// would pad the taps to a stick and read past each head.  The storage is restickified
// onto its rows, unflattened there into [32, 2, 9], and sticked on the taps; the rows
// of 9 are copied from that, one dim per coordinate.
// CHECK-LABEL: func.func @taps_of_heads_in_one_stick
// CHECK:         %[[Q:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[Q]]) : {{.*}} -> tensor<32x18xf16, #spyre.layout<device_size = [1, 72, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[NEST:.*]] = spyre.restickify (%[[ROWS]]) {iteration_space = array<i64: 32, 2, 9>, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, ((d1 * 9) + d2))>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]}
// CHECK-SAME:      -> tensor<32x2x9xf16, #spyre.layout<device_size = [64, 1, 2, 64], dim_order = [1, 2, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[TAPS:.*]] = spyre.restickify (%[[NEST]]) : {{.*}} -> tensor<32x2x9xf16, #spyre.layout<device_size = [2, 1, 64, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[K:.*]] = spyre.restickify (%[[TAPS]]) {iteration_space = array<i64: 2, 32, 9>, indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d0, d2)>, affine_map<(d0, d1, d2) -> (((d1 * 2) + d0), d2)>]}
// CHECK-SAME:      -> tensor<64x9xf16, #spyre.layout<device_size = [1, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.reduce "max" (%[[K]]) dims [1]
func.func @taps_of_heads_in_one_stick(%x: tensor<32x18xf16>) -> tensor<64x1xf16> {
  %q = spyre.pointwise "exp" (%x) : (tensor<32x18xf16>) -> tensor<32x18xf16>
  %k = spyre.view %q affine_map<(d0, d1) -> ((d0 * 9 + d1) floordiv 18, (d0 * 9 + d1) mod 18)> : tensor<32x18xf16> -> tensor<64x9xf16>
  %m = spyre.reduce "max" (%k) dims [1] : (tensor<64x9xf16>) -> tensor<64x1xf16>
  func.return %m : tensor<64x1xf16>
}
