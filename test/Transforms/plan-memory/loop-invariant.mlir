// A value written before a loop and read whole by a compute op of the body in
// every iteration (the keys of attention tiled by query rows) may live in LX
// across the loop (DESIGN §9): its block is kept from its writer to the loop's
// end, apart from the body's values.  Each core must read in the body the
// sticks it wrote (a window of it per tile is a slice: loop-body.mlir's %w).
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s

// [128, 512] fp16 split by rows on 4 cores: 32 KiB per core.
// CHECK-LABEL: func.func @read_whole_in_every_tile
// CHECK:         %k = spyre.pointwise "exp" (%c) {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx, [[K:[0-9]+]]>
// CHECK:         scf.for
// CHECK:           %p = spyre.pointwise "mul" (%at, %k) {{.*}}core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx, [[P:[0-9]+]]>
// CHECK-NOT:       placement = #spyre.placement<lx, [[K]]>
// CHECK:           scf.yield
func.func @read_whole_in_every_tile(%a: tensor<256x512xf16>, %c: tensor<128x512xf16>) -> tensor<256x512xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k = spyre.pointwise "exp" (%c) : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %init = tensor.empty() : tensor<256x512xf16>
  %out = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<256x512xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
    %at = tensor.extract_slice %a[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %p = spyre.pointwise "mul" (%at, %k) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
    %q = spyre.pointwise "exp" (%p) : (tensor<128x512xf16>) -> tensor<128x512xf16>
    %next = tensor.insert_slice %q into %acc[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    scf.yield %next : tensor<256x512xf16>
  }
  func.return %out : tensor<256x512xf16>
}

// -----

// The right-hand operand of a matmul in the body: work division splits the
// matmul's K as %k's writer splits its rows, so that each core reads its rows.
// CHECK-LABEL: func.func @matmul_operand_in_every_tile
// CHECK:         %k = spyre.pointwise "exp" (%c) {{.*}}core_splits = array<i64: 2, 1>, placement = #spyre.placement<lx, 0>
// CHECK:         scf.for
// CHECK:           %p = spyre.matmul (%at, %k) {{.*}}core_splits = array<i64: 1, 1, 2>, placement = #spyre.placement<hbm, pool 0>
func.func @matmul_operand_in_every_tile(%a: tensor<256x128xf16>, %c: tensor<128x128xf16>) -> tensor<256x128xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %k = spyre.pointwise "exp" (%c) : (tensor<128x128xf16>) -> tensor<128x128xf16>
  %init = tensor.empty() : tensor<256x128xf16>
  %out = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<256x128xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
    %at = tensor.extract_slice %a[%r, 0] [128, 128] [1, 1] : tensor<256x128xf16> to tensor<128x128xf16>
    %p = spyre.matmul (%at, %k) : (tensor<128x128xf16>, tensor<128x128xf16>) -> tensor<128x128xf16>
    %next = tensor.insert_slice %p into %acc[%r, 0] [128, 128] [1, 1] : tensor<128x128xf16> into tensor<256x128xf16>
    scf.yield %next : tensor<256x128xf16>
  }
  func.return %out : tensor<256x128xf16>
}
