"""Tests of the spyre-opt driver: output files, split input, one-line located diagnostics, pass listing, no torch."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spyre_mlir.tools.spyre_opt import main

# The console script of the interpreter running the tests (not a pyenv shim), else PATH's.
_BESIDE = Path(sys.executable).parent / "spyre-opt"
SPYRE_OPT = str(_BESIDE) if _BESIDE.is_file() else shutil.which("spyre-opt")

ADD_MUL = textwrap.dedent("""\
    func.func @add_mul(%a: tensor<4x64xf16>, %b: tensor<64xf16>) -> tensor<4x64xf16> {
      %y = spyre.pointwise "add" (%a, %b) : (tensor<4x64xf16>, tensor<64xf16>) -> tensor<4x64xf16>
      %z = spyre.pointwise "mul" (%y, %y) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
      func.return %z : tensor<4x64xf16>
    }
""")


def run_spyre_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the installed ``spyre-opt`` console script."""
    assert SPYRE_OPT is not None, "spyre-opt is not on PATH: pip install -e '.[test]'"
    return subprocess.run([SPYRE_OPT, *args], input=stdin, capture_output=True, text=True, timeout=60)


def line_of(text: str, needle: str) -> int:
    """1-based line number of the only line of ``text`` containing ``needle``."""
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if needle in line]
    assert len(lines) == 1, f"{needle!r} occurs on lines {lines}"
    return lines[0]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------
# Output and round trips
# --------------------------------------------------------------------------


