"""The trace's per-op caches (python/tpbsim/nki/_trace.py, docs/python.md
"Trace cost"): call-site locations, int-indexed views and whole-tensor
operand text give what the uncached code gives."""
import inspect
import json
import os

import numpy as np
import pytest

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki import _trace

HERE = os.path.basename(__file__)


def _lines(fn, text):
    """The source lines of fn that contain text."""
    src, start = inspect.getsourcelines(fn)
    return [start + i for i, l in enumerate(src) if text in l]


def _copy(dst, src):
    nisa.tensor_copy(dst=dst, src=src)   # reached from two call sites


def two_sites(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf, name="t")
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf, name="u")
    nisa.dma_copy(dst=t, src=a)
    for _ in range(3):
        _copy(u, t)
        _copy(t, u)
    nisa.activation(dst=u, op=nl.exp, data=t); nisa.activation(dst=t, op=nl.exp, data=u)  # noqa: E702
    nisa.tensor_scalar(dst=u, data=t,
                       op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out, src=u)
    return out


def _ops(text):
    return json.loads(text)["body"]


def test_cached_locations_name_the_line_of_each_call():
    a = np.zeros((128, 64), np.float32)
    ops = _ops(tpbsim.kernel_json(nki.jit(two_sites), a))
    loc = lambda line: "%s:%d" % (HERE, line)
    copies = [o["loc"] for o in ops if o["op"] == "tensor_copy"]
    # one line of a helper reached from two call sites, three times each
    assert copies == [loc(_lines(_copy, "nisa.tensor_copy")[0])] * 6
    # two calls on one line: both name it; the next op names its own line
    acts = [o["loc"] for o in ops if o["op"] == "activation"]
    assert acts == [loc(_lines(two_sites, "nisa.activation")[0])] * 2
    ts = [o["loc"] for o in ops if o["op"] == "tensor_scalar"]
    # a call written over two lines: the line CPython reports for the call
    assert len(ts) == 1 and ts[0] in [loc(n) for n in
                                      _lines(two_sites, "nisa.tensor_scalar") +
                                      _lines(two_sites, "op0=nl.add")]
    dmas = [o["loc"] for o in ops if o["op"] == "dma_copy"]
    assert dmas == [loc(n) for n in _lines(two_sites, "nisa.dma_copy")]
    # traced again (the cache is warm): the same text
    assert tpbsim.kernel_json(nki.jit(two_sites), a) == tpbsim.kernel_json(nki.jit(two_sites), a)


def test_call_site_cache_is_keyed_by_code_and_instruction():
    a = np.zeros((128, 64), np.float32)
    tpbsim.kernel_json(nki.jit(two_sites), a)
    keys = [k for k in _trace._LOC if k[0] is _copy.__code__]
    assert len(keys) == 1   # one call site in _copy, however often reached
    site = [k for k in _trace._LOC if k[0] is two_sites.__code__]
    # the ndarray calls, dma_copy x2, activation x2, tensor_scalar: 8 sites
    assert len(site) == 8


def _views(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 8, 16), dtype=a.dtype, buffer=nl.sbuf)
    keys = [(slice(0, 64),), (slice(0, 64), 3), (5,), (5, slice(None), slice(2, 14, 3)),
            (slice(None), -1), (slice(1, None, 2), slice(None, 4)), (127, 7, 15), 0]
    for k in keys:
        v = t[k]
        assert t[k] is v                             # made once
        assert v.text() == t._index(k).text()        # what the uncached path gives
        assert v.shape == t._index(k).shape and v.offset == t._index(k).offset
    assert a[0:64, :] is a[0:64, :] and a[0:64, :] is not a[64:128, :]
    assert a[64:128, :].text() == '"a[64:128]"'
    # a key that is not all ints is not cached, and still works
    assert a[nl.ds(1, 4), :].text() == a[1:5, :].text()
    for _ in range(2):    # an invalid index raises every time (never cached)
        with pytest.raises(nki.NkiError, match="out of range"):
            t[128]
    nisa.dma_copy(dst=out, src=a)
    return out


def test_views_are_made_once_per_index():
    tpbsim.kernel_json(nki.jit(_views), np.zeros((128, 64), np.float32))


def _whole(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for shape in [(128,), (128, 64), (4, 8, 16), (1, 1)]:
        for buf in (nl.sbuf, nl.psum):
            t = nl.ndarray(shape, dtype=nl.float32, buffer=buf)
            assert t._txt == '"%s"' % _trace._slice_text(t.base, t._sl)
    assert tuple(a.shape) == a.base.shape and a._txt == '"a"'
    nisa.dma_copy(dst=out, src=a)
    return out


def test_whole_tensor_text_is_the_slice_text():
    tpbsim.kernel_json(nki.jit(_whole), np.zeros((128, 64), np.float32))


def test_errors_still_name_the_line_after_the_cache_is_warm():
    def bad(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for _ in range(2):
            t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
            nisa.activation(dst=t, op=nl.exp, data=a[0:128, :], scale="x")
        return out
    for _ in range(2):
        with pytest.raises(nki.NkiError) as e:
            tpbsim.kernel_json(nki.jit(bad), np.zeros((128, 64), np.float32))
        assert "%s:%d" % (HERE, _lines(bad, "nisa.activation")[0]) in str(e.value)
