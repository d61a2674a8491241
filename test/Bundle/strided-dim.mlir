// Code generation of a read of every second row (x[1::2]: GPT-J's interleaved rotary pairs
// read along a dim that is not the stick).  No iteration dim steps that dim one row at a
// time, so the op gets an iteration dim of one element past its own (label "x"): the
// innermost term of the dim, stepping once over 2 rows, its back gap the odd row's partner;
// d0 nests row-major outside it, and the constant row 1 is the start offset (128 bytes, one
// row of a 32-element fp32 stick).  Without it the read was refused ("coefficient 2 of d0,
// expected 1").
// RUN: %spyre-opt %s -p 'spyre-compile{cores=4}' | %filecheck %s

// CHECK-LABEL: func.func @sdsc_bundle
// CHECK:       op_func = "exp"
// CHECK-SAME:    labels = ["mb", "out"], sizes = array<i64: 64, 32>
// CHECK:       op_func = "neg"
// CHECK-SAME:    labels = ["mb", "out", "x"], sizes = array<i64: 32, 32, 1>, valid_sizes = array<i64: 32, 32, 1>, splits = array<i64: 4, 1, 1>
// CHECK-SAME:    {name = "Tensor0", role = "input", {{.*}}, device_size = array<i64: 1, 64, 32>, layout_labels = ["x", "mb", "out"], stick_label = "out", {{.*}}, core_offsets = array<i64: 128, 2176, 4224, 6272>, {{.*}}, back_gap = {x = 1 : i64, mb = 0 : i64, out = 0 : i64}}
// CHECK-SAME:    {name = "Tensor1", role = "output", {{.*}}, layout_labels = ["mb", "out"], {{.*}}, back_gap = {}}
func.func @odd_rows(%x: tensor<64x32xf32>) -> tensor<32x32xf32> {
  %e = spyre.pointwise "exp" (%x) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %v = spyre.view %e affine_map<(d0, d1) -> (d0 * 2 + 1, d1)> : tensor<64x32xf32> -> tensor<32x32xf32>
  %r = spyre.pointwise "neg" (%v) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %r : tensor<32x32xf32>
}
