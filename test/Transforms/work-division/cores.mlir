// The core count is the module's #spyre.target (spyre-attach-target), else 32;
// the pass never reads SENCORES.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division' | %filecheck %s --check-prefix=FOUR
// RUN: env SENCORES=1 %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-work-division' | %filecheck %s --check-prefix=FOUR
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=8},spyre-work-division' | %filecheck %s --check-prefix=EIGHT
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=8}' | %spyre-opt -p spyre-work-division | %filecheck %s --check-prefix=EIGHT
// RUN: env SENCORES=4 %spyre-opt %s -p spyre-work-division | %filecheck %s --check-prefix=ALL
// RUN: env SENCORES=64 %spyre-opt %s -p spyre-work-division | %filecheck %s --check-prefix=ALL

// [100, 150] fp16: 100 rows, 150 columns = 3 padded sticks.  4 cores: rows 4;
// 8 cores: the largest divisor of 100 up to 8 is 5, the 1 core left is not used;
// 32 cores: rows 25.
// FOUR-LABEL:  func.func @add_100x150
// FOUR:          spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 4, 1>}
// EIGHT-LABEL: func.func @add_100x150
// EIGHT:         spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 5, 1>}
// ALL-LABEL:   func.func @add_100x150
// ALL:           spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 25, 1>}
func.func @add_100x150(%a: tensor<100x150xf16>, %b: tensor<100x150xf16>) -> tensor<100x150xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<100x150xf16>, tensor<100x150xf16>) -> tensor<100x150xf16>
  func.return %y : tensor<100x150xf16>
}

// [7, 8, 192] fp32: sizes 7, 8 and 6 sticks; the 8 goes first.  4 and 8 cores:
// the 8 takes them all; 32 cores: the 8 takes 8, the 7 has no divisor in 2..4
// left, the 6 sticks take 3.
// FOUR:          spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 4, 1>}
// EIGHT:         spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 8, 1>}
// ALL:           spyre.pointwise "exp" (%{{.*}}) {core_splits = array<i64: 1, 8, 3>}
func.func @exp_fp32(%a: tensor<7x8x192xf32>) -> tensor<7x8x192xf32> {
  %y = spyre.pointwise "exp" (%a) : (tensor<7x8x192xf32>) -> tensor<7x8x192xf32>
  func.return %y : tensor<7x8x192xf32>
}
