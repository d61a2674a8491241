# lit configuration of the spyre-mlir test suite.  Reads the tool locations
# from lit.site.cfg.py when CMake configured the build, and finds them itself
# otherwise (LLVM FileCheck from /usr/lib/llvm-22/bin when present, else the
# PyPI `filecheck`).
# -*- Python -*-
import os
import shutil
import subprocess

import lit.formats

config.name = "spyre-mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["python", "Inputs", "data", "lit.cfg.py", "lit.site.cfg.py"]
# Set by lit.site.cfg.py under CMake; this directory when lit runs on test/ directly.
if not getattr(config, "test_source_root", None):
    config.test_source_root = os.path.dirname(os.path.abspath(__file__))
if not getattr(config, "test_exec_root", None):
    config.test_exec_root = os.path.join(config.test_source_root, "Output")

LLVM_BIN = "/usr/lib/llvm-22/bin"


def find_tool(configured, *candidates):
    """The configured path ("" = configured as absent), else the first candidate found."""
    if configured is not None:
        return configured or None
    for candidate in candidates:
        found = candidate if os.path.isabs(candidate) and os.access(candidate, os.X_OK) else shutil.which(candidate)
        if found:
            return found
    return None


filecheck = find_tool(getattr(config, "filecheck", None), os.path.join(LLVM_BIN, "FileCheck"), "filecheck")
mlir_opt = find_tool(getattr(config, "mlir_opt", None), os.path.join(LLVM_BIN, "mlir-opt"))
spyre_opt = find_tool(getattr(config, "spyre_opt", None), "spyre-opt")
if filecheck is None or spyre_opt is None:
    lit_config.fatal("FileCheck (LLVM or the PyPI 'filecheck') and spyre-opt must be installed: "
                     "pip install -e '.[test]'")

config.substitutions.append(("%filecheck", filecheck))
config.substitutions.append(("%spyre-opt", spyre_opt))
config.substitutions.append(("%spyre-import", find_tool(getattr(config, "spyre_import", None), "spyre-import") or "spyre-import"))
python = getattr(config, "python_executable", None) or shutil.which("python3")
config.substitutions.append(("%python", python))
# Tests that import a model (spyre-import) need torch, an optional extra of the package.
find_torch = "import importlib.util, sys; sys.exit(not importlib.util.find_spec('torch'))"
if subprocess.run([python, "-c", find_torch]).returncode == 0:
    config.available_features.add("torch")
else:
    lit_config.note("torch is not installed: tests marked 'REQUIRES: torch' are UNSUPPORTED "
                    "(pip install -e '.[torch]')")
# torch-spyre's reference outputs, test data of this repository (data/reference/README.md).
config.substitutions.append(("%reference", os.path.join(config.test_source_root, "data", "reference")))
if mlir_opt:
    config.available_features.add("mlir-opt")
    config.substitutions.append(("%mlir-opt", mlir_opt))
    # The IRDL of our dialects, generated once per run from their xDSL definitions,
    # for `%mlir-opt --irdl-file=%spyre-irdl` (spyre_mlir/irdl.py).
    os.makedirs(config.test_exec_root, exist_ok=True)
    spyre_irdl = os.path.join(config.test_exec_root, "spyre.irdl.mlir")
    with open(spyre_irdl, "w") as f:
        subprocess.run([spyre_opt, "--emit-irdl"], stdout=f, check=True)
    config.substitutions.append(("%spyre-irdl", spyre_irdl))
else:
    lit_config.note("upstream mlir-opt not found: tests marked 'REQUIRES: mlir-opt' are UNSUPPORTED "
                    "(install mlir-22-tools)")

config.environment["PATH"] = os.environ.get("PATH", "")
for passthrough in ("HOME", "PYTHONPATH", "SPYRE_TRACEBACK"):
    if passthrough in os.environ:
        config.environment[passthrough] = os.environ[passthrough]
