// Coarse tiling of hand-written IR: one case per rule (spyre-coarse-tile).
// RUN: spyre-opt %s --split-input-file -p spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile 2>%t.err | %filecheck %s
// RUN: %filecheck %s --check-prefix=WARN < %t.err
// RUN: spyre-opt %s --split-input-file -p 'spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile{span-tiling=false}' 2>/dev/null | %filecheck %s --check-prefix=NOSPAN
// Round trip, and idempotence: a second run changes nothing.
// RUN: spyre-opt %s --split-input-file -p spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile 2>/dev/null > %t.once.mlir
// RUN: spyre-opt %t.once.mlir --split-input-file > %t.rt.mlir && diff %t.once.mlir %t.rt.mlir
// RUN: spyre-opt %t.once.mlir --split-input-file -p spyre-coarse-tile > %t.twice.mlir && diff %t.once.mlir %t.twice.mlir

// CHECK-LABEL: func.func @single
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[B:loop_bound]] = arith.constant 4 : index
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<64x128xf16
// CHECK: scf.for %[[I:i]] = %[[C0]] to %[[B]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: %[[R:.*]] = affine.apply affine_map<(d0) -> ((d0 * 16))> (%[[I]])
// CHECK: %[[XT:.*]] = tensor.extract_slice %x[%[[R]], 0] [16, 128] [1, 1] {{.*}} to tensor<16x128xf16, #spyre.layout<device_size = [2, 16, 64]
// CHECK: %[[T:.*]] = spyre.pointwise "neg" (%[[XT]]) {dims = {{\[\["R"\], \["C"\]\]}}}
// CHECK: %[[N:.*]] = tensor.insert_slice %[[T]] into %[[ACC]][%[[R]], 0] [16, 128] [1, 1]
// CHECK: scf.yield %[[N]]
func.func @single(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  %r = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 4}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %r : tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @twice
// CHECK: scf.for %[[I:i]] =
// CHECK: scf.for %[[J:i_1]] =
// CHECK: %[[O:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 64) + (d1 * 32)))> (%[[I]], %[[J]])
// CHECK: tensor.extract_slice %x[%[[O]]] [32] [1] {{.*}} to tensor<32xf32
func.func @twice(%x: tensor<256xf32> {spyre.dims = [["N"]]}) -> tensor<256xf32> {
  %r = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<1, tiles = {N = 4}>, #spyre.hint<2, tiles = {N = 2}>]} : (tensor<256xf32>) -> tensor<256xf32>
  func.return %r : tensor<256xf32>
}

// -----

