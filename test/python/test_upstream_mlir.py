"""Upstream MLIR 22 as an oracle: our generic output parses, verifies and lowers in mlir-opt, and mlir-opt's output parses back."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reference_files import BUNDLE_REF

MLIR_OPT = Path("/usr/lib/llvm-22/bin/mlir-opt")

requires_mlir_opt = pytest.mark.skipif(
    not MLIR_OPT.is_file(),
    reason=f"upstream mlir-opt not found at {MLIR_OPT}: apt-get install mlir-22-tools llvm-22-tools")

_BESIDE = Path(sys.executable).parent / "spyre-opt"
SPYRE_OPT = [str(_BESIDE)] if _BESIDE.is_file() else [sys.executable, "-m", "spyre_mlir.tools.spyre_opt"]


def run(cmd: list[str], stdin: str | None = None) -> str:
    """Run ``cmd``; fail the test with its stderr unless it exits 0; return its stdout."""
    result = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{' '.join(cmd[:3])} ... exited {result.returncode}:\n{result.stderr}"
    return result.stdout


def spyre_opt(*args: str, stdin: str | None = None) -> str:
    return run([*SPYRE_OPT, *args], stdin)


def mlir_opt(*args: str, stdin: str) -> str:
    return run([str(MLIR_OPT), "--allow-unregistered-dialect", *args], stdin)


def normalize_ssa_names(text: str) -> str:
    """Rename SSA values to %v0, %v1... in order of first appearance, per function (their scope)."""
    def rename(scope: str) -> str:
        names: dict[str, str] = {}
        return re.sub(r"%[A-Za-z_$.\-0-9]+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), scope)

    return "".join(rename(scope) for scope in re.split(r"(?m)^(?=\s*func\.func )", text))


@requires_mlir_opt
def test_reference_bundle_verifies_and_lowers_upstream():
    generic = spyre_opt(str(BUNDLE_REF / "bundle.mlir"), "--print-op-generic")
    assert generic.count('"sdscbundle.sdsc_execute"') == 2
    mlir_opt("--verify-each", stdin=generic)
    lowered = mlir_opt("--verify-each", "-lower-affine", "-convert-scf-to-cf", stdin=generic)
    assert "scf.for" not in lowered
    assert "affine.apply" not in lowered
    assert "cf.cond_br" in lowered
    assert lowered.count("sdscbundle.sdsc_execute") == 2


# Every spyre op and attribute, attributes written in sorted key order (MLIR's dictionary order,
# which mlir-opt prints; xDSL keeps the order it parsed).
ALL_SPYRE = textwrap.dedent("""\
    #L0 = #spyre.layout<device_size = [2, 64, 64], dim_order = [0, 1], format = "SEN169_FP16">
    #L1 = #spyre.layout<device_size = [2, 128, 64], dim_order = [1, 0], format = "SEN169_FP16">
    #F32 = #spyre.layout<device_size = [4, 8, 32], dim_order = [0, 1], format = "IEEE_FP32">
    func.func @all(%a: tensor<64x128xf16, #L0>, %b: tensor<128xf16>, %w: tensor<2x128x32xf16>,
                   %h: tensor<8x128xf32, #F32>) -> tensor<64x128xf16, #L1> {
      %zero = spyre.fill 0.0 : tensor<64x128xf16>
      %ninf = spyre.fill -inf {dims = [["M"]], placement = #spyre.placement<lx, 4096>} : tensor<64xf16>
      %nan = spyre.fill nan : tensor<8x128xbf16>
      %y = spyre.pointwise "add" (%a, %b) {core_splits = array<i64: 4, 1>, dims = [["M"], ["N"]], hints = [#spyre.hint<0, tiles = {M = 2}>, #spyre.hint<1, tiles = {N = 2}, work_div = {M = 4, N = 1}>], placement = #spyre.placement<hbm, arg 2>} : (tensor<64x128xf16, #L0>, tensor<128xf16>) -> tensor<64x128xf16>
      %c = spyre.pointwise "clip" (%y) consts {max = 1.0 : f64, min = -1.0 : f64} {placement = #spyre.placement<hbm, pool 256>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
      %half = spyre.pointwise "mul" (%c) consts {y = 5.0e-01 : f64} : (tensor<64x128xf16>) -> tensor<64x128xf16>
      %sel = spyre.pointwise "where3" (%half, %c, %zero) : (tensor<64x128xf16>, tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
      %s = spyre.reduce "sum" (%sel) dims [1] : (tensor<64x128xf16>) -> tensor<64xf16>
      %k = spyre.reduce "max" (%sel) dims [0] {core_splits = array<i64: 32, 1>} : (tensor<64x128xf16>) -> tensor<1x128xf16>
      %mx = spyre.pointwise "maximum" (%s, %ninf) : (tensor<64xf16>, tensor<64xf16>) -> tensor<64xf16>
      %v = spyre.view %sel affine_map<(d0, d1, d2) -> (d0 * 32 + d1, d2)> {dims = [["A"], ["B"], ["N"]]} : tensor<64x128xf16> -> tensor<2x32x128xf16>
      %m = spyre.matmul (%v, %w) {placement = #spyre.placement<lx, 0>} : (tensor<2x32x128xf16>, tensor<2x128x32xf16>) -> tensor<2x32x32xf16>
      %t = spyre.pointwise "neg" (%sel) {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>], iteration_space = array<i64: 128, 64>} : (tensor<64x128xf16>) -> tensor<64x128xf16>
      %hf = spyre.pointwise "identity" (%h) : (tensor<8x128xf32, #F32>) -> tensor<8x128xf16>
      %r = spyre.restickify (%t) : (tensor<64x128xf16>) -> tensor<64x128xf16, #L1>
      func.return %r : tensor<64x128xf16, #L1>
    }
    func.func @bundle(%x: !sdscbundle.input_arg<index>, %g: !sdscbundle.input_arg<index, granularity = 64, max_value = 512>) {
      %xi = sdscbundle.input_arg_extract value from %x : !sdscbundle.input_arg<index> -> index
      %gi = sdscbundle.input_arg_extract value from %g : !sdscbundle.input_arg<index, granularity = 64, max_value = 512> -> index
      sdscbundle.sdsc_execute (%xi, %gi) {sdsc_filename = "sdsc_0.json", symbol_ids = [-1, -2]}
      func.return
    }
""")

SPYRE_OPS = ("spyre.pointwise", "spyre.reduce", "spyre.matmul", "spyre.view", "spyre.restickify", "spyre.fill")
SPYRE_ATTRS = ("#spyre.layout<", "#spyre.hint<", "#spyre.placement<lx", "#spyre.placement<hbm, arg",
               "#spyre.placement<hbm, pool")


@requires_mlir_opt
def test_every_spyre_op_round_trips_through_upstream_mlir():
    ours = spyre_opt(stdin=ALL_SPYRE)
    for name in (*SPYRE_OPS, *SPYRE_ATTRS):
        assert name in ours, f"the module does not cover {name}"
    assert spyre_opt(stdin=ours) == ours

    generic = spyre_opt("--print-op-generic", stdin=ours)
    upstream = mlir_opt("--verify-each", "--mlir-print-op-generic", stdin=generic)
    for name in SPYRE_OPS:
        assert f'"{name}"' in upstream
    back = spyre_opt(stdin=upstream)
    assert normalize_ssa_names(back) == normalize_ssa_names(ours)


@requires_mlir_opt
def test_upstream_rejects_what_it_should():
    # The oracle is not a rubber stamp: a type mismatch between an op and its use fails upstream.
    generic = spyre_opt("--print-op-generic", stdin=ALL_SPYRE)
    broken = generic.replace('"func.return"(%', '"func.return"(%arg1, %', 1)
    assert broken != generic
    result = subprocess.run([str(MLIR_OPT), "--allow-unregistered-dialect", "--verify-each"],
                            input=broken, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "error" in result.stderr
