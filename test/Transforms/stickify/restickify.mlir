// spyre-stickify: restickify insertion (placement, sharing), matmul stick
// rules and K padding, a view copied once rather than read from a restickify;
// spyre-stage-layouts warns for the restickified user inputs it leaves copied
// (none of these arguments is a parameter).
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts 2>&1 >/dev/null | %filecheck %s --check-prefix=WARN
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-fold-views 2>/dev/null | %filecheck %s --check-prefix=FOLD
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify 2>&1 > %t.twice.mlir | %filecheck %s --allow-empty --check-prefix=AGAIN
// RUN: diff %t.once.mlir %t.twice.mlir
// A second run inserts nothing and warns about nothing.
// AGAIN-NOT: warning

// A transposed matmul operand: A = a^T is sticked on M, so a is restickified
// onto its dim 0 (K) right after its definition and the view re-reads it.
// CHECK-LABEL: func.func @transposed_matmul_operand
// CHECK-SAME:    (%[[A:.*]]: tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], dim_order = [0, 1], format = "SEN169_FP16">>, %[[B:.*]]: tensor<256x128xf16
// CHECK-NEXT:    %[[AK:.*]] = spyre.restickify (%[[A]]) : (tensor<256x64xf16, #spyre.layout<device_size = [1, 256, 64], dim_order = [0, 1], format = "SEN169_FP16">>) -> tensor<256x64xf16, #spyre.layout<device_size = [4, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[AT:.*]] = spyre.view %[[AK]] affine_map<(d0, d1) -> (d1, d0)> {{.*}} -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%[[AT]], %[[B]]) {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NOT:     spyre.view
// WARN: restickify.mlir:[[# @LINE + 3]]:3: warning: function argument #0 is copied by spyre.restickify to dim_order [1, 0], device_size [4, 64, 64]; stage it that way to avoid the copy
func.func @transposed_matmul_operand(%a: tensor<256x64xf16>, %b: tensor<256x128xf16>) -> tensor<64x128xf16> {
  %at = spyre.view %a affine_map<(d0, d1) -> (d1, d0)> : tensor<256x64xf16> -> tensor<64x256xf16>
  %c = spyre.matmul (%at, %b) : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
  func.return %c : tensor<64x128xf16>
}

// -----

// Two readers that need the same restickified value share one restickify;
// the warning names the argument by its spyre.name, at the first reader.
// CHECK-LABEL: func.func @shared_restickify
// CHECK-NEXT:    %[[W:.*]] = spyre.restickify (%{{.*}}) {{.*}} dim_order = [1, 0]
// CHECK-NOT:     spyre.restickify
// CHECK-NEXT:    %[[WT0:.*]] = spyre.view %[[W]]
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %[[WT0]])
// CHECK-NEXT:    %[[WT1:.*]] = spyre.view %[[W]]
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %[[WT1]])
// WARN: restickify.mlir:[[# @LINE + 3]]:3: warning: function argument 'w' (#2) is copied by spyre.restickify to dim_order [1, 0], device_size [2, 256, 64]; stage it that way to avoid the copy
func.func @shared_restickify(%x: tensor<32x256xf16>, %y: tensor<32x256xf16>, %w: tensor<128x256xf16> {spyre.name = "w"}) -> (tensor<32x128xf16>, tensor<32x128xf16>) {
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<128x256xf16> -> tensor<256x128xf16>
  %c = spyre.matmul (%x, %wt) : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  %d = spyre.matmul (%y, %wt) : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  func.return %c, %d : tensor<32x128xf16>, tensor<32x128xf16>
}

// -----

// The exp result is sticked like the add's other operand wants (dim 1 = N),
// though its own operand is read transposed: one restickify (of %a) instead
// of two.
// CHECK-LABEL: func.func @fewest_restickifies
// CHECK-COUNT-1: spyre.restickify
// CHECK-NOT:     spyre.restickify
// CHECK:         spyre.pointwise "exp" {{.*}} -> tensor<128x64xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>
func.func @fewest_restickifies(%a: tensor<64x128xf16>, %b: tensor<128x64xf16>) -> tensor<128x64xf16> {
  %at = spyre.view %a affine_map<(d0, d1) -> (d1, d0)> : tensor<64x128xf16> -> tensor<128x64xf16>
  %e = spyre.pointwise "exp" (%at) : (tensor<128x64xf16>) -> tensor<128x64xf16>
  %s = spyre.pointwise "add" (%e, %b) : (tensor<128x64xf16>, tensor<128x64xf16>) -> tensor<128x64xf16>
  func.return %s : tensor<128x64xf16>
}

// -----

