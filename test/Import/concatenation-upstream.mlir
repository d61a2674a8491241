// An imported torch.cat is upstream tensor IR around our ops: mlir-opt parses it
// (printed for upstream) and verifies the tensor.empty / tensor.insert_slice
// chain and our ops against their IRDL.
// REQUIRES: mlir-opt, torch
// RUN: %spyre-import %S/Inputs/concatenation.py:build_swapped_halves | %spyre-opt -t upstream-mlir | %mlir-opt --irdl-file=%spyre-irdl --verify-each | %filecheck %s

// CHECK: %[[FULL:.*]] = tensor.empty() : tensor<2x16x64xf16>
// CHECK: %[[COPY0:.*]] = "spyre.pointwise"({{.*}}) {op_func_name = "identity"}
// CHECK: %[[PART:.*]] = tensor.insert_slice %[[COPY0]] into %[[FULL]][0, 0, 0] [2, 16, 32] [1, 1, 1]
// CHECK: %[[COPY1:.*]] = "spyre.pointwise"({{.*}}) {op_func_name = "identity"}
// CHECK: tensor.insert_slice %[[COPY1]] into %[[PART]][0, 0, 32] [2, 16, 32] [1, 1, 1]
