"""Where an imported op is located: the model's line, also when the model is an installed
package's (transformers' modeling files live under the stdlib's own directory,
``lib/python3.11/site-packages``), never torch's, spyre_mlir's or the stdlib's."""

import os
import sysconfig

import torch

from spyre_mlir.importer.locations import user_frame


def _frame(path: str, line: int, code: str = "y = f(x)") -> str:
    return f'File "{path}", line {line}, in forward\n    {code}\n'


def test_a_frame_in_an_installed_package_is_the_models_line():
    model = os.path.join(sysconfig.get_paths()["purelib"], "transformers", "models", "llama", "modeling_llama.py")
    stdlib = os.path.join(sysconfig.get_paths()["stdlib"], "contextlib.py")
    trace = _frame(model, 248) + _frame(stdlib, 81) + _frame(os.path.join(os.path.dirname(torch.__file__),
                                                                          "nn", "modules", "linear.py"), 134)
    found = user_frame(trace)
    assert found is not None and (found.file, found.line) == (model, 248)


def test_frames_of_torch_and_the_stdlib_alone_locate_nothing():
    stdlib = os.path.join(sysconfig.get_paths()["stdlib"], "contextlib.py")
    trace = _frame(stdlib, 81) + _frame(os.path.join(os.path.dirname(torch.__file__), "functional.py"), 10)
    assert user_frame(trace) is None
