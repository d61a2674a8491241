// The lowered tiled seed example is upstream IR around our ops: mlir-opt parses
// it (our ops generic), verifies it and lowers its loops and affine maps.
// REQUIRES: mlir-opt
// RUN: %spyre-import %S/../../examples/add_mul_nested.py:build | %spyre-opt -p spyre-compile --print-op-generic | %mlir-opt --allow-unregistered-dialect --verify-each -lower-affine -convert-scf-to-cf | %filecheck %s

// CHECK-NOT: scf.for
// CHECK-NOT: affine.apply
// CHECK: cf.cond_br
// CHECK: "sdscbundle.sdsc_execute"
// CHECK: "sdscbundle.sdsc_execute"
// CHECK: cf.br