// K = 100 is not a whole stick: B's K dim is padded to 128.  A computed B gets
// the padded layout directly; an argument B is copied into it.
// CHECK-LABEL: func.func @matmul_k_padding
// CHECK-SAME:    (%[[A:.*]]: tensor<32x100xf16, #spyre.layout<device_size = [2, 32, 64], {{.*}}>>, %[[B:.*]]: tensor<100x150xf16, #spyre.layout<device_size = [3, 100, 64], {{.*}}>>)
// CHECK-NEXT:    %[[BP:.*]] = spyre.restickify (%[[B]]) {{.*}} -> tensor<100x150xf16, #spyre.layout<device_size = [3, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[E:.*]] = spyre.pointwise "exp" (%[[B]]) {{.*}} -> tensor<100x150xf16, #spyre.layout<device_size = [3, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%[[A]], %[[E]])
// CHECK-NEXT:    spyre.matmul (%[[A]], %[[BP]])
// WARN: restickify.mlir:[[# @LINE + 4]]:3: warning: function argument #1 is copied by spyre.restickify to dim_order [0, 1], device_size [3, 128, 64]
func.func @matmul_k_padding(%a: tensor<32x100xf16>, %b: tensor<100x150xf16>) -> (tensor<32x150xf16>, tensor<32x150xf16>) {
  %e = spyre.pointwise "exp" (%b) : (tensor<100x150xf16>) -> tensor<100x150xf16>
  %c = spyre.matmul (%a, %e) : (tensor<32x100xf16>, tensor<100x150xf16>) -> tensor<32x150xf16>
  %d = spyre.matmul (%a, %b) : (tensor<32x100xf16>, tensor<100x150xf16>) -> tensor<32x150xf16>
  func.return %c, %d : tensor<32x150xf16>, tensor<32x150xf16>
}

// -----

// transformers' repeat_kv: two key/value heads serve four query heads through
// a view (d0 floordiv 2) that spyre-fold-views folds into the matmul (its batch
// dim split in two), so the view is read in place.  K = 100 is not a whole
// stick: the two heads of the argument are read through a padded copy of 128
// rows (grouped-query.mlir has the folded maps).
// CHECK-LABEL: func.func @repeated_values_padded_along_k
// CHECK:         %[[VP:.*]] = spyre.restickify (%v) : (tensor<2x100x64xf16, #spyre.layout<device_size = [100, 1, 2, 64], {{.*}}>>) -> tensor<2x100x64xf16, #spyre.layout<device_size = [128, 1, 2, 64], dim_order = [0, 1, 2], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[VR:.*]] = spyre.view %[[VP]] affine_map<(d0, d1, d2) -> ((d0 floordiv 2), d1, d2)>
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %[[VR]])
func.func @repeated_values_padded_along_k(%p: tensor<4x32x100xf16>, %v: tensor<2x100x64xf16>) -> tensor<4x32x64xf16> {
  %r = spyre.view %v affine_map<(d0, d1, d2) -> (d0 floordiv 2, d1, d2)> : tensor<2x100x64xf16> -> tensor<4x100x64xf16>
  %o = spyre.matmul (%p, %r) : (tensor<4x32x100xf16>, tensor<4x100x64xf16>) -> tensor<4x32x64xf16>
  func.return %o : tensor<4x32x64xf16>
}

// -----

// A key's head dim kept as two dims (halves of 64, as RoPE writes it), read
// transposed as a matmul's B, which needs its stick on N (the positions).
// Restickifying the key onto its positions would not do: the matmul would
// still read the head dim through a division (d0 floordiv 64), which
// spyre-fold-views copies.  So the view is copied once, straight from the
// key, sticked on N.
// CHECK-LABEL: func.func @split_head_dim_transposed
// CHECK:         %[[K:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[KT:.*]] = spyre.restickify (%[[K]]) {iteration_space = array<i64: 64, 2, 128>, indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1, d0)>, affine_map<(d0, d1, d2) -> (((d1 * 64) + d0), d2)>]}
// CHECK-SAME:      -> tensor<128x128xf16, #spyre.layout<device_size = [2, 128, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %[[KT]])
// FOLD-LABEL: func.func @split_head_dim_transposed
// FOLD:         spyre.pointwise "exp"
// FOLD-NEXT:    spyre.restickify
// FOLD-NEXT:    spyre.matmul
// WARN: restickify.mlir:[[# @LINE + 4]]:3: warning: operand #1 is a view whose coordinate (d2 floordiv 64) keeps a division of an iteration dim; it is copied by spyre.restickify
func.func @split_head_dim_transposed(%q: tensor<128x128xf16>, %x: tensor<128x2x64xf16>) -> tensor<128x128xf16> {
  %k = spyre.pointwise "exp" (%x) : (tensor<128x2x64xf16>) -> tensor<128x2x64xf16>
  %kt = spyre.view %k affine_map<(d0, d1) -> (d1, d0 floordiv 64, d0 mod 64)> : tensor<128x2x64xf16> -> tensor<128x128xf16>
  %s = spyre.matmul (%q, %kt) : (tensor<128x128xf16>, tensor<128x128xf16>) -> tensor<128x128xf16>
  func.return %s : tensor<128x128xf16>
}

