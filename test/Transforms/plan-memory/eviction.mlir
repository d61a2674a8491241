// The seed example (y = a + b; z = y * c) untiled on 32 cores.  At [1024, 4096]
// fp16, y is 8 MiB: 256 KiB per core fits LX.  At [8192, 8192] it is 128 MiB:
// 4 MiB per core is more than the 1,625,344 usable LX bytes, so y goes to the
// HBM pool.  z is the graph output: kernel argument 3 (after a, b, c).
// RUN: %spyre-opt %s -p 'spyre-stickify,spyre-attach-target{cores=32},spyre-work-division,spyre-plan-memory' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-stickify,spyre-attach-target{cores=32},spyre-work-division,spyre-plan-memory{lx-solver=firstfit}' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-stickify,spyre-attach-target{cores=32},spyre-work-division,spyre-plan-memory{lx-solver=bestfit}' | %filecheck %s

// CHECK-LABEL: func.func @fits
// CHECK:         %y = spyre.pointwise "add" {{.*}}placement = #spyre.placement<lx, 0>
// CHECK:         %z = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<hbm, arg 3>
func.func @fits(%a: tensor<1024x4096xf16>, %b: tensor<1024x4096xf16>, %c: tensor<1024x4096xf16>) -> tensor<1024x4096xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  %z = spyre.pointwise "mul" (%y, %c) : (tensor<1024x4096xf16>, tensor<1024x4096xf16>) -> tensor<1024x4096xf16>
  func.return %z : tensor<1024x4096xf16>
}

// CHECK-LABEL: func.func @evicted
// CHECK:         %y = spyre.pointwise "add" {{.*}}placement = #spyre.placement<hbm, pool 0>
// CHECK:         %z = spyre.pointwise "mul" {{.*}}placement = #spyre.placement<hbm, arg 3>
func.func @evicted(%a: tensor<8192x8192xf16>, %b: tensor<8192x8192xf16>, %c: tensor<8192x8192xf16>) -> tensor<8192x8192xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<8192x8192xf16>, tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  %z = spyre.pointwise "mul" (%y, %c) : (tensor<8192x8192xf16>, tensor<8192x8192xf16>) -> tensor<8192x8192xf16>
  func.return %z : tensor<8192x8192xf16>
}

// A smaller back-end share of LX (lx-fraction) does not make 4 MiB fit: still the pool.
// RUN: %spyre-opt %s -p 'spyre-stickify,spyre-attach-target{cores=32 lx-fraction=0.0},spyre-work-division,spyre-plan-memory' | %filecheck %s
