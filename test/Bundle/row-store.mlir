// Code generation of a row store (a KV-cache update: one new position of a [1, 2, 64, 16]
// cache, written at the position the int32 index holds).  The result updates the buffer
// argument in place (spyre.updates): it is placed in that argument (no output of its own),
// the manifest marks the buffer written, and the SDSC output is the cache itself, the value
// tensor the index addresses: its stored dim "y" has scale_ -1, maxDimSizes_ 1 and a back gap
// of the other 63 rows; the destination operand is no SDSC tensor of its own.
// RUN: spyre-opt %s -p 'spyre-compile{cores=4}' | %filecheck %s --check-prefix=SPEC
// RUN: spyre-compile %s -o %t.dir --force --cores 4
// RUN: %filecheck %s --check-prefix=JSON < %t.dir/sdsc_0.json
// RUN: %filecheck %s --check-prefix=MANIFEST < %t.dir/manifest.json

func.func @main(%cache: tensor<1x2x64x16xf32> {spyre.role = "buffer", spyre.name = "key_cache_0"},
                %pos: tensor<1xi32> {spyre.role = "input", spyre.name = "pos"},
                %rows: tensor<1x2x1x16xf32> {spyre.role = "input", spyre.name = "rows"})
    -> (tensor<1x2x64x16xf32> {spyre.updates = "key_cache_0"}) {
  %k = spyre.pointwise "identity" (%pos, %rows, %cache) {scatter_dim = 2 : i64} : (tensor<1xi32>, tensor<1x2x1x16xf32>, tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  func.return %k : tensor<1x2x64x16xf32>
}

// SPEC-LABEL: func.func @sdsc_bundle
// SPEC-SAME: spyre.kernel_args = [{index = 0 : i64, role = "buffer", name = "key_cache_0", {{.*}}, written}, {index = 1 : i64, role = "input", name = "pos", {{.*}}}, {index = 2 : i64, role = "input", name = "rows", {{.*}}}]
// SPEC: sdscbundle.sdsc_execute
// SPEC-SAME: labels = ["mb", "x", "y", "out"], sizes = array<i64: 1, 2, 1, 32>, valid_sizes = array<i64: 1, 2, 1, 16>
// SPEC-SAME: {name = "Tensor0", role = "input", ds_type = "KERNEL_IDX", data_format = "IEEE_INT32"
// SPEC-SAME: {name = "Tensor1", role = "input", ds_type = "OUTPUT", {{.*}}, placement = #spyre.placement<hbm, arg 2>
// SPEC-SAME: {name = "Tensor2", role = "output", ds_type = "OUTPUT", {{.*}}, device_size = array<i64: 2, 64, 1, 1, 32>, layout_labels = ["mb", "out", "y", "x"], stick_label = "out", stick_size = 32 : i64, scale = array<i64: 1, 1, -1, 1>, memory = "hbm", placement = #spyre.placement<hbm, arg 0>, core_offsets = array<i64: 0>, symbols = array<i64: -3>, back_gap = {mb = 0 : i64, out = 0 : i64, x = 0 : i64, y = 63 : i64}}
// SPEC-SAME: indirect = {index = 0 : i64, table = 2 : i64, label = "y"}

// JSON:      "name_": "allocate-Tensor0_hbm",
// JSON:      "indirectAllocType_": "index_tensor",
// JSON-NEXT: "relatedIndirectAccessAlloc_": "allocate-Tensor2_hbm",
// JSON:      "name_": "allocate-Tensor1_hbm",
// JSON:      "indirectAllocType_": "no_indirection",
// JSON:      "name_": "allocate-Tensor2_hbm",
// JSON:      "maxDimSizes_": [
// JSON-NEXT:   -1,
// JSON-NEXT:   -1,
// JSON-NEXT:   1,
// JSON-NEXT:   -1
// JSON-NEXT: ],
// JSON-NEXT: "indirectAllocType_": "value_tensor",
// JSON-NEXT: "relatedIndirectAccessAlloc_": "allocate-Tensor0_hbm",
// JSON:      "inputLabeledDs": [
// JSON-NEXT:   "Tensor1-idx1"
// JSON-NEXT: ],
// JSON-NEXT: "outputLabeledDs": [
// JSON-NEXT:   "Tensor2-idx2"
// JSON-NEXT: ],
// JSON-NEXT: "indirectAccessIndexLabeledDs_": [
// JSON-NEXT:   "Tensor0-idx0"
// JSON-NEXT: ]

// MANIFEST:      "name": "key_cache_0",
// MANIFEST-NEXT: "nbytes": 16384,
// MANIFEST-NEXT: "role": "buffer",
// MANIFEST-NEXT: "shape": [
// MANIFEST:      "written": true
// MANIFEST-NOT:  "role": "output"
