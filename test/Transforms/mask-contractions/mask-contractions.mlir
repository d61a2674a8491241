// spyre-mask-contractions: a matmul whose K is not a whole number of sticks
// reads both operands past K, so one of them must hold zeros there and the
// other finite values.  An operand whose padding may hold anything else is read
// through a where3 against a constant argument of K ones (staged with zeros past
// K); a second run finds nothing left to mask.
// RUN: %spyre-opt %s --split-input-file -p spyre-mask-contractions | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-mask-contractions > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-mask-contractions > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: %spyre-opt %s --split-input-file -p spyre-mask-contractions,spyre-stickify 2>/dev/null | %filecheck %s --check-prefix=STICK

// x + 1 holds ones past K = 5 (fp32: a stick of 32), the staged weight zeros:
// every term past K is 1 * 0.
// CHECK-LABEL: func.func @staged_right_hand_side
// CHECK-SAME:    (%{{[a-z0-9]+}}: tensor<8x5xf32> {{{.*}}}, %{{[a-z0-9]+}}: tensor<5x12xf32> {{{.*}}}) -> tensor<8x12xf32>
// CHECK-NOT:     where3
// CHECK:         func.return
func.func @staged_right_hand_side(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                                  %w: tensor<5x12xf32> {spyre.name = "w", spyre.role = "parameter"}) -> tensor<8x12xf32> {
  %a = spyre.pointwise "add" (%x) consts {y = 1.0 : f64} : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %c = spyre.matmul (%a, %w) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  func.return %c : tensor<8x12xf32>
}

// -----

// (x + 1) @ (z * 2 + 1)^T: ones past K in both, 27 more per element unmasked.
// The smaller operand (the left, 40 elements against 60) is masked, right after
// the op that writes it.
// CHECK-LABEL: func.func @ones_in_both
// CHECK-SAME:    %[[ONES:[a-z0-9_]+]]: tensor<5xf32> {spyre.role = "constant", spyre.name = "const_ones_5", spyre.value = dense<1.000000e+00> : tensor<5xf32>}
// CHECK:         %[[A:.*]] = spyre.pointwise "add" (%x)
// CHECK-NEXT:    %[[VALID:.*]] = spyre.view %[[ONES]] affine_map<(d0, d1) -> (d1)> : tensor<5xf32> -> tensor<8x5xf32>
// CHECK-NEXT:    %[[MASKED:.*]] = spyre.pointwise "where3" (%[[VALID]], %[[A]]) consts {y = 0.000000e+00 : f64} : (tensor<8x5xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
// CHECK:         %[[BT:.*]] = spyre.view %b
// CHECK-NEXT:    spyre.matmul (%[[MASKED]], %[[BT]])
func.func @ones_in_both(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                        %z: tensor<12x5xf32> {spyre.name = "z", spyre.role = "input"}) -> tensor<8x12xf32> {
  %a = spyre.pointwise "add" (%x) consts {y = 1.0 : f64} : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %m = spyre.pointwise "mul" (%z) consts {y = 2.0 : f64} : (tensor<12x5xf32>) -> tensor<12x5xf32>
  %b = spyre.pointwise "add" (%m) consts {y = 1.0 : f64} : (tensor<12x5xf32>) -> tensor<12x5xf32>
  %bt = spyre.view %b affine_map<(d0, d1) -> (d1, d0)> : tensor<12x5xf32> -> tensor<5x12xf32>
  %c = spyre.matmul (%a, %bt) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  func.return %c : tensor<8x12xf32>
}

// -----

// log(x) holds -inf past K: -inf * 0 is NaN, so the left-hand side is masked
// although the staged weight holds zeros.
// CHECK-LABEL: func.func @infinite_left_hand_side
// CHECK:         %[[L:.*]] = spyre.pointwise "log"
// CHECK-NEXT:    %[[VALID:.*]] = spyre.view %{{.*}} affine_map<(d0, d1) -> (d1)> : tensor<5xf32> -> tensor<8x5xf32>
// CHECK-NEXT:    %[[MASKED:.*]] = spyre.pointwise "where3" (%[[VALID]], %[[L]])
// CHECK-NEXT:    spyre.matmul (%[[MASKED]], %w)
func.func @infinite_left_hand_side(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                                   %w: tensor<5x12xf32> {spyre.name = "w", spyre.role = "parameter"}) -> tensor<8x12xf32> {
  %l = spyre.pointwise "log" (%x) : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %c = spyre.matmul (%l, %w) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  func.return %c : tensor<8x12xf32>
}

// -----

