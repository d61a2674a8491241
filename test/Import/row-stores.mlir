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
