// spyre-propagate-named-dims on hand-written IR: pointwise, matmul with a
// flattened contraction, reductions, views of every kind, fills, generated
// names for unnamed inputs; idempotence and a round trip through spyre-opt.
// RUN: %spyre-opt %s --split-input-file -p spyre-propagate-named-dims | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-propagate-named-dims,spyre-propagate-named-dims | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-propagate-named-dims | %spyre-opt --split-input-file -p spyre-propagate-named-dims | %filecheck %s

// The coarse-tiling seed: y = a + b; z = y * c, all named [A, B].
// CHECK-LABEL: func.func @add_mul(
// CHECK: %[[Y:.*]] = spyre.pointwise "add" (%a, %b) {dims = {{\[\["A"\], \["B"\]\]}}}
// CHECK-NEXT: spyre.pointwise "mul" (%[[Y]], %c) {dims = {{\[\["A"\], \["B"\]\]}}}
func.func @add_mul(%a: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]},
                   %b: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]},
                   %c: tensor<1024x4096xf16> {spyre.dims = [["A"], ["B"]]}) -> tensor<1024x4096xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  %z = spyre.pointwise "mul" (%y, %c) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  func.return %z : tensor<1024x4096xf16>
}

// -----

// Seed 002's flattened contraction: x named [A, B, C, D] (C, D on one dim),
// y named [C, D, E]; the iteration space is (A, B, E, [C, D]).
// CHECK-LABEL: func.func @flattened_contraction(
// CHECK: spyre.matmul (%x, %y) {dims = {{\[\["A"\], \["B"\], \["E"\], \["C", "D"\]\]}}}
func.func @flattened_contraction(%x: tensor<2x8x24xf16> {spyre.dims = [["A"], ["B"], ["C", "D"]]},
                                 %y: tensor<24x16xf16> {spyre.dims = [["C", "D"], ["E"]]}) -> tensor<2x8x16xf16> {
  %0 = spyre.matmul (%x, %y) : (tensor<2x8x24xf16>, tensor<24x16xf16>) -> tensor<2x8x16xf16>
  func.return %0 : tensor<2x8x16xf16>
}

// -----

// Reductions: the iteration space is kept dims then reduced dims, whether the
// result keeps the reduced dim (size 1, unnamed in the result) or drops it.
// CHECK-LABEL: func.func @reductions(
// CHECK: %[[KEEP:.*]] = spyre.reduce "sum" (%x) dims [1] {dims = {{\[\["R"\], \["C"\]\]}}}
// CHECK-NEXT: %[[DROP:.*]] = spyre.reduce "max" (%x) dims [0] {dims = {{\[\["C"\], \["R"\]\]}}}
// CHECK-NEXT: spyre.pointwise "sub" (%x, %[[KEEP]]) {dims = {{\[\["R"\], \["C"\]\]}}}
// CHECK-NEXT: spyre.pointwise "add" (%x, %[[DROP]]) {dims = {{\[\["R"\], \["C"\]\]}}}
func.func @reductions(%x: tensor<512x1024xf16> {spyre.dims = [["R"], ["C"]]}) -> (tensor<512x1024xf16>, tensor<512x1024xf16>) {
  %keep = spyre.reduce "sum" (%x) dims [1] : (tensor<512x1024xf16>) -> tensor<512x1xf16>
  %drop = spyre.reduce "max" (%x) dims [0] : (tensor<512x1024xf16>) -> tensor<1024xf16>
  %0 = spyre.pointwise "sub" (%x, %keep) : (tensor<512x1024xf16>, tensor<512x1xf16>) -> tensor<512x1024xf16>
  %1 = spyre.pointwise "add" (%x, %drop) : (tensor<512x1024xf16>, tensor<1024xf16>) -> tensor<512x1024xf16>
  func.return %0, %1 : tensor<512x1024xf16>, tensor<512x1024xf16>
}

// -----

