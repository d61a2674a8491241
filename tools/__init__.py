# Command-line tools of spyre-mlir, importable as spyre_mlir.tools.
"""Command-line entry points."""