// -----

// Restickifies are counted in bytes: a key cast to fp32 and read transposed
// as a matmul's B, which wants its stick on N (the key positions).  Sticked
// on its head dim the cast's fp32 result (1 MiB) would be restickified;
// sticked on the positions, its fp16 input (512 KiB) is, and the cast then
// writes what B reads, its head dim (B's K) just outside the stick and the
// batch of 8 outermost (batched-rows.mlir).
// CHECK-LABEL: func.func @cast_key_read_transposed
// CHECK:         %[[X:.*]] = spyre.restickify (%x) : {{.*}} -> tensor<8x256x128xf16, #spyre.layout<device_size = [128, 4, 8, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %k = spyre.pointwise "identity" (%[[X]]) : {{.*}} -> tensor<8x256x128xf32, #spyre.layout<device_size = [8, 8, 128, 32], dim_order = [2, 0, 1], format = "IEEE_FP32">>
// CHECK-NEXT:    %kt = spyre.view %k
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %kt)
// WARN: restickify.mlir:[[# @LINE + 2]]:3: warning: function argument #1 is copied by spyre.restickify to dim_order [0, 2, 1], device_size [128, 4, 8, 64]
func.func @cast_key_read_transposed(%q: tensor<8x256x128xf32>, %x: tensor<8x256x128xf16>) -> tensor<8x256x256xf32> {
  %k = spyre.pointwise "identity" (%x) : (tensor<8x256x128xf16>) -> tensor<8x256x128xf32>
  %kt = spyre.view %k affine_map<(d0, d1, d2) -> (d0, d2, d1)> : tensor<8x256x128xf32> -> tensor<8x128x256xf32>
  %s = spyre.matmul (%q, %kt) : (tensor<8x256x128xf32>, tensor<8x128x256xf32>) -> tensor<8x256x256xf32>
  func.return %s : tensor<8x256x256xf32>
}

// -----

// The same key, transposed by a view and scaled before the matmul (as
// scaled_dot_product_attention does): the scaling follows whatever its
// operand is sticked on, so the cast looks one reader further, to B, and is
// sticked on the positions as before.
// CHECK-LABEL: func.func @scaled_key_transposed
// CHECK:         %[[X:.*]] = spyre.restickify (%x) : {{.*}} -> tensor<8x256x128xf16, #spyre.layout<device_size = [128, 4, 8, 64], dim_order = [0, 2, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %k = spyre.pointwise "identity" (%[[X]]) : {{.*}} -> tensor<8x256x128xf32, #spyre.layout<device_size = [128, 8, 8, 32], dim_order = [0, 2, 1], format = "IEEE_FP32">>
// CHECK-NEXT:    %kt = spyre.view %k
// CHECK-NEXT:    %ks = spyre.pointwise "mul" (%kt)
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %ks)
// WARN: restickify.mlir:[[# @LINE + 2]]:3: warning: function argument #1 is copied by spyre.restickify to dim_order [0, 2, 1], device_size [128, 4, 8, 64]
func.func @scaled_key_transposed(%q: tensor<8x256x128xf32>, %x: tensor<8x256x128xf16>) -> tensor<8x256x256xf32> {
  %k = spyre.pointwise "identity" (%x) : (tensor<8x256x128xf16>) -> tensor<8x256x128xf32>
  %kt = spyre.view %k affine_map<(d0, d1, d2) -> (d0, d2, d1)> : tensor<8x256x128xf32> -> tensor<8x128x256xf32>
  %ks = spyre.pointwise "mul" (%kt) consts {y = 0.5 : f64} : (tensor<8x128x256xf32>) -> tensor<8x128x256xf32>
  %s = spyre.matmul (%q, %ks) : (tensor<8x256x128xf32>, tensor<8x128x256xf32>) -> tensor<8x256x256xf32>
  func.return %s : tensor<8x256x256xf32>
}

// -----