// Unnamed inputs: dim d of argument %w gets "%w.d" (its spyre.name wins over
// the SSA name); a user name for the same dim beats a generated one quietly.
// CHECK-LABEL: func.func @unnamed_inputs(
// CHECK: %[[S:.*]] = spyre.pointwise "add" (%u, %v) {dims = {{\[\["%u.0"\], \["%u.1"\]\]}}}
// CHECK-NEXT: %[[T:.*]] = spyre.matmul (%x, %w) {dims = {{\[\["M"\], \["%weight.1"\], \["K"\]\]}}}
// CHECK-NEXT: spyre.pointwise "add" (%[[T]], %z) {dims = {{\[\["M"\], \["%weight.1"\]\]}}}
func.func @unnamed_inputs(%u: tensor<4x64xf16>, %v: tensor<4x64xf16>,
                          %x: tensor<64x256xf16> {spyre.dims = [["M"], ["K"]]},
                          %w: tensor<256x128xf16> {spyre.name = "weight"},
                          %z: tensor<64x128xf16>) -> (tensor<4x64xf16>, tensor<64x128xf16>) {
  %0 = spyre.pointwise "add" (%u, %v) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
  %1 = spyre.matmul (%x, %w) : (tensor<64x256xf16>, tensor<256x128xf16>) -> tensor<64x128xf16>
  %2 = spyre.pointwise "add" (%1, %z) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %0, %2 : tensor<4x64xf16>, tensor<64x128xf16>
}

// -----

// Views: transpose, slice (names pass through), select (the dim's names go),
// unsqueeze (a new size-1 dim stays unnamed) and expand (a new dim of size 3
// gets "%<k>.<d>", k the op's position in the function).
// CHECK-LABEL: func.func @views(
// CHECK: spyre.view %x affine_map<(d0, d1, d2) -> (d1, d2, d0)> {dims = {{\[\["C", "D"\], \["A"\], \["B"\]\]}}}
// CHECK-NEXT: spyre.view %x affine_map<(d0, d1, d2) -> (d0, d1, ((d2 * 2) + 1))> {dims = {{\[\["A"\], \["B"\], \["C", "D"\]\]}}}
// CHECK-NEXT: spyre.view %x affine_map<(d0, d1) -> (d0, 0, d1)> {dims = {{\[\["A"\], \["C", "D"\]\]}}}
// CHECK-NEXT: %[[U:.*]] = spyre.view %x affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)> {dims = {{\[\["A"\], \[\], \["B"\], \["C", "D"\]\]}}}
// CHECK-NEXT: spyre.view %[[U]] affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> {dims = {{\[\["A"\], \["%4.1"\], \["B"\], \["C", "D"\]\]}}}
func.func @views(%x: tensor<2x3x20xf16> {spyre.dims = [["A"], ["B"], ["C", "D"]]}) {
  %t = spyre.view %x affine_map<(d0, d1, d2) -> (d1, d2, d0)> : tensor<2x3x20xf16> -> tensor<20x2x3xf16>
  %s = spyre.view %x affine_map<(d0, d1, d2) -> (d0, d1, d2 * 2 + 1)> : tensor<2x3x20xf16> -> tensor<2x3x9xf16>
  %p = spyre.view %x affine_map<(d0, d1) -> (d0, 0, d1)> : tensor<2x3x20xf16> -> tensor<2x20xf16>
  %u = spyre.view %x affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)> : tensor<2x3x20xf16> -> tensor<2x1x3x20xf16>
  %e = spyre.view %u affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)> : tensor<2x1x3x20xf16> -> tensor<2x3x3x20xf16>
  func.return
}

// -----

