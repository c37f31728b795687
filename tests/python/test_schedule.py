"""NKI's scheduling API through the Python front-end (docs/python.md
"Scheduling"): kernel.with_schedule([...]) and nl.no_reorder().  The edges
change the program order / add waits only, never the values: checked
against NumPy, plus the traced kernel text and the refused forms."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl


@nki.jit
def two_ops(t):
    x = nl.ndarray(t.shape, t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=t)
    a = nl.ndarray(t.shape, t.dtype, buffer=nl.sbuf)
    b = nl.ndarray(t.shape, t.dtype, buffer=nl.sbuf)
    c = nl.ndarray(t.shape, t.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=b, data=x, op0=nl.add, operand0=1.0, name="plus1")
    nisa.reciprocal(dst=a, data=x, name="recip")
    nisa.tensor_tensor(dst=c, data1=a, data2=b, op=nl.add)
    out = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=c)
    return out


def _ops(text):
    return [o.get("name") for o in json.loads(text)["body"] if o["op"] != "tile"]


def test_with_schedule_values_and_order():
    t = np.random.default_rng(1).uniform(0.5, 2.0, (128, 64)).astype(np.float32)
    ref = 1.0 / t + (t + 1.0)
    plain = two_ops(t)
    sched = two_ops.with_schedule([("plus1", "recip")])
    assert json.loads(tpbsim.kernel_json(sched, t))["schedule"] == [["plus1", ["recip"]]]
    assert "schedule" not in json.loads(tpbsim.kernel_json(two_ops, t))
    np.testing.assert_allclose(plain, ref, rtol=1e-6)
    np.testing.assert_allclose(sched(t), ref, rtol=1e-6)
    # the list form is the same edge
    np.testing.assert_allclose(two_ops.with_schedule([("plus1", ["recip"])])(t), ref, rtol=1e-6)


def test_with_schedule_contradiction_refused():
    @nki.jit
    def chain(t):
        x = nl.ndarray(t.shape, t.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=t)
        nisa.tensor_scalar(dst=x, data=x, op0=nl.add, operand0=1.0, name="first")
        nisa.tensor_scalar(dst=x, data=x, op0=nl.multiply, operand0=2.0, name="second")
        out = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=x)
        return out

    t = np.ones((128, 8), np.float32)
    with pytest.raises(tpbsim.TpbError, match="'first' cannot run after 'second'"):
        chain.with_schedule([("first", "second")])(t)
    with pytest.raises(tpbsim.TpbError, match="no op named 'nope'"):
        chain.with_schedule([("first", "nope")])(t)
    with pytest.raises(nki.NkiError, match="pairs"):
        chain.with_schedule([("first",)])


def _loop_body(i, in_tiles, out_tiles):
    tile = in_tiles[i]
    o = nl.ndarray(tile.shape, tile.dtype, buffer=nl.sbuf)
    nisa.activation(dst=o, data=tile, op=nl.exp, name="act%d" % i)
    out_tiles.append(o)


def _load_all(*inputs):
    tiles = []
    for inp in inputs:
        t = nl.ndarray(inp.shape, inp.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=inp)
        tiles.append(t)
    return tiles


def _store_all(tiles):
    outs = []
    for t in tiles:
        o = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=t)
        outs.append(o)
    return tuple(outs)


@nki.jit
def three_exps(a, b, c):
    in_tiles = _load_all(a, b, c)
    out_tiles = []
    with nl.no_reorder():
        for i in range(len(in_tiles)):
            _loop_body(i, in_tiles, out_tiles)   # dynamically scoped: still in the block
    return _store_all(out_tiles)


@nki.jit
def three_exps_plain(a, b, c):
    in_tiles = _load_all(a, b, c)
    out_tiles = []
    for i in range(len(in_tiles)):
        _loop_body(i, in_tiles, out_tiles)
    return _store_all(out_tiles)


def test_no_reorder():
    rng = np.random.default_rng(2)
    xs = [rng.uniform(-1, 1, (128, 32)).astype(np.float32) for _ in range(3)]
    k = json.loads(tpbsim.kernel_json(three_exps, *xs))
    blocks = [o for o in k["body"] if o["op"] == "no_reorder"]
    assert len(blocks) == 1
    assert [o["name"] for o in blocks[0]["body"] if o["op"] != "tile"] == ["act0", "act1", "act2"]
    for o, x in zip(three_exps(*xs), xs):
        np.testing.assert_allclose(o, np.exp(x), rtol=2e-3)
    # the NKI guide's explicit-edge spelling of the same order
    edges = [("act%d" % i, "act%d" % (i - 1)) for i in range(1, 3)]
    for o, x in zip(three_exps_plain.with_schedule(edges)(*xs), xs):
        np.testing.assert_allclose(o, np.exp(x), rtol=2e-3)
