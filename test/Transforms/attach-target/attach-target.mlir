// spyre-attach-target writes the module's #spyre.target (DESIGN §14); an option
// not given keeps the module's value, else the default (32 cores, LX fraction 0.2).
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4}' | %filecheck %s --check-prefix=FOUR
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4 lx-fraction=0.5}' | %filecheck %s --check-prefix=BOTH
// RUN: %spyre-opt %s --split-input-file -p spyre-attach-target | %filecheck %s --check-prefix=KEEP
// Its output round-trips, and attaching the same target again changes nothing.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4}' > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p 'spyre-attach-target{cores=4}' | diff %t.once.mlir -
// The passes after it read the target, never SENCORES.
// RUN: env SENCORES=1 %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-work-division' | %filecheck %s --check-prefix=DIVIDE
// RUN: env SENCORES=1 %spyre-opt %s --split-input-file -p spyre-work-division | %filecheck %s --check-prefix=MODULE

// A module without a target.
// FOUR-LABEL:  builtin.module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.2>}
// FOUR-NEXT:     func.func @no_target
// BOTH-LABEL:  builtin.module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.5>}
// BOTH-NEXT:     func.func @no_target
// KEEP-LABEL:  builtin.module attributes {spyre.target = #spyre.target<cores = 32, lx_fraction = 0.2>}
// KEEP-NEXT:     func.func @no_target
// DIVIDE-LABEL: func.func @no_target
// DIVIDE:         spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 4, 1>}
// MODULE-LABEL: func.func @no_target
// MODULE:         spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 32, 1>}
func.func @no_target(%a: tensor<256x128xf16>, %b: tensor<256x128xf16>) -> tensor<256x128xf16> {
  %y = spyre.pointwise "add" (%a, %b) : (tensor<256x128xf16>, tensor<256x128xf16>) -> tensor<256x128xf16>
  func.return %y : tensor<256x128xf16>
}

// -----

// A module with a target: the options given replace its values, the others stay.
// FOUR-LABEL:  builtin.module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.1>}
// FOUR-NEXT:     func.func @with_target
// BOTH-LABEL:  builtin.module attributes {spyre.target = #spyre.target<cores = 4, lx_fraction = 0.5>}
// BOTH-NEXT:     func.func @with_target
// KEEP-LABEL:  builtin.module attributes {spyre.target = #spyre.target<cores = 8, lx_fraction = 0.1>}
// KEEP-NEXT:     func.func @with_target
// DIVIDE-LABEL: func.func @with_target
// DIVIDE:         spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 4, 1>}
// MODULE-LABEL: func.func @with_target
// MODULE:         spyre.pointwise "add" (%{{.*}}, %{{.*}}) {core_splits = array<i64: 8, 1>}
module attributes {spyre.target = #spyre.target<cores = 8, lx_fraction = 0.1>} {
  func.func @with_target(%a: tensor<256x128xf16>, %b: tensor<256x128xf16>) -> tensor<256x128xf16> {
    %y = spyre.pointwise "add" (%a, %b) : (tensor<256x128xf16>, tensor<256x128xf16>) -> tensor<256x128xf16>
    func.return %y : tensor<256x128xf16>
  }
}
