// Code generation of blocks of rows (index_step): a [1, 2, 128, 16] cache sticked on its 128
// positions is read and written one block of 64 positions (one stick) at a time, at the block
// the int32 index holds.  The table's position dim is two labels: the row inside the block
// ("i", the stick label) and, outside it, the block the index addresses ("y": scale_ -1,
// maxDimSizes_ 1, a back gap of the other block), so that each access moves whole sticks.
// RUN: spyre-opt %s -p 'spyre-compile{cores=4}' | %filecheck %s --check-prefix=SPEC
// RUN: spyre-compile %s -o %t.dir --force --cores 4
// RUN: %filecheck %s --check-prefix=JSON < %t.dir/sdsc_2.json

#P = #spyre.layout<device_size = [2, 16, 2, 1, 64], dim_order = [0, 1, 3, 2], format = "SEN169_FP16">

func.func @main(%cache: tensor<1x2x128x16xf16, #P> {spyre.role = "buffer", spyre.name = "key_cache_0"},
                %blk: tensor<1xi32> {spyre.role = "input", spyre.name = "blk"},
                %rows: tensor<1x2x1x64x16xf16> {spyre.role = "input", spyre.name = "rows"})
    -> (tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16, #P> {spyre.updates = "key_cache_0"}) {
  %block = spyre.pointwise "identity" (%blk, %cache) {indirect_dim = 2 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<1x2x128x16xf16, #P>) -> tensor<1x2x1x64x16xf16>
  %new = spyre.pointwise "identity" (%blk, %rows, %cache) {scatter_dim = 2 : i64, index_step = 64 : i64} : (tensor<1xi32>, tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16, #P>) -> tensor<1x2x128x16xf16, #P>
  func.return %block, %new : tensor<1x2x1x64x16xf16>, tensor<1x2x128x16xf16, #P>
}

// The rows are sticked on the row inside the block, as the cache is.
// SPEC-LABEL: func.func @sdsc_bundle
// SPEC:       sdsc_filename = "sdsc_0.json"
// SPEC-SAME:  op_func = "ReStickifyOpHBM"
// SPEC-SAME:  {name = "Tensor1", role = "output", {{.*}}, layout_labels = ["mb", "i", "out", "y", "x"], stick_label = "i"
// SPEC:       sdsc_filename = "sdsc_1.json"
// SPEC-SAME:  labels = ["mb", "x", "y", "i", "out"], sizes = array<i64: 1, 2, 1, 64, 16>
// SPEC-SAME:  {name = "Tensor0", role = "input", ds_type = "KERNEL_IDX", data_format = "IEEE_INT32", {{.*}}, layout_labels = ["y"], stick_label = "y"
// SPEC-SAME:  {name = "Tensor1", role = "input", {{.*}}, device_size = array<i64: 2, 16, 2, 1, 64>, layout_labels = ["mb", "i", "y", "out", "x"], stick_label = "i", stick_size = 64 : i64, scale = array<i64: 1, 1, -1, 1, 1>, memory = "hbm", placement = #spyre.placement<hbm, arg 0>, {{.*}}, back_gap = {mb = 0 : i64, i = 0 : i64, out = 0 : i64, x = 0 : i64, y = 1 : i64}}
// SPEC-SAME:  indirect = {index = 0 : i64, table = 1 : i64, label = "y"}
// SPEC:       sdsc_filename = "sdsc_2.json"
// SPEC-SAME:  {name = "Tensor2", role = "output", {{.*}}, layout_labels = ["mb", "i", "y", "out", "x"], stick_label = "i", stick_size = 64 : i64, scale = array<i64: 1, 1, -1, 1, 1>, memory = "hbm", placement = #spyre.placement<hbm, arg 0>, {{.*}}, back_gap = {mb = 0 : i64, i = 0 : i64, out = 0 : i64, x = 0 : i64, y = 1 : i64}}
// SPEC-SAME:  indirect = {index = 0 : i64, table = 2 : i64, label = "y"}

// JSON:      "name_": "allocate-Tensor2_hbm",
// JSON:      "maxDimSizes_": [
// JSON-NEXT:   -1,
// JSON-NEXT:   -1,
// JSON-NEXT:   1,
// JSON-NEXT:   -1,
// JSON-NEXT:   -1
// JSON-NEXT: ],
// JSON-NEXT: "indirectAllocType_": "value_tensor",
// JSON-NEXT: "relatedIndirectAccessAlloc_": "allocate-Tensor0_hbm",
