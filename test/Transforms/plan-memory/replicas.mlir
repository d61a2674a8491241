// A replicated writer (core_replicas) computes each slice on a group of cores,
// each into its own LX; its result gets LX like any other value, and a writer
// whose result gets none loses its replicas: several cores writing one slice
// of an HBM tensor is no plan.  core_splits and core_replicas are written by hand.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=8},spyre-plan-memory' | %filecheck %s

// The exp's result, 128 KiB whole, fits each core's LX: each of the 8 cores
// computes all of it and the matmul's N slices read it there.
// CHECK-LABEL: func.func @replicas_in_lx
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 1>, core_replicas = 8 : i64, placement = #spyre.placement<lx, 0>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 8, 1>, placement = #spyre.placement<hbm, arg 2>}
func.func @replicas_in_lx(%x: tensor<128x512xf16>, %w: tensor<512x512xf16>) -> tensor<128x512xf16> {
  %y = spyre.pointwise "exp" (%x) {core_splits = array<i64: 1, 1>, core_replicas = 8 : i64} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %h = spyre.matmul (%y, %w) {core_splits = array<i64: 1, 8, 1>} : (tensor<128x512xf16>, tensor<512x512xf16>) -> tensor<128x512xf16>
  func.return %h : tensor<128x512xf16>
}

// -----

// 2 MiB whole does not fit: the exp runs once, on one core, into the HBM pool.
// CHECK-LABEL: func.func @replicas_without_lx
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 1>, placement = #spyre.placement<hbm, pool 0>}
// CHECK-NEXT:    spyre.matmul
func.func @replicas_without_lx(%x: tensor<1024x1024xf16>, %w: tensor<1024x512xf16>) -> tensor<1024x512xf16> {
  %y = spyre.pointwise "exp" (%x) {core_splits = array<i64: 1, 1>, core_replicas = 8 : i64} : (tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %h = spyre.matmul (%y, %w) {core_splits = array<i64: 1, 8, 1>} : (tensor<1024x1024xf16>, tensor<1024x512xf16>) -> tensor<1024x512xf16>
  func.return %h : tensor<1024x512xf16>
}

// -----

// A reader that splits another way (M, not N) reads rows a replica never
// wrote on its core: the exp's result goes to HBM and the replicas with it.
// CHECK-LABEL: func.func @replicas_read_otherwise
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 1>, placement = #spyre.placement<hbm, pool 0>}
func.func @replicas_read_otherwise(%x: tensor<128x512xf16>, %w: tensor<512x512xf16>) -> tensor<128x512xf16> {
  %y = spyre.pointwise "exp" (%x) {core_splits = array<i64: 1, 1>, core_replicas = 8 : i64} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %h = spyre.matmul (%y, %w) {core_splits = array<i64: 8, 1, 1>} : (tensor<128x512xf16>, tensor<512x512xf16>) -> tensor<128x512xf16>
  func.return %h : tensor<128x512xf16>
}
