// spyre-stickify on imported seed programs: RoPE (views only, no
// restickify: every operand of the mul is driven by the innermost dim, the
// sum over dim 4 is a non-stick reduction), `x_1d.view(M, K) @ y` (A is read
// in place: its stick coordinate is K), and `a.t() @ b` (A forces a restickify,
// and spyre-stage-layouts's warning names the argument and the model line of
// the matmul).
// REQUIRES: torch
// RUN: %spyre-import %S/../../../examples/rope.py:build | %spyre-opt -p spyre-stickify | %filecheck %s --check-prefix=ROPE
// RUN: %spyre-import %S/../../../examples/wsr_matmul.py:build_view | %spyre-opt -p spyre-stickify | %filecheck %s --check-prefix=VIEW
// RUN: %spyre-import --mlir-print-debuginfo %S/../fold-views/Inputs/flatten.py:build_transposed_matmul | %spyre-opt -p spyre-stickify,spyre-stage-layouts 2>&1 | %filecheck %s --check-prefix=TMM

// ROPE-NOT:  spyre.restickify
// ROPE:      spyre.view %q {{.*}} -> tensor<2x256x32x128xf16, #spyre.layout<device_size = [256, 32, 2, 2, 64], dim_order = [0, 1, 2, 3], format = "SEN169_FP16">>
// ROPE:      spyre.pointwise "mul" {{.*}} -> tensor<2x256x32x2x2x64xf16, #spyre.layout<device_size = [256, 32, 2, 2, 1, 2, 64], dim_order = [0, 1, 2, 3, 4, 5], format = "SEN169_FP16">>
// ROPE:      spyre.reduce "sum" {{.*}} -> tensor<2x256x32x2x1x64xf16, #spyre.layout<device_size = [256, 32, 2, 1, 1, 2, 64], dim_order = [0, 1, 2, 3, 4, 5], format = "SEN169_FP16">>
// ROPE-NOT:  spyre.restickify

// VIEW-NOT:  spyre.restickify
// VIEW:      spyre.view %x_1d {{.*}} -> tensor<64x256xf16, #spyre.layout<device_size = [4, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// VIEW:      spyre.matmul {{.*}} -> tensor<64x128xf16, #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// VIEW-NOT:  spyre.restickify

// TMM:       flatten.py:25:5: warning: function argument 'a' (#0) is copied by spyre.restickify to dim_order [1, 0]
// TMM:       %[[AK:.*]] = spyre.restickify (%a) {{.*}} -> tensor<256x64xf16, #spyre.layout<device_size = [4, 64, 64], dim_order = [1, 0], format = "SEN169_FP16">>
// TMM-NEXT:  %[[AT:.*]] = spyre.view %[[AK]]
// TMM-NEXT:  spyre.matmul (%[[AT]], %b)
