// Step 5 counts a value as living in LX while the values there leave room for
// it: 85 % of the usable LX, which memory planning fills in practice.  Here the
// scores of 32 heads over 512 keys (1 MiB per core on 32 cores) and the scaled
// queries that make them (256 KiB per core) fit together: the scaling takes the
// matmul's split by heads and its result stays in LX (at 75 % it went through
// HBM, as attention's queries did at 512 tokens).
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=32},spyre-work-division,spyre-plan-memory' | %filecheck %s

// CHECK-LABEL: func.func @scaled_queries
// CHECK:         spyre.pointwise "mul" (%{{.*}}) consts {y = 5.000000e-01 : f64} {core_splits = array<i64: 32, 1, 1>, placement = #spyre.placement<lx, [[Q:[0-9]+]]>}
// CHECK-NEXT:    spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 32, 1, 1, 1>, placement = #spyre.placement<lx, [[S:[0-9]+]]>}
// CHECK-NEXT:    spyre.reduce "max" (%{{.*}}) dims [2] {core_splits = array<i64: 32, 1, 1>, placement = #spyre.placement<lx
func.func @scaled_queries(%q: tensor<32x512x128xf32>, %k: tensor<32x128x512xf32>) -> tensor<32x512x512xf32> {
  %qs = spyre.pointwise "mul" (%q) consts {y = 0.5 : f64} : (tensor<32x512x128xf32>) -> tensor<32x512x128xf32>
  %s = spyre.matmul (%qs, %k) : (tensor<32x512x128xf32>, tensor<32x128x512xf32>) -> tensor<32x512x512xf32>
  %mx = spyre.reduce "max" (%s) dims [2] : (tensor<32x512x512xf32>) -> tensor<32x512x1xf32>
  %d = spyre.pointwise "sub" (%s, %mx) : (tensor<32x512x512xf32>, tensor<32x512x1xf32>) -> tensor<32x512x512xf32>
  %e = spyre.pointwise "exp" (%d) : (tensor<32x512x512xf32>) -> tensor<32x512x512xf32>
  %t = spyre.reduce "sum" (%e) dims [2] : (tensor<32x512x512xf32>) -> tensor<32x512x1xf32>
  %p = spyre.pointwise "realdiv" (%e, %t) : (tensor<32x512x512xf32>, tensor<32x512x1xf32>) -> tensor<32x512x512xf32>
  func.return %p : tensor<32x512x512xf32>
}
