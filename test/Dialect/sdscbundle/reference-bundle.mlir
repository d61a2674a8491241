// The reference bundle written by the back end's emitter (tab-indented,
// `sdsc_filename="..."`, `"symbol_ids"=[...]`, a `#map_0` alias) parses,
// verifies, and prints back in our spelling; the reprint reads again.
// RUN: %spyre-opt %reference/bundle_add_mul_nested/bundle.mlir | %filecheck %s
// RUN: %spyre-opt %reference/bundle_add_mul_nested/bundle.mlir | %spyre-opt | %filecheck %s
// RUN: %spyre-opt %reference/bundle_add_mul_nested/bundle.mlir --print-op-generic | %spyre-opt | %filecheck %s
//
// Four kernel arguments, each extracted once.
// CHECK-LABEL: func.func @sdsc_bundle
// CHECK-SAME:    (%[[BASE0:[^:]+]]: !sdscbundle.input_arg<index>, %[[BASE1:[^:]+]]: !sdscbundle.input_arg<index>, %[[BASE2:[^:]+]]: !sdscbundle.input_arg<index>, %[[BASE3:[^:]+]]: !sdscbundle.input_arg<index>) {
// CHECK-NEXT:    %[[ARG0:.*]] = sdscbundle.input_arg_extract value from %[[BASE0]] : !sdscbundle.input_arg<index> -> index
// CHECK-NEXT:    %[[ARG1:.*]] = sdscbundle.input_arg_extract value from %[[BASE1]] : !sdscbundle.input_arg<index> -> index
// CHECK-NEXT:    %[[ARG2:.*]] = sdscbundle.input_arg_extract value from %[[BASE2]] : !sdscbundle.input_arg<index> -> index
// CHECK-NEXT:    %[[ARG3:.*]] = sdscbundle.input_arg_extract value from %[[BASE3]] : !sdscbundle.input_arg<index> -> index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[BOUND0:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[BOUND1:.*]] = arith.constant 4 : index
// Per-core base addresses: 32 cores, 2048 bytes apart, for each argument.
// CHECK-DAG:     %[[OFFSET:.*]] = arith.constant 2048 : index
// CHECK-DAG:     arith.addi %[[ARG0]], %[[OFFSET]] : index
// CHECK-DAG:     arith.addi %[[ARG3]], %{{.*}} : index
//
// A 2 x 4 loop nest; the address of a tile is base + 65536 * i0 + 2097152 * i1.
// CHECK:         scf.for %[[I0:.*]] = %[[C0]] to %[[BOUND0]] step %[[C1]] {
// CHECK-NEXT:      scf.for %[[I1:.*]] = %[[C0]] to %[[BOUND1]] step %[[C1]] {
// CHECK-NEXT:        %[[ADDR0:.*]] = affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])[%[[ARG0]]]
//
// The first SDSC (add) binds symbols -1..-64 to 64 addresses: 32 cores of %arg_0 and of %arg_1.
// CHECK:             %[[ADDR32:.*]] = affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])[%[[ARG1]]]
// CHECK:             sdscbundle.sdsc_execute (%[[ADDR0]], {{(%addr_[0-9]+, ){30}%addr_[0-9]+, }}%[[ADDR32]], {{(%addr_[0-9]+, ){29}%addr_[0-9]+, }}%addr_63) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2, {{(-[0-9]+, ){61}-}}64]}
//
// The second SDSC (mul) binds -65..-128 to the addresses of %arg_2 and %arg_3.
// CHECK-NEXT:        %[[ADDR64:.*]] = affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])[%[[ARG2]]]
// CHECK:             %[[ADDR96:.*]] = affine.apply affine_map<(d0, d1)[s0] -> (((s0 + (d0 * 65536)) + (d1 * 2097152)))> (%[[I0]], %[[I1]])[%[[ARG3]]]
// CHECK:             sdscbundle.sdsc_execute (%[[ADDR64]], {{(%addr_[0-9]+, ){30}%addr_[0-9]+, }}%[[ADDR96]], {{(%addr_[0-9]+, ){29}%addr_[0-9]+, }}%addr_127) {sdsc_filename = "sdsc_1.json", symbol_ids = [-65, -66, {{(-[0-9]+, ){61}-}}128]}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NOT:     sdscbundle.sdsc_execute
