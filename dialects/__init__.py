# The dialects of spyre-mlir, importable as spyre_mlir.dialects.
"""The ``spyre`` and ``sdscbundle`` dialects."""
