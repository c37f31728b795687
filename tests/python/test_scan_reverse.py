"""nisa.tensor_tensor_scan with reverse0 / reverse1 (NKI: reverse0 makes
data0 the rhs of op0, reverse1 makes data1 the lhs of op1), checked against
a NumPy loop of NKI's definition; and the same through the JSON kernel
format's `reverse0` / `reverse1` fields."""
import json

import numpy as np
import pytest

from tpbsim import nki
from tpbsim._lib import Context
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from conftest import sbuf_copy

RNG = np.random.default_rng(5)
NP = {nl.multiply: np.multiply, nl.subtract: np.subtract, nl.divide: np.divide, nl.add: np.add}


def scan_ref(d0, d1, initial, op0, op1, r0, r1):
    """NKI's definition, one column at a time in float32."""
    f0, f1 = NP[op0], NP[op1]
    out = np.empty_like(d0, dtype=np.float32)
    prev = np.broadcast_to(np.asarray(initial, np.float32), (d0.shape[0],)).astype(np.float32)
    for i in range(d0.shape[1]):
        t = f0(prev, d0[:, i]) if r0 else f0(d0[:, i], prev)
        prev = (f1(d1[:, i], t) if r1 else f1(t, d1[:, i])).astype(np.float32)
        out[:, i] = prev
    return out


CASES = [
    (True, False, nl.subtract, nl.multiply),   # (prev - d0) * d1
    (False, True, nl.multiply, nl.subtract),   # d1 - d0 * prev
    (True, True, nl.divide, nl.subtract),      # d1 - prev / d0
    (False, False, nl.subtract, nl.add),       # the default order, for comparison
]


@pytest.mark.parametrize("r0, r1, op0, op1", CASES)
def test_scan_reverse_numpy(r0, r1, op0, op1):
    @nki.jit
    def k(a, b, c):
        ta, tb, tc = sbuf_copy(a), sbuf_copy(b), sbuf_copy(c)
        o = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor_scan(dst=o, data0=ta, data1=tb, initial=tc, op0=op0, op1=op1,
                                reverse0=r0, reverse1=r1)
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=o)
        return out
    a = (RNG.uniform(0.5, 1.5, (32, 40)) * RNG.choice([-1, 1], (32, 40))).astype(np.float32)
    b = RNG.uniform(-1.0, 1.0, (32, 40)).astype(np.float32)
    c = RNG.uniform(0.5, 1.5, (32, 1)).astype(np.float32)
    got = np.asarray(k(a, b, c), np.float32)
    want = scan_ref(a, b, c[:, 0], op0, op1, r0, r1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    if r0 or r1:   # the flags change the result: the test can tell them apart
        plain = scan_ref(a, b, c[:, 0], op0, op1, False, False)
        assert not np.allclose(got, plain)


def test_scan_reverse_json(tmp_path):
    """The kernel format's fields, with an immediate initial value."""
    kern = {"kernel": "scan_rev", "target": "trn2",
            "inputs": [{"name": "a", "shape": [16, 24], "dtype": "float32"},
                       {"name": "b", "shape": [16, 24], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [16, 24], "dtype": "float32"}],
            "body": [{"op": "tile", "name": t, "shape": [16, 24], "dtype": "float32"}
                     for t in ("ta", "tb", "o")] + [
                {"op": "load", "dst": "ta", "src": "a"},
                {"op": "load", "dst": "tb", "src": "b"},
                {"op": "tensor_tensor_scan", "dst": "o", "in0": "ta", "in1": "tb",
                 "initial": 2.0, "op0": "subtract", "op1": "divide", "reverse0": True,
                 "reverse1": True},
                {"op": "store", "dst": "out", "src": "o"}]}
    a = RNG.uniform(-1.0, 1.0, (16, 24)).astype(np.float32)
    b = (RNG.uniform(0.5, 1.5, (16, 24)) * RNG.choice([-1, 1], (16, 24))).astype(np.float32)
    ctx = Context()
    art = str(tmp_path / "art")
    ctx.compile_json(json.dumps(kern), "k.json", art)
    ctx.sim_load(art)
    ctx.sim_set_input("a", a)
    ctx.sim_set_input("b", b)
    ctx.sim_run()
    got = ctx.sim_fetch("out").reshape(16, 24)
    want = scan_ref(a, b, 2.0, nl.subtract, nl.divide, True, True)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
