"""Python state an nl.affine_range / nl.sequential_range body carries from
one iteration to the next and that is read only after the loop (a counter,
a list that grows, swapped buffers): NKI unrolls these loops as Python's
range(), so the state has seen n iterations.  tpbsim traces such a body
twice symbolically; the state the two passes leave differs, so the kernel
is traced again per iteration (docs/python.md "Loops").  Values against
NumPy; state a pass sets the same way keeps the loop traced once."""
import json
import sys

import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

rng = np.random.default_rng(23)


def _loops(text):
    """"var" (traced once) or "iterations" (per iteration) of every
    affine_range / sequential_range loop op of a kernel description."""
    out = []

    def walk(body):
        for op in body:
            if op["op"] in ("affine_range", "sequential_range"):
                out.append("var" if "var" in op else "iterations")
                walk(op.get("body", []))
                for it in op.get("iterations", []):
                    walk(it)
    walk(json.loads(text)["body"])
    return out


def _scaled(acc, factor):
    """acc *= factor, then acc to a new HBM output."""
    nisa.tensor_scalar(dst=acc, data=acc, op0=nl.multiply, operand0=factor)
    out = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


def _sum_tiles(x, i, acc):
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)


def _acc():
    acc = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    return acc


def _mean_kernel(rng_fn):
    @nki.jit
    def mean_of_tiles(x):   # the pkL repro_3 kernel: 1/count after the loop
        acc = _acc()
        count = 0
        for i in rng_fn(x.shape[0] // 128):
            _sum_tiles(x, i, acc)
            count += 1
        return _scaled(acc, 1.0 / count)
    return mean_of_tiles


@pytest.mark.parametrize("rng_fn", [nl.affine_range, nl.sequential_range], ids=["affine",
                                                                                "sequential"])
@pytest.mark.parametrize("n", [3, 4])
def test_counter_read_after_loop_numpy(rng_fn, n):
    x = rng.standard_normal((n * 128, 64)).astype(np.float32)
    k = _mean_kernel(rng_fn)
    out = k(x)
    np.testing.assert_allclose(out, x.astype(np.float64).reshape(n, 128, 64).mean(0),
                               rtol=1e-5, atol=1e-6)
    assert _loops(k.trace(x)[0]) == ["iterations"]


class _Stats:   # a kernel's own object (an NKIObject-like dataclass)
    def __init__(self):
        self.n = 0


@nki.jit
def carried_forms(x, form):
    """1/n of the sum of n tiles, n counted by a Python form the body
    carries: each one's value after the loop depends on n."""
    n = x.shape[0] // 128
    acc = _acc()
    if form == "list":
        seen = []
        for i in nl.affine_range(n):
            _sum_tiles(x, i, acc)
            seen.append(i)
        return _scaled(acc, 1.0 / len(seen))
    if form == "nonlocal":
        count = 0

        def bump():
            nonlocal count
            count += 1
        for i in nl.affine_range(n):
            _sum_tiles(x, i, acc)
            bump()
        return _scaled(acc, 1.0 / count)
    if form == "attribute":
        st = _Stats()
        for i in nl.affine_range(n):
            _sum_tiles(x, i, acc)
            st.n += 1
        return _scaled(acc, 1.0 / st.n)
    if form == "dict":   # an entry per iteration, keyed by the loop variable
        by_i = {}
        for i in nl.affine_range(n):
            _sum_tiles(x, i, acc)
            by_i[i] = True
        return _scaled(acc, 1.0 / len(by_i))
    if form == "helper_loop":   # the loop in a helper, the count in the kernel's list
        box = [0]

        def helper(cell):
            for i in nl.affine_range(n):
                _sum_tiles(x, i, acc)
                cell[0] += 1
        helper(box)
        return _scaled(acc, 1.0 / box[0])
    if form == "nested":   # n // 2 * 2 tiles, counted in the inner loop
        count = 0
        for j in nl.affine_range(n // 2):
            for i in nl.affine_range(2):
                _sum_tiles(x, j * 2 + i, acc)
                count += 1
        return _scaled(acc, 1.0 / count)
    if form == "global":
        global _COUNT
        _COUNT = 0
        for i in nl.affine_range(n):
            _sum_tiles(x, i, acc)
            _COUNT += 1
        return _scaled(acc, 1.0 / _COUNT)
    if form == "genexpr":   # one item per iteration
        return _scaled(acc, 1.0 / sum(_one(x, i, acc) for i in nl.affine_range(n)))
    if form == "listcomp":
        return _scaled(acc, 1.0 / len([_one(x, i, acc) for i in nl.affine_range(n)]))
    if form == "generator":
        def tiles():
            for i in nl.affine_range(n):
                yield i
        return _scaled(acc, 1.0 / sum(_one(x, i, acc) for i in tiles()))
    raise AssertionError(form)


def _one(x, i, acc):
    _sum_tiles(x, i, acc)
    return 1


_COUNT = 0


@pytest.mark.parametrize("form", ["list", "nonlocal", "attribute", "dict", "helper_loop",
                                  "nested", "global", "genexpr", "generator",
                                  # Python 3.12 inlines it: no frame to tell (docs/python.md)
                                  pytest.param("listcomp", marks=pytest.mark.skipif(
                                      sys.version_info >= (3, 12), reason="inlined"))])
def test_carried_forms_numpy(form):
    n = 6
    x = rng.standard_normal((n * 128, 64)).astype(np.float32)
    out = carried_forms(x, form)
    np.testing.assert_allclose(out, x.astype(np.float64).reshape(n, 128, 64).mean(0),
                               rtol=1e-5, atol=1e-6)


@nki.jit
def ping_pong(x, n):
    """Two buffers swapped at every iteration; the one read after the loop
    depends on the parity of n."""
    a, b = _acc(), _acc()
    nisa.dma_copy(dst=a, src=x[0:128, :])
    nisa.dma_copy(dst=b, src=x[128:256, :])
    for i in nl.affine_range(n):
        a, b = b, a
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


@pytest.mark.parametrize("n", [2, 3])
def test_swapped_buffers_numpy(n):
    x = rng.standard_normal((256, 64)).astype(np.float32)
    np.testing.assert_array_equal(ping_pong(x, n), x[128:256] if n % 2 else x[0:128])


@nki.jit
def same_each_pass(x):
    """State every pass sets the same way (a constant, an index
    expression, a body tile, a list rebuilt in the body, a tuple of
    offsets): the loop stays traced once."""
    acc = _acc()
    for i in nl.affine_range(x.shape[0] // 128):
        tmp = 5
        off = i * 128
        rows = (off, off + 128)
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        parts = [t, rows]
        nisa.dma_copy(dst=parts[0], src=x[rows[0]:rows[1], :])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    return _scaled(acc, float(tmp))


def test_state_set_each_pass_stays_traced_once():
    x = rng.standard_normal((512, 64)).astype(np.float32)
    assert _loops(same_each_pass.trace(x)[0]) == ["var"]
    np.testing.assert_allclose(same_each_pass(x),
                               5 * x.astype(np.float64).reshape(4, 128, 64).sum(0),
                               rtol=1e-5, atol=1e-5)


@nki.jit
def beta2_allocated(x):
    """nki-samples' beta-2 allocated kernels: `cur += size` after a direct
    allocation in the body.  Beta-2 traces the body once, so the counter is
    no per-iteration state there: the loop stays traced once (each
    allocation is evaluated at its site's first run, _sites.py)."""
    import tpbsim.nki.compiler as ncc
    acc = _acc()
    cur = 4096
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=cur))
        cur += 64 * 4
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
    return _scaled(acc, 1.0)


def test_beta2_direct_allocation_counter_stays_traced_once():
    x = rng.standard_normal((512, 64)).astype(np.float32)
    assert _loops(beta2_allocated.trace(x)[0]) == ["var"]
    np.testing.assert_allclose(beta2_allocated(x), x.astype(np.float64).reshape(4, 128, 64).sum(0),
                               rtol=1e-5, atol=1e-5)
