"""Ported call and import forms: a kernel's *args and **kwargs receive the
call's extra arguments (arrays become input tensors named args_0, ... and
by their keys; other values pass as they are), against NumPy; beta-1's
nki.language.constants module."""
import json

import numpy as np

import tpbsim
from tpbsim import nki
import tpbsim.nki.language as nl


@nki.jit
def scaled(x, **kwargs):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.multiply(nl.load(x), kwargs["scale"])
    if "bias" in kwargs:
        t = nl.add(t, nl.load(kwargs["bias"]))
    nl.store(out, t)
    return out


@nki.jit
def summed(x, *ys, scale=1.0):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    for y in ys:
        t = nl.add(t, nl.load(y))
    nl.store(out, nl.multiply(t, scale))
    return out


def test_var_keyword_arguments_numpy():
    rng = np.random.default_rng(10)
    x, b = (rng.random((128, 8), dtype=np.float32) for _ in range(2))
    np.testing.assert_array_equal(scaled(x, scale=2.0), 2 * x)
    np.testing.assert_allclose(scaled(x, scale=2.0, bias=b), 2 * x + b, rtol=1e-6)


def test_var_positional_arguments_numpy():
    rng = np.random.default_rng(11)
    x, y, z = (rng.random((128, 8), dtype=np.float32) for _ in range(3))
    np.testing.assert_allclose(summed(x, y, z, scale=0.5), (x + y + z) * 0.5, rtol=1e-6)
    np.testing.assert_array_equal(summed(x), x)
    names = [i["name"] for i in json.loads(tpbsim.kernel_json(summed, x, y, z))["inputs"]]
    assert names == ["x", "ys_0", "ys_1"]


def test_language_constants_sizeinbytes():
    """beta-1's `neuronxcc.nki.language.constants` ports as
    tpbsim.nki.language.constants: sizeinbytes of nl and NumPy dtypes."""
    from tpbsim.nki.language.constants import sizeinbytes
    assert [sizeinbytes(d) for d in (nl.bfloat16, nl.float32, np.float16, nl.float8_e4m3,
                                     nl.int32, "uint16", np.int8)] == [2, 4, 2, 1, 4, 2, 1]
    assert nl.constants.sizeinbytes is sizeinbytes
