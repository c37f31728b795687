"""NKI beta-1's run-time HBM index (one int element of an SBUF/PSUM tile
used as an index of an HBM tensor: `nl.load(m_buffer[:, q])`,
`nl.store(o_buffer[:, q], t)`, `query[b, h, :, q, :]`, NxDI's
flash_paged_attention_with_schedule) and `a[idx_tile, cols]` on a 2-D
.reshape() of an N-D HBM tensor (its paged_cache.py), checked against
NumPy's indexing of the same data (docs/python.md "Run-time indices")."""
import json

import numpy as np
import pytest

from tpbsim import nki
from tpbsim.nki import NkiError
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)


def _f32(shape):
    return RNG.standard_normal(shape).astype(np.float32)


@nki.jit
def _load_dim1(buf, sel):
    """out[t] = buf[:, sel[t]] (repro_5's form: the slot read at run time)."""
    n = sel.shape[0]
    out = nl.ndarray((n, buf.shape[0], buf.shape[2]), dtype=buf.dtype, buffer=nl.shared_hbm)
    s = nl.load(sel.reshape((1, n)), dtype=nl.int32)
    for t in nl.sequential_range(n):
        q = s[0, t]
        nl.store(out[t], nl.load(buf[:, q]))
    return out


def test_load_runtime_index_numpy():
    """Several values, repeated, the last valid one (3) included; the loop
    body is traced once (its bounds table is the kernel's, not the body's)
    and holds the table read, the register load and the moved load."""
    buf = _f32((128, 4, 8))
    sel = np.array([2, 0, 3, 3, 1], np.int32)
    np.testing.assert_array_equal(_load_dim1(buf, sel), buf[:, sel].transpose(1, 0, 2))
    doc = json.loads(_load_dim1.trace(buf, sel)[0])
    loop = doc["body"][-1]
    assert loop["op"] == "sequential_range" and "var" in loop
    assert doc["constants"] == [{"name": "run_index_4x8", "dtype": "int32",
                                 "value": [[0], [8], [16], [24]]}]
    ops = [o["op"] for o in loop["body"]]
    assert ops[ops.index("load_tensor_to_register") - 1] == "dma_copy"
    assert [o.get("src_reg") for o in loop["body"] if o["op"] == "load"] == [0]


