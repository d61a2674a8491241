// The lowered tiled seed example is upstream IR around our ops: mlir-opt parses
// it (printed for upstream), verifies it (our ops against their IRDL) and lowers
// its loops and affine maps.
// REQUIRES: mlir-opt, torch
// RUN: %spyre-import %S/../../examples/add_mul_nested.py:build | %spyre-opt -p spyre-compile -t upstream-mlir | %mlir-opt --irdl-file=%spyre-irdl --verify-each -lower-affine -convert-scf-to-cf | %filecheck %s

// CHECK-NOT: scf.for
// CHECK-NOT: affine.apply
// CHECK: cf.cond_br
// CHECK: "sdscbundle.sdsc_execute"
// CHECK: "sdscbundle.sdsc_execute"
// CHECK: cf.br