// Reshapes: split a flattened dim, merge two dims, split one name in parts
// (D of extent 128 as 2 x 64: "D/64" and "D%64").
// CHECK-LABEL: func.func @reshapes(
// CHECK: %[[HD:.*]] = spyre.view %q {{.*}} {dims = {{\[\["H"\], \["D"\]\]}}}
// CHECK-NEXT: spyre.view %[[HD]] {{.*}} {dims = {{\[\["H", "D"\]\]}}}
// CHECK-NEXT: spyre.view %[[HD]] {{.*}} {dims = {{\[\["H"\], \["D/64"\], \["D%64"\]\]}}}
func.func @reshapes(%q: tensor<4096xf16> {spyre.dims = [["H", "D"]]}) {
  %0 = spyre.view %q affine_map<(d0, d1) -> (d0 * 128 + d1)> : tensor<4096xf16> -> tensor<32x128xf16>
  %1 = spyre.view %0 affine_map<(d0) -> (d0 floordiv 128, d0 mod 128)> : tensor<32x128xf16> -> tensor<4096xf16>
  %2 = spyre.view %0 affine_map<(d0, d1, d2) -> (d0, d1 * 64 + d2)> : tensor<32x128xf16> -> tensor<32x2x64xf16>
  func.return
}

// -----

// Fills name their dims of extent > 1 "%<k>.<d>"; existing dims are
// recomputed, not kept.
// CHECK-LABEL: func.func @fill_and_stale_dims(
// CHECK: %[[F:.*]] = spyre.fill 0.0 {dims = {{\[\[\], \["%0.1"\]\]}}} : tensor<1x64xf16>
// CHECK-NEXT: spyre.pointwise "add" (%x, %[[F]]) {dims = {{\[\["A"\], \["B"\]\]}}}
func.func @fill_and_stale_dims(%x: tensor<1x64xf16> {spyre.dims = [["A"], ["B"]]}) -> tensor<1x64xf16> {
  %f = spyre.fill 0.0 {dims = [["X"], ["Y"]]} : tensor<1x64xf16>
  %0 = spyre.pointwise "add" (%x, %f) {dims = [["stale"], ["names"]]} : (tensor<1x64xf16>, tensor<1x64xf16>) -> tensor<1x64xf16>
  func.return %0 : tensor<1x64xf16>
}

// -----

// Rule 6: attention's scores read the query rows and the key rows from inputs
// named alike; the key rows (the second iteration dim named "S") are named as
// if no operand named them, "%1.1", and the ops reading the scores follow.
// The contraction over the keys takes the scores' name for them, "S" being the
// query rows'.
// CHECK-LABEL: func.func @scores(
// CHECK: %[[S:.*]] = spyre.matmul (%q, %{{.*}}) {dims = {{\[\["S"\], \["%1.1"\], \["D"\]\]}}}
// CHECK-NEXT: %[[E:.*]] = spyre.pointwise "exp" (%[[S]]) {dims = {{\[\["S"\], \["%1.1"\]\]}}}
// CHECK-NEXT: spyre.matmul (%[[E]], %v) {dims = {{\[\["S"\], \["D"\], \["%1.1"\]\]}}}
func.func @scores(%q: tensor<256x64xf16> {spyre.dims = [["S"], ["D"]]}, %k: tensor<256x64xf16> {spyre.dims = [["S"], ["D"]]},
                  %v: tensor<256x64xf16> {spyre.dims = [["S"], ["D"]]}) -> tensor<256x64xf16> {
  %kt = spyre.view %k affine_map<(d0, d1) -> (d1, d0)> : tensor<256x64xf16> -> tensor<64x256xf16>
  %s = spyre.matmul (%q, %kt) : (tensor<256x64xf16>, tensor<64x256xf16>) -> tensor<256x256xf16>
  %e = spyre.pointwise "exp" (%s) : (tensor<256x256xf16>) -> tensor<256x256xf16>
  %o = spyre.matmul (%e, %v) : (tensor<256x256xf16>, tensor<256x64xf16>) -> tensor<256x64xf16>
  func.return %o : tensor<256x64xf16>
}