def test_store_runtime_index_accumulate_numpy():
    """acc[:, sel[t]] += x[t]: a load and a store at the same run-time slot,
    slots revisited (the flash-attention o/m/l buffers); slots a number
    fills first (nl.store(acc[:, q], value=0.0) at run-time slots)."""
    @nki.jit
    def k(x, sel, zero_sel):
        T = x.shape[0]
        acc = nl.ndarray((128, 3, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        z = nl.load(zero_sel.reshape((1, 3)), dtype=nl.int32)
        for i in nl.sequential_range(3):
            nl.store(acc[:, z[0, i]], value=0.0)
        s = nl.load(sel.reshape((1, T)), dtype=nl.int32)
        for t in nl.sequential_range(T):
            q = s[0, t]
            a = nl.load(acc[:, q])
            nl.store(acc[:, q], nl.add(a, nl.load(x[t])))
        return acc
    x = _f32((6, 128, 16))
    sel = np.array([0, 2, 0, 2, 2, 1], np.int32)
    want = np.zeros((128, 3, 16), np.float32)
    for t, q in enumerate(sel):
        want[:, q] += x[t]
    np.testing.assert_allclose(k(x, sel, np.array([2, 0, 1], np.int32)), want, rtol=1e-6)


def test_query_5d_index_and_dma_copy_numpy():
    """query[b, h, :, q, :] on a 5-D reshape (integer and loop-variable
    indices before it, dim 3 moved), and nisa.dma_copy with the run-time
    index on either side: dim 0 of the source, dim 1 of the destination."""
    @nki.jit
    def k(query, sel):
        b, h, d, s = query.shape
        q5 = query.reshape((b, h, d, 4, s // 4))
        out = nl.ndarray((2, h, d, s // 4), dtype=query.dtype, buffer=nl.shared_hbm)
        out2 = nl.ndarray((d, 4, s // 4), dtype=query.dtype, buffer=nl.shared_hbm)
        ix = nl.load(sel.reshape((1, 3)), dtype=nl.int32)
        for t in nl.sequential_range(2):
            for i in nl.affine_range(h):
                nl.store(out[t, i], nl.load(q5[1, i, :, ix[0, t], :]))
        t3 = nl.ndarray((d, s // 4), dtype=query.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t3, src=query.reshape((b * h, d, s))[ix[0, 2], :, 0:s // 4])
        for j in nl.affine_range(4):
            nl.store(out2[:, j], value=0.0)
        nisa.dma_copy(dst=out2[:, ix[0, 0]], src=t3)
        return out, out2
    query = _f32((2, 3, 64, 256))
    for sel in ([3, 0, 5], [1, 2, 0]):   # dim 3 of 4 twice, then dim 0 of 6
        o, o2 = k(query, np.array(sel, np.int32))
        np.testing.assert_array_equal(o, query[1].reshape(3, 64, 4, 64)[:, :, sel[:2]]
                                      .transpose(2, 0, 1, 3))
        want = np.zeros((64, 4, 64), np.float32)
        want[:, sel[0]] = query.reshape(6, 64, 256)[sel[2], :, 0:64]
        np.testing.assert_array_equal(o2, want)


def test_ds_start_arith_psum_numpy():
    """nl.ds(q, n) with a run-time start, an index computed on a tile
    (q + 1), an element off partition 0, and one in PSUM."""
    @nki.jit
    def k(a, idx):
        out = nl.ndarray((4, 4, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        it = nl.load(idx)                                 # [4, 2] int32
        nl.store(out[0], nl.load(a[nl.ds(it[0, 0], 4), :]))
        nl.store(out[1], nl.load(a[nl.ds(it[0, 0] + 1, 4), :]))
        nl.store(out[2], nl.load(a[nl.ds(it[3, 1], 4), :]))
        p = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.psum)
        nisa.dma_copy(dst=p, src=idx[2:3, 0:1])
        nl.store(out[3], nl.load(a[nl.ds(p[0, 0], 4), :]))
        return out
    a = _f32((16, 64))
    for i0, i3, i2 in ((0, 12, 5), (11, 7, 12)):    # 12: the last start of a 4-row slice
        idx = np.array([[i0, 0], [0, 0], [i2, 0], [0, i3]], np.int32)
        want = np.stack([a[i0:i0 + 4], a[i0 + 1:i0 + 5], a[i3:i3 + 4], a[i2:i2 + 4]])
        np.testing.assert_array_equal(k(a, idx), want)


@pytest.mark.parametrize("sel", [[0, 4], [-1, 0], [1, 7]])
def test_runtime_index_out_of_range(sel):
    """A value outside the dim is NKI's IndexError (oob_mode error), also
    when the moved access would stay inside the tensor (buf[1, q] with q = 4
    of a [4, 4, 8] tensor is buf[2, 0]'s row)."""
    @nki.jit
    def k(buf, sel):
        out = nl.ndarray((2, 1, 8), dtype=buf.dtype, buffer=nl.shared_hbm)
        s = nl.load(sel.reshape((1, 2)), dtype=nl.int32)
        for t in nl.sequential_range(2):
            nl.store(out[t], nl.load(buf[1:2, s[0, t]]))
        return out
    buf = _f32((4, 4, 8))
    bad = [v for v in sel if not 0 <= v < 4][0]
    with pytest.raises(IndexError, match=r"index %d is out of bounds for axis 1 with size 4$"
                       % bad):
        k(buf, np.array(sel, np.int32))


def test_runtime_index_store_and_ds_out_of_range():
    """A store at a slot past the dim, and an nl.ds start past the last
    start of its size, raise IndexError too."""
    @nki.jit
    def st(x, sel):
        out = nl.ndarray((128, 3, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        s = nl.load(sel.reshape((1, 1)), dtype=nl.int32)
        nl.store(out[:, s[0, 0]], nl.load(x))
        return out

    @nki.jit
    def ds(a, sel):
        s = nl.load(sel.reshape((1, 1)), dtype=nl.int32)
        out = nl.ndarray((4, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a[nl.ds(s[0, 0], 4), :]))
        return out
    x = _f32((128, 8))
    np.testing.assert_array_equal(st(x, np.array([2], np.int32))[:, 2], x)
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for axis 1 with size 3$"):
        st(x, np.array([3], np.int32))
    a = _f32((16, 64))
    with pytest.raises(IndexError, match=r"index 13 \(idx element 0\) is out of range \[0, 13\)"):
        ds(a, np.array([13], np.int32))


@pytest.mark.parametrize("fn, match", [
    (lambda a, s, t: nl.load(t[:, s[0, 0]]), r"run-time index on an SBUF/PSUM tile"),
    (lambda a, s, t: nl.load(a[s[0, 0], s[0, 1]]), r"one run-time index per access"),
    (lambda a, s, t: nl.load(a[:, nl.ds(s[0, 0], 8), 0]), r"nl\.ds\(<run-time start>, 8\)"),
    (lambda a, s, t: nl.load(a[s[0, 0]:s[0, 0] + 2]), r"write nl\.ds\(q, n\)"),
    (lambda a, s, t: nl.load(a[:, t[0:1, 0:1]]), r"is float32"),
    (lambda a, s, t: nl.load(a[0, s[0:2, 0:2]]), r"the index must be an SBUF \[P, 1\] tile"),
    (lambda a, s, t: nl.load(a[s[0:2, 0:1], 0]), r"a\[idx_tile, cols\] on a whole 2-D"),
    (lambda a, s, t: nl.exp(a[:, s[0, 0]]), r"only as the HBM side of nisa\.dma_copy, nl\.load"),
])
def test_runtime_index_refused(fn, match):
    """Forms tpbsim does not take raise NkiError naming the kernel line."""
    def k(a, sel):
        s = nl.load(sel, dtype=nl.int32)
        t = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(t, 0.0)
        fn(a, s, t)
        return a
    with pytest.raises(NkiError, match=r"test_runtime_index\.py:\d+: .*" + match):
        nki.jit(k)(_f32((4, 4, 8)), np.zeros((2, 2), np.int32))


def test_tile_index_on_reshape_numpy():
    """a[idx_tile, cols] on a 2-D .reshape() of an N-D HBM tensor (key_cache
    (blocks, heads, bs, d) as (blocks * heads, bs * d)): a gather and a
    scatter of its rows, the last row included; a row past it raises."""
    @nki.jit
    def k(cache, idx):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((150, 2, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        flat, flat2 = cache.reshape((300, 64)), out2.reshape((300, 64))
        it = nl.load(idx)
        i_p, i_f = nl.arange(128)[:, None], nl.arange(64)[None, :]
        t = nl.load(flat[it[i_p, 0], i_f])
        nl.store(out, t)
        for r in nl.affine_range(3):
            nl.store(flat2[nl.ds(r * 100, 100), :], value=0.0)
        nl.store(flat2[it, 0:64], t)
        return out, out2
    c = _f32((150, 2, 64))
    idx = RNG.permutation(300)[:128].astype(np.int32)
    idx[5] = 299
    o, o2 = k(c, idx.reshape(128, 1))
    np.testing.assert_array_equal(o, c.reshape(300, 64)[idx])
    want = np.zeros((300, 64), np.float32)
    want[idx] = c.reshape(300, 64)[idx]
    np.testing.assert_array_equal(o2, want.reshape(150, 2, 64))
    idx[7] = 300
    with pytest.raises(IndexError, match=r"out of bounds for axis 0 with size 19200"):
        k(c, idx.reshape(128, 1))


def test_ap_vector_offset_on_prefix_slice_numpy():
    """.ap(vector_offset=) on a[0:64] (C-order, but not all of a: no
    reshape of it) gathers rows of a, whose stride it keeps; a[0:64][idx,
    cols] is refused, pointing there."""
    @nki.jit
    def k(a, idx):
        out = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        it = nl.load(idx)
        t = nl.ndarray((8, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[0:64, :].ap([[16, 8], [1, 16]], vector_offset=it,
                                                 indirect_dim=0))
        nl.store(out, t)
        return out
    a = _f32((128, 16))
    idx = np.array([[1], [5], [63], [0], [2], [127], [4], [6]], np.int32)
    np.testing.assert_array_equal(k(a, idx), a[idx[:, 0]])

    @nki.jit
    def bad(a, idx):
        it = nl.load(idx)
        return nl.load(a[0:64, :][it, 0:16])
    with pytest.raises(NkiError, match=r"a\[idx_tile, cols\] on a whole 2-D HBM tensor or a "
                       r"2-D \.reshape\(\) of all of one"):
        bad(a, idx)


def test_paged_attention_schedule_pattern_numpy():
    """A trimmed flash_paged_attention_with_schedule: per large tile t, the
    KV rows of its blocks gathered from the key cache's 2-D reshape by a
    block table (a[idx_tile, cols]), scores against the q tile picked at
    run time (q = tile_q_sbuf[0, t]; query[0, h, :, q, :]) and added into
    the o buffer's slot q (load and store at the run-time slot)."""
    nblk, kh, bs, d, LQ, nq, NT = 24, 2, 16, 32, 64, 3, 5
    bpt = 128 // bs

    @nki.jit
    def k(query, key_cache, tile_q, block_tables):
        o_buf = nl.ndarray((LQ, nq, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(nq):
            nl.store(o_buf[:, i], value=0.0)
        flat = key_cache.reshape((nblk * kh * bs, d))   # one row per token
        q5 = query.reshape((1, 2, d, nq, LQ))
        tq = nl.load(tile_q.reshape((1, NT)), dtype=nl.int32)
        for t in nl.sequential_range(NT):
            rows = nl.load(block_tables[t].reshape((128, 1)), dtype=nl.int32)
            kt = nl.load(flat[rows, 0:d])                      # [128 tokens, d]
            q = tq[0, t]
            qt = nl.load(q5[0, 1, :, q, :])                 # [d, LQ]
            ktt = nl.transpose(kt)                             # [d, 128]
            s = nl.matmul(qt, ktt, transpose_x=True)           # [LQ, 128]
            acc = nl.load(o_buf[:, q])
            nl.store(o_buf[:, q], nl.add(acc, s))
        return o_buf
    query = _f32((1, 2, d, nq * LQ))
    kc = _f32((nblk, kh, bs, d))
    tq = np.array([0, 2, 0, 1, 2], np.int32)
    head = 1
    blocks = np.stack([RNG.permutation(nblk)[:bpt] for _ in range(NT)])
    # token rows of the flattened (blocks * heads * bs, d) cache
    bt = ((blocks * kh + head)[:, :, None] * bs + np.arange(bs)).reshape(NT, 128).astype(np.int32)
    want = np.zeros((LQ, nq, 128))
    for t in range(NT):
        K = kc.reshape(-1, d)[bt[t]].astype(np.float64)
        Q = query[0, 1, :, tq[t] * LQ:(tq[t] + 1) * LQ].astype(np.float64)
        want[:, tq[t]] += Q.T @ K.T
    got = k(query, kc, tq, bt)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())


@nki.jit
def _skip_on_runtime_index(buf, idx):
    out = nl.ndarray((4, 8), dtype=buf.dtype, buffer=nl.shared_hbm)
    q = nl.load(idx)
    nl.store(out, nl.load(buf[:, q[0, 0]], mode=nisa.oob_mode.skip))
    return out


def test_skip_mode_on_runtime_index_refused():
    """mode=oob_mode.skip is not dropped on an index read at run time: refused by name."""
    buf = np.zeros((4, 3, 8), np.float32)
    with pytest.raises(NkiError, match="oob_mode.skip with an index read at run time"):
        _skip_on_runtime_index(buf, np.array([[1]], np.int32))


@nki.jit
def _last_dim_gather(state, idx, flat):
    """state[1, y] / state[0, y] = ... / flat[y]: an index tile on the last
    dim, one element per index row (biquando's quantum-simulator kernel)."""
    out = nl.ndarray((idx.shape[0], 1), dtype=state.dtype, buffer=nl.shared_hbm)
    out_flat = nl.ndarray((idx.shape[0], 1), dtype=flat.dtype, buffer=nl.shared_hbm)
    y = nl.load(idx)
    a = nl.load(state[1, y])
    nl.store(out, a)
    nl.store(state[0, y], value=nl.multiply(a, 2.0))
    nl.store(out_flat, nl.load(flat[y]))
    return out, out_flat, state


def test_index_tile_on_last_dim_numpy():
    """a[i, idx_tile] gathers / scatters one element per index row, NumPy's
    [P, 1] (it was refused as a run-time index of more than one element)."""
    st = _f32((2, 512))
    flat = _f32((300,))
    ix = RNG.permutation(300)[:128].astype(np.int32).reshape(128, 1)
    o, of, s2 = _last_dim_gather(st.copy(), ix, flat)
    np.testing.assert_array_equal(o, st[1, ix])
    np.testing.assert_array_equal(of, flat[ix])
    want = st.copy()
    want[0, ix[:, 0]] = 2 * st[1, ix[:, 0]]
    np.testing.assert_array_equal(s2, want)


@nki.jit
def _row_gather_no_cols(state, idx):
    """state[0, y] on [2, N, 1]: the index tile before the last dim, whole
    rows (a[i, idx_tile, :]); read, doubled, written back in place."""
    out = nl.ndarray((idx.shape[0], 1), dtype=state.dtype, buffer=nl.shared_hbm)
    y = nl.load(idx)
    a = nl.load(state[0, y])
    nl.store(out, a)
    nl.store(state[1, y], value=nl.add(a, nl.load(state[1, y])))
    return out, state


def test_index_tile_before_last_dim_without_cols_numpy():
    st = _f32((2, 400, 1))
    ix = RNG.permutation(400)[:128].astype(np.int32).reshape(128, 1)
    o, s2 = _row_gather_no_cols(st.copy(), ix)
    np.testing.assert_array_equal(o, st[0, ix[:, 0]])
    want = st.copy()
    want[1, ix[:, 0]] += st[0, ix[:, 0]]
    np.testing.assert_array_equal(s2, want)
