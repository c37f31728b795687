"""nl.affine_range / nl.sequential_range bodies traced once with a symbolic
loop variable into one kernel-format loop (docs/python.md "Loops"), and the
fallback to tracing the kernel per iteration (Retrace) when the body needs
the variable's value.  Each kernel is checked against the per-iteration
trace: the same .bin streams and the same simulated outputs."""
import json
import os

import numpy as np

import tpbsim
from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim._loop_identity import _files, _run

rng = np.random.default_rng(11)


def _loops(text):
    """(op, var-or-'iterations') of every loop op in a description."""
    out = []

    def walk(body):
        for op in body:
            if op["op"] in ("affine_range", "sequential_range"):
                out.append((op["op"], op.get("var", "iterations")))
                walk(op.get("body", []))
                for it in op.get("iterations", []):
                    walk(it)
    walk(json.loads(text)["body"])
    return out


def _same_as_per_iteration(k, tmp_path, *args):
    """k traced as by default and per iteration: equal .bin streams and
    bit-identical outputs; returns (default description, outputs)."""
    new = k.trace(*args)
    old = k._trace(args, {}, False)   # what a Retrace falls back to
    res = {}
    for tag, tr in (("new", new), ("old", old)):
        art = str(tmp_path / tag)
        res[tag] = _run(tr[0], k.fn.__name__, art, tr[2], tr[1])
    bins = [{f: d for f, d in _files(str(tmp_path / t)).items() if f.endswith(".bin")}
            for t in ("new", "old")]
    assert bins[0] and bins[0] == bins[1]
    assert res["new"][1] == res["old"][1]
    for a, b in zip(res["new"][0], res["old"][0]):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    return new[0], res["new"][0]


@nki.jit
def mixed(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n):
        r = (i % 2) * 128
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[r:r + 128, :])
        nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0, engine=nisa.engine.vector)
        nisa.dma_copy(dst=out[r:r + 128, :], src=u)
    return out


def test_traced_once_same_as_unrolled(tmp_path):
    a = rng.standard_normal((256, 64)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(mixed, tmp_path, a, 6)
    assert _loops(text) == [("affine_range", "i")]
    assert '"range": [6]' in text and "a[128*(i%2):128*(i%2) + 128]" in text
    np.testing.assert_array_equal(out, a + 1)


@nki.jit
def nested(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 64):
        for j in nl.sequential_range(1, a.shape[1] // 32, 2):
            t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i * 64:(i + 1) * 64, nl.ds(j * 32, 32)])
            nisa.activation(dst=t, op=nl.exp, data=t)
            nisa.dma_copy(dst=out[nl.ds(i * 64, 64), j * 32:(j + 1) * 32], src=t)
        z = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=z, value=0.0)
        for j in nl.affine_range(0, a.shape[1] // 32, 2):
            nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, j * 32:(j + 1) * 32], src=z)
    return out


def test_nested_loops(tmp_path):
    a = rng.standard_normal((128, 256)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(nested, tmp_path, a)
    loops = _loops(text)
    assert [k for k, _ in loops] == ["affine_range", "sequential_range", "affine_range"]
    assert "iterations" not in [v for _, v in loops] and len(set(loops)) == 3
    assert '"range": [1, 8, 2]' in text and '"range": [0, 8, 2]' in text
    ref = np.exp(a)
    for c in range(0, 256, 64):
        ref[:, c:c + 32] = 0
    np.testing.assert_allclose(out, ref, rtol=1e-5)


@nki.jit
def branchy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 64:(i + 1) * 64, :])
        if i == 2:   # Python control flow on the variable: traced per iteration
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-1.0)
        nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=t)
    return out


def test_branch_falls_back(tmp_path):
    a = rng.standard_normal((256, 32)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(branchy, tmp_path, a)
    assert _loops(text) == [("affine_range", "iterations")]
    ref = a.copy()
    ref[128:192] *= -1
    np.testing.assert_array_equal(out, ref)


@nki.jit
def carried(a):
    """Python state carried between iterations (prev) and a Python list
    indexed by the variable: both need the per-iteration trace."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    prev = None
    tiles = []
    for i in nl.affine_range(3):
        t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 64:(i + 1) * 64, :])
        if prev is not None:
            nisa.tensor_tensor(dst=t, data1=t, data2=prev, op=nl.add)
        prev = t
        tiles.append(t)
    for i in nl.affine_range(3):
        nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=tiles[i])
    return out


def test_carried_state_falls_back(tmp_path):
    a = rng.standard_normal((192, 32)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(carried, tmp_path, a)
    assert [v for _, v in _loops(text)] == ["iterations", "iterations"]
    np.testing.assert_allclose(out, np.cumsum(a.reshape(3, 64, 32), 0).reshape(192, 32),
                               rtol=1e-6)


@nki.jit
def early_exit(a, use_after):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    z = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=z, value=0.0)
    for i in nl.affine_range(4):
        nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=z)
    for i in nl.affine_range(4):
        t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 64:(i + 1) * 64, :])
        nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=t)
        if not use_after:
            break
    if use_after:   # a body tile after the loop: per iteration it is still there
        nisa.dma_copy(dst=out[0:64, :], src=t)
    return out


def test_break_falls_back(tmp_path):
    a = rng.standard_normal((256, 32)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(early_exit, tmp_path, a, False)
    # the whole kernel is traced again per iteration, the first loop too
    assert [v for _, v in _loops(text)] == ["iterations", "iterations"]
    ref = np.zeros_like(a)
    ref[:64] = a[:64]
    np.testing.assert_array_equal(out, ref)


def test_tile_after_loop_falls_back(tmp_path):
    a = rng.standard_normal((256, 32)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(early_exit, tmp_path, a, True)
    assert [v for _, v in _loops(text)] == ["iterations", "iterations"]
    ref = a.copy()
    ref[:64] = a[192:]
    np.testing.assert_array_equal(out, ref)


@nki.jit
def counter(a):
    """A Python counter used in an op: the two passes differ."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    c = 0
    for i in nl.affine_range(3):
        c += 1
        t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=t, value=float(c))
        nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=t)
    return out


