"""nisa.activation / activation_reduce with a number bias: NKI takes a
compile-time scalar bias from NeuronCore-v3 (trn2) on and only a [P, 1]
vector on NeuronCore-v2 (trn1).  Checked against NumPy on trn2 and trn3;
trn1 refuses it naming the field; the JSON kernel format's number bias
encodes the same instruction."""
import json

import numpy as np
import pytest

from tpbsim import nki
from tpbsim._lib import Context, TpbError
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

from conftest import sbuf_copy

RNG = np.random.default_rng(9)


def make(bias, scale, func, reduce=False, target="trn2"):
    @nki.jit(platform_target=target)
    def k(x):
        tx = sbuf_copy(x)
        o = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
        out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        if reduce:
            r = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation_reduce(dst=o, op=func, data=tx, reduce_op=nl.add, reduce_res=r,
                                   bias=bias, scale=scale)
            rout = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=o)
            nisa.dma_copy(dst=rout, src=r)
            return out, rout
        nisa.activation(dst=o, op=func, data=tx, bias=bias, scale=scale)
        nisa.dma_copy(dst=out, src=o)
        return out
    return k


@pytest.mark.parametrize("target", ["trn2", "trn3"])
@pytest.mark.parametrize("bias, scale", [(0.75, 1.0), (-1.5, 2.0), (3, 0.5)])
def test_number_bias_numpy(target, bias, scale):
    x = RNG.uniform(-2.0, 2.0, (64, 48)).astype(np.float32)
    got = np.asarray(make(bias, scale, nl.tanh, target=target)(x), np.float32)
    want = np.tanh(x * np.float32(scale) + np.float32(bias))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    plain = np.tanh(x * np.float32(scale))
    assert not np.allclose(got, plain, atol=1e-3)   # the bias was applied


def test_number_bias_reduce_numpy():
    x = RNG.uniform(-1.0, 1.0, (32, 40)).astype(np.float32)
    o, r = make(0.25, 1.0, nl.exp, reduce=True)(x)
    want = np.exp(x + np.float32(0.25))
    np.testing.assert_allclose(np.asarray(o), want, rtol=2e-6)
    np.testing.assert_allclose(np.asarray(r)[:, 0], want.sum(axis=1), rtol=2e-5)


def test_number_bias_refused_on_trn1():
    x = RNG.uniform(-1.0, 1.0, (16, 8)).astype(np.float32)
    with pytest.raises(TpbError, match="bias: a number bias needs NeuronCore-v3 or newer"):
        make(0.5, 1.0, nl.tanh, target="trn1")(x)


def test_number_bias_json(tmp_path):
    kern = {"kernel": "act_bias", "target": "trn2",
            "inputs": [{"name": "x", "shape": [16, 24], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [16, 24], "dtype": "float32"}],
            "body": [{"op": "tile", "name": "t", "shape": [16, 24], "dtype": "float32"},
                     {"op": "load", "dst": "t", "src": "x"},
                     {"op": "activation", "dst": "t", "src": "t", "func": "exp",
                      "scale": -1.0, "bias": 0.5},
                     {"op": "store", "dst": "out", "src": "t"}]}
    x = RNG.uniform(-1.0, 1.0, (16, 24)).astype(np.float32)
    ctx = Context()
    art = str(tmp_path / "art")
    ctx.compile_json(json.dumps(kern), "k.json", art)
    ctx.sim_load(art)
    ctx.sim_set_input("x", x)
    ctx.sim_run()
    got = ctx.sim_fetch("out").reshape(16, 24)
    np.testing.assert_allclose(got, np.exp(-x + np.float32(0.5)), rtol=2e-6)


def test_infinite_bias_refused():
    x = RNG.uniform(-1.0, 1.0, (16, 8)).astype(np.float32)
    with pytest.raises(Exception, match="field 'bias': \"inf\" is not supported as a bias"):
        make(float("inf"), 1.0, nl.tanh)(x)