def test_round_trip_to_file_with_o(tmp_path):
    src = write(tmp_path, "in.mlir", ADD_MUL)
    out = tmp_path / "out.mlir"
    result = run_spyre_opt(str(src), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    first = out.read_text()
    assert 'spyre.pointwise "add" (%a, %b)' in first
    assert 'spyre.pointwise "mul" (%y, %y)' in first
    # Printing is a fixed point: the printed module prints back to the same text.
    out2 = tmp_path / "out2.mlir"
    assert main([str(out), "-o", str(out2)]) == 0
    assert out2.read_text() == first


def test_stdin_to_stdout_matches_file_output(tmp_path):
    out = tmp_path / "out.mlir"
    assert main([str(write(tmp_path, "in.mlir", ADD_MUL)), "-o", str(out)]) == 0
    piped = run_spyre_opt(stdin=ADD_MUL)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == out.read_text()


def test_split_input_file_keeps_going_and_locates_the_error(tmp_path):
    text = textwrap.dedent("""\
        func.func @first(%a: tensor<4x64xf16>) -> tensor<4x64xf16> {
          func.return %a : tensor<4x64xf16>
        }
        // -----
        func.func @second(%a: tensor<4x64xf16>) -> tensor<4x64xf16> {
          %c = arith.constant 0 : index

          %y = spyre.pointwise "nosuchfunc" (%a) : (tensor<4x64xf16>) -> tensor<4x64xf16>
          func.return %y : tensor<4x64xf16>
        }
        // -----
        func.func @third(%a: tensor<4x64xf16>) -> tensor<4x64xf16> {
          func.return %a : tensor<4x64xf16>
        }
    """)
    src = write(tmp_path, "split.mlir", text)
    result = run_spyre_opt(str(src), "--split-input-file")
    assert result.returncode == 1
    assert "@first" in result.stdout and "@third" in result.stdout and "@second" not in result.stdout
    assert result.stdout.count("// -----") == 2
    line = line_of(text, "nosuchfunc")
    assert result.stderr.splitlines() == [
        f"{src}:{line}:3: error: 'spyre.pointwise' op unknown op func 'nosuchfunc'"]


def test_split_input_file_reports_every_failing_chunk_at_its_own_line(tmp_path):
    text = textwrap.dedent("""\
        func.func @one(%a: tensor<4x64xf16>) -> tensor<4x64xf16> {
          %y = spyre.pointwise "add" (%a) : (tensor<4x64xf16>) -> tensor<4x64xf16>
          func.return %y : tensor<4x64xf16>
        }
        // -----
        func.func @two(%a: tensor<4x64xf16>) -> tensor<4x64xf16> {
          %y = spyre.pointwise "exp" (%a, %a) : (tensor<4x64xf16>, tensor<4x64xf16>) -> tensor<4x64xf16>
          func.return %y : tensor<4x64xf16>
        }
    """)
    src = write(tmp_path, "two.mlir", text)
    result = run_spyre_opt(str(src), "--split-input-file")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    add_line, exp_line = line_of(text, '"add"'), line_of(text, '"exp"')
    assert lines[0].startswith(f"{src}:{add_line}:3: error: ")
    assert lines[1].startswith(f"{src}:{exp_line}:3: error: ")
    assert "Traceback" not in result.stderr + result.stdout


# --------------------------------------------------------------------------
# Diagnostics: exit 1, one line, located, no traceback
# --------------------------------------------------------------------------

BAD_INPUTS = {
    # name: (text, marker on the culprit line or None, column, words the message must contain)
    "parse_error": (
        """func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
  %y = spyre.pointwise "neg" (%a : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}
""", '"neg"', 34, ["expected ')'"]),
    "unknown_op_func": (
        """func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
  %y = spyre.pointwise "foo" (%a) : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}
""", '"foo"', 3, ["spyre.pointwise", "unknown op func 'foo'"]),
    "add_operand_count": (
        """func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
  %c = arith.constant 0 : index
  %y = spyre.pointwise "add" (%a, %a, %a) : (tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}
""", '"add"', 3, ["spyre.pointwise", "'add'", "got 3"]),
    "symbol_ids_length": (
        """func.func @f(%a: index, %b: index) {
  sdscbundle.sdsc_execute (%a, %b) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1]}
  func.return
}
""", "sdsc_execute", 3, ["sdscbundle.sdsc_execute", "1 ids for 2 operands"]),
    "undefined_value": (
        """func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
  %y = spyre.pointwise "neg" (%a) : (tensor<4xf16>) -> tensor<4xf16>
  %z = spyre.pointwise "exp" (%q) : (tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}
""", '"exp"', 3, ["undefined value '%q'"]),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_located_line(tmp_path, case):
    text, marker, column, words = BAD_INPUTS[case]
    src = write(tmp_path, f"{case}.mlir", text)
    result = run_spyre_opt(str(src))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    prefix = f"{src}:{line_of(text, marker)}:{column}: error: "
    assert lines[0].startswith(prefix), lines[0]
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]


@pytest.mark.parametrize("pipeline, words", [
    ("nosuch-pass", ["nosuch-pass"]),
    ("cse,scf-for-loop-unroll{bogus=1}", ["bogus"]),
    ("mlir-opt{generic=notabool}", ["notabool"]),
])
def test_bad_pipeline_is_one_line(tmp_path, capsys, pipeline, words):
    src = write(tmp_path, "in.mlir", ADD_MUL)
    assert main([str(src), "-p", pipeline]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("spyre-opt: error: ")
    for word in words:
        assert word in lines[0]


def test_verify_diagnostics_prints_on_stdout_and_exits_0(tmp_path):
    text, marker, column, _ = BAD_INPUTS["unknown_op_func"]
    src = write(tmp_path, "diag.mlir", text)
    result = run_spyre_opt(str(src), "--verify-diagnostics")
    assert result.returncode == 0
    assert result.stderr == ""
    assert f"{src}:{line_of(text, marker)}:{column}: error: 'spyre.pointwise' op unknown op func 'foo'" \
        in result.stdout.splitlines()


def test_in_process_error_returns_1(tmp_path, capsys):
    text = BAD_INPUTS["symbol_ids_length"][0]
    src = write(tmp_path, "bad.mlir", text)
    assert main([str(src)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{src}:2:3: error: 'sdscbundle.sdsc_execute' op expects one symbol id per operand, "
        "got 1 ids for 2 operands"]


# --------------------------------------------------------------------------
# Passes, imports, public helpers
# --------------------------------------------------------------------------


def test_list_passes(capsys):
    assert main(["--list-passes"]) == 0
    listed = {line.split("{")[0].split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    standard = {"canonicalize", "cse", "dce", "licm", "lower-affine", "convert-scf-to-cf",
                "scf-for-loop-unroll", "scf-for-loop-range-folding", "mlir-opt"}
    assert standard <= listed


def test_list_passes_shows_options():
    result = run_spyre_opt("--list-passes")
    assert result.returncode == 0 and result.stderr == ""
    mlir_opt = [line for line in result.stdout.splitlines() if line.startswith("mlir-opt")]
    assert len(mlir_opt) == 1 and "generic: bool = true" in mlir_opt[0]


def test_standard_pass_runs(tmp_path):
    text = textwrap.dedent("""\
        func.func @f(%a: tensor<4xf16>) -> tensor<4xf16> {
          %y = spyre.pointwise "neg" (%a) : (tensor<4xf16>) -> tensor<4xf16>
          %dead = spyre.pointwise "exp" (%a) : (tensor<4xf16>) -> tensor<4xf16>
          func.return %y : tensor<4xf16>
        }
    """)
    result = run_spyre_opt(str(write(tmp_path, "dce.mlir", text)), "-p", "dce")
    assert result.returncode == 0, result.stderr
    assert '"neg"' in result.stdout and '"exp"' not in result.stdout


def test_print_between_passes_dumps_each_intermediate_module_on_stderr(tmp_path):
    src = write(tmp_path, "in.mlir", ADD_MUL)
    result = run_spyre_opt(str(src), "-p", "spyre-propagate-named-dims,spyre-stickify,dce", "--print-between-passes")
    assert result.returncode == 0, result.stderr
    banners = re.findall(r"^// -----// IR Dump After (\S+) //----- //$", result.stderr, re.M)
    assert banners == ["spyre-propagate-named-dims", "spyre-stickify"]
    after_stickify = result.stderr.split("IR Dump After spyre-stickify")[1]
    assert "#spyre.layout<" in after_stickify
    assert "IR Dump" not in result.stdout and "#spyre.layout<" in result.stdout


def test_time_passes_reports_every_pass_and_the_total(tmp_path):
    src = write(tmp_path, "in.mlir", ADD_MUL)
    result = run_spyre_opt(str(src), "-p", "spyre-stickify,cse", "--time-passes")
    assert result.returncode == 0, result.stderr
    rows = re.findall(r"^\s+\d+\.\d+ s  (\S+)$", result.stderr, re.M)
    assert result.stderr.startswith("===-- spyre-opt pass timing --===")
    assert rows == ["spyre-stickify", "cse", "total"]


def test_spyre_opt_never_imports_torch(tmp_path):
    src = write(tmp_path, "in.mlir", ADD_MUL)
    code = textwrap.dedent(f"""\
        import sys
        from spyre_mlir.tools.spyre_opt import main
        assert main(["--list-passes"]) == 0
        assert main([{str(src)!r}, "-p", "cse,canonicalize"]) == 0
        assert "torch" not in sys.modules, "spyre-opt imported torch"
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_stick_layout_from_the_command_line():
    code = ("from spyre_mlir.layout import stick_layout as s; "
            "print(s([512,8,256],'float16',[2,1,0]).device_size)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[8, 8, 256, 64]"


def test_internal_errors_are_one_line(tmp_path):
    # A directory as input is an OS error: reported, not a traceback.
    result = run_spyre_opt(str(tmp_path))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert re.match(rf"{re.escape(str(tmp_path))}: error: Is a directory", result.stderr)


def test_dash_is_stdin_and_stdout(tmp_path):
    """As for mlir-opt, ``-`` as the input reads stdin and ``-o -`` writes stdout, not a file named ``-``."""
    src = write(tmp_path, "in.mlir", ADD_MUL)
    expected = run_spyre_opt(str(src)).stdout
    for args, stdin in (([str(src), "-o", "-"], None), (["-", "-o", "-"], ADD_MUL), (["-"], ADD_MUL)):
        done = subprocess.run([SPYRE_OPT, *args], input=stdin, cwd=tmp_path, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected and done.stderr == ""
        assert not (tmp_path / "-").exists()
