// Step 5 may replicate the writer of a matmul's left-hand operand: each group
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

// A left-hand operand another op reads too is not replicated: the exp would
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
