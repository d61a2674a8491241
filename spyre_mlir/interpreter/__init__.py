# The reference interpreter (DESIGN §11): executes a compiled output directory
# (bundle.mlir + SDSC JSON + manifest.json) on a simulated Spyre.  It is the
# independent consumer of those files: it shares only the op-func numpy
# semantics, the stick-layout conversion and the hardware constants with the
# compiler, never its passes, importer IR or code generator.
"""Reference interpreter for spyre-mlir output directories.

::

    from spyre_mlir.interpreter import run
    outputs, stats = run("out/", {"a": a, "b": b, "c": c})
    stats.as_dict()["hbm_bytes_read"]
"""

from spyre_mlir.interpreter.compare import Tolerance, compare, tolerance_for
from spyre_mlir.interpreter.runner import run
from spyre_mlir.interpreter.stats import RunStats

__all__ = ["RunStats", "Tolerance", "compare", "run", "tolerance_for"]
