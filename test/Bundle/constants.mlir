// A constant argument (values the import computed) is a kernel argument of role
// "constant" that carries its values to the writer; its spyre.value must be there
// and of the argument's shape, and no other role may have one.
// RUN: not spyre-opt %s --split-input-file -p spyre-lower-to-bundle 2>/dev/null | %filecheck %s
// RUN: not spyre-opt %s --split-input-file -p spyre-lower-to-bundle 2>&1 >/dev/null | %filecheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @sdsc_bundle
// CHECK-SAME:    {index = 1 : i64, role = "constant", name = "const_mask", nbytes = 256 : i64, shape = [2 : i64, 64 : i64], dtype = "float16", device_size = [1 : i64, 2 : i64, 64 : i64], dim_order = [0 : i64, 1 : i64], data_format = "SEN169_FP16", value = dense<"0x0000803F00000040
func.func @main(%a: tensor<2x64xf16> {spyre.role = "input", spyre.name = "a"},
                %m: tensor<2x64xf16> {spyre.role = "constant", spyre.name = "const_mask", spyre.value = dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0]]> : tensor<2x64xf32>})
    -> tensor<2x64xf16> {
  %y = spyre.pointwise "add" (%a, %m) {placement = #spyre.placement<hbm, arg 2>} : (tensor<2x64xf16>, tensor<2x64xf16>) -> tensor<2x64xf16>
  func.return %y : tensor<2x64xf16>
}

// -----

// ERR: constants.mlir:[[# @LINE + 1]]:1: error: function argument 'const_mask' (#1) of role 'constant' needs a spyre.value = dense<...> of shape [2, 64]
func.func @main(%a: tensor<2x64xf16> {spyre.role = "input", spyre.name = "a"},
                %m: tensor<2x64xf16> {spyre.role = "constant", spyre.name = "const_mask"}) -> tensor<2x64xf16> {
  %y = spyre.pointwise "add" (%a, %m) : (tensor<2x64xf16>, tensor<2x64xf16>) -> tensor<2x64xf16>
  func.return %y : tensor<2x64xf16>
}

// -----

// ERR: constants.mlir:[[# @LINE + 1]]:1: error: function argument 'a' (#0) has a spyre.value but role 'input', not 'constant'
func.func @main(%a: tensor<2x64xf16> {spyre.role = "input", spyre.name = "a", spyre.value = dense<1.0> : tensor<2x64xf32>})
    -> tensor<2x64xf16> {
  %y = spyre.pointwise "exp" (%a) : (tensor<2x64xf16>) -> tensor<2x64xf16>
  func.return %y : tensor<2x64xf16>
}
