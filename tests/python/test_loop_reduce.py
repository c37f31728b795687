"""nl.loop_reduce: t[idx] = nl.loop_reduce(x, op, loop_indices) is NKI's
t = op(t, x); into a tile no op has written yet (how the NKIBench kernels
neuronxcc generates reduce: an nl.ndarray, no initial value) the reduction
starts with the loop, its first write copying x (docs/python.md "Loop
reductions")."""
import json

import numpy as np

import tpbsim
from tpbsim import nki
import tpbsim.nki.language as nl
import tpbsim.nki.isa as nisa

RNG = np.random.default_rng(17)


@nki.jit
def max_sum_blocks(x):
    """Per half j of the columns, the row max and row sum over x's 4 blocks,
    reduced with loop_reduce into block tiles made by nl.ndarray."""
    out = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    mx = nl.ndarray((2, nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    sm = nl.ndarray((2, nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        for i in nl.affine_range(4):
            t = nl.load(x[i, :, 256 * j:256 * (j + 1)])
            r = nisa.tensor_reduce(nl.max, data=t, axis=[1], keepdims=True)
            mx[j] = nl.loop_reduce(r, op=np.max, loop_indices=[i])
            s = nisa.tensor_reduce(nl.add, data=t, axis=[1], keepdims=True)
            sm[j] = nl.loop_reduce(s, op=np.add, loop_indices=[i])
    res = nl.ndarray((nl.par_dim(128), 4), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        res[:, j:j + 1] = nl.copy(mx[j])
        res[:, 2 + j:3 + j] = nl.copy(sm[j])
    nl.store(out, res)
    return out


def test_loop_reduce_into_unwritten_tile_numpy():
    """Before, the first iteration applied op to what the tile's storage
    held (NaN here: all-negative maxima and the sums came out wrong)."""
    x = RNG.standard_normal((4, 128, 512)).astype(np.float32) - 10
    got = max_sum_blocks(x)
    halves = (x[:, :, :256], x[:, :, 256:])
    np.testing.assert_array_equal(got[:, :2], np.stack([h.max(axis=(0, 2)) for h in halves], 1))
    np.testing.assert_allclose(got[:, 2:], np.stack([h.astype(np.float64).sum(axis=(0, 2))
                                                     for h in halves], 1), rtol=1e-5)
    ops = json.dumps(json.loads(tpbsim.kernel_json(max_sum_blocks, x))["body"])
    assert ops.count('"op": "if", "cond": "(i') == 2   # one per loop_reduce, on the i loop


@nki.jit
def max_blocks_per_iteration(x):
    """max_sum_blocks' max, with a Python counter carried from one
    iteration to the next: the kernel is traced per iteration, so each
    block's first loop_reduce is the write of its first iteration."""
    out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    mx = nl.ndarray((2, nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    n = 0
    for j in nl.affine_range(2):
        for i in nl.affine_range(4):
            t = nl.load(x[i, :, 256 * j:256 * (j + 1)])
            r = nisa.tensor_reduce(nl.max, data=t, axis=[1], keepdims=True)
            mx[j] = nl.loop_reduce(r, op=np.max, loop_indices=[i])
            n += 1
    res = nl.ndarray((nl.par_dim(128), 2), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(2):
        res[:, j:j + 1] = nl.copy(mx[j])
    nl.store(out, res)
    assert n == 8
    return out


def test_loop_reduce_per_iteration_numpy():
    """The writes of a loop's earlier iterations, which the unrolling loop
    holds until it ends, count as writes: only each block's first
    loop_reduce copies (were they missed, every one would, and the last
    block would win)."""
    x = RNG.standard_normal((4, 128, 512)).astype(np.float32) - 10
    got = max_blocks_per_iteration(x)
    np.testing.assert_array_equal(got, np.stack([x[:, :, :256].max(axis=(0, 2)),
                                                 x[:, :, 256:].max(axis=(0, 2))], 1))
    text = tpbsim.kernel_json(max_blocks_per_iteration, x)
    assert '"iterations"' in text and '"op": "if"' not in text


@nki.jit
def initial_then_reduce(x):
    """An initialised tile (nl.full) is reduced into as NKI documents it,
    t = op(t, x) from the first iteration on; so is one written by an
    earlier loop_reduce; and in a Python loop (traced per iteration) the
    first loop_reduce into an unwritten tile copies."""
    out = nl.ndarray((128, 3), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.full((nl.par_dim(128), 1), 5.0, dtype=nl.float32, buffer=nl.sbuf)
    py = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    again = nl.ndarray((nl.par_dim(128), 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(3):
        s = nisa.tensor_reduce(nl.add, data=nl.load(x[i]), axis=[1], keepdims=True)
        acc[...] = nl.loop_reduce(s, op=np.add, loop_indices=[i])
    for i in range(3):
        m = nisa.tensor_reduce(nl.min, data=nl.load(x[i]), axis=[1], keepdims=True)
        py[...] = nl.loop_reduce(m, op=np.minimum, loop_indices=[i])
    for i in nl.affine_range(3):
        m = nisa.tensor_reduce(nl.max, data=nl.load(x[i]), axis=[1], keepdims=True)
        again[...] = nl.loop_reduce(m, op=np.maximum, loop_indices=[i])
    for i in nl.affine_range(3):
        m = nisa.tensor_reduce(nl.min, data=nl.load(x[i]), axis=[1], keepdims=True)
        again[...] = nl.loop_reduce(m, op=np.minimum, loop_indices=[i])
    res = nl.ndarray((nl.par_dim(128), 3), dtype=nl.float32, buffer=nl.sbuf)
    res[:, 0:1] = nl.copy(acc)
    res[:, 1:2] = nl.copy(py)
    res[:, 2:3] = nl.copy(again)
    nl.store(out, res)
    return out


def test_loop_reduce_into_written_tile_numpy():
    x = RNG.uniform(1, 2, (3, 128, 64)).astype(np.float32)
    got = initial_then_reduce(x)
    np.testing.assert_allclose(got[:, 0], 5 + x.astype(np.float64).sum(axis=(0, 2)), rtol=1e-5)
    np.testing.assert_array_equal(got[:, 1], x.min(axis=(0, 2)))
    # max over the loop (from its first write), then min with the minima:
    # the minima, as the rows' maxima are above them
    np.testing.assert_array_equal(got[:, 2], x.min(axis=(0, 2)))
