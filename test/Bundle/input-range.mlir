// An integer input's spyre.range (the values the import tabulated what it computes from it
// over) is its kernel argument's `range` and the manifest's; spyre-run refuses a value outside
// it before anything runs, naming the input, the value and the range.
// RUN: spyre-opt %s -p 'spyre-compile{cores=4}' | %filecheck %s --check-prefix=ARG
// RUN: spyre-compile %s -o %t.dir --force --cores 4
// RUN: %filecheck %s --check-prefix=MANIFEST < %t.dir/manifest.json
// RUN: %python -c "import numpy as np; np.savez('%t.input.npz', pos=np.array([64], np.int32), table=np.zeros((64, 64), np.float16))"
// RUN: not spyre-run %t.dir --inputs %t.input.npz 2>&1 | %filecheck %s --check-prefix=REFUSE

// ARG: func.func @sdsc_bundle
// ARG-SAME: {index = 0 : i64, role = "input", name = "pos", {{.*}}, range = [0 : i64, 64 : i64]}

// MANIFEST:      "name": "pos",
// MANIFEST-NEXT: "nbytes": 128,
// MANIFEST-NEXT: "range": [
// MANIFEST-NEXT:   0,
// MANIFEST-NEXT:   64
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "role": "input",

// REFUSE: input.npz: error: input 'pos' is 64, outside [0, 64), the values the program was compiled for (it computed what it derives from 'pos' for each of them)
// REFUSE-NOT: Traceback
func.func @main(%pos: tensor<1xi32> {spyre.role = "input", spyre.name = "pos", spyre.range = array<i64: 0, 64>},
                %table: tensor<64x64xf16> {spyre.role = "parameter", spyre.name = "table"}) -> tensor<1x64xf16> {
  %row = spyre.pointwise "identity" (%pos, %table) {indirect_dim = 0 : i64} : (tensor<1xi32>, tensor<64x64xf16>) -> tensor<1x64xf16>
  func.return %row : tensor<1x64xf16>
}
