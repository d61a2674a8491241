# transformers' mixture-of-experts layers, traced in a form Spyre runs.  An experts
# module of transformers (`@use_experts_implementation`) computes through the
# implementation its config names (`grouped_mm` by default: sort, histc and a
# grouped matmul whose row groups are data).  While the loader exports a model,
# every implementation name answers with experts_forward here, which picks one of
# two static forms by the cost model's facts and annotates its nodes with the
# choice (ANNOTATION), which the importer records for `--report`.  Reads the
# module's weights and the router's top-k indices and weights; writes ATen ops.
"""Static forms of a mixture-of-experts layer (DESIGN §15 "Mixture of experts").

* ``gathered``: for each of the ``k`` routing slots, the selected expert's weights
  are read through the slot's expert index (an indirect access, as ``embedding``)
  and each token is multiplied by its own: only the selected experts' rows are
  computed, and ``tokens * k`` expert weight sets are read.
* ``dense``: every expert computes every token, and the routing matrix (a token's
  weight for each expert, zero where the router did not select it) sums them: every
  expert's weights are read once, ``experts / k`` times the selected rows computed.

:func:`choose_form` prices both with the facts of
:data:`spyre_mlir.analysis.cost.SPYRE_FACTS` (weights read at peak bandwidth,
MACs at the rate of every core) and takes the faster: a decode step of a few
tokens gathers, a prefill of many tokens runs dense.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import torch
import torch.fx.traceback as fx_traceback

from spyre_mlir.analysis.cost import SPYRE_FACTS
from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.limits import MAX_CORES

ANNOTATION = "spyre_experts"
"""``node.meta["custom"]`` key of an experts layer's nodes: the form it got and why."""

GATHERED, DENSE = "gathered", "dense"


def choose_form(tokens: int, top_k: int, experts: int, weight_elements: int, element_bytes: int
                ) -> tuple[str, float, float]:
    """The faster form of an experts layer and both predicted times (ns): ``gathered`` reads
    ``tokens * top_k`` weight sets of ``weight_elements`` and computes one row per set; ``dense``
    reads the ``experts`` sets once and computes ``tokens`` rows with each."""
    facts = SPYRE_FACTS
    macs_per_ns = facts.macs_per_ns_per_core * MAX_CORES
    gathered = max(tokens * top_k * weight_elements * element_bytes / facts.hbm_bytes_per_ns,
                   tokens * top_k * weight_elements / macs_per_ns)
    dense = max(experts * weight_elements * element_bytes / facts.hbm_bytes_per_ns,
                tokens * experts * weight_elements / macs_per_ns)
    return (GATHERED if gathered <= dense else DENSE), gathered, dense


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, transposed: bool) -> torch.Tensor:
    """``x @ weight^T`` (``x @ weight`` for transposed weights), batched over the leading dims of
    ``weight`` that ``x`` shares or broadcasts to, plus ``bias``.  One row per weight (the gathered
    form) is ``(weight @ x^T)^T``: each token's weight is read as it is stored, sticked on its
    input dim, rather than restickified for the row."""
    if transposed:
        out = torch.matmul(x, weight)
    elif x.dim() == weight.dim() and x.shape[-2] == 1:
        out = torch.matmul(weight, x.transpose(-1, -2)).transpose(-1, -2)
    else:
        out = torch.matmul(x, weight.transpose(-1, -2))
    return out if bias is None else out + bias


