# The importer package: torch.export programs -> spyre dialect.  Reads
# ExportedPrograms (and model files, through loader); writes xDSL modules.
"""``torch.export`` -> ``spyre`` dialect.

* :func:`import_program` (``core``): the importer;
* ``table``: the ATen table (one emitter per supported overload), with ``indirect``'s rows (reads
  and stores through an index);
* ``emitter``: :class:`~spyre_mlir.importer.emitter.NodeEmitter`, the builders emitters use;
* ``folding`` and ``constants``: values known at compile time and the arguments holding them;
* ``locations``: the model line of a graph node (MLIR locations, located errors);
* ``views``: affine maps of view ops;
* :func:`load_program` / :func:`export_model` (``loader``): model files for the tools;
* ``quiet``: torch's own warnings and logs kept out of our diagnostics.
"""

from spyre_mlir.optional import require

# Every module of the package imports torch: without it, one error naming the extra.
require("torch", "importing a PyTorch model")

from spyre_mlir.importer.core import import_program  # noqa: E402
from spyre_mlir.importer.loader import LoadedModel, export_model, load_factory, load_model, load_program  # noqa: E402
from spyre_mlir.importer.table import supported_ops  # noqa: E402

__all__ = ["import_program", "export_model", "load_factory", "load_model", "load_program",
           "LoadedModel", "supported_ops"]
