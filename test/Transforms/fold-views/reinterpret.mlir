// spyre-fold-views rule 7: a pointwise result that only a view copy reads takes the
// order of its dims around the stick that makes the copy move no byte.  Attention's
// output [1, H, L, D], read as [L, H * D] by the output projection, is laid out with
// dim order [2, 0, 1, 3] (device order H, D-sticks, L): its bytes are then those of
// the [L, H * D] copy, so spyre-plan-memory gives the copy's result its operand's
// buffer and spyre-lower-to-bundle runs nothing for it.  A cast tiled in a loop is
// assembled in its loop's buffer, which the copy's result takes.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify,spyre-stage-layouts,spyre-fold-views 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=4},spyre-propagate-named-dims,spyre-stickify,spyre-stage-layouts,spyre-fold-views,spyre-coarse-tile,spyre-work-division,spyre-plan-memory' 2>/dev/null | %filecheck %s --check-prefix=PLAN
// RUN: %spyre-opt %s --split-input-file -p 'spyre-compile{cores=4}' 2>/dev/null | %filecheck %s --check-prefix=BUNDLE

// CHECK-LABEL: func.func @heads_of_128
// CHECK:         %[[CAST:.*]] = spyre.pointwise "identity" (%{{.*}}) : (tensor<1x4x64x128xf32, {{.*}}) -> tensor<1x4x64x128xf16, #spyre.layout<device_size = [1, 4, 2, 64, 64], dim_order = [2, 0, 1, 3], format = "SEN169_FP16">>
// CHECK-NEXT:    %[[COPY:.*]] = spyre.restickify (%[[CAST]]) {iteration_space = array<i64: 64, 128, 4>, indexing_maps = [affine_map<(d0, d1, d2) -> (0, d2, d0, d1)>, affine_map<(d0, d1, d2) -> (d0, ((d2 * 128) + d1))>]}
// CHECK-SAME:      -> tensor<64x512xf16, #spyre.layout<device_size = [8, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.matmul (%[[COPY]], %{{.*}})
// PLAN-LABEL: func.func @heads_of_128
// PLAN:         spyre.pointwise "identity" {{.*}}placement = #spyre.placement<hbm, pool [[OFFSET:[0-9]+]]>
// PLAN-NEXT:    spyre.restickify {{.*}}placement = #spyre.placement<hbm, pool [[OFFSET]]>
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-COUNT-3: sdscbundle.sdsc_execute
// BUNDLE-NOT:   sdscbundle.sdsc_execute
// BUNDLE-NOT:   ReStickifyOpHBM
// BUNDLE:       func.return
func.func @heads_of_128(%o: tensor<1x4x64x128xf32>, %w: tensor<256x512xf16>) -> tensor<64x256xf16> {
  %c = spyre.pointwise "identity" (%o) : (tensor<1x4x64x128xf32>) -> tensor<1x4x64x128xf16>
  %t = spyre.view %c affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)> : tensor<1x4x64x128xf16> -> tensor<1x64x4x128xf16>
  %r = spyre.view %t affine_map<(d0, d1) -> (0, d0, d1 floordiv 128, d1 mod 128)> : tensor<1x64x4x128xf16> -> tensor<64x512xf16>
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<256x512xf16> -> tensor<512x256xf16>
  %y = spyre.matmul (%r, %wt) : (tensor<64x512xf16>, tensor<512x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// -----

// Heads of one stick (64 fp16 elements) need no other order: device order H, L,
// D-sticks is already the copy's K-sticks, L.
// CHECK-LABEL: func.func @heads_of_64
// CHECK:         spyre.pointwise "identity" (%{{.*}}) : (tensor<1x4x64x64xf32, {{.*}}) -> tensor<1x4x64x64xf16, #spyre.layout<device_size = [4, 64, 1, 1, 64], dim_order = [0, 1, 2, 3], format = "SEN169_FP16">>
// CHECK-NEXT:    spyre.restickify
// PLAN-LABEL: func.func @heads_of_64
// PLAN:         spyre.pointwise "identity" {{.*}}placement = #spyre.placement<hbm, pool [[OFFSET:[0-9]+]]>
// PLAN-NEXT:    spyre.restickify {{.*}}placement = #spyre.placement<hbm, pool [[OFFSET]]>
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-COUNT-3: sdscbundle.sdsc_execute
// BUNDLE-NOT:   sdscbundle.sdsc_execute
// BUNDLE:       func.return
func.func @heads_of_64(%o: tensor<1x4x64x64xf32>, %w: tensor<256x256xf16>) -> tensor<64x256xf16> {
  %c = spyre.pointwise "identity" (%o) : (tensor<1x4x64x64xf32>) -> tensor<1x4x64x64xf16>
  %t = spyre.view %c affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)> : tensor<1x4x64x64xf16> -> tensor<1x64x4x64xf16>
  %r = spyre.view %t affine_map<(d0, d1) -> (0, d0, d1 floordiv 64, d1 mod 64)> : tensor<1x64x4x64xf16> -> tensor<64x256xf16>
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<256x256xf16> -> tensor<256x256xf16>
  %y = spyre.matmul (%r, %wt) : (tensor<64x256xf16>, tensor<256x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}

// -----

// A result that another op reads too keeps its order, and its copy runs.
// CHECK-LABEL: func.func @read_twice
// CHECK:         %[[CAST:.*]] = spyre.pointwise "identity" (%{{.*}}) : (tensor<1x4x64x128xf32, {{.*}}) -> tensor<1x4x64x128xf16, #spyre.layout<device_size = [4, 64, 2, 1, 64], dim_order = [0, 1, 2, 3], format = "SEN169_FP16">>
// CHECK:         spyre.restickify (%[[CAST]]) {iteration_space
// PLAN-LABEL: func.func @read_twice
// PLAN:         spyre.pointwise "identity" {{.*}}placement = #spyre.placement<hbm, pool [[OFFSET:[0-9]+]]>
// PLAN-NOT:     spyre.restickify {{.*}}placement = #spyre.placement<hbm, pool [[OFFSET]]>
// PLAN:         spyre.matmul
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-COUNT-5: sdscbundle.sdsc_execute
// BUNDLE-NOT:   sdscbundle.sdsc_execute
// BUNDLE:       func.return
func.func @read_twice(%o: tensor<1x4x64x128xf32>, %w: tensor<256x512xf16>) -> (tensor<64x256xf16>, tensor<1x4x64x128xf16>) {
  %c = spyre.pointwise "identity" (%o) : (tensor<1x4x64x128xf32>) -> tensor<1x4x64x128xf16>
  %e = spyre.pointwise "exp" (%c) : (tensor<1x4x64x128xf16>) -> tensor<1x4x64x128xf16>
  %t = spyre.view %c affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)> : tensor<1x4x64x128xf16> -> tensor<1x64x4x128xf16>
  %r = spyre.view %t affine_map<(d0, d1) -> (0, d0, d1 floordiv 128, d1 mod 128)> : tensor<1x64x4x128xf16> -> tensor<64x512xf16>
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<256x512xf16> -> tensor<512x256xf16>
  %y = spyre.matmul (%r, %wt) : (tensor<64x512xf16>, tensor<512x256xf16>) -> tensor<64x256xf16>
  func.return %y, %e : tensor<64x256xf16>, tensor<1x4x64x128xf16>
}