def _weights(module: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
    """The stacked ``[experts, ...]`` up (or gate-up) and down weights and their biases."""
    up = module.gate_up_proj if module.has_gate else module.up_proj
    if not module.has_bias:
        return up, None, module.down_proj, None
    up_bias = module.gate_up_proj_bias if module.has_gate else module.up_proj_bias
    return up, up_bias, module.down_proj, module.down_proj_bias


def _rows(module: torch.nn.Module, x: torch.Tensor, which: Any) -> torch.Tensor:
    """The expert computation of the rows ``x`` (``[..., rows, hidden]``) with the weights
    ``stacked[which]`` of each stacked weight (a leading dim of the rows' batch): up, gate or
    activation, down, and the optional norm after it, as transformers' implementations compute."""
    up, up_bias, down, down_bias = (None if w is None else w[which] for w in _weights(module))
    h = _linear(x, up, None if up_bias is None else up_bias[..., None, :], module.is_transposed)
    h = module._apply_gate(h) if module.has_gate else module.act_fn(h)
    h = _linear(h, down, None if down_bias is None else down_bias[..., None, :], module.is_transposed)
    return module.post_expert_norm(h) if module.has_post_expert_norm else h


def _gathered(module: torch.nn.Module, hidden: torch.Tensor, index: torch.Tensor, weights: torch.Tensor
              ) -> torch.Tensor:
    """Per routing slot, each token through the expert it selected: the weights read through the
    slot's indices, one row per token."""
    out = None
    for slot in range(index.shape[-1]):
        term = _rows(module, hidden[:, None, :], index[:, slot])[:, 0, :] * weights[:, slot, None]
        out = term if out is None else out + term
    assert out is not None
    return out


def _dense(module: torch.nn.Module, hidden: torch.Tensor, index: torch.Tensor, weights: torch.Tensor
           ) -> torch.Tensor:
    """Every expert on every token, summed with the routing matrix's weights: ``[experts, tokens]``,
    the tokens innermost, as the products it scales hold them (a matrix of a few experts
    innermost would be sticked on them, and so would the products it scales, padded to whole
    sticks)."""
    experts = torch.arange(module.down_proj.shape[0], device=hidden.device)
    routing = None
    for slot in range(index.shape[-1]):
        term = torch.where(experts[:, None] == index[None, :, slot], weights[None, :, slot], 0)
        routing = term if routing is None else routing + term
    assert routing is not None
    rows = _rows(module, hidden, slice(None))
    return (rows * routing[:, :, None]).sum(0)


def experts_forward(module: torch.nn.Module, hidden_states: torch.Tensor, top_k_index: torch.Tensor,
                    top_k_weights: torch.Tensor) -> torch.Tensor:
    """transformers' experts call (``[tokens, hidden]`` states, the router's ``[tokens, k]``
    expert indices and weights) in the form :func:`choose_form` picks, its nodes annotated with
    it (:data:`ANNOTATION`)."""
    if getattr(module, "_is_expert_parallel", False):
        raise SpyreError(f"{type(module).__name__} is sharded for expert parallelism (its router may name experts "
                         "of other devices): load the model without expert parallelism to compile it for Spyre")
    tokens, top_k = top_k_index.shape
    up, _, down, _ = _weights(module)
    experts = up.shape[0]
    per_expert = up[0].numel() + down[0].numel()
    form, gathered, dense = choose_form(tokens, top_k, experts, per_expert, up.element_size())
    why = (f"{form} ({tokens} tokens x {top_k} of {experts} experts; predicted {gathered / 1000:.1f} us "
           f"gathered, {dense / 1000:.1f} us dense)")
    with fx_traceback.annotate({ANNOTATION: why}):
        out = (_gathered if form == GATHERED else _dense)(module, hidden_states, top_k_index, top_k_weights)
    return out.to(hidden_states.dtype)


@contextlib.contextmanager
def static_experts() -> Iterator[None]:
    """Within the block, every experts implementation of transformers (and ``eager``) computes
    with :func:`experts_forward`; nothing when transformers is not loaded."""
    if "transformers" not in sys.modules:
        yield
        return
    from transformers.integrations.moe import ALL_EXPERTS_FUNCTIONS

    saved = dict(ALL_EXPERTS_FUNCTIONS._local_mapping)
    for name in [*ALL_EXPERTS_FUNCTIONS, "eager"]:
        ALL_EXPERTS_FUNCTIONS[name] = experts_forward
    try:
        yield
    finally:
        ALL_EXPERTS_FUNCTIONS._local_mapping.clear()
        ALL_EXPERTS_FUNCTIONS._local_mapping.update(saved)


__all__ = ["ANNOTATION", "DENSE", "GATHERED", "choose_form", "experts_forward", "static_experts"]