// 1 / x and 1 / z hold infinities past K in both: both are masked, against one
// constant.
// CHECK-LABEL: func.func @infinite_in_both
// CHECK-SAME:    %[[ONES:[a-z0-9_]+]]: tensor<40xf16> {spyre.role = "constant", spyre.name = "const_ones_40"
// CHECK:         %[[MA:.*]] = spyre.pointwise "where3" ({{.*}}, %a)
// CHECK:         spyre.view %[[ONES]] affine_map<(d0, d1, d2) -> (d1)> : tensor<40xf16> -> tensor<2x40x16xf16>
// CHECK-NEXT:    %[[MB:.*]] = spyre.pointwise "where3" ({{.*}}, %b)
// CHECK-NEXT:    spyre.matmul (%[[MA]], %[[MB]])
func.func @infinite_in_both(%x: tensor<2x8x40xf16> {spyre.name = "x", spyre.role = "input"},
                            %z: tensor<2x40x16xf16> {spyre.name = "z", spyre.role = "input"}) -> tensor<2x8x16xf16> {
  %a = spyre.pointwise "reciprocal" (%x) : (tensor<2x8x40xf16>) -> tensor<2x8x40xf16>
  %b = spyre.pointwise "reciprocal" (%z) : (tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  %c = spyre.matmul (%a, %b) : (tensor<2x8x40xf16>, tensor<2x40x16xf16>) -> tensor<2x8x16xf16>
  func.return %c : tensor<2x8x16xf16>
}

// -----

// K = 64 float16 elements is one whole stick: nothing is read past it.
// CHECK-LABEL: func.func @whole_sticks
// CHECK-NOT:     where3
// CHECK:         func.return
func.func @whole_sticks(%x: tensor<8x64xf16> {spyre.name = "x", spyre.role = "input"},
                        %z: tensor<64x16xf16> {spyre.name = "z", spyre.role = "input"}) -> tensor<8x16xf16> {
  %a = spyre.pointwise "exp" (%x) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %b = spyre.pointwise "exp" (%z) : (tensor<64x16xf16>) -> tensor<64x16xf16>
  %c = spyre.matmul (%a, %b) : (tensor<8x64xf16>, tensor<64x16xf16>) -> tensor<8x16xf16>
  func.return %c : tensor<8x16xf16>
}

// -----

// The padding a sum keeps and a product of a zero: sum over rows of the staged
// x holds zeros past K, and so does (x + 1) * sum(x); tanh keeps zeros too.
// Nothing is masked.
// CHECK-LABEL: func.func @zeros_kept
// CHECK-NOT:     where3
// CHECK:         func.return
func.func @zeros_kept(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                      %z: tensor<5x12xf32> {spyre.name = "z", spyre.role = "input"}) -> tensor<8x12xf32> {
  %s = spyre.reduce "sum" (%x) dims [0] : (tensor<8x5xf32>) -> tensor<5xf32>
  %a = spyre.pointwise "add" (%x) consts {y = 1.0 : f64} : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %p = spyre.pointwise "mul" (%a, %s) : (tensor<8x5xf32>, tensor<5xf32>) -> tensor<8x5xf32>
  %b = spyre.pointwise "tanh" (%z) : (tensor<5x12xf32>) -> tensor<5x12xf32>
  %c = spyre.matmul (%p, %b) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  func.return %c : tensor<8x12xf32>
}

// -----

// A mask joins the tiles hint groups of its matmul, inside which it sits.
// CHECK-LABEL: func.func @inside_a_hinted_group
// CHECK:         spyre.pointwise "where3" ({{.*}}) consts {y = 0.000000e+00 : f64} {hints = [#spyre.hint<1, tiles = {M = 2}>]}
// CHECK-NEXT:    spyre.matmul
func.func @inside_a_hinted_group(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                                 %w: tensor<5x12xf32> {spyre.name = "w", spyre.role = "parameter"}) -> tensor<8x12xf32> {
  %e = spyre.pointwise "log" (%x) {hints = [#spyre.hint<1, tiles = {M = 2}>]} : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %c = spyre.matmul (%e, %w) {hints = [#spyre.hint<1, tiles = {M = 2}>]} : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  func.return %c : tensor<8x12xf32>
}

// -----

// A matmul that computes past its result's extent (a column slice folded into
// it: 100 columns into a result of 38, laid out with the padding to hold them)
// holds data the program drops there, which may be any value, not the zeros of
// its staged operand's padding; the other operand, a slice, reads such data past
// K too.  Both are masked.
// CHECK-LABEL: func.func @computed_past_the_extent
// CHECK:         %[[P:.*]] = spyre.matmul (%x, %y)
// CHECK-NEXT:    spyre.view
// CHECK-NEXT:    %[[MASKED:.*]] = spyre.pointwise "where3" ({{.*}}, %[[P]])
// CHECK:         %[[ZT:.*]] = spyre.view %z
// CHECK-NEXT:    spyre.view
// CHECK-NEXT:    %[[MASKED_ZT:.*]] = spyre.pointwise "where3" ({{.*}}, %[[ZT]])
// CHECK-NEXT:    spyre.matmul (%[[MASKED]], %[[MASKED_ZT]])
func.func @computed_past_the_extent(%x: tensor<4x77xf16> {spyre.name = "x", spyre.role = "input"},
                                    %y: tensor<77x100xf16> {spyre.name = "y", spyre.role = "input"},
                                    %z: tensor<128x100xf16> {spyre.name = "z", spyre.role = "input"}) -> tensor<4x128xf16> {
  %p = spyre.matmul (%x, %y) {iteration_space = array<i64: 4, 100, 77>, indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]} : (tensor<4x77xf16>, tensor<77x100xf16>) -> tensor<4x38xf16, #spyre.layout<device_size = [2, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>
  %zt = spyre.view %z affine_map<(d0, d1) -> (d1, d0)> : tensor<128x100xf16> -> tensor<38x128xf16>
  %c = spyre.matmul (%p, %zt) : (tensor<4x38xf16, #spyre.layout<device_size = [2, 4, 64], dim_order = [0, 1], format = "SEN169_FP16">>, tensor<38x128xf16>) -> tensor<4x128xf16>
  func.return %c : tensor<4x128xf16>
}

// -----

// A norm's output, x * rsqrt(mean(x * x)), holds zeros past K: a product of the
// staged x's zeros and a finite factor (the broadcast rsqrt reads data there).
// Read by two matmuls whose other operands hold ones past K, it needs no mask.
// CHECK-LABEL: func.func @norm_read_twice
// CHECK-NOT:     where3
// CHECK:         func.return
func.func @norm_read_twice(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                           %z: tensor<5x12xf32> {spyre.name = "z", spyre.role = "input"}) -> (tensor<8x12xf32>, tensor<8x12xf32>) {
  %sq = spyre.pointwise "mul" (%x, %x) : (tensor<8x5xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  %m = spyre.reduce "mean" (%sq) dims [1] : (tensor<8x5xf32>) -> tensor<8xf32>
  %mv = spyre.view %m affine_map<(d0, d1) -> (d0)> : tensor<8xf32> -> tensor<8x1xf32>
  %r = spyre.pointwise "rsqrt" (%mv) : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %n = spyre.pointwise "mul" (%x, %r) : (tensor<8x5xf32>, tensor<8x1xf32>) -> tensor<8x5xf32>
  %b = spyre.pointwise "add" (%z) consts {y = 1.0 : f64} : (tensor<5x12xf32>) -> tensor<5x12xf32>
  %c = spyre.matmul (%n, %b) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  %d = spyre.matmul (%n, %b) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  func.return %c, %d : tensor<8x12xf32>, tensor<8x12xf32>
}

// -----

// One value two matmuls read alike (the input of two projections) is masked once.
// CHECK-LABEL: func.func @masked_once
// CHECK-COUNT-1: spyre.pointwise "where3"
// CHECK-NOT:     spyre.pointwise "where3"
// CHECK:         func.return
func.func @masked_once(%x: tensor<8x5xf32> {spyre.name = "x", spyre.role = "input"},
                       %w: tensor<5x12xf32> {spyre.name = "w", spyre.role = "parameter"},
                       %v: tensor<5x16xf32> {spyre.name = "v", spyre.role = "parameter"}) -> (tensor<8x12xf32>, tensor<8x16xf32>) {
  %l = spyre.pointwise "log" (%x) : (tensor<8x5xf32>) -> tensor<8x5xf32>
  %c = spyre.matmul (%l, %w) : (tensor<8x5xf32>, tensor<5x12xf32>) -> tensor<8x12xf32>
  %d = spyre.matmul (%l, %v) : (tensor<8x5xf32>, tensor<5x16xf32>) -> tensor<8x16xf32>
  func.return %c, %d : tensor<8x12xf32>, tensor<8x16xf32>
}

// -----

// A convolution's input padded by concatenation (the pieces and the buffer cover
// its channels whole): past K, each piece holds what its own padding holds,
// zeros of the staged input and of the fills; no tap is masked.
// CHECK-LABEL: func.func @padded_by_concatenation
// CHECK-NOT:     where3
// CHECK:         func.return
func.func @padded_by_concatenation(%x: tensor<4x5xf16> {spyre.name = "x", spyre.role = "input"},
                                   %w: tensor<5x8xf16> {spyre.name = "w", spyre.role = "input"}) -> tensor<5x8xf16> {
  %zero = spyre.fill 0.0 : tensor<1x5xf16>
  %buffer = tensor.empty() : tensor<5x5xf16>
  %first = spyre.pointwise "identity" (%zero) : (tensor<1x5xf16>) -> tensor<1x5xf16>
  %0 = tensor.insert_slice %first into %buffer[0, 0] [1, 5] [1, 1] : tensor<1x5xf16> into tensor<5x5xf16>
  %rest = spyre.pointwise "identity" (%x) : (tensor<4x5xf16>) -> tensor<4x5xf16>
  %1 = tensor.insert_slice %rest into %0[1, 0] [4, 5] [1, 1] : tensor<4x5xf16> into tensor<5x5xf16>
  %e = spyre.pointwise "exp" (%w) : (tensor<5x8xf16>) -> tensor<5x8xf16>
  %c = spyre.matmul (%1, %e) : (tensor<5x5xf16>, tensor<5x8xf16>) -> tensor<5x8xf16>
  func.return %c : tensor<5x8xf16>
}

// -----

// A mask follows the operand it reads, not the matmul: exp(x) holds ones past K
// and the right-hand side, the smaller, is a slice of an argument (data there),
// written by no op of the matmul's tiles group, so its mask has no hints (it
// iterates no dim the group tiles) and comes first.
// CHECK-LABEL: func.func @operand_outside_the_group
// CHECK:         spyre.view %{{.*}} : tensor<96x160xf32> -> tensor<69x160xf32>
// CHECK-NEXT:    spyre.view
// CHECK-NEXT:    spyre.pointwise "where3" ({{.*}}) consts {y = 0.000000e+00 : f64} : (tensor<69x160xf32>, tensor<69x160xf32>) -> tensor<69x160xf32>
// CHECK:         spyre.pointwise "exp" (%x) {hints = [#spyre.hint<1, tiles = {S = 4}>]}
func.func @operand_outside_the_group(%x: tensor<256x69xf32> {spyre.name = "x", spyre.role = "input"},
                                     %w: tensor<96x160xf32> {spyre.name = "w", spyre.role = "input"}) -> tensor<256x160xf32> {
  %ws = spyre.view %w affine_map<(d0, d1) -> (d0, d1)> : tensor<96x160xf32> -> tensor<69x160xf32>
  %t = spyre.pointwise "exp" (%x) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<256x69xf32>) -> tensor<256x69xf32>
  %c = spyre.matmul (%t, %ws) {hints = [#spyre.hint<1, tiles = {S = 4}>]} : (tensor<256x69xf32>, tensor<69x160xf32>) -> tensor<256x160xf32>
  func.return %c : tensor<256x160xf32>
}

// -----

// x[:, :32] @ w[:32] (float16: K of 32 read as a stick of 64): both operands read
// data the program drops past K (which may be infinite), so both are masked;
// spyre-stickify then reads both slices in place, into the masks, where it once
// copied the right-hand side's rows for their padding's sake.
// CHECK-LABEL: func.func @k_slice_of_wider_rows
// CHECK:         %[[A:.*]] = spyre.view %x
// CHECK-NEXT:    spyre.view
// CHECK-NEXT:    %[[MASKED_A:.*]] = spyre.pointwise "where3" ({{.*}}, %[[A]])
// CHECK:         %[[B:.*]] = spyre.view %w
// CHECK-NEXT:    spyre.view
// CHECK-NEXT:    %[[MASKED_B:.*]] = spyre.pointwise "where3" ({{.*}}, %[[B]])
// CHECK-NEXT:    spyre.matmul (%[[MASKED_A]], %[[MASKED_B]])
// STICK-LABEL: func.func @k_slice_of_wider_rows
// STICK:         %[[A:.*]] = spyre.view %x
// STICK:         spyre.pointwise "where3" ({{.*}}, %[[A]])
// STICK:         %[[B:.*]] = spyre.view %w
// STICK-NOT:     spyre.restickify (%w)
// STICK:         spyre.pointwise "where3" ({{.*}}, %[[B]])
func.func @k_slice_of_wider_rows(%x: tensor<10x64xf16> {spyre.name = "x", spyre.role = "input"}, %w: tensor<64x16xf16> {spyre.name = "w", spyre.role = "input"}) -> tensor<10x16xf16> {
  %a = spyre.view %x affine_map<(d0, d1) -> (d0, d1)> : tensor<10x64xf16> -> tensor<10x32xf16>
  %b = spyre.view %w affine_map<(d0, d1) -> (d0, d1)> : tensor<64x16xf16> -> tensor<32x16xf16>
  %y = spyre.matmul (%a, %b) : (tensor<10x32xf16>, tensor<32x16xf16>) -> tensor<10x16xf16>
  func.return %y : tensor<10x16xf16>
}
