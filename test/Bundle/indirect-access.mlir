// Code generation of a table read through an index (an embedding of 2 x 100 token ids on 4
// cores): the index is KERNEL_IDX, in HBM only, listed in indirectAccessIndexLabeledDs_ and not
// among the inputs; index and table allocations name each other; the table's gathered dim
// carries the entry label "x" with scale_ -1, maxDimSizes_ 1 and a back gap of its other 999
// rows, and every core starts at the table's base (one symbol).  A work_div hint splits the
// 100 ids into their 4 sticks of 32 (unhinted, the cost model keeps each row's ids on one core:
// split, the cores would also gather the 28 padding entries of the last stick).
// RUN: spyre-opt %s -p 'spyre-compile{cores=4}' | %filecheck %s --check-prefix=SPEC
// RUN: spyre-compile %s -o %t.dir --force --cores 4
// RUN: %filecheck %s --check-prefix=JSON < %t.dir/sdsc_0.json

// SPEC: sdscbundle.sdsc_execute
// SPEC-SAME: labels = ["mb", "x", "out"], sizes = array<i64: 2, 128, 128>, valid_sizes = array<i64: 2, 100, 96>, splits = array<i64: 1, 4, 1>
// SPEC-SAME: {name = "Tensor0", role = "input", ds_type = "KERNEL_IDX", data_format = "IEEE_INT32", word_length = 4 : i64, device_size = array<i64: 4, 2, 32>, layout_labels = ["mb", "x"], stick_label = "x", stick_size = 32 : i64
// SPEC-SAME: {name = "Tensor1", role = "input", ds_type = "KERNEL", data_format = "SEN169_FP16", word_length = 2 : i64, device_size = array<i64: 2, 1000, 64>, layout_labels = ["x", "out"], stick_label = "out", stick_size = 64 : i64, scale = array<i64: -1, 1>, memory = "hbm", placement = #spyre.placement<hbm, arg 0>, core_offsets = array<i64: 0, 0, 0, 0>, symbols = array<i64: -5, -5, -5, -5>, back_gap = {out = 0 : i64, x = 999 : i64}}
// SPEC-SAME: indirect = {index = 0 : i64, table = 1 : i64, label = "x"}

// JSON:      "name_": "allocate-Tensor0_hbm",
// JSON:      "maxDimSizes_": [
// JSON-NEXT:   -1,
// JSON-NEXT:   -1
// JSON-NEXT: ],
// JSON-NEXT: "indirectAllocType_": "index_tensor",
// JSON-NEXT: "relatedIndirectAccessAlloc_": "allocate-Tensor1_hbm",
// JSON:      "name_": "allocate-Tensor1_hbm",
// JSON:      "layoutDimOrder_": [
// JSON-NEXT:   "x",
// JSON-NEXT:   "out"
// JSON-NEXT: ],
// JSON-NEXT: "maxDimSizes_": [
// JSON-NEXT:   1,
// JSON-NEXT:   -1
// JSON-NEXT: ],
// JSON-NEXT: "indirectAllocType_": "value_tensor",
// JSON-NEXT: "relatedIndirectAccessAlloc_": "allocate-Tensor0_hbm",
// JSON:      "backGapCore_": {
// JSON:        "x": {
// JSON-NEXT:     "-1": "999"
// JSON:      "name_": "allocate-Tensor2_hbm",
// JSON-NEXT: "prev_": "",
// JSON-NEXT: "ldsIdx_": 2,
// JSON-NEXT: "component_": "hbm",
// JSON-NEXT: "isStartAddrSymbolic_": 1,
// JSON-NEXT: "layoutDimOrder_": [
// JSON-NEXT:   "mb",
// JSON-NEXT:   "out",
// JSON-NEXT:   "x"
// JSON-NEXT: ],
// JSON-NEXT: "maxDimSizes_": [
// JSON-NEXT:   -1,
// JSON-NEXT:   -1,
// JSON-NEXT:   -1
// JSON-NEXT: ],
// JSON-NEXT: "indirectAllocType_": "no_indirection",
// JSON:      "labeledDs_": [
// JSON-NEXT:   {
// JSON-NEXT:     "ldsIdx_": 0,
// JSON-NEXT:     "dsName_": "Tensor0",
// JSON-NEXT:     "dsType_": "KERNEL_IDX",
// JSON:          "dataFormat_": "IEEE_INT32",
// JSON-NEXT:     "memOrg_": {
// JSON-NEXT:       "hbm": {
// JSON-NEXT:         "isPresent": 1
// JSON-NEXT:       }
// JSON-NEXT:     }
// JSON-NEXT:   },
// JSON:      "inputLabeledDs": [
// JSON-NEXT:   "Tensor1-idx1"
// JSON-NEXT: ],
// JSON-NEXT: "outputLabeledDs": [
// JSON-NEXT:   "Tensor2-idx2"
// JSON-NEXT: ],
// JSON-NEXT: "indirectAccessIndexLabeledDs_": [
// JSON-NEXT:   "Tensor0-idx0"
// JSON-NEXT: ]
func.func @main(%table: tensor<1000x96xf16> {spyre.role = "parameter", spyre.name = "table"},
                %ids: tensor<2x100xi32> {spyre.role = "input", spyre.name = "ids", spyre.dims = [["batch"], ["seq"]]}) -> tensor<2x100x96xf16> {
  %rows = spyre.pointwise "identity" (%ids, %table) {indirect_dim = 0 : i64, hints = [#spyre.hint<1, work_div = {seq = 4}>]} : (tensor<2x100xi32>, tensor<1000x96xf16>) -> tensor<2x100x96xf16>
  func.return %rows : tensor<2x100x96xf16>
}
