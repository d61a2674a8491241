"""spyre-run: npz round trip, stats, --check against eager, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from spyre_mlir.hardware import from_dlfloat16_bits, to_dlfloat16_bits
from spyre_mlir.interpreter import run
from spyre_mlir.tools.spyre_run import main
from test_interpreter_support import SEED_SHAPE, reference_bundle_dir

MODEL = """
import torch

def build():
    torch.manual_seed(3)
    inputs = tuple(torch.randn(1024, 4096, dtype=torch.float16) for _ in range(3))
    return (lambda a, b, c: (a + b) * c{extra}), inputs
"""


@pytest.fixture
def out(tmp_path):
    return reference_bundle_dir(tmp_path)


def _cli(*args):
    """Run spyre-run in a subprocess (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "spyre_mlir.tools.spyre_run", *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_npz_round_trip(out, tmp_path):
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal(SEED_SHAPE).astype(np.float16) for n in "abc"}
    np.savez(tmp_path / "in.npz", **inputs)
    assert main([str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as saved:
        assert saved.files == ["z"]
        np.testing.assert_array_equal(saved["z"], run(out, inputs)[0]["z"])


def test_stats_table_and_json(out, tmp_path, capsys):
    assert main([str(out), "--seed", "4", "--stats", "--stats-json", str(tmp_path / "s.json")]) == 0
    table = capsys.readouterr().out
    assert "HBM read" in table and "sdsc_1.json" in table and "total" in table
    stats = json.loads((tmp_path / "s.json").read_text())
    assert {"hbm_bytes_read", "hbm_bytes_written", "lx_peak_bytes", "sdsc_executions"} <= stats.keys()
    assert "max_abs_err" not in stats
    assert stats["sdsc_executions"] == 16 and stats["hbm_bytes_written"] == 8 << 20


def test_check_against_eager_passes_and_reports_errors(out, tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(MODEL.format(extra=""))
    assert main([str(out), "--check", f"{model}:build", "--stats-json", str(tmp_path / "s.json")]) == 0
    assert "1 output(s) match PyTorch eager" in capsys.readouterr().out
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["max_abs_err"] == 0.0 and stats["max_rel_err"] == 0.0  # bit-exact with eager fp16


def test_check_mismatch_names_output_index_and_values(out, tmp_path):
    model = tmp_path / "model.py"
    model.write_text(MODEL.format(extra=" + 0.5 * (a > 3)"))
    code, _, err = _cli(out, "--check", f"{model}:build")
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "error: output 'z' differs from PyTorch eager at index (" in err
    assert "interpreter" in err and "eager" in err


@pytest.mark.parametrize("corrupt, message", [
    (lambda d: d.rename(d.parent / "gone"), "error: no such output directory"),
    (lambda d: (d / "manifest.json").write_text('{"format": "spyre-mlir-manifest", "vers'),
     "manifest.json: error: malformed JSON"),
    (lambda d: (d / "sdsc_0.json").write_text((d / "sdsc_0.json").read_text()[:500]),
     "sdsc_0.json: error: malformed JSON"),
    (lambda d: (d / "bundle.mlir").write_text("module {\n  func.func @sdsc_bundle( {\n"),
     "bundle.mlir:2:"),
])
def test_errors_are_one_line_with_exit_1(out, corrupt, message):
    corrupt(out)
    code, stdout, err = _cli(out, "--seed", "1")
    assert code == 1, stdout
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert message in err


def test_help_states_the_tolerance():
    code, stdout, _ = _cli("--help")
    assert code == 0 and "atol + rtol * |eager|" in stdout and "1e-2" in stdout


STATE_MODELS = """
import torch


class LiftedConstants(torch.nn.Module):
    \"\"\"A tensor attribute that is neither parameter nor buffer, and a tensor made in forward:
    torch.export lifts both as constants (c_scale, c_lifted_tensor_0).\"\"\"

    def __init__(self):
        super().__init__()
        self.scale = torch.linspace(-2, 2, 128, dtype=torch.float16)

    def forward(self, x):
        return x * self.scale + torch.tensor(2.0, dtype=torch.float16)


class CapitalisedPath(torch.nn.Module):
    \"\"\"BERT's spelling: the parameters LayerNorm.weight and LayerNorm.bias are exported as
    p_layernorm_weight and p_layernorm_bias.\"\"\"

    def __init__(self):
        super().__init__()
        self.Dense = torch.nn.Linear(128, 128, dtype=torch.float16)
        self.LayerNorm = torch.nn.LayerNorm(128, dtype=torch.float16)
        with torch.no_grad():
            self.LayerNorm.weight.uniform_(0.5, 1.5)
            self.LayerNorm.bias.uniform_(-1, 1)

    def forward(self, x):
        return self.LayerNorm(self.Dense(x))


def lifted():
    torch.manual_seed(0)
    return LiftedConstants(), (torch.randn(64, 128, dtype=torch.float16),)


def capitalised():
    torch.manual_seed(0)
    return CapitalisedPath(), (torch.randn(64, 128, dtype=torch.float16),)
"""


def _compile_and_check(tmp_path, factory, capsys):
    """Compile ``factory`` of STATE_MODELS and check the directory with ``spyre-run --check``."""
    from spyre_mlir.tools.spyre_compile import main as compile_main

    model = tmp_path / "models.py"
    model.write_text(STATE_MODELS)
    out = tmp_path / factory
    assert compile_main([f"{model}:{factory}", "-o", str(out), "--cores", "4"]) == 0
    capsys.readouterr()
    code = main([str(out), "--check", f"{model}:{factory}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "1 output(s) match PyTorch eager" in captured.out
    return json.loads((out / "manifest.json").read_text())


def test_check_stages_lifted_constants(tmp_path, capsys):
    """c_scale is staged from the program; the 0-d c_lifted_tensor_0 holds one value, so the import
    folds it into a constant the runtime fills (compile-time evaluation)."""
    manifest = _compile_and_check(tmp_path, "lifted", capsys)
    names = {a["name"] for a in manifest["args"]}
    assert "c_scale" in names and "c_lifted_tensor_0" not in names
    assert [a["fill"] for a in manifest["args"] if a["role"] == "constant"] == [2.0]


def test_check_stages_parameters_of_a_capitalised_submodule(tmp_path, capsys):
    manifest = _compile_and_check(tmp_path, "capitalised", capsys)
    assert {"p_layernorm_weight", "p_layernorm_bias"} <= {a["name"] for a in manifest["args"]}


def test_overflowing_output_is_one_warning_in_our_words(tmp_path):
    """Random inputs overflow exp's float16 result: one warning naming the output and an
    element, never numpy's RuntimeWarning (spyre-run without --check casts with numpy)."""
    model = tmp_path / "model.py"
    model.write_text("import torch\n\ndef build():\n"
                     "    x = torch.zeros(64, 128, dtype=torch.float16)\n"
                     "    return (lambda x: torch.exp(x * 4.0) * 1000.0), (x,)\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "spyre_mlir.tools.spyre_compile", f"{model}:build", "-o", str(out),
                           "--cores", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code, _, err = _cli(out, "--seed", "0", "--outputs", tmp_path / "o.npz")
    assert code == 0, err
    with np.load(tmp_path / "o.npz") as saved:
        result = saved["mul_1"]
    first = np.unravel_index(int(np.argmax(np.isinf(result))), result.shape)
    count = int(np.isinf(result).sum())
    assert count > 1
    assert err.splitlines() == [f"{out}: warning: output 'mul_1' holds inf at index {tuple(map(int, first))} "
                                f"({count} of {result.size} elements are inf or nan): float16 overflows to inf "
                                "beyond 65504 in magnitude"]


PARAMETER_MODEL = """
import torch


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.linspace(-1, 1, 128, dtype=torch.float16))

    def forward(self, x, y):
        return {"scaled": x * self.w + y, "exp": (x - y).exp()}


def build():
    torch.manual_seed(0)
    return Scaled(), (torch.randn(64, 128, dtype=torch.float16), torch.randn(64, 128, dtype=torch.float16))
"""


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    """PARAMETER_MODEL (a parameter ``p_w``, user inputs ``x`` and ``y``, a dict of two outputs),
    compiled on 4 cores: the model file and the directory."""
    from spyre_mlir.tools.spyre_compile import main as compile_main

    root = tmp_path_factory.mktemp("scaled")
    (root / "model.py").write_text(PARAMETER_MODEL)
    assert compile_main([f"{root / 'model.py'}:build", "-o", str(root / "out"), "--cores", "4"]) == 0
    return root / "model.py", root / "out"


def _other_inputs(**more: np.ndarray) -> dict[str, np.ndarray]:
    """User inputs unlike the factory's example inputs (another seed, three times larger)."""
    rng = np.random.default_rng(7)
    return {"x": (3 * rng.standard_normal((64, 128))).astype(np.float16),
            "y": rng.standard_normal((64, 128)).astype(np.float16), **more}


@pytest.mark.parametrize("with_parameter", [True, False], ids=["parameter-given", "parameter-left-out"])
def test_check_runs_eager_on_the_inputs_file(scaled, tmp_path, capsys, with_parameter):
    """With --inputs and --check, the model runs on the file's arrays, as the interpreter does
    (not on the factory's example inputs); a parameter the file leaves out is the model's."""
    import torch

    model, out = scaled
    weight = torch.linspace(-1, 1, 128, dtype=torch.float16).numpy()  # the model's own
    inputs = _other_inputs(**({"p_w": weight} if with_parameter else {}))
    np.savez(tmp_path / "in.npz", **inputs)
    capsys.readouterr()
    code = main([str(out), "--inputs", str(tmp_path / "in.npz"), "--check", f"{model}:build",
                 "--outputs", str(tmp_path / "o.npz")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "2 output(s) match PyTorch eager" in captured.out
    x, y = (torch.from_numpy(inputs[n]) for n in "xy")
    with np.load(tmp_path / "o.npz") as saved:
        np.testing.assert_allclose(saved[saved.files[1]].astype(np.float32), (x - y).exp().float().numpy(),
                                   rtol=1e-2, atol=1e-2)


def test_check_refuses_a_parameter_that_is_not_the_models(scaled, tmp_path, capsys):
    model, out = scaled
    np.savez(tmp_path / "in.npz", **_other_inputs(p_w=np.zeros(128, np.float16)))
    assert main([str(out), "--inputs", str(tmp_path / "in.npz"), "--check", f"{model}:build"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"{tmp_path / 'in.npz'}: error: 'p_w' differs from the model's parameter (--check runs '{model}:build' "
        "with its own): leave 'p_w' out of the inputs (the model's is staged) or give the model's values"]


def test_timeline_says_where_it_was_written(out, tmp_path, capsys):
    timeline = tmp_path / "timeline.svg"
    assert main([str(out), "--timeline", str(timeline)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"spyre-run: wrote the timeline to {timeline}"]
    assert timeline.read_text().startswith("<svg")


def test_numerics_dlfloat16_computes_as_the_device_stores(out, tmp_path):
    """--numerics dlfloat16 rounds the staged inputs and each op's result to DLFloat16: (a + b) * c
    is the numpy model of that, read back as float16, and differs from the default ieee run."""
    rng = np.random.default_rng(0)
    inputs = {n: rng.standard_normal(SEED_SHAPE).astype(np.float16) for n in "abc"}
    np.savez(tmp_path / "in.npz", **inputs)
    for mode in ("ieee", "dlfloat16"):
        assert main([str(out), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / f"{mode}.npz"),
                     "--numerics", mode]) == 0

    def dl(values):
        return from_dlfloat16_bits(to_dlfloat16_bits(values))

    a, b, c = (dl(inputs[n].astype(np.float32)) for n in "abc")
    with np.load(tmp_path / "ieee.npz") as ieee, np.load(tmp_path / "dlfloat16.npz") as dlfloat16:
        np.testing.assert_array_equal(ieee["z"], run(out, inputs)[0]["z"])
        np.testing.assert_array_equal(dlfloat16["z"], dl(dl(a + b) * c).astype(np.float16))
        assert np.count_nonzero(dlfloat16["z"] != ieee["z"]) > dlfloat16["z"].size // 4


def test_an_unknown_numerics_mode_is_one_line(out):
    code, _, err = _cli(out, "--numerics", "float16")
    assert code == 1
    assert err == "spyre-run: error: argument --numerics: unknown numerics mode 'float16' (choose from ieee, dlfloat16)\n"


def test_help_states_the_numerics_modes():
    code, stdout, _ = _cli("--help")
    assert code == 0 and "--numerics {ieee,dlfloat16}" in stdout
    assert "--check keeps float16's tolerance in dlfloat16 mode" in " ".join(stdout.split())
