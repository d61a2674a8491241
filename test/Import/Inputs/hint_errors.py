"""Each factory misuses the hint API once (test/Import/hint-errors.mlir)."""
import torch

from spyre_mlir import declare_tensor_dim, name_tensor_dims, spyre_hint


def _x():
    declare_tensor_dim("A", 4)
    declare_tensor_dim("B", 64)
    return torch.randn(4, 64)


def undeclared():
    x = _x()
    name_tensor_dims(x, ["A", "Q"])
    return (lambda x: x + 1), (x,)


def size_mismatch():
    x = _x()
    name_tensor_dims(x, ["B", "A"])
    return (lambda x: x + 1), (x,)


def _hinted(**kw):
    def kernel(x):
        with spyre_hint(**kw):
            return x + 1
    return kernel, (_x(),)


def zero_tiles():
    return _hinted(tiles={"A": 0})


def fractional_tiles():
    return _hinted(tiles={"A": 1.5})


def unknown_keyword():
    return _hinted(tile={"A": 2})


def undeclared_hint():
    return _hinted(tiles={"Z": 2})
