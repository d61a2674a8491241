// spyre-pad-dims pads a dim no split fills the cores with: SwiGLU's intermediate
// of 50 sticks splits at best 2 ways on 4 cores (25 sticks per core); padded to
// 52 sticks, each of 4 cores takes 13.  silu, mul and the down projection's K
// iterate the padding; the gate and up projections (the group's edge) write their
// valid part, and their results' padding comes from zeroed buffers (constant
// arguments the runtime fills with 0, `spyre.constants`); the down
// weight, a parameter, is staged with zero rows.  Over 256 rows the silu's and
// the mul's results (1.6 MiB each) do not fit one core's LX whole; over 128,
// each core computing them whole (replicated by spyre-work-division) feeds a
// down projection split N 4 ways, faster than the padding.
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-stickify,spyre-pad-dims' | %filecheck %s
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=4},spyre-stickify,spyre-pad-dims,spyre-work-division,spyre-plan-memory' | %filecheck %s --check-prefix=PLAN
// RUN: %spyre-opt %s -p 'spyre-attach-target{cores=1},spyre-stickify,spyre-pad-dims' | %filecheck %s --check-prefix=ONE

// CHECK-LABEL: func.func @swiglu
// CHECK-SAME:    %wd: tensor<3200x256xf16, #spyre.layout<device_size = [4, 3328, 64]
// CHECK:         %g = spyre.matmul (%x, %wg) : {{.*}} -> tensor<256x3200xf16, #spyre.layout<device_size = [52, 256, 64]
// CHECK-NEXT:    %s = spyre.pointwise "silu" (%g) {iteration_space = array<i64: 256, 3328>
// CHECK-NEXT:    %u = spyre.matmul (%x, %wu) : {{.*}} -> tensor<256x3200xf16, #spyre.layout<device_size = [52, 256, 64]
// CHECK-NEXT:    %m = spyre.pointwise "mul" (%s, %u) {iteration_space = array<i64: 256, 3328>
// CHECK-NEXT:    %y = spyre.matmul (%m, %wd) {iteration_space = array<i64: 256, 256, 3328>

// PLAN-LABEL: func.func @swiglu
// PLAN-SAME:     spyre.constants = [{type = tensor<256x3200xf16, #spyre.layout<device_size = [52, 256, 64], {{.*}}>>, fill = 0.000000e+00 : f64, counts = []}, {type = tensor<256x3200xf16, #spyre.layout<device_size = [52, 256, 64], {{.*}}>>, fill = 0.000000e+00 : f64, counts = []}]
// PLAN:         %g = spyre.matmul (%x, %wg) {{{.*}}placement = #spyre.placement<hbm, arg 5>}
// PLAN-NEXT:    %s = spyre.pointwise "silu" (%g) {{{.*}}core_splits = array<i64: 1, 4>, placement = #spyre.placement<lx,
// PLAN-NEXT:    %u = spyre.matmul (%x, %wu) {{{.*}}placement = #spyre.placement<hbm, arg 6>}
// PLAN-NEXT:    %m = spyre.pointwise "mul" (%s, %u) {{{.*}}core_splits = array<i64: 1, 4>, placement = #spyre.placement<lx,
// PLAN-NEXT:    %y = spyre.matmul (%m, %wd) {{{.*}}core_splits = array<i64: 1, 1, 4>

// ONE-LABEL: func.func @swiglu
// ONE-NOT:     iteration_space
// ONE-NOT:     3328
// ONE:         func.return
func.func @swiglu(%x: tensor<256x256xf16> {spyre.role = "input"}, %wg: tensor<256x3200xf16> {spyre.role = "parameter"},
                  %wu: tensor<256x3200xf16> {spyre.role = "parameter"}, %wd: tensor<3200x256xf16> {spyre.role = "parameter"})
    -> tensor<256x256xf16> {
  %g = spyre.matmul (%x, %wg) : (tensor<256x256xf16>, tensor<256x3200xf16>) -> tensor<256x3200xf16>
  %s = spyre.pointwise "silu" (%g) : (tensor<256x3200xf16>) -> tensor<256x3200xf16>
  %u = spyre.matmul (%x, %wu) : (tensor<256x256xf16>, tensor<256x3200xf16>) -> tensor<256x3200xf16>
  %m = spyre.pointwise "mul" (%s, %u) : (tensor<256x3200xf16>, tensor<256x3200xf16>) -> tensor<256x3200xf16>
  %y = spyre.matmul (%m, %wd) : (tensor<256x3200xf16>, tensor<3200x256xf16>) -> tensor<256x256xf16>
  func.return %y : tensor<256x256xf16>
}
