// Copy-out (DESIGN §4): a loop-body value kept in LX that also leaves its loop
// gets a spyre.pointwise "identity" after its writer, which takes the leaving
// uses (insert_slice source, scf.yield) and is placed in HBM.  Tiles of
// [128, 512] fp16 on 4 cores: 32 KiB per core.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s
// A second run finds the copy-out in place and adds none.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory,spyre-plan-memory' | %filecheck %s

// %yt is inserted into the y accumulator and read by the mul: it stays in LX
// for the mul and %copy_out writes it to HBM, with the writer's core_splits.
// CHECK-LABEL: func.func @inserted_and_read
// CHECK:         %yt = spyre.pointwise "add" (%at, %bt) {core_splits = array<i64: 4, 1>, placement = #spyre.placement<lx, 0>}
// CHECK-NEXT:    %copy_out = spyre.pointwise "identity" (%yt) {core_splits = array<i64: 4, 1>, placement = #spyre.placement<hbm, pool {{[0-9]+}}>}
// CHECK-NOT:     "identity"
// CHECK:         %zt = spyre.pointwise "mul" (%yt, %ct)
// CHECK-NEXT:    %{{.*}} = tensor.insert_slice %copy_out into %yacc
// CHECK-NEXT:    %{{.*}} = tensor.insert_slice %zt into %zacc
func.func @inserted_and_read(%a: tensor<256x512xf16>, %b: tensor<256x512xf16>, %c: tensor<256x512xf16>)
    -> (tensor<256x512xf16>, tensor<256x512xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %yinit = tensor.empty() : tensor<256x512xf16>
  %zinit = tensor.empty() : tensor<256x512xf16>
  %y, %z = scf.for %i = %c0 to %c2 step %c1 iter_args(%yacc = %yinit, %zacc = %zinit)
      -> (tensor<256x512xf16>, tensor<256x512xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
    %at = tensor.extract_slice %a[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %bt = tensor.extract_slice %b[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %yt = spyre.pointwise "add" (%at, %bt) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
    %ct = tensor.extract_slice %c[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %zt = spyre.pointwise "mul" (%yt, %ct) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
    %ynext = tensor.insert_slice %yt into %yacc[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    %znext = tensor.insert_slice %zt into %zacc[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    scf.yield %ynext, %znext : tensor<256x512xf16>, tensor<256x512xf16>
  }
  func.return %y, %z : tensor<256x512xf16>, tensor<256x512xf16>
}

// A yielded value read in the body: the copy-out is what the loop yields.
// CHECK-LABEL: func.func @yielded_and_read
// CHECK:         %s = spyre.pointwise "add" (%acc, %xt) {{.*}}placement = #spyre.placement<lx, 0>
// CHECK-NEXT:    %copy_out = spyre.pointwise "identity" (%s)
// CHECK:         %e = spyre.pointwise "exp" (%s)
// CHECK:         scf.yield %copy_out, %{{.*}} :
func.func @yielded_and_read(%x: tensor<256x512xf16>) -> (tensor<128x512xf16>, tensor<256x512xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = spyre.fill 0.0 : tensor<128x512xf16>
  %einit = tensor.empty() : tensor<256x512xf16>
  %sum, %exps = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %zero, %eacc = %einit)
      -> (tensor<128x512xf16>, tensor<256x512xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
    %xt = tensor.extract_slice %x[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %s = spyre.pointwise "add" (%acc, %xt) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
    %e = spyre.pointwise "exp" (%s) : (tensor<128x512xf16>) -> tensor<128x512xf16>
    %enext = tensor.insert_slice %e into %eacc[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    scf.yield %s, %enext : tensor<128x512xf16>, tensor<256x512xf16>
  }
  func.return %sum, %exps : tensor<128x512xf16>, tensor<256x512xf16>
}

// No copy-out when it cannot pay off or cannot live in LX: %only leaves the
// loop and has no other reader (written straight to HBM once); %bcast's other
// reader broadcasts it over the rows the cores divide, so every core reads all
// of it (not an LX candidate); %big's per-core tile (4 MiB) does
// not fit LX.
// CHECK-LABEL: func.func @no_copy_out
// CHECK-NOT:     "identity"
// CHECK:         %only = spyre.pointwise "exp"
// CHECK-NOT:     "identity"
// CHECK:         %bcast = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, pool
// CHECK-NOT:     "identity"
// CHECK:         %big = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<hbm, pool
// CHECK-NOT:     "identity"
// CHECK:         func.return
func.func @no_copy_out(%a: tensor<256x512xf16>, %w: tensor<2x512xf16>, %h: tensor<2048x8192xf16>)
    -> (tensor<256x512xf16>, tensor<2x512xf16>, tensor<256x512xf16>, tensor<2048x8192xf16>, tensor<2048x8192xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %i1 = tensor.empty() : tensor<256x512xf16>
  %i2 = tensor.empty() : tensor<2x512xf16>
  %i3 = tensor.empty() : tensor<256x512xf16>
  %i4 = tensor.empty() : tensor<2048x8192xf16>
  %i5 = tensor.empty() : tensor<2048x8192xf16>
  %r1, %r2, %r3, %r4, %r5 = scf.for %i = %c0 to %c2 step %c1 iter_args(%o1 = %i1, %o2 = %i2, %o3 = %i3, %o4 = %i4, %o5 = %i5)
      -> (tensor<256x512xf16>, tensor<2x512xf16>, tensor<256x512xf16>, tensor<2048x8192xf16>, tensor<2048x8192xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
    %rh = affine.apply affine_map<(d0) -> (d0 * 1024)> (%i)
    %at = tensor.extract_slice %a[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %wt = tensor.extract_slice %w[%i, 0] [1, 512] [1, 1] : tensor<2x512xf16> to tensor<1x512xf16>
    %ht = tensor.extract_slice %h[%rh, 0] [1024, 8192] [1, 1] : tensor<2048x8192xf16> to tensor<1024x8192xf16>
    %only = spyre.pointwise "exp" (%at) : (tensor<128x512xf16>) -> tensor<128x512xf16>
    %bcast = spyre.pointwise "exp" (%wt) : (tensor<1x512xf16>) -> tensor<1x512xf16>
    %sum = spyre.pointwise "add" (%at, %bcast) : (tensor<128x512xf16>, tensor<1x512xf16>) -> tensor<128x512xf16>
    %big = spyre.pointwise "exp" (%ht) : (tensor<1024x8192xf16>) -> tensor<1024x8192xf16>
    %neg = spyre.pointwise "neg" (%big) : (tensor<1024x8192xf16>) -> tensor<1024x8192xf16>
    %n1 = tensor.insert_slice %only into %o1[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    %n2 = tensor.insert_slice %bcast into %o2[%i, 0] [1, 512] [1, 1] : tensor<1x512xf16> into tensor<2x512xf16>
    %n3 = tensor.insert_slice %sum into %o3[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    %n4 = tensor.insert_slice %big into %o4[%rh, 0] [1024, 8192] [1, 1] : tensor<1024x8192xf16> into tensor<2048x8192xf16>
    %n5 = tensor.insert_slice %neg into %o5[%rh, 0] [1024, 8192] [1, 1] : tensor<1024x8192xf16> into tensor<2048x8192xf16>
    scf.yield %n1, %n2, %n3, %n4, %n5 : tensor<256x512xf16>, tensor<2x512xf16>, tensor<256x512xf16>, tensor<2048x8192xf16>, tensor<2048x8192xf16>
  }
  func.return %r1, %r2, %r3, %r4, %r5 : tensor<256x512xf16>, tensor<2x512xf16>, tensor<256x512xf16>, tensor<2048x8192xf16>, tensor<2048x8192xf16>
}
