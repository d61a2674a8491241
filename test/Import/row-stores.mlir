// A buffer the program mutates (torch.export's buffer mutations) is state: index_copy_ and an
// indexed assignment (index_put_) into it import as row stores, spyre.pointwise "identity" with
// scatter_dim, the rows written in place at the positions an int32 index holds, and the function
// returns the buffer's new value as the update of its argument (spyre.updates).  A buffer the
// program only overwrites, never reads, is no state: its write is dropped.  A cache the model
// writes through a plain object, which non-strict torch.export lifts as a constant, is read as
// the buffer it is (transformers' static-cache export recipe does this).
// REQUIRES: torch
// RUN: %spyre-import %S/Inputs/row_stores.py:build_index_copy | %filecheck %s --check-prefix=COPY
// RUN: %spyre-import %S/Inputs/row_stores.py:build_index_copy | %spyre-opt | %filecheck %s --check-prefix=COPY
// RUN: %spyre-import %S/Inputs/row_stores.py:build_index_put | %filecheck %s --check-prefix=PUT
// RUN: %spyre-import %S/Inputs/row_stores.py:build_aliased | %filecheck %s --check-prefix=ALIASED
// RUN: not %spyre-import %S/Inputs/row_stores.py:build_accumulate 2>&1 | %filecheck %s --check-prefix=ACCUMULATE
// RUN: %spyre-import %S/Inputs/row_stores.py:build_attended | %filecheck %s --check-prefix=BLOCK
// RUN: %spyre-import %S/Inputs/row_stores.py:build_prompt_run | %filecheck %s --check-prefix=SPAN
// RUN: %spyre-import %S/Inputs/row_stores.py:build_prompt_blocks | %filecheck %s --check-prefix=WHOLE
// RUN: not %spyre-import %S/Inputs/row_stores.py:build_prompt_past_the_cache 2>&1 | %filecheck %s --check-prefix=PAST

// COPY-LABEL: func.func @main(%b_keys: tensor<1x2x16x32xf32> {spyre.role = "buffer", spyre.name = "b_keys", spyre.target = "keys"}, %rows: tensor<1x2x1x32xf32> {{.*}}, %position: tensor<1xi32> {spyre.role = "input", spyre.name = "position", spyre.range = array<i64: 0, 16>}) -> (tensor<1x2x16x32xf32> {spyre.updates = "b_keys"}, tensor<1x2x16xf32> {spyre.name = "sum_1"})
// COPY-NEXT:    %[[ROWS:.*]] = spyre.pointwise "mul" (%rows) consts {y = 2.000000e+00 : f64}
// COPY-NEXT:    %[[KEYS:.*]] = spyre.pointwise "identity" (%position, %[[ROWS]], %b_keys) {scatter_dim = 2 : i64} : (tensor<1xi32>, tensor<1x2x1x32xf32>, tensor<1x2x16x32xf32>) -> tensor<1x2x16x32xf32>
// COPY-NEXT:    %[[SUM:.*]] = spyre.reduce "sum" (%[[KEYS]]) dims [3]
// COPY-NEXT:    func.return %[[KEYS]], %[[SUM]]

// PUT-LABEL: func.func @main(%b_keys: {{.*}}, %b_values: {{.*}}, %rows: {{.*}}, %position: {{.*}}) -> (tensor<1x2x16x32xf32> {spyre.updates = "b_keys"}, tensor<1x2x16x32xf32> {spyre.updates = "b_values"}, tensor<1x2x16x32xf32> {spyre.name = "add"})
// PUT-NOT:       b_scale
// PUT:           %[[KEYS:.*]] = spyre.pointwise "identity" (%position, %{{.*}}, %b_keys) {scatter_dim = 2 : i64}
// PUT:           %[[VALUES:.*]] = spyre.pointwise "identity" (%position, %{{.*}}, %b_values) {scatter_dim = 2 : i64}
// PUT-NEXT:      %[[SUM:.*]] = spyre.pointwise "add" (%[[KEYS]], %[[VALUES]])
// PUT-NEXT:      func.return %[[KEYS]], %[[VALUES]], %[[SUM]]

// ALIASED-LABEL: func.func @main(%b_keys: tensor<2x16x32xf32> {spyre.role = "buffer", spyre.name = "b_keys", spyre.target = "keys"}
// ALIASED-SAME:  -> (tensor<2x16x32xf32> {spyre.updates = "b_keys"}, tensor<2x16x32xf32> {spyre.name = "mul"})
// ALIASED-NEXT:    %[[KEYS:.*]] = spyre.pointwise "identity" (%position, %rows, %b_keys) {scatter_dim = 1 : i64}
// ALIASED-NEXT:    %[[TWICE:.*]] = spyre.pointwise "mul" (%[[KEYS]])
// ALIASED-NEXT:    func.return %[[KEYS]], %[[TWICE]]

// ACCUMULATE: row_stores.py:52: error: unsupported ATen op 'aten.index_put.default': accumulating into indexed rows (accumulate=True) is not supported
// ACCUMULATE-NOT: Traceback