// CHECK-LABEL: func.func @two_groups
// CHECK: %[[A:a]] = scf.for
// CHECK: affine.apply affine_map<(d0) -> ((d0 * 32))>
// CHECK: spyre.pointwise "neg"
// CHECK: %[[B:b]] = scf.for
// CHECK: %[[O:.*]] = affine.apply affine_map<(d0) -> ((d0 * 64))>
// CHECK: tensor.extract_slice %[[A]][0, %[[O]]] [64, 64] [1, 1]
// CHECK: spyre.pointwise "exp"
// CHECK: func.return %[[B]]
func.func @two_groups(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  %a = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %b = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<2, tiles = {C = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %b : tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @interloper
// CHECK-NEXT: %[[U:u]] = spyre.pointwise "abs" (%y)
// CHECK: scf.for
// CHECK: spyre.pointwise "neg"
// CHECK-NEXT: spyre.pointwise "exp"
// CHECK: func.return %b, %[[U]]
func.func @interloper(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}, %y: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> (tensor<64x128xf16>, tensor<64x128xf16>) {
  %a = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %u = spyre.pointwise "abs" (%y) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %b = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %b, %u : tensor<64x128xf16>, tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @interloper_after
// CHECK: %[[A:a]], %[[B:b]] = scf.for
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[U:u]] = spyre.pointwise "abs" (%[[A]])
// CHECK-NEXT: func.return %[[B]], %[[U]]
func.func @interloper_after(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> (tensor<64x128xf16>, tensor<64x128xf16>) {
  %a = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %u = spyre.pointwise "abs" (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %b = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %b, %u : tensor<64x128xf16>, tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @inside_and_outside
// CHECK: %{{.*}}, %{{.*}} = scf.for %i = {{.*}} iter_args(%[[ACC0:.*]] = %{{.*}}, %[[ACC1:.*]] = %{{.*}})
// CHECK: %[[NEG:.*]] = spyre.pointwise "neg"
// CHECK: %[[EXP:.*]] = spyre.pointwise "exp" (%[[NEG]])
// CHECK: tensor.insert_slice %[[NEG]] into %[[ACC0]]
// CHECK: tensor.insert_slice %[[EXP]] into %[[ACC1]]
func.func @inside_and_outside(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> (tensor<64x128xf16>, tensor<64x128xf16>) {
  %a = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %b = spyre.pointwise "exp" (%a) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %a, %b : tensor<64x128xf16>, tensor<64x128xf16>
}

// -----

// CHECK-LABEL: func.func @sum_last
// CHECK: %[[INIT:.*]] = spyre.fill 0.0 : tensor<64x1xf16
// CHECK: scf.for %i = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: %[[O:.*]] = affine.apply affine_map<(d0) -> ((d0 * 64))> (%i)
// CHECK: %[[XT:.*]] = tensor.extract_slice %x[0, %[[O]]] [64, 64] [1, 1]
// CHECK: %[[P:.*]] = spyre.reduce "sum" (%[[XT]]) dims [1]
// CHECK: %[[S:.*]] = spyre.pointwise "add" (%[[ACC]], %[[P]])
// CHECK: scf.yield %[[S]]
func.func @sum_last(%x: tensor<64x256xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x1xf16> {
  %r = spyre.reduce "sum" (%x) dims [1] {hints = [#spyre.hint<1, tiles = {C = 4}>]} : (tensor<64x256xf16>) -> tensor<64x1xf16>
  func.return %r : tensor<64x1xf16>
}

// -----

// CHECK-LABEL: func.func @max_dim0
// CHECK: %[[INIT:.*]] = spyre.fill -inf : tensor<256xf16
// CHECK: scf.for %i = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: tensor.extract_slice %x[%{{.*}}, 0] [16, 256] [1, 1]
// CHECK: %[[P:.*]] = spyre.reduce "max" (%{{.*}}) dims [0]
// CHECK: spyre.pointwise "maximum" (%[[ACC]], %[[P]])
func.func @max_dim0(%x: tensor<64x256xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<256xf16> {
  %r = spyre.reduce "max" (%x) dims [0] {hints = [#spyre.hint<1, tiles = {R = 4}>]} : (tensor<64x256xf16>) -> tensor<256xf16>
  func.return %r : tensor<256xf16>
}

// -----

// A mean over the stick keeps its reduced dim (spyre-stickify: a sparse result),
// which a view drops after the loop.
// CHECK-LABEL: func.func @mean_last
// CHECK: spyre.fill 0.0 : tensor<64x1xf16
// CHECK: %[[L:.*]] = scf.for
// CHECK: spyre.reduce "mean" {{.*}} -> tensor<64x1xf16
// CHECK: spyre.pointwise "add"
// CHECK: %[[R:.*]] = spyre.pointwise "mul" (%[[L]]) consts {y = 5.000000e-01 : f64}
// CHECK: %[[V:.*]] = spyre.view %[[R]] affine_map<(d0) -> (d0, 0)>
// CHECK: func.return %[[V]]
func.func @mean_last(%x: tensor<64x256xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64xf16> {
  %r = spyre.reduce "mean" (%x) dims [1] {hints = [#spyre.hint<1, tiles = {C = 2}>]} : (tensor<64x256xf16>) -> tensor<64xf16>
  func.return %r : tensor<64xf16>
}

// -----

// CHECK-LABEL: func.func @matmul_n
// CHECK: tensor.empty() : tensor<32x128xf16
// CHECK: %[[YT:.*]] = tensor.extract_slice %y[0, %{{.*}}] [256, 64] [1, 1]
// CHECK: spyre.matmul (%x, %[[YT]]) {{.*}} -> tensor<32x64xf16
// CHECK: tensor.insert_slice
func.func @matmul_n(%x: tensor<32x256xf16> {spyre.dims = [["M"], ["K"]]}, %y: tensor<256x128xf16> {spyre.dims = [["K"], ["N"]]}) -> tensor<32x128xf16> {
  %p = spyre.matmul (%x, %y) {hints = [#spyre.hint<1, tiles = {N = 2}>]} : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  func.return %p : tensor<32x128xf16>
}

// -----

// CHECK-LABEL: func.func @matmul_k
// CHECK: %[[INIT:.*]] = spyre.fill 0.0 : tensor<32x128xf16
// CHECK: scf.for %i = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHECK: %[[K:.*]] = affine.apply affine_map<(d0) -> ((d0 * 64))> (%i)
// CHECK: %[[XT:.*]] = tensor.extract_slice %x[0, %[[K]]] [32, 64] [1, 1]
// CHECK: %[[YT:.*]] = tensor.extract_slice %y[%[[K]], 0] [64, 128] [1, 1]
// CHECK: %[[P:.*]] = spyre.matmul (%[[XT]], %[[YT]])
// CHECK: spyre.pointwise "add" (%[[ACC]], %[[P]])
func.func @matmul_k(%x: tensor<32x256xf16> {spyre.dims = [["M"], ["K"]]}, %y: tensor<256x128xf16> {spyre.dims = [["K"], ["N"]]}) -> tensor<32x128xf16> {
  %p = spyre.matmul (%x, %y) {hints = [#spyre.hint<1, tiles = {K = 4}>]} : (tensor<32x256xf16>, tensor<256x128xf16>) -> tensor<32x128xf16>
  func.return %p : tensor<32x128xf16>
}

// -----

// CHECK-LABEL: func.func @unknown_name
// CHECK-NOT: scf.for
// CHECK: spyre.pointwise "neg" (%x) {dims
// WARN: warning: tiling hint 1: no op in its scope iterates dim 'Q'; the tile count 2 is ignored
func.func @unknown_name(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}, %y: tensor<64xf16> {spyre.dims = [["Q"]]}) -> (tensor<64x128xf16>, tensor<64xf16>) {
  %r = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {Q = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %q = spyre.pointwise "neg" (%y) : (tensor<64xf16>) -> tensor<64xf16>
  func.return %r, %q : tensor<64x128xf16>, tensor<64xf16>
}

// -----

// CHECK-LABEL: func.func @span
// CHECK: %[[B:loop_bound]] = arith.constant 4 : index
// CHECK: scf.for %i = %{{.*}} to %[[B]]
// CHECK: tensor.extract_slice %x[0, %{{.*}}] [65536, 32768] [1, 1]
// CHECK: spyre.pointwise "neg" {{.*}} -> tensor<65536x32768xf16
// NOSPAN-LABEL: func.func @span
// NOSPAN-NOT: scf.for
func.func @span(%x: tensor<65536x131072xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<65536x131072xf16> {
  %r = spyre.pointwise "neg" (%x) : (tensor<65536x131072xf16>) -> tensor<65536x131072xf16>
  func.return %r : tensor<65536x131072xf16>
}

// -----

// Span tiling inside a hinted loop.  Each 512-row tile of %x and of the result
// is a window of the whole [1, 32, 2048, 2048] f32 tensor, addressed with its
// strides (16 MiB a head): on one core all 32 heads of a tile span 31 x 16 MiB
// + 4 MiB, over the limit, so a loop over the heads (by 2: 15 x 16 MiB + 4 MiB
// = 244 MiB) runs inside the hinted loop.
// CHECK-LABEL: func.func @span_of_a_window
// CHECK: %[[S:loop_bound]] = arith.constant 4 : index
// CHECK: scf.for %i = %{{.*}} to %[[S]]
// CHECK:   %[[H:loop_bound_1]] = arith.constant 2 : index
// CHECK:   scf.for %i_1 = %{{.*}} to %[[H]]
// CHECK:     spyre.pointwise "exp" {{.*}} -> tensor<1x16x512x2048xf32
// NOSPAN-LABEL: func.func @span_of_a_window
// NOSPAN: spyre.pointwise "exp" {{.*}} -> tensor<1x32x512x2048xf32
module attributes {spyre.target = #spyre.target<cores = 1, lx_fraction = 0.2>} {
  func.func @span_of_a_window(%x: tensor<1x32x2048x2048xf32> {spyre.dims = [["B"], ["H"], ["S"], ["T"]]}) -> tensor<1x32x2048x2048xf32> {
    %y = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<0, tiles = {S = 4}>]} : (tensor<1x32x2048x2048xf32>) -> tensor<1x32x2048x2048xf32>
    func.return %y : tensor<1x32x2048x2048xf32>
  }
}

// -----

// Span tiling over two dims.  %a [32, 2048, 2048] f32 is laid out rows
// outermost (256 KiB a row: 512 MiB whole), %b and the result heads outermost
// (16 MiB a head).  On one core %a needs its rows tiled by 4 (by 2 a tile still
// spans 256 MiB, 4 KiB over the limit), then the result its heads by 2.
// CHECK-LABEL: func.func @span_two_dims
// CHECK-DAG: %[[H:loop_bound]] = arith.constant 2 : index
// CHECK-DAG: %[[S:loop_bound_1]] = arith.constant 4 : index
// CHECK: scf.for %i = %{{.*}} to %[[H]]
// CHECK:   scf.for %i_1 = %{{.*}} to %[[S]]
// CHECK:     spyre.pointwise "add" {{.*}} -> tensor<1x16x512x2048xf32
// NOSPAN-LABEL: func.func @span_two_dims
// NOSPAN-NOT: scf.for
module attributes {spyre.target = #spyre.target<cores = 1, lx_fraction = 0.2>} {
  func.func @span_two_dims(%a: tensor<32x2048x2048xf32> {spyre.dims = [["H"], ["S"], ["T"]]}, %b: tensor<1x32x2048x2048xf32> {spyre.dims = [["B"], ["H"], ["S"], ["T"]]}) -> tensor<1x32x2048x2048xf32> {
    %y = spyre.pointwise "add" (%a, %b) : (tensor<32x2048x2048xf32>, tensor<1x32x2048x2048xf32>) -> tensor<1x32x2048x2048xf32>
    func.return %y : tensor<1x32x2048x2048xf32>
  }
}

// -----

// Attention scores: the query and key rows come from inputs named alike, and
// spyre-propagate-named-dims names the key rows apart (%1.1), so 'S' tiles the
// query rows alone and every tile reads all the keys.
// CHECK-LABEL: func.func @query_rows
// NOSPAN-LABEL: func.func @query_rows
// CHECK: scf.for %[[I:i]] =
// CHECK-NEXT: %[[R:.*]] = affine.apply affine_map<(d0) -> ((d0 * 64))> (%[[I]])
// CHECK-NEXT: %[[QT:.*]] = tensor.extract_slice %q[%[[R]], 0] [64, 64] [1, 1]
// CHECK-NEXT: spyre.matmul (%[[QT]], %{{.*}}) {dims = {{\[\["S"\], \["%1.1"\], \["D"\]\]}}} : ({{.*}}, tensor<64x256xf16, {{.*}}) -> tensor<64x256xf16
func.func @query_rows(%q: tensor<256x64xf16> {spyre.dims = [["S"], ["D"]]},
                      %k: tensor<256x64xf16> {spyre.dims = [["S"], ["D"]]}) -> tensor<256x256xf16> {
  %kt = spyre.view %k affine_map<(d0, d1) -> (d1, d0)> : tensor<256x64xf16> -> tensor<64x256xf16>
  %s = spyre.matmul (%q, %kt) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  func.return %s : tensor<256x256xf16>
}
