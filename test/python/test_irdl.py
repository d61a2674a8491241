"""The IRDL that spyre-opt --emit-irdl generates from our xDSL dialect definitions."""

import shutil
import subprocess

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.irdl import IRDL, DialectOp, OperationOp
from xdsl.parser import Parser

from spyre_mlir.dialects.sdscbundle import SdscBundle
from spyre_mlir.dialects.spyre import Spyre
from spyre_mlir.irdl import irdl_module
from spyre_mlir.tools.spyre_opt import main

MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"


def emitted_irdl(capsys) -> str:
    assert main(["--emit-irdl"]) == 0
    return capsys.readouterr().out


def test_emitted_irdl_parses_and_names_every_op(capsys):
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(IRDL)
    module = Parser(ctx, emitted_irdl(capsys)).parse_module()
    module.verify()
    defined = {f"{d.sym_name.data}.{op.sym_name.data}"
               for d in module.walk() if isinstance(d, DialectOp)
               for op in d.body.walk() if isinstance(op, OperationOp)}
    assert defined == {op.name for dialect in (Spyre, SdscBundle) for op in dialect.operations}


def test_emitted_irdl_loads_in_mlir_opt(capsys, tmp_path):
    if shutil.which(MLIR_OPT) is None:
        pytest.skip(f"upstream mlir-opt not found at {MLIR_OPT}")
    path = tmp_path / "spyre.irdl.mlir"
    path.write_text(emitted_irdl(capsys))
    run = subprocess.run([MLIR_OPT, f"--irdl-file={path}", "-"], input="", capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_irdl_module_is_deterministic():
    assert str(irdl_module()) == str(irdl_module())
