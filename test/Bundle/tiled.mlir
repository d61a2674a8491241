// The tiled seed example (A in 2 tiles around B in 4, 32 cores) lowered to the
// bundle: two mirrored loops, one affine.apply per (HBM tensor, core) with the
// per-core address as the symbol, both ops in the inner body; y lives in LX.
// REQUIRES: torch
// RUN: %spyre-import %S/../../examples/add_mul_nested.py:build | %spyre-opt -p spyre-compile | %filecheck %s

// CHECK: func.func @sdsc_bundle(%{{.*}}: !sdscbundle.input_arg<index>, %{{.*}}: !sdscbundle.input_arg<index>, %{{.*}}: !sdscbundle.input_arg<index>, %{{.*}}: !sdscbundle.input_arg<index>)
// CHECK-SAME: spyre.cores = 32
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[B0:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[B1:.*]] = arith.constant 4 : index
// CHECK: scf.for %[[I0:.*]] = %[[C0]] to %[[B0]] step %[[C1]] {
// CHECK-NEXT: scf.for %[[I1:.*]] = %[[C0]] to %[[B1]] step %[[C1]] {
// CHECK-NEXT: affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])[%{{.*}}]
// CHECK-COUNT-63: affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])
// CHECK-NEXT: sdscbundle.sdsc_execute
// CHECK-SAME: sdsc_filename = "sdsc_0.json"
// CHECK-SAME: op_func = "add"
// CHECK-SAME: memory = "lx"
// CHECK-COUNT-64: affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])
// CHECK-NEXT: sdscbundle.sdsc_execute
// CHECK-SAME: sdsc_filename = "sdsc_1.json"
// CHECK-SAME: op_func = "mul"
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: {{^ *}}}
// CHECK-NEXT: func.return
