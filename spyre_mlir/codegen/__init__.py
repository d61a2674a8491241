# Code generation (DESIGN §10): OpSpec records, SDSC JSON, bundle.mlir text and
# the output-directory writer.  Reads lowered bundle IR; writes text and files.
"""OpSpec -> SDSC JSON, bundle text and the output directory."""

from spyre_mlir.codegen.bundle_text import print_bundle, print_mixed
from spyre_mlir.codegen.opspec import ArgSpec, OpSpec
from spyre_mlir.codegen.sdsc import sdsc_json
from spyre_mlir.codegen.writer import bundle_files, write_output

__all__ = ["ArgSpec", "OpSpec", "bundle_files", "print_bundle", "print_mixed", "sdsc_json", "write_output"]
