// A matmul reads a value of a leading size-1 dim dropped by a view: after
// spyre-fold-views its indexing map holds the constant 0 there.  That is a
// batch of one, read whole on each core, not a broadcast: the value may live
// in LX.  A pointwise op reading a value through a broadcast (its row repeated)
// on the one core that wrote it may read it from LX too.
// RUN: %spyre-opt %s --split-input-file -p 'spyre-attach-target{cores=1},spyre-stickify,spyre-fold-views,spyre-work-division,spyre-plan-memory' | %filecheck %s

// CHECK-LABEL: func.func @batch_of_one
// CHECK:         %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
// CHECK:         spyre.matmul (%x, %{{.*}}) {{.*}}indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d2)>
func.func @batch_of_one(%a: tensor<1x64x128xf16>, %w: tensor<128x64xf16>) -> tensor<64x64xf16> {
  %x = spyre.pointwise "exp" (%a) : (tensor<1x64x128xf16>) -> tensor<1x64x128xf16>
  %v = spyre.view %x affine_map<(d0, d1) -> (0, d0, d1)> : tensor<1x64x128xf16> -> tensor<64x128xf16>
  %m = spyre.matmul (%v, %w) : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  func.return %m : tensor<64x64xf16>
}

// -----

// CHECK-LABEL: func.func @broadcast_rows
// CHECK:         %x = spyre.pointwise "exp" {{.*}}placement = #spyre.placement<lx, 0>
func.func @broadcast_rows(%a: tensor<1x128xf16>, %b: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %x = spyre.pointwise "exp" (%a) : (tensor<1x128xf16>) -> tensor<1x128xf16>
  %y = spyre.pointwise "add" (%b, %x) : (tensor<64x128xf16>, tensor<1x128xf16>) -> tensor<64x128xf16>
  func.return %y : tensor<64x128xf16>
}
