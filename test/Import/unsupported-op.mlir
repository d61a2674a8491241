// An op without a lowering is one error naming the ATen op and the model line.
// REQUIRES: torch
// RUN: not %spyre-import %S/Inputs/unsupported_sort.py:build 2>&1 | %filecheck %s
// CHECK: unsupported_sort.py:6: error: unsupported ATen op 'aten.sort.default'
// CHECK-NOT: Traceback
