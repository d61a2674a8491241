// spyre-lower-to-bundle of a top-level assembly (torch.cat): a tensor.empty filled by
// tensor.insert_slice of compute results.  Each piece's copy writes its window of the
// one buffer in place: the output argument it is returned as, or the placement memory
// planning gave the copies; the reader reads the whole buffer.
// RUN: spyre-opt %s --split-input-file -p spyre-lower-to-bundle | %filecheck %s
// RUN: spyre-opt %s --split-input-file -p spyre-lower-to-bundle | spyre-opt --split-input-file | %filecheck %s

// Returned: both copies write the output, the second from column 64 (one stick of the
// [3, 8, 64] device tensor, 8 x 128 bytes in) with a back gap of the 64 columns it skips;
// split on 2 cores, its second core starts 4 rows (512 bytes) further.
func.func @main(%a: tensor<8x64xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<8x128xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<8x192xf16> {spyre.name = "cat"}) {
  %full = tensor.empty() : tensor<8x192xf16>
  %ca = spyre.pointwise "identity" (%a) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %part = tensor.insert_slice %ca into %full[0, 0] [8, 64] [1, 1] : tensor<8x64xf16> into tensor<8x192xf16>
  %cb = spyre.pointwise "identity" (%b) {core_splits = array<i64: 2, 1>} : (tensor<8x128xf16>) -> tensor<8x128xf16>
  %cat = tensor.insert_slice %cb into %part[0, 64] [8, 128] [1, 1] : tensor<8x128xf16> into tensor<8x192xf16>
  func.return %cat : tensor<8x192xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK-SAME: {index = 2 : i64, role = "output", name = "cat", nbytes = 3072 : i64
// CHECK-NOT: role = "pool"
// CHECK: %[[OUT:.*]] = sdscbundle.input_arg_extract value from %2
// CHECK-DAG: %[[OFF0:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[OUT0:.*]] = arith.addi %[[OUT]], %[[OFF0]] : index
// CHECK-DAG: %[[OFF1:.*]] = arith.constant 1536 : index
// CHECK-DAG: %[[OUT1:.*]] = arith.addi %[[OUT]], %[[OFF1]] : index
// CHECK: sdscbundle.sdsc_execute (%{{.*}}, %[[OUT]]) {sdsc_filename = "sdsc_0.json"
// CHECK-SAME: sizes = array<i64: 8, 64>
// CHECK-SAME: role = "output", {{.*}} device_size = array<i64: 3, 8, 64>, {{.*}} placement = #spyre.placement<hbm, arg 2>, core_offsets = array<i64: 0>, symbols = array<i64: -2>, back_gap = {mb = 0 : i64, out = 128 : i64}
// CHECK: sdscbundle.sdsc_execute (%{{.*}}, %{{.*}}, %[[OUT0]], %[[OUT1]]) {sdsc_filename = "sdsc_1.json"
// CHECK-SAME: sizes = array<i64: 8, 128>
// CHECK-SAME: role = "output", {{.*}} placement = #spyre.placement<hbm, arg 2>, core_offsets = array<i64: 1024, 1536>, symbols = array<i64: -5, -6>, back_gap = {mb = 0 : i64, out = 64 : i64}

// -----

// An intermediate: the copies carry the buffer's placement (pool 0), the second writes
// from row 64 (8192 bytes in); the exp reads the whole buffer.
func.func @main(%a: tensor<64x64xf16> {spyre.name = "a", spyre.role = "input"},
                %b: tensor<64x64xf16> {spyre.name = "b", spyre.role = "input"})
    -> (tensor<128x64xf16> {spyre.name = "exp"}) {
  %full = tensor.empty() : tensor<128x64xf16>
  %ca = spyre.pointwise "identity" (%a) {placement = #spyre.placement<hbm, pool 0>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %part = tensor.insert_slice %ca into %full[0, 0] [64, 64] [1, 1] : tensor<64x64xf16> into tensor<128x64xf16>
  %cb = spyre.pointwise "identity" (%b) {placement = #spyre.placement<hbm, pool 0>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %cat = tensor.insert_slice %cb into %part[64, 0] [64, 64] [1, 1] : tensor<64x64xf16> into tensor<128x64xf16>
  %e = spyre.pointwise "exp" (%cat) {placement = #spyre.placement<hbm, arg 2>} : (tensor<128x64xf16>) -> tensor<128x64xf16>
  func.return %e : tensor<128x64xf16>
}
// CHECK-LABEL: func.func @sdsc_bundle(
// CHECK-SAME: {index = 3 : i64, role = "pool", name = "pool", nbytes = 16384 : i64}
// CHECK: %[[POOL:.*]] = sdscbundle.input_arg_extract value from %3
// CHECK: %[[OFF:.*]] = arith.constant 8192 : index
// CHECK: %[[ROW64:.*]] = arith.addi %[[POOL]], %[[OFF]] : index
// CHECK: sdscbundle.sdsc_execute (%{{.*}}, %[[POOL]]) {sdsc_filename = "sdsc_0.json"
// CHECK-SAME: role = "output", {{.*}} device_size = array<i64: 1, 128, 64>, {{.*}} placement = #spyre.placement<hbm, pool 0>, core_offsets = array<i64: 0>, {{.*}} back_gap = {mb = 64 : i64, out = 0 : i64}
// CHECK: sdscbundle.sdsc_execute (%{{.*}}, %[[ROW64]]) {sdsc_filename = "sdsc_1.json"
// CHECK-SAME: placement = #spyre.placement<hbm, pool 0>, core_offsets = array<i64: 8192>
// CHECK: sdscbundle.sdsc_execute (%[[POOL]], %{{.*}}) {sdsc_filename = "sdsc_2.json"
// CHECK-SAME: op_func = "exp"
// CHECK-SAME: role = "input", {{.*}} placement = #spyre.placement<hbm, pool 0>, core_offsets = array<i64: 0>, {{.*}} back_gap = {}