def test_counter_falls_back(tmp_path):
    a = np.zeros((192, 32), np.float32)
    text, (out,) = _same_as_per_iteration(counter, tmp_path, a)
    assert [v for _, v in _loops(text)] == ["iterations"]
    np.testing.assert_array_equal(out, np.repeat([1.0, 2.0, 3.0], 64)[:, None] + a)


@nki.jit
def matmul_acc(aT, b):
    """nc_matmul(accumulate=None) into a PSUM tile declared outside the loop:
    overwrite in the first iteration, accumulate in the others."""
    out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(aT.shape[0] // 128):
        sa = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        sb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=sa, src=aT[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=sb, src=b[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(dst=ps, stationary=sa, moving=sb)
    r = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=ps)
    nisa.dma_copy(dst=out, src=r)
    return out


def test_matmul_accumulate_expression(tmp_path):
    aT = rng.integers(-4, 4, (384, 64)).astype(np.float32)
    b = rng.integers(-4, 4, (384, 128)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(matmul_acc, tmp_path, aT, b)
    assert _loops(text) == [("affine_range", "i")]
    assert '"accumulate": "(i != 0)"' in text
    np.testing.assert_array_equal(out, aT.T @ b)


def _sym_text(expr, n=6):
    """The slice start a loop-variable expression prints as."""
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(n):
            t = nl.ndarray((64, 8), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[:, nl.ds(expr(i), 8)])
            nisa.dma_copy(dst=out, src=t)
        return out
    text = tpbsim.kernel_json(k, np.zeros((64, 1024), np.float32))
    op = [o for o in json.loads(text)["body"][0].get("body", []) if o["op"] == "dma_copy"]
    return op[0]["src"][len("a[:, "):-1].split(":")[0] if op else None


def test_symbolic_arithmetic_printing():
    assert _sym_text(lambda i: (i % 2) * 128) == "128*(i%2)"
    assert _sym_text(lambda i: i * 16 + 8) == "16*i + 8"
    assert _sym_text(lambda i: 512 - 8 * i) == "-8*i + 512"
    assert _sym_text(lambda i: (i + 1) // 2 * 8) == "8*((i + 1)//2)"
    assert _sym_text(lambda i: (4 * i) // 2 * 8) == "16*i"       # exact division
    assert _sym_text(lambda i: (4 * i + 1) % 2 * 8) == "8"        # a constant
    assert _sym_text(lambda i: (i + 8) // 8 * 8) == "8"           # bounds: 8 <= i+8 < 16
    assert _sym_text(lambda i: i % 4 * 8 + (i // 4) * 256, 8) == "8*(i%4) + 256*(i//4)"
    # comparisons every iteration agrees on are decided; others fall back
    assert _sym_text(lambda i: min(128, 600 - i * 64)) == "128"
    assert _sym_text(lambda i: max(8 * i, 0)) == "8*i"
    assert _sym_text(lambda i: min(128, 400 - i * 64)) is None   # per iteration


@nki.jit
def masked_rows(x):
    """An edge-row mask and an affine_select offset in the loop variable:
    expressions in the kernel-format integer fields."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(64)[:, None]
    for i in nl.affine_range(x.shape[0] // 64):
        t = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 64:(i + 1) * 64, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0, mask=(i * 64 + i_p < 150))
        nisa.affine_select(dst=t, pattern=[[-1, 32]], channel_multiplier=1, on_true_tile=t,
                           on_false_value=-5.0, cmp_op=nl.greater_equal, offset=i * 4)
        nisa.dma_copy(dst=out[i * 64:(i + 1) * 64, :], src=t)
    return out


def test_mask_and_offset_expressions(tmp_path):
    x = rng.standard_normal((256, 32)).astype(np.float32)
    text, (out,) = _same_as_per_iteration(masked_rows, tmp_path, x)
    assert _loops(text) == [("affine_range", "i")]
    assert '"offset": "64*i - 150"' in text and '"offset": "4*i"' in text
    ref = x + (np.arange(256) < 150)[:, None]
    p, f = np.arange(256)[:, None] % 64, np.arange(32)[None, :]
    ref = np.where(p - f + (np.arange(256)[:, None] // 64) * 4 >= 0, ref, -5.0)
    np.testing.assert_array_equal(out, ref.astype(np.float32))


@nki.jit
def pid_mod(x):
    """Program ids and a loop variable in one // / % expression."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        p = nl.program_id(0)
        r = (p + i) % 2 * 32 + p * 64   # per iteration an error: pid % 2
        t = nl.ndarray((32, 16), dtype=nl.float32)
        nisa.dma_copy(dst=t, src=x[r:r + 32, :])
        nisa.dma_copy(dst=out[r:r + 32, :], src=t)
    return out


def test_program_id_in_loop_expression():
    x = rng.standard_normal((128, 16)).astype(np.float32)
    text = tpbsim.kernel_json(pid_mod[2], x)
    assert _loops(text) == [("affine_range", "i")]
    assert "x[32*((i + pid)%2) + 64*pid:32*((i + pid)%2) + 64*pid + 32]" in text
    np.testing.assert_array_equal(pid_mod[2](x), x)
