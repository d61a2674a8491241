# The analysis layer (DESIGN §14): models of the program that several passes
# or the lowering need, computed on demand from the IR, holding no state.
"""Analyses shared by passes: one home per model of the program.

* :mod:`~spyre_mlir.analysis.linear`: affine-linear expressions;
* :mod:`~spyre_mlir.analysis.views`: how ops read storage through views;
* :mod:`~spyre_mlir.analysis.names`: named dims;
* :mod:`~spyre_mlir.analysis.assembly`: buffers assembled in place (``cat``);
* :mod:`~spyre_mlir.analysis.loops`: loop-carried values of ``scf.for``;
* :mod:`~spyre_mlir.analysis.work`: work pieces, per-core spans and the core -> slice mapping;
* :mod:`~spyre_mlir.analysis.kernel_args`: kernel-argument numbering and names;
* :mod:`~spyre_mlir.analysis.storage`: where every value lives once memory planning placed it;
* :mod:`~spyre_mlir.analysis.cost`: the traffic and predicted device time of a planned program.
"""
