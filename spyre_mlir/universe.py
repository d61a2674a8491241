# The xDSL universe entry point: exposes our dialects and passes to stock
# xdsl-opt.  Reads the dialect and pass registries; writes nothing.
"""``xdsl.universe`` entry point for spyre-mlir."""

from xdsl.universe import Universe

from spyre_mlir.passes import SPYRE_PASSES


def _spyre():
    from spyre_mlir.dialects.spyre import Spyre

    return Spyre


def _sdscbundle():
    from spyre_mlir.dialects.sdscbundle import SdscBundle

    return SdscBundle


SPYRE_UNIVERSE = Universe(
    all_dialects={"spyre": _spyre, "sdscbundle": _sdscbundle},
    all_passes=dict(SPYRE_PASSES),
)
