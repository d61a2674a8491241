// Span reduction: no core may address more than 65535 x 4096 = 268,431,360
// bytes of one tensor.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=32},spyre-work-division' | %filecheck %s

// A[8192, 32768] @ W[32768, 4096] fp16, iteration space (M, N, K).  A span
// runs from a core's first byte to its last.  A is 512 stick columns of 1 MiB
// (all 8192 rows): K split 2 leaves 255 columns after the first plus a whole
// column, 256 MiB, 4 KiB over the limit, so K is split 4 (128 MiB).  W is 64
// stick columns of 4 MiB, 256 MiB whole: with K split at all a core covers
// 63 columns and part of the last (at most 253 MiB), within the limit.  C
// (64 MiB) fits.  The cost model then gives K all 32 cores: an M or N split
// would read a slice of W or A on several cores.
// CHECK-LABEL: func.func @big_matmul
// CHECK:         spyre.matmul (%{{.*}}, %{{.*}}) {core_splits = array<i64: 1, 1, 32>}
func.func @big_matmul(%a: tensor<8192x32768xf16>, %w: tensor<32768x4096xf16>) -> tensor<8192x4096xf16> {
  %c = spyre.matmul (%a, %w) : (tensor<8192x32768xf16>, tensor<32768x4096xf16>) -> tensor<8192x4096xf16>
  func.return %c : tensor<8192x4096xf16>
}

// -----

// A 1 GiB [4194304, 2, 64] fp16 tensor is laid out [2, 1, 4194304, 64]: the
// outermost device dim (host dim 1) is 512 MiB per position, so it is split
// 2; each core then spans one position, itself 4194304 rows of 128 bytes, so
// the rows need a split of at least 4.  Distribution grows that minimum to
// 16 with the cores left.
// CHECK-LABEL: func.func @span_two_dims
// CHECK:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 16, 2, 1>}
func.func @span_two_dims(%a: tensor<4194304x2x64xf16>) -> tensor<4194304x2x64xf16> {
  %y = spyre.pointwise "exp" (%a) : (tensor<4194304x2x64xf16>) -> tensor<4194304x2x64xf16>
  func.return %y : tensor<4194304x2x64xf16>
}

// -----

// A 512 MiB [4194304, 64] fp16 sum over its rows: span reduction splits the
// reduced rows (by 2 a core still spans 256 MiB, just over the limit, so by 4).
// Distribution leaves a reduction dim split by span reduction as it is, and
// the kept 64 columns are one stick: 4 cores in all.
// CHECK-LABEL: func.func @span_reduction_dim
// CHECK:         spyre.reduce "sum" (%{{.*}}) dims [0] {core_splits = array<i64: 1, 4>}
func.func @span_reduction_dim(%a: tensor<4194304x64xf16>) -> tensor<64xf16> {
  %s = spyre.reduce "sum" (%a) dims [0] : (tensor<4194304x64xf16>) -> tensor<64xf16>
  func.return %s : tensor<64xf16>
}
