"""NKI index-expression masks through the Python API (docs/python.md
"mask="): `mask=(i_p < n) & (i_f >= m)` over `nl.arange` indices is an AND
of affine predicates, one PredExt each on the instruction (seed 001-51).
Checked against NumPy, plus the traced kernel text and refused forms."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def masked(x, z):
    P, F = x.shape
    tx = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    rs = [nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf) for _ in range(3)]
    nisa.dma_copy(dst=tx, src=x)
    for r in rs:
        nisa.dma_copy(dst=r, src=z)
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(F)[None, :]
    # a rectangle: rows < 40, columns >= 8 (the predicate rides on the op)
    nisa.tensor_scalar(dst=rs[0], data=tx, op0=nl.add, operand0=1.0,
                       mask=(i_p < 40) & (i_f >= 8))
    # a band with a hole, on an op computed into a tile then copied under the mask
    nisa.activation(dst=rs[1], op=nl.exp, data=tx,
                    mask=(i_p + i_f < 70) & (i_f - i_p >= -5) & (i_p != 3))
    # the kernel format's list form, and one comparison alone
    nisa.tensor_copy(dst=rs[2], src=tx, mask=[
        {"pattern": [[2, F]], "channel_multiplier": -1, "offset": 0, "cmp_op": nl.greater},
        {"pattern": [[0, F]], "channel_multiplier": 1, "offset": -60, "cmp_op": "less_equal"}])
    outs = []
    for r in rs:
        o = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=r)
        outs.append(o)
    return tuple(outs)


def test_index_masks_numpy():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (64, 48)).astype(np.float32)
    z = np.full((64, 48), -7.0, np.float32)
    masks = [o["mask"] for o in json.loads(tpbsim.kernel_json(masked, x, z))["body"]
             if "mask" in o]
    assert masks[0] == [
        {"pattern": [[0, 48]], "offset": -40, "channel_multiplier": 1, "cmp_op": "less"},
        {"pattern": [[1, 48]], "offset": -8, "channel_multiplier": 0, "cmp_op": "greater_equal"}]
    assert len(masks[1]) == 3 and masks[1][2]["cmp_op"] == "not_equal"
    o0, o1, o2 = masked(x, z)
    p = np.arange(64)[:, None]
    f = np.arange(48)[None, :]
    np.testing.assert_array_equal(o0, np.where((p < 40) & (f >= 8), x + 1, z))
    np.testing.assert_allclose(o1, np.where((p + f < 70) & (f - p >= -5) & (p != 3),
                                            np.exp(x), z), rtol=2e-6)
    np.testing.assert_array_equal(o2, np.where((2 * f - p > 0) & (p - 60 <= 0), x, z))


def _one(mask_fn):
    @nki.jit
    def k(x):
        t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        i_p = nl.arange(x.shape[0])[:, None]
        i_f = nl.arange(x.shape[1])[None, :]
        nisa.tensor_copy(dst=t, src=t, mask=mask_fn(i_p, i_f))
        o = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t)
        return o
    return k


def test_index_mask_refused():
    x = np.ones((16, 8), np.float32)
    with pytest.raises(tpbsim.TpbError, match="at most 4"):
        _one(lambda p, f: (p < 1) & (p < 2) & (p < 3) & (p < 4) & (f < 5))(x)
    with pytest.raises(nki.NkiError, match="truth value"):
        _one(lambda p, f: (p < 1) if p else (f < 2))(x)
    with pytest.raises(tpbsim.TpbError, match="placed on an axis"):
        _one(lambda p, f: nl.arange(16) < 3)(x)
    with pytest.raises(nki.NkiError, match="integers only"):
        _one(lambda p, f: p * 0.5 < 3)(x)