// A sum with a bias, read transposed by two matmuls as B: they want it
// sticked on its rows, but the bias has no rows to follow, so the rows are
// no stick for the sum at all (not merely a dearer one); the sum keeps its
// columns and one restickify serves both matmuls.
// CHECK-LABEL: func.func @biased_rows_read_transposed
// CHECK:         %y = spyre.pointwise "add" (%m, %b) : {{.*}} -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[R:.*]] = spyre.restickify (%y) : {{.*}} -> tensor<64x256xf16, #spyre.layout<device_size = [1, 256, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK:         spyre.matmul (%q, %{{.*}})
// CHECK:         spyre.matmul (%x, %{{.*}})
func.func @biased_rows_read_transposed(%x: tensor<64x256xf16>, %b: tensor<256xf16>, %q: tensor<64x256xf16>)
    -> (tensor<64x64xf16>, tensor<64x64xf16>) {
  %m = spyre.pointwise "exp" (%x) : (tensor<64x256xf16>) -> tensor<64x256xf16>
  %y = spyre.pointwise "add" (%m, %b) : (tensor<64x256xf16>, tensor<256xf16>) -> tensor<64x256xf16>
  %yt = spyre.view %y affine_map<(d0, d1) -> (d1, d0)> : tensor<64x256xf16> -> tensor<256x64xf16>
  %s = spyre.matmul (%q, %yt) : (tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<64x64xf16>
  %t = spyre.matmul (%x, %yt) : (tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<64x64xf16>
  func.return %s, %t : tensor<64x64xf16>, tensor<64x64xf16>
}

// -----

// A returned view reading every second element of its storage's stick (columns): the copy that
// materialises it reads the storage restickified onto its rows, where the stride is off the stick;
// reading the stick strided, it had no layout label.
// CHECK-LABEL: func.func @returned_strided_columns
// CHECK:         %[[Y:.*]] = spyre.pointwise "exp"
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[Y]]) : {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [1, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[COPY:.*]] = spyre.restickify (%[[ROWS]]) {iteration_space = array<i64: 64, 64>, indexing_maps = [affine_map<(d0, d1) -> (d0, (d1 * 2))>, affine_map<(d0, d1) -> (d0, d1)>]} : {{.*}} -> tensor<64x64xf16, #spyre.layout<device_size = [1, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    func.return %[[COPY]]
// FOLD-LABEL: func.func @returned_strided_columns
// FOLD-NOT:     spyre.view
// FOLD:         func.return
func.func @returned_strided_columns(%x: tensor<64x128xf16> {spyre.name = "x", spyre.role = "input"}) -> tensor<64x64xf16> {
  %y = spyre.pointwise "exp" (%x) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %v = spyre.view %y affine_map<(d0, d1) -> (d0, (d1 * 2))> : tensor<64x128xf16> -> tensor<64x64xf16>
  func.return %v : tensor<64x64xf16>
}

// -----

// A mean over the channels of merged patches read through their flattening (rows 4 * h + w) from a
// storage sticked on its 4 columns: kept there, the stick would be split (w of 4 in sticks of 32)
// and shared by the result's rows.  The mean reads the storage restickified onto the channels it
// reduces, and its result is sticked on its reduced dim of one element.
// CHECK-LABEL: func.func @mean_over_merged_patches
// CHECK-NEXT:    %[[C:.*]] = spyre.restickify (%{{.*}}) : {{.*}} -> tensor<1x4x4x64xf32, #spyre.layout<device_size = [4, 32, 2, 1, 32], dim_order = [0, 1, 2, 3], format = "IEEE_FP32">>
// CHECK-NEXT:    %[[V:.*]] = spyre.view %[[C]]
// CHECK-NEXT:    spyre.reduce "mean" (%[[V]]) dims [2] : {{.*}} -> tensor<1x16x1xf32, #spyre.layout<device_size = [16, 1, 1, 32], dim_order = [0, 1, 2], format = "IEEE_FP32">>
// WARN: restickify.mlir:[[# @LINE + 3]]:3: warning: function argument 'x' (#0) is copied by spyre.restickify to dim_order [0, 1, 2, 3], device_size [4, 32, 2, 1, 32]; stage it that way to avoid the copy
func.func @mean_over_merged_patches(%x: tensor<1x4x4x64xf32, #spyre.layout<device_size = [4, 64, 1, 1, 32], dim_order = [0, 1, 3, 2], format = "IEEE_FP32">> {spyre.name = "x", spyre.role = "input"}) -> tensor<1x16x1xf32> {
  %v = spyre.view %x affine_map<(d0, d1, d2) -> (d0, d1 floordiv 4, d1 mod 4, d2)> : tensor<1x4x4x64xf32, #spyre.layout<device_size = [4, 64, 1, 1, 32], dim_order = [0, 1, 3, 2], format = "IEEE_FP32">> -> tensor<1x16x64xf32>
  %m = spyre.reduce "mean" (%v) dims [2] : (tensor<1x16x64xf32>) -> tensor<1x16x1xf32>
  func.return %m : tensor<1x16x1xf32>
}
