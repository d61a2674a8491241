// Errors of spyre-coarse-tile: one located line naming the op, the dim, its extent and the count.
// RUN: not spyre-opt %s --split-input-file -p spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile 2>&1 | %filecheck %s

func.func @not_divisible(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op: dim 'R' of extent 64 is not divisible by the tile count 3
  %r = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 3}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %r : tensor<64x128xf16>
}

// -----

func.func @not_whole_sticks(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op: tiling dim 'C' of extent 128 by 4 gives tiles of 32 elements along the stick dim of a [64, 128] tensor, not a whole number of 64-element sticks
  %r = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {C = 4}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %r : tensor<64x128xf16>
}

// -----

func.func @undeclared(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: tiling hint 1 names dim 'Z' (count 2), which no op of the function knows
  %r = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {Z = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %r : tensor<64x128xf16>
}

// -----

func.func @interloper_stuck(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  %a = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op sits inside the group of hints [1] ('spyre.pointwise', 'spyre.pointwise'), depends on an op of it, and an op of it depends on it
  %u = spyre.pointwise "abs" (%a) : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %b = spyre.pointwise "exp" (%u) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %b : tensor<64x128xf16>
}

// -----

func.func @hint_in_two_groups(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  %a = spyre.pointwise "neg" (%x) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  %b = spyre.pointwise "abs" (%a) {hints = [#spyre.hint<2, tiles = {C = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op: tiling hint 1 would form two groups
  %c = spyre.pointwise "exp" (%b) {hints = [#spyre.hint<1, tiles = {R = 2}>]} : (tensor<64x128xf16>) -> tensor<64x128xf16>
  func.return %c : tensor<64x128xf16>
}

// -----

func.func @partial_read(%x: tensor<64x128xf16> {spyre.dims = [["R"], ["C"]]}) -> tensor<64x128xf16> {
  %m = spyre.reduce "max" (%x) dims [1] {hints = [#spyre.hint<1, tiles = {C = 2}>]} : (tensor<64x128xf16>) -> tensor<64x1xf16>
  // CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'spyre.pointwise' op reads a partial reduction inside the loop over dim 'C'
  %s = spyre.pointwise "sub" (%x, %m) {hints = [#spyre.hint<1, tiles = {C = 2}>]} : (tensor<64x128xf16>, tensor<64x1xf16>) -> tensor<64x128xf16>
  func.return %s : tensor<64x128xf16>
}
