# spyre-generate: greedy generation of a transformers causal LM on the reference
# interpreter (a prefill program and a decode program, compiled from the model's
# static-cache export recipe), optionally checked token for token against
# transformers' generate.  Reads a model factory; writes the generated token ids
# (stdout), the two output directories with -o, and errors on stderr.
"""``spyre-generate``: generate tokens with a model compiled for Spyre.

::

    spyre-generate examples/generation.py:llama --max-new-tokens 8 --check
    spyre-generate model.py:build --max-new-tokens 16 --cores 4 --numerics dlfloat16 --check

The factory returns ``(model, (input_ids,))`` or ``(model, (input_ids, attention_mask))``:
a transformers ``*ForCausalLM`` and its prompt (``[batch, prompt]`` token ids).  The
tool compiles a prefill program (the prompt) and a decode program (one token against
a static KV cache of ``prompt + max-new-tokens`` positions), runs the prefill and one
decode step per token on the interpreter with the cache kept on the device, and
prints each sequence's tokens.  ``--check`` runs ``model.generate(do_sample=False)``
too: in ieee numerics a differing token is an error; in dlfloat16 it reports the first
step that differs and the largest logit error.  ``--debug`` shows tracebacks.
"""

from __future__ import annotations

import argparse
import sys

from spyre_mlir.diagnostics import SpyreError
from spyre_mlir.hardware import NUMERICS, NUMERICS_IEEE, check_numerics, driver_cores
from spyre_mlir.sources import parse_source
from spyre_mlir.tools.cli import add_version_argument, argument_errors, plain_text, run_tool


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="spyre-generate", description=plain_text(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL.py:FACTORY", help="factory returning (model, (input_ids[, attention_mask]))")
    p.add_argument("--max-new-tokens", type=int, required=True, metavar="N", help="tokens to generate")
    p.add_argument("--cores", type=int, help="cores to divide work across (default $SENCORES, else 32)")
    p.add_argument("--numerics", default=NUMERICS_IEEE, choices=NUMERICS,
                   help="how the interpreter holds float16: ieee (default) or dlfloat16, as the device stores it")
    p.add_argument("--check", action="store_true", help="compare with transformers' generate (greedy)")
    p.add_argument("-o", "--output", metavar="DIR", help="keep the programs in DIR/prefill and DIR/decode")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    add_version_argument(p)
    return p


def generate_main(args: argparse.Namespace) -> int:
    with argument_errors("spyre-generate", "--numerics"):
        check_numerics(args.numerics)
    if args.max_new_tokens < 1:
        raise SpyreError("argument --max-new-tokens: must be at least 1", loc="spyre-generate")
    cores = driver_cores(args.cores, "spyre-generate")
    source = parse_source(args.model)
    if source.factory is None:
        raise SpyreError(f"expected 'model.py:factory', got '{args.model}'", loc=args.model)
    from spyre_mlir.codegen.writer import check_output_directory

    if args.output:
        check_output_directory(args.output)

    from spyre_mlir.generation import check_generation, compile_generation, generate_steps
    from spyre_mlir.importer.loader import load_factory

    model, prompt = _model_and_prompt(load_factory(args.model)(), args.model)
    input_ids, attention_mask = prompt
    programs = compile_generation(model, input_ids.shape[0], input_ids.shape[1], args.max_new_tokens, cores=cores,
                                  out_dir=args.output, attention_mask=attention_mask)
    generation = generate_steps(model, input_ids, attention_mask=attention_mask,
                                max_new_tokens=args.max_new_tokens, numerics=args.numerics, programs=programs)
    for row in generation.tokens.tolist():
        print(" ".join(str(token) for token in row))
    if args.check:
        check = check_generation(model, input_ids, generation, attention_mask=attention_mask)
        if not check.matches and args.numerics == NUMERICS_IEEE:
            raise SpyreError(check.summary(), loc=args.model)
        print(f"spyre-generate: {check.summary()}", file=sys.stderr)
    return 0


def _model_and_prompt(made: object, where: str) -> tuple[object, tuple[object, object]]:
    import torch

    if not (isinstance(made, (tuple, list)) and len(made) == 2 and isinstance(made[1], (tuple, list))
            and 1 <= len(made[1]) <= 2 and all(isinstance(t, torch.Tensor) for t in made[1])):
        raise SpyreError("the factory must return (model, (input_ids,)) or (model, (input_ids, attention_mask))",
                         loc=where)
    model, inputs = made
    if not hasattr(model, "generate") or not hasattr(model, "generation_config"):
        raise SpyreError(f"{type(model).__name__} is no transformers model with generate()", loc=where)
    return model, (inputs[0], inputs[1] if len(inputs) == 2 else None)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return run_tool("spyre-generate", lambda: generate_main(args), args.model, debug=args.debug)


if __name__ == "__main__":
    sys.exit(main())