// -----

// The cast tiled over L (a tiles hint): its tiles are written into its loop's buffer in
// the new order, and the copy's result takes that buffer.
// CHECK-LABEL: func.func @tiled_heads
// CHECK:         spyre.pointwise "identity" (%{{.*}}) {{.*}} -> tensor<1x4x64x128xf16, #spyre.layout<device_size = [1, 4, 2, 64, 64], dim_order = [2, 0, 1, 3], format = "SEN169_FP16">>
// PLAN-LABEL: func.func @tiled_heads
// PLAN:         %[[HEADS:.*]] = scf.for
// PLAN:         } {spyre.buffers = [#spyre.placement<hbm, pool [[BUFFER:[0-9]+]]>]}
// PLAN-NEXT:    spyre.restickify (%[[HEADS]]) {{.*}}placement = #spyre.placement<hbm, pool [[BUFFER]]>
// BUNDLE-LABEL: func.func @sdsc_bundle
// BUNDLE-COUNT-3: sdscbundle.sdsc_execute
// BUNDLE-NOT:   sdscbundle.sdsc_execute
// BUNDLE:       func.return
func.func @tiled_heads(%o: tensor<1x4x64x128xf32> {spyre.dims = [["B"], ["H"], ["L"], ["D"]]}, %w: tensor<256x512xf16>) -> tensor<64x256xf16> {
  %c = spyre.pointwise "identity" (%o) {hints = [#spyre.hint<1, tiles = {L = 2}>]} : (tensor<1x4x64x128xf32>) -> tensor<1x4x64x128xf16>
  %t = spyre.view %c affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)> : tensor<1x4x64x128xf16> -> tensor<1x64x4x128xf16>
  %r = spyre.view %t affine_map<(d0, d1) -> (0, d0, d1 floordiv 128, d1 mod 128)> : tensor<1x64x4x128xf16> -> tensor<64x512xf16>
  %wt = spyre.view %w affine_map<(d0, d1) -> (d1, d0)> : tensor<256x512xf16> -> tensor<512x256xf16>
  %y = spyre.matmul (%r, %wt) : (tensor<64x512xf16>, tensor<512x256xf16>) -> tensor<64x256xf16>
  func.return %y : tensor<64x256xf16>
}
