// The tiled IR (our ops printed generically) parses and verifies in upstream MLIR.
// REQUIRES: mlir-opt, torch
// RUN: %spyre-import %S/../../../examples/add_mul_nested.py:build | spyre-opt -p spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile --print-op-generic | %mlir-opt --allow-unregistered-dialect --verify-each | %filecheck %s
// RUN: %spyre-import %S/../../../examples/wsr_matmul.py:build | spyre-opt -p spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile --print-op-generic | %mlir-opt --allow-unregistered-dialect --verify-each | %filecheck %s --check-prefix=WSR
// RUN: spyre-opt %S/coarse-tile.mlir --split-input-file -p spyre-propagate-named-dims,spyre-stickify,spyre-coarse-tile --print-op-generic 2>/dev/null | %mlir-opt --allow-unregistered-dialect --verify-each --split-input-file > /dev/null

// CHECK: scf.for
// CHECK: scf.for
// CHECK: affine.apply
// CHECK: tensor.extract_slice
// CHECK: tensor.insert_slice
// WSR: "spyre.fill"
// WSR: "spyre.matmul"
