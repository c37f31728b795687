"""NumPy values next to kernel tensors: a NumPy scalar on the left of tile
arithmetic is the tile's reflected operator (as a Python number is), and a
NumPy function given a tile raises NkiError naming the kernel line (a tile
has no values at trace time), against NumPy."""
import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.language as nl


@nki.jit
def left_scalars(a):
    outs = [nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm) for _ in range(4)]
    t = nl.load(a)
    vals = (np.float32(2.5) * t, np.float32(1.5) + t, np.float32(3.0) - t, np.float32(2.0) / t)
    for o, v in zip(outs, vals):
        nl.store(o, v)
    return tuple(outs)


def test_numpy_scalar_left_of_tile_numpy():
    a = np.random.default_rng(1).uniform(0.5, 2.0, (128, 64)).astype(np.float32)
    r = left_scalars(a)
    np.testing.assert_allclose(r[0], np.float32(2.5) * a, rtol=1e-6)
    np.testing.assert_allclose(r[1], np.float32(1.5) + a, rtol=1e-6)
    np.testing.assert_allclose(r[2], np.float32(3.0) - a, rtol=1e-6)
    np.testing.assert_allclose(r[3], np.float32(2.0) / a, rtol=1e-6)


def test_numpy_function_on_tile_refused():
    def k(a):
        out = nl.ndarray((128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        m = np.mean(nl.load(a), axis=[1])
        nl.store(out, m)
        return out
    a = np.ones((128, 64), np.float32)
    line = k.__code__.co_firstlineno + 2
    with pytest.raises(NkiError, match=r"test_numpy_interop.py:%d: NumPy cannot read" % line):
        tpbsim.kernel_json(nki.jit(k), a)


def test_tile_indexed_by_a_predicate_refused():
    """t[i < n] (an undocumented beta-1 form) is refused naming the form and
    the mask= to use, at the kernel line (it was a raw TypeError)."""
    def k(a):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        i = nl.arange(64)[None, :]
        t = nl.load(a)
        nl.store(out, nl.copy(t[i < 32]))
        return out
    with pytest.raises(NkiError, match=r"test_numpy_interop.py:\d+: 't'\[<predicate>\]: "
                       r"indexing a tile with a predicate"):
        tpbsim.kernel_json(nki.jit(k), np.ones((128, 64), np.float32))
