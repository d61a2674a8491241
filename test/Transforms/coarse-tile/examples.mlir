// The seed examples through import, named dims, stickify, fold-views and spyre-coarse-tile.
// REQUIRES: torch
// RUN: %spyre-import %S/../../../examples/add_mul_nested.py:build | spyre-opt -p spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile > %t.seed.mlir
// RUN: %filecheck %s --check-prefix=SEED < %t.seed.mlir
// RUN: %spyre-import %S/../../../examples/wsr_matmul.py:build | spyre-opt -p spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile > %t.wsr.mlir
// RUN: %filecheck %s --check-prefix=WSR < %t.wsr.mlir
// RUN: %spyre-import %S/../../../examples/wsr_matmul.py:build_view | spyre-opt -p spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile,spyre-coarse-tile > %t.view.mlir
// RUN: %filecheck %s --check-prefix=VIEW < %t.view.mlir
// RUN: %spyre-import %S/../../../examples/softmax.py:build | spyre-opt -p spyre-propagate-named-dims,spyre-stickify,spyre-fold-views,spyre-coarse-tile > %t.softmax.mlir
// RUN: %filecheck %s --check-prefix=SOFTMAX < %t.softmax.mlir
// Round trip and idempotence of every output.
// RUN: spyre-opt %t.seed.mlir | diff %t.seed.mlir -
// RUN: spyre-opt %t.wsr.mlir -p spyre-coarse-tile | diff %t.wsr.mlir -
// RUN: spyre-opt %t.softmax.mlir -p spyre-coarse-tile,spyre-coarse-tile | diff %t.softmax.mlir -

// Seed 000: loops of 2 (A) and 4 (B); both ops in the inner body on 512x1024 tiles,
// written straight into the outer accumulator.
// SEED-DAG: %[[C0:c0]] = arith.constant 0 : index
// SEED-DAG: %[[C1:c1]] = arith.constant 1 : index
// SEED-DAG: %[[B0:loop_bound]] = arith.constant 2 : index
// SEED-DAG: %[[B1:loop_bound_1]] = arith.constant 4 : index
// SEED: %[[INIT:.*]] = tensor.empty() : tensor<1024x4096xf16
// SEED: %[[Z:.*]] = scf.for %[[I:i]] = %[[C0]] to %[[B0]] step %[[C1]] iter_args(%[[ZO:.*]] = %[[INIT]])
// SEED-NEXT: %[[ZI:.*]] = scf.for %[[J:i_1]] = %[[C0]] to %[[B1]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZO]])
// SEED-NEXT: %[[R:.*]] = affine.apply affine_map<(d0) -> ((d0 * 512))> (%[[I]])
// SEED-NEXT: %[[K:.*]] = affine.apply affine_map<(d0) -> ((d0 * 1024))> (%[[J]])
// SEED-NEXT: %[[AT:.*]] = tensor.extract_slice %a[%[[R]], %[[K]]] [512, 1024] [1, 1] : tensor<1024x4096xf16, #spyre.layout<device_size = [64, 1024, 64], dim_order = [0, 1], format = "SEN169_FP16">> to tensor<512x1024xf16, #spyre.layout<device_size = [16, 512, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// SEED-NEXT: %[[BT:.*]] = tensor.extract_slice %b[%[[R]], %[[K]]] [512, 1024] [1, 1]
// SEED-NEXT: %[[YT:.*]] = spyre.pointwise "add" (%[[AT]], %[[BT]]) {dims = {{.*}}} : {{.*}} -> tensor<512x1024xf16, #spyre.layout<device_size = [16, 512, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// SEED-NEXT: %[[CT:.*]] = tensor.extract_slice %c[%[[R]], %[[K]]] [512, 1024] [1, 1]
// SEED-NEXT: %[[ZT:.*]] = spyre.pointwise "mul" (%[[YT]], %[[CT]])
// SEED-NEXT: %[[ZN:.*]] = tensor.insert_slice %[[ZT]] into %[[ACC]][%[[R]], %[[K]]] [512, 1024] [1, 1]
// SEED-NEXT: scf.yield %[[ZN]]
// SEED-NEXT: }
// SEED-NEXT: scf.yield %[[ZI]]
// SEED-NEXT: }
// SEED-NEXT: func.return %[[Z]]
// SEED-NOT: hints

// Seed 002, Example 1: the matmul is tiled on M (8) and K (4), the add only on M.
// WSR: %[[OUT:.*]] = scf.for %[[I:i]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x128xf16
// WSR-NEXT: %[[ZERO:.*]] = spyre.fill 0.0 : tensor<8x128xf16
// WSR-NEXT: %[[P:.*]] = scf.for %[[J:i_1]] = {{.*}} iter_args(%[[PACC:.*]] = %[[ZERO]])
// WSR: %[[XT:.*]] = tensor.extract_slice %x[%{{.*}}, %{{.*}}] [8, 64] [1, 1]
// WSR: %[[YT:.*]] = tensor.extract_slice %y[%{{.*}}, 0] [64, 128] [1, 1]
// WSR: %[[PT:.*]] = spyre.matmul (%[[XT]], %[[YT]])
// WSR: %[[SUM:.*]] = spyre.pointwise "add" (%[[PACC]], %[[PT]])
// WSR-NEXT: scf.yield %[[SUM]]
// WSR: %[[ZT:.*]] = tensor.extract_slice %z[%{{.*}}, 0] [8, 128] [1, 1]
// WSR-NEXT: %[[ADD:.*]] = spyre.pointwise "add" (%[[P]], %[[ZT]])
// WSR-NEXT: tensor.insert_slice %[[ADD]] into %[[ACC]]

// Seed 002, Example 2: one hint {M = 8, K = 4} on x_1d.view(M, K) @ y + z.
// VIEW: scf.for %[[I:i]] =
// VIEW: scf.for %[[J:i_1]] =
// VIEW: %[[O:.*]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2048) + (d1 * 64)))> (%[[I]], %[[J]])
// VIEW: %[[XT:.*]] = tensor.extract_slice %x_1d[%[[O]]] [1856] [1]
// VIEW: spyre.matmul (%[[XT]], %{{.*}}) {{.*}}iteration_space = array<i64: 8, 128, 64>, indexing_maps = [affine_map<(d0, d1, d2) -> (((d0 * 256) + d2))>
// VIEW: spyre.pointwise "add"
// VIEW: spyre.pointwise "add"
// VIEW-NOT: hints

// Softmax tiled over rows: every op in one loop on 128-row tiles; x sliced once.
// SOFTMAX: scf.for %i =
// SOFTMAX: %[[XT:.*]] = tensor.extract_slice %x[%{{.*}}, 0] [128, 1024] [1, 1]
// SOFTMAX-NEXT: %[[M:.*]] = spyre.reduce "max" (%[[XT]]) dims [1]
// SOFTMAX-NEXT: %[[S:.*]] = spyre.pointwise "sub" (%[[XT]], %[[M]])
// SOFTMAX-NEXT: %[[E:.*]] = spyre.pointwise "exp" (%[[S]])
// SOFTMAX-NEXT: %[[D:.*]] = spyre.reduce "sum" (%[[E]]) dims [1]
// SOFTMAX-NEXT: %[[Q:.*]] = spyre.pointwise "realdiv" (%[[E]], %[[D]])
// SOFTMAX-NEXT: tensor.insert_slice %[[Q]]
