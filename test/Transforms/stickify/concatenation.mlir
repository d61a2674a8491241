// spyre-stickify of assemblies (torch.cat): one stick dim for the buffer, its values and
// its pieces' copies, among the dims along which every piece starts at a whole stick.
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null | %filecheck %s
// RUN: %spyre-opt %s --split-input-file -p spyre-stickify 2>/dev/null > %t.once.mlir
// RUN: %spyre-opt %t.once.mlir --split-input-file -p spyre-stickify 2>&1 > %t.twice.mlir | %filecheck %s --allow-empty --check-prefix=AGAIN
// RUN: diff %t.once.mlir %t.twice.mlir
// A second run inserts nothing and warns about nothing.
// AGAIN-NOT: warning

// rotate_half of 64 fp16 columns: the second piece starts at column 32, half a stick, so the
// buffer is sticked on its rows; so is the neg, whose operand x[:, 32:] would otherwise be
// read from mid-stick: x is restickified onto its rows (after a copy padding them to a stick).
// CHECK-LABEL: func.func @rotate_half
// CHECK:         %[[PADDED:.*]] = spyre.restickify (%x) : {{.*}} -> tensor<16x64xf16, #spyre.layout<device_size = [1, 64, 64], dim_order = [0, 1]
// CHECK-NEXT:    %[[ROWS:.*]] = spyre.restickify (%[[PADDED]]) : {{.*}} -> tensor<16x64xf16, #spyre.layout<device_size = [1, 64, 64], dim_order = [1, 0]
// CHECK-NEXT:    %[[HIGH:.*]] = spyre.view %[[ROWS]] affine_map<(d0, d1) -> (d0, (d1 + 32))>
// CHECK-NEXT:    %neg = spyre.pointwise "neg" (%[[HIGH]]) : {{.*}} -> tensor<16x32xf16, #spyre.layout<device_size = [1, 32, 64], dim_order = [1, 0]
// CHECK-NEXT:    %full = tensor.empty() : tensor<16x64xf16, #[[BUFFER:spyre.layout<device_size = \[1, 64, 64\], dim_order = \[1, 0\].*>]]>
// CHECK-NEXT:    %c0 = spyre.pointwise "identity" (%neg) : {{.*}} -> tensor<16x32xf16, #[[PIECE:spyre.layout<device_size = \[1, 32, 64\], dim_order = \[1, 0\].*>]]>
// CHECK-NEXT:    %part = tensor.insert_slice %c0 into %full[0, 0] [16, 32] [1, 1] : tensor<16x32xf16, #[[PIECE]]> into tensor<16x64xf16, #[[BUFFER]]>
// CHECK:         %c1 = spyre.pointwise "identity"
// CHECK-SAME:      -> tensor<16x32xf16, #[[PIECE]]>
// CHECK-NEXT:    %cat = tensor.insert_slice %c1 into %part[0, 32] [16, 32] [1, 1] : tensor<16x32xf16, #[[PIECE]]> into tensor<16x64xf16, #[[BUFFER]]>
// CHECK-NEXT:    func.return %cat : tensor<16x64xf16, #[[BUFFER]]>
func.func @rotate_half(%x: tensor<16x64xf16>) -> tensor<16x64xf16> {
  %high = spyre.view %x affine_map<(d0, d1) -> (d0, d1 + 32)> : tensor<16x64xf16> -> tensor<16x32xf16>
  %neg = spyre.pointwise "neg" (%high) : (tensor<16x32xf16>) -> tensor<16x32xf16>
  %low = spyre.view %x affine_map<(d0, d1) -> (d0, d1)> : tensor<16x64xf16> -> tensor<16x32xf16>
  %full = tensor.empty() : tensor<16x64xf16>
  %c0 = spyre.pointwise "identity" (%neg) : (tensor<16x32xf16>) -> tensor<16x32xf16>
  %part = tensor.insert_slice %c0 into %full[0, 0] [16, 32] [1, 1] : tensor<16x32xf16> into tensor<16x64xf16>
  %c1 = spyre.pointwise "identity" (%low) : (tensor<16x32xf16>) -> tensor<16x32xf16>
  %cat = tensor.insert_slice %c1 into %part[0, 32] [16, 32] [1, 1] : tensor<16x32xf16> into tensor<16x64xf16>
  func.return %cat : tensor<16x64xf16>
}

// -----

// Pieces at column 64, a whole stick: the buffer keeps the innermost dim as its stick, and
// nothing is copied.
// CHECK-LABEL: func.func @columns
// CHECK-NOT:     spyre.restickify
// CHECK:         %full = tensor.empty() : tensor<8x192xf16, #spyre.layout<device_size = [3, 8, 64], dim_order = [0, 1]
// CHECK:         %cat = tensor.insert_slice %c1 into %part[0, 64] [8, 128] [1, 1] : tensor<8x128xf16, #spyre.layout<device_size = [2, 8, 64], dim_order = [0, 1], {{.*}}>> into tensor<8x192xf16, #spyre.layout<device_size = [3, 8, 64], dim_order = [0, 1]
func.func @columns(%a: tensor<8x64xf16>, %b: tensor<8x128xf16>) -> tensor<8x192xf16> {
  %full = tensor.empty() : tensor<8x192xf16>
  %c0 = spyre.pointwise "identity" (%a) : (tensor<8x64xf16>) -> tensor<8x64xf16>
  %part = tensor.insert_slice %c0 into %full[0, 0] [8, 64] [1, 1] : tensor<8x64xf16> into tensor<8x192xf16>
  %c1 = spyre.pointwise "identity" (%b) : (tensor<8x128xf16>) -> tensor<8x128xf16>
  %cat = tensor.insert_slice %c1 into %part[0, 64] [8, 128] [1, 1] : tensor<8x128xf16> into tensor<8x192xf16>
  func.return %cat : tensor<8x192xf16>
}
