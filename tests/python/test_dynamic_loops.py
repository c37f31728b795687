"""nl.dynamic_range / nl.fori_loop with a register trip count (docs/python.md,
docs/compiler.md "Dynamic loops"): the body is traced once into one
kernel-format dynamic_range op; one kernel runs with several trip counts
read from an input, against NumPy."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


def _body(a, b, out, acc, i):
    ta = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    tb = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a[i * 64:(i + 1) * 64, :])
    nisa.dma_copy(dst=tb, src=b[i * 64:(i + 1) * 64, :])
    nisa.tensor_tensor(dst=tb, data1=ta, data2=tb, op=nl.multiply)
    nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=tb)
    nisa.tensor_tensor(dst=acc, data1=acc, data2=tb, op=nl.add)


def _kernel(use_fori):
    @nki.jit
    def k(a, b, n):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        tot = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        z = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        for j in nl.affine_range(a.shape[0] // 64):
            nisa.dma_copy(dst=out[j * 64:(j + 1) * 64, :], src=z)
        acc = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        cnt = nisa.register_alloc()
        nisa.register_load(cnt, n)
        if use_fori:
            nl.fori_loop(1, cnt, lambda i: _body(a, b, out, acc, i), step=2)
        else:
            for i in nl.dynamic_range(cnt):
                _body(a, b, out, acc, i)
        nisa.dma_copy(dst=tot, src=acc)
        return out, tot
    return k


def _ref(a, b, idx):
    out = np.zeros_like(a)
    tot = np.zeros((64, 32), np.float32)
    for i in idx:
        blk = a[i * 64:(i + 1) * 64] * b[i * 64:(i + 1) * 64]
        out[i * 64:(i + 1) * 64] = blk
        tot = tot + blk
    return out, tot


@pytest.mark.parametrize("use_fori", [False, True])
def test_dynamic_range_numpy(use_fori):
    r = np.random.default_rng(14)
    a, b = (r.standard_normal((768, 32)).astype(np.float32) for _ in range(2))
    k = _kernel(use_fori)
    for n in (0, 1, 5, 12):   # the compile-time guess is 6 iterations
        out, tot = k(a, b, np.array([[n]], np.int32))
        idx = range(1, n, 2) if use_fori else range(n)
        want_out, want_tot = _ref(a, b, idx)
        np.testing.assert_array_equal(out, want_out)
        np.testing.assert_array_equal(tot, want_tot)


def test_dynamic_range_traced_once():
    a = np.zeros((768, 32), np.float32)
    text = tpbsim.kernel_json(_kernel(False), a, a, np.zeros((1, 1), np.int32))
    loops = [op for op in json.loads(text)["body"] if op["op"] == "dynamic_range"]
    assert len(loops) == 1 and loops[0]["range"][1].startswith("vreg")
    assert sum(op["op"] == "dma_copy" for op in loops[0]["body"]) == 3


def test_dynamic_range_int_bounds_and_errors():
    assert list(nl.dynamic_range(2, 7, 2)) == [2, 4, 6]

    @nki.jit
    def bad(n):
        r = nisa.register_alloc()
        nisa.register_load(r, n)
        for _ in nl.dynamic_range(r, 8):
            pass
        return n
    with pytest.raises(tpbsim.NkiError, match="register start is not supported"):
        bad(np.zeros((1, 1), np.int32))
