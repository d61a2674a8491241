// Lifetimes in a loop body (DESIGN §9): a per-tile value lives within one
// iteration, so its LX block is free again for later ops of the body (and the
// next iteration); a value around the loop read in the body lives across the
// whole loop.  Tiles of [128, 512] fp16 on 4 cores: 32 KiB per core.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=firstfit}' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division,spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s

// %p dies at the row sum %s; %u is written after that and takes %p's block (not
// in place: %u does not read %p).  %s is read broadcast along the columns by
// the cores that wrote its rows, so it stays in LX above %p.  %w goes to the
// HBM pool: written before the loop and read in it through a slice, it lives
// across the loop, so the pool keeps its 256 KiB (from 131072) apart from the
// tile %v written into the accumulator (at 0).
// CHECK-LABEL: func.func @reuse_in_body
// CHECK:         %w = spyre.pointwise "exp" (%c) {{.*}}placement = #spyre.placement<hbm, pool 131072>
// CHECK:         scf.for
// CHECK:           %p = spyre.pointwise "exp" (%at) {{.*}}placement = #spyre.placement<lx, 0>
// CHECK-NEXT:      %s = spyre.reduce "sum" (%p) {{.*}}placement = #spyre.placement<lx, 32768>
// CHECK-NEXT:      %u = spyre.pointwise "mul" (%bt, %wt) {{.*}}placement = #spyre.placement<lx, 0>
// CHECK-NEXT:      %v = spyre.pointwise "add" (%u, %s) {{.*}}placement = #spyre.placement<hbm, pool 0>
func.func @reuse_in_body(%a: tensor<256x512xf16>, %b: tensor<256x512xf16>, %c: tensor<256x512xf16>)
    -> tensor<256x512xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %w = spyre.pointwise "exp" (%c) : (tensor<256x512xf16>) -> tensor<256x512xf16>
  %init = tensor.empty() : tensor<256x512xf16>
  %out = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<256x512xf16>) {
    %r = affine.apply affine_map<(d0) -> (d0 * 128)> (%i)
    %at = tensor.extract_slice %a[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %bt = tensor.extract_slice %b[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %wt = tensor.extract_slice %w[%r, 0] [128, 512] [1, 1] : tensor<256x512xf16> to tensor<128x512xf16>
    %p = spyre.pointwise "exp" (%at) : (tensor<128x512xf16>) -> tensor<128x512xf16>
    %s = spyre.reduce "sum" (%p) dims [1] : (tensor<128x512xf16>) -> tensor<128x1xf16>
    %u = spyre.pointwise "mul" (%bt, %wt) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
    %v = spyre.pointwise "add" (%u, %s) : (tensor<128x512xf16>, tensor<128x1xf16>) -> tensor<128x512xf16>
    %next = tensor.insert_slice %v into %acc[%r, 0] [128, 512] [1, 1] : tensor<128x512xf16> into tensor<256x512xf16>
    scf.yield %next : tensor<256x512xf16>
  }
  func.return %out : tensor<256x512xf16>
}
