// Step 5 may replicate the writer of a matmul's left-hand operand (read by
// matmuls alone, each as its left-hand operand): each group
// of cores sharing a slice of it (core_replicas) computes the rows its cores'
// N slices of the matmul read, into each core's own LX, so that the matmul splits
// N (each core its own slice of the weight, its result a slice its reader keeps
// in LX) without reading the operand from HBM.  Taken only where no division
// without replicas is as fast.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division,spyre-plan-memory' | %filecheck %s --check-prefix=PLACED

// Split K, the up projection would write partial sums to HBM, and the silu and
// the down projection would read them there.  Split N 32 ways it reads the
// scaled rows whole on every core: all 32 cores compute them, each into its own LX.
// CHECK-LABEL: func.func @replicate_for_n_split
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1>, core_replicas = 32 : i64}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32, 1>}
// CHECK-NEXT:    spyre.pointwise "silu" (%{{.*}}) {core_splits = array<i64: 1, 32>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 32>}
// PLACED-LABEL: func.func @replicate_for_n_split
// PLACED:         spyre.pointwise "mul"{{.*}}core_replicas = 32 : i64, placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.matmul{{.*}}placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.pointwise "silu"{{.*}}placement = #spyre.placement<lx
func.func @replicate_for_n_split(%x: tensor<128x512xf16>, %s: tensor<128x512xf16>, %w: tensor<512x2048xf16>, %wd: tensor<2048x512xf16>) -> tensor<128x512xf16> {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
  %h = spyre.matmul (%y, %w) : (tensor<128x512xf16>, tensor<512x2048xf16>) -> tensor<128x2048xf16>
  %a = spyre.pointwise "silu" (%h) : (tensor<128x2048xf16>) -> tensor<128x2048xf16>
  %o = spyre.matmul (%a, %wd) : (tensor<128x2048xf16>, tensor<2048x512xf16>) -> tensor<128x512xf16>
  func.return %o : tensor<128x512xf16>
}

// -----

// A gated MLP: the gate and the up projection read one scaled input.  Each splits
// N 32 ways and keeps its result in LX for the silu and the mul; the scaling is
// replicated on all 32 cores for both (a split K would send both results through
// HBM as partial sums: 137.3 us predicted, against 97.4).
// CHECK-LABEL: func.func @gate_and_up_read_one_operand
// CHECK:         spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1>, core_replicas = 32 : i64}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32, 1>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32, 1>}
// CHECK-NEXT:    spyre.pointwise "silu" (%{{.*}}) {core_splits = array<i64: 1, 32>}
// CHECK-NEXT:    spyre.pointwise "mul" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 32>}
// PLACED-LABEL: func.func @gate_and_up_read_one_operand
// PLACED:         spyre.pointwise "mul"{{.*}}core_replicas = 32 : i64, placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.matmul{{.*}}placement = #spyre.placement<lx
// PLACED-NEXT:    spyre.matmul{{.*}}placement = #spyre.placement<lx
func.func @gate_and_up_read_one_operand(%x: tensor<256x1024xf16>, %s: tensor<256x1024xf16>, %wg: tensor<1024x2048xf16>, %wu: tensor<1024x2048xf16>, %wd: tensor<2048x1024xf16>) -> tensor<256x1024xf16> {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %g = spyre.matmul (%y, %wg) : (tensor<256x1024xf16>, tensor<1024x2048xf16>) -> tensor<256x2048xf16>
  %u = spyre.matmul (%y, %wu) : (tensor<256x1024xf16>, tensor<1024x2048xf16>) -> tensor<256x2048xf16>
  %a = spyre.pointwise "silu" (%g) : (tensor<256x2048xf16>) -> tensor<256x2048xf16>
  %m = spyre.pointwise "mul" (%a, %u) : (tensor<256x2048xf16>, tensor<256x2048xf16>) -> tensor<256x2048xf16>
  %o = spyre.matmul (%m, %wd) : (tensor<256x2048xf16>, tensor<2048x1024xf16>) -> tensor<256x1024xf16>
  func.return %o : tensor<256x1024xf16>
}

// -----

// Two matmuls reading one operand, where no replicated division is faster
// than splitting both K 16 ways beside a scaling split the same way: nothing is
// replicated.
// CHECK-LABEL: func.func @gate_and_up_without_replicas
// CHECK-NOT:     core_replicas
// CHECK:         func.return
func.func @gate_and_up_without_replicas(%x: tensor<256x1024xf16>, %s: tensor<256x1024xf16>, %wg: tensor<1024x2048xf16>, %wu: tensor<1024x2048xf16>) -> tensor<256x2048xf16> {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<256x1024xf16>, tensor<256x1024xf16>) -> tensor<256x1024xf16>
  %g = spyre.matmul (%y, %wg) : (tensor<256x1024xf16>, tensor<1024x2048xf16>) -> tensor<256x2048xf16>
  %u = spyre.matmul (%y, %wu) : (tensor<256x1024xf16>, tensor<1024x2048xf16>) -> tensor<256x2048xf16>
  %a = spyre.pointwise "silu" (%g) : (tensor<256x2048xf16>) -> tensor<256x2048xf16>
  %m = spyre.pointwise "mul" (%a, %u) : (tensor<256x2048xf16>, tensor<256x2048xf16>) -> tensor<256x2048xf16>
  func.return %m : tensor<256x2048xf16>
}

// -----

// A left-hand operand an op other than a matmul reads too is not replicated: the exp would
// have to read it as the replicas wrote it.
// CHECK-LABEL: func.func @shared_operand_not_replicated
// CHECK-NOT:     core_replicas
// CHECK:         func.return
func.func @shared_operand_not_replicated(%x: tensor<128x512xf16>, %s: tensor<128x512xf16>, %w: tensor<512x2048xf16>, %wd: tensor<2048x512xf16>) -> (tensor<128x512xf16>, tensor<128x512xf16>) {
  %y = spyre.pointwise "mul" (%x, %s) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
  %h = spyre.matmul (%y, %w) : (tensor<128x512xf16>, tensor<512x2048xf16>) -> tensor<128x2048xf16>
  %a = spyre.pointwise "silu" (%h) : (tensor<128x2048xf16>) -> tensor<128x2048xf16>
  %o = spyre.matmul (%a, %wd) : (tensor<128x2048xf16>, tensor<2048x512xf16>) -> tensor<128x512xf16>
  %e = spyre.pointwise "exp" (%y) : (tensor<128x512xf16>) -> tensor<128x512xf16>
  func.return %o, %e : tensor<128x512xf16>, tensor<128x512xf16>
}
