// Upstream mlir-opt and the reference bundle.  mlir-opt cannot read the back
// end's custom syntax of a dialect it does not know, even with
// --allow-unregistered-dialect; it reads the same module once spyre-opt has
// printed it for upstream, verifies our ops against the IRDL of the sdscbundle
// dialect and lowers the module, and spyre-opt reads the lowered module back.
// The read-back keeps --allow-unregistered-dialect: mlir-opt then prints our
// types in our syntax, while an IRDL type prints by its parameters, which
// spyre-opt does not read.
// REQUIRES: mlir-opt
// RUN: not %mlir-opt --allow-unregistered-dialect %reference/bundle_add_mul_nested/bundle.mlir 2>&1 | %filecheck %s --check-prefix=CUSTOM
// RUN: %spyre-opt %reference/bundle_add_mul_nested/bundle.mlir -t upstream-mlir | %mlir-opt --irdl-file=%spyre-irdl --verify-each | %filecheck %s
// RUN: %spyre-opt %reference/bundle_add_mul_nested/bundle.mlir -t upstream-mlir | %mlir-opt --irdl-file=%spyre-irdl --verify-each -lower-affine -convert-scf-to-cf | %filecheck %s --check-prefix=LOWER
// RUN: %spyre-opt %reference/bundle_add_mul_nested/bundle.mlir --print-op-generic | %mlir-opt --allow-unregistered-dialect -lower-affine -convert-scf-to-cf | %spyre-opt | %filecheck %s --check-prefix=BACK

// CUSTOM: bundle.mlir:4:12: error: Dialect `sdscbundle' not found for custom op 'sdscbundle.input_arg_extract'

// CHECK:       #[[MAP:.*]] = affine_map<(d0, d1)[s0] -> (d0 * 65536 + s0 + d1 * 2097152)>
// CHECK-LABEL: func.func @sdsc_bundle
// CHECK-SAME:    (%[[BASE0:[^:]+]]: !sdscbundle.input_arg<index, none, none>, %[[BASE1:[^:]+]]: !sdscbundle.input_arg<index, none, none>, %[[BASE2:[^:]+]]: !sdscbundle.input_arg<index, none, none>, %[[BASE3:[^:]+]]: !sdscbundle.input_arg<index, none, none>)
// CHECK-NEXT:    %[[ARG0:.*]] = "sdscbundle.input_arg_extract"(%[[BASE0]]) : (!sdscbundle.input_arg<index, none, none>) -> index
// CHECK-NEXT:    %[[ARG1:.*]] = "sdscbundle.input_arg_extract"(%[[BASE1]]) : (!sdscbundle.input_arg<index, none, none>) -> index
// CHECK-NEXT:    %[[ARG2:.*]] = "sdscbundle.input_arg_extract"(%[[BASE2]]) : (!sdscbundle.input_arg<index, none, none>) -> index
// CHECK-NEXT:    %[[ARG3:.*]] = "sdscbundle.input_arg_extract"(%[[BASE3]]) : (!sdscbundle.input_arg<index, none, none>) -> index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         scf.for %[[I0:.*]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK-NEXT:      scf.for %[[I1:.*]] = %[[C0]] to %[[C4]] step %[[C1]] {
// CHECK-NEXT:        %[[ADDR0:.*]] = affine.apply #[[MAP]](%[[I0]], %[[I1]])[%[[ARG0]]]
// CHECK:             "sdscbundle.sdsc_execute"(%[[ADDR0]], {{(%[0-9]+, ){62}%}}{{[0-9]+}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2, {{(-[0-9]+, ){61}-}}64]} : ({{(index, ){62}index, }}index) -> ()
// CHECK-NEXT:        %[[ADDR64:.*]] = affine.apply #[[MAP]](%[[I0]], %[[I1]])[%[[ARG2]]]
// CHECK:             "sdscbundle.sdsc_execute"(%[[ADDR64]], {{(%[0-9]+, ){62}%}}{{[0-9]+}}) {sdsc_filename = "sdsc_1.json", symbol_ids = [-65, -66, {{(-[0-9]+, ){61}-}}128]} : ({{(index, ){62}index, }}index) -> ()
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    return

// LOWER-LABEL: func.func @sdsc_bundle
// LOWER-NOT:     scf.for
// LOWER-NOT:     affine.apply
// LOWER:         cf.cond_br %{{.*}}, ^{{.*}}, ^[[EXIT:[a-z0-9]+]]
// LOWER:         cf.cond_br
// LOWER:         arith.muli %{{.*}}, %{{.*}} overflow<nsw> : index
// LOWER:         "sdscbundle.sdsc_execute"({{(%[0-9]+, ){63}%}}{{[0-9]+}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, {{(-[0-9]+, ){62}-}}64]}
// LOWER:         "sdscbundle.sdsc_execute"({{(%[0-9]+, ){63}%}}{{[0-9]+}}) {sdsc_filename = "sdsc_1.json", symbol_ids = [-65, {{(-[0-9]+, ){62}-}}128]}
// LOWER:       ^[[EXIT]]:
// LOWER-NEXT:    return

// BACK-LABEL: func.func @sdsc_bundle
// BACK:         cf.cond_br
// BACK:         sdscbundle.sdsc_execute ({{(%[0-9]+, ){63}%}}{{[0-9]+}}) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, {{(-[0-9]+, ){62}-}}64]}
// BACK:         sdscbundle.sdsc_execute ({{(%[0-9]+, ){63}%}}{{[0-9]+}}) {sdsc_filename = "sdsc_1.json", symbol_ids = [-65, {{(-[0-9]+, ){62}-}}128]}
// BACK:         func.return
