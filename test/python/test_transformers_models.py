"""transformers' modules as their authors wrote them, from small configs with random weights,
compiled and compared with eager on 1, 4 and 32 cores (nothing is downloaded).

BERT's encoder layer with eager attention and an additive padding mask (``finfo.min`` on the
last keys) at a sequence length of 100, which is not a whole stick: the scores' keys are padded
to 128, and so are the K rows of the values the probabilities multiply.  Its parameters include
``LayerNorm.weight`` (exported as ``p_..._layernorm_weight``), staged by the program's signature.
"""

from __future__ import annotations

import pytest
import torch

from e2e_support import ImportedPrograms, compile_and_check

transformers = pytest.importorskip("transformers", reason="the test extra installs transformers==5.23.0")


class BertEncoderLayer(torch.nn.Module):
    """One ``BertLayer`` returning its hidden states."""

    def __init__(self, config):
        super().__init__()
        self.layer = transformers.models.bert.modeling_bert.BertLayer(config)

    def forward(self, hidden, mask):
        out = self.layer(hidden, attention_mask=mask)
        return out[0] if isinstance(out, tuple) else out


def bert_layer(length: int, dtype: torch.dtype):
    def factory():
        config = transformers.BertConfig(hidden_size=128, intermediate_size=256, num_attention_heads=2,
                                         num_hidden_layers=1)
        config._attn_implementation = "eager"
        model = BertEncoderLayer(config).to(dtype).eval()
        mask = torch.zeros(1, 1, length, length, dtype=dtype)
        mask[..., length - 7:] = torch.finfo(dtype).min  # the last 7 keys are padding
        return model, (torch.randn(1, length, 128, dtype=dtype), mask)
    return factory


imported = ImportedPrograms({"bert_100_fp16": bert_layer(100, torch.float16),
                             "bert_100_fp32": bert_layer(100, torch.float32)})


@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch.export's own deprecation notices
@pytest.mark.parametrize("name", ["bert_100_fp16", "bert_100_fp32"])
@pytest.mark.parametrize("cores", [1, 4, 32])
def test_bert_layer_at_length_100_matches_eager(name, cores, tmp_path):
    compile_and_check(name, cores, tmp_path / "out", imported)