// One position of an input of known range into a dim of whole sticks (64 float32 positions, two
// sticks of 32) is stored as the block of 32 rows holding it: the block number (a float table of
// the position's values, converted to an index) is read, the new row put in it by a where on the
// one-hot row of another table, and the block written back (index_step 32), so that spyre-stickify
// may stick the cache on its positions.
// BLOCK-LABEL: func.func @main(
// BLOCK-SAME:    %b_keys: tensor<1x2x64x32xf32> {{.*}}, %rows: tensor<1x2x1x32xf32> {{.*}}, %position: tensor<1xi32> {{.*}}spyre.range = array<i64: 0, 64>}, %[[BLOCKS:.*]]: tensor<64x1xf32> {spyre.role = "constant", {{.*}}}, %[[ONEHOT:.*]]: tensor<64x32xf32> {spyre.role = "constant", {{.*}}})
// BLOCK-NEXT:    %[[NUMBER:.*]] = spyre.pointwise "identity" (%position, %[[BLOCKS]]) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<64x1xf32>) -> tensor<1x1xf32>
// BLOCK-NEXT:    %[[FLAT:.*]] = spyre.view %[[NUMBER]]
// BLOCK-NEXT:    %[[INDEX:.*]] = spyre.pointwise "identity" (%[[FLAT]]) : (tensor<1xf32>) -> tensor<1xi32>
// BLOCK-NEXT:    %[[ROW:.*]] = spyre.pointwise "identity" (%position, %[[ONEHOT]]) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<64x32xf32>) -> tensor<1x32xf32>
// BLOCK-NEXT:    %[[MASK:.*]] = spyre.view %[[ROW]] affine_map<(d0, d1, d2, d3, d4) -> (d0, d3)> : tensor<1x32xf32> -> tensor<1x1x1x32x1xf32>
// BLOCK-NEXT:    %[[READ:.*]] = spyre.pointwise "identity" (%[[INDEX]], %b_keys) {indirect_dim = 2 : i64, index_step = 32 : i64} : (tensor<1xi32>, tensor<1x2x64x32xf32>) -> tensor<1x2x1x32x32xf32>
// BLOCK-NEXT:    %[[NEW:.*]] = spyre.view %rows {{.*}} -> tensor<1x2x1x1x32xf32>
// BLOCK-NEXT:    %[[MIXED:.*]] = spyre.pointwise "where3" (%[[MASK]], %[[NEW]], %[[READ]])
// BLOCK-NEXT:    %[[KEYS:.*]] = spyre.pointwise "identity" (%[[INDEX]], %[[MIXED]], %b_keys) {scatter_dim = 2 : i64, index_step = 32 : i64} : (tensor<1xi32>, tensor<1x2x1x32x32xf32>, tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>

// A run of positions known at compile time (a prefill's arange, 8 to 47) is stored as the two
// blocks it covers: each read, the run's rows (read at each position of the blocks, clamped to
// the run) put in by a where on a mask known at compile time, and written back.
// SPAN-LABEL: func.func @main(
// SPAN-SAME:     %b_keys: tensor<1x2x64x32xf32> {{.*}}, %rows: tensor<1x2x40x32xf32> {{.*}}, %[[NUMBERS:.*]]: tensor<2xi32> {spyre.role = "constant", {{.*}}}, %[[AT:.*]]: tensor<64xi32> {spyre.role = "constant", {{.*}}}, %[[INSIDE:.*]]: tensor<2x32xf32> {spyre.role = "constant", {{.*}}})
// SPAN-NEXT:      %[[SPREAD:.*]] = spyre.pointwise "identity" (%[[AT]], %rows) {indirect_dim = 2 : i64} : (tensor<64xi32>, tensor<1x2x40x32xf32>) -> tensor<1x2x64x32xf32>
// SPAN-NEXT:      %[[LIFTED:.*]] = spyre.view %[[SPREAD]]
// SPAN-NEXT:      %[[MASK:.*]] = spyre.view %[[INSIDE]]
// SPAN-NEXT:      %[[BLOCKS:.*]] = spyre.pointwise "identity" (%[[NUMBERS]], %b_keys) {indirect_dim = 2 : i64, index_step = 32 : i64} : (tensor<2xi32>, tensor<1x2x64x32xf32>) -> tensor<1x2x2x32x32xf32>
// SPAN-NEXT:      %[[MIXED:.*]] = spyre.pointwise "where3" (%[[MASK]], %[[LIFTED]], %[[BLOCKS]])
// SPAN-NEXT:      %{{.*}} = spyre.pointwise "identity" (%[[NUMBERS]], %[[MIXED]], %b_keys) {scatter_dim = 2 : i64, index_step = 32 : i64}

// A run of whole blocks (0 to 63) is the rows themselves, viewed as two blocks of 32.
// WHOLE-LABEL: func.func @main(
// WHOLE-NEXT:    %[[LIFTED:.*]] = spyre.view %rows affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, ((d2 * 32) + d3), d4)> : tensor<1x2x64x32xf32> -> tensor<1x2x2x32x32xf32>
// WHOLE-NEXT:    %{{.*}} = spyre.pointwise "identity" (%{{.*}}, %[[LIFTED]], %b_keys) {scatter_dim = 2 : i64, index_step = 32 : i64} : (tensor<2xi32>, tensor<1x2x2x32x32xf32>, tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32>

// A run of known positions past the cache (40 to 79 of 64) is one located error.
// PAST: row_stores.py:80: error: unsupported ATen op 'aten.index_put.default': the positions 40 to 79 are outside the 64 rows of dim 2 of the destination
// PAST-NOT: Traceback
