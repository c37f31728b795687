"""Forms of public NKI kernels (pkI: AWS NxDI 2.27 / 2.28, nkipy), each
against NumPy: NKI beta-1's `nt.tensor[nt.mutable]` annotation of an input
written in place (write_kv_cache_at_batch_kernel, rolling_buffer_set_state);
beta-1 kernels branching in Python on nl.program_id(), traced per program
(write_kv_cache_at_batch_kernel[(nl.nc(2),)], split_along_dim0_kernel);
nl.rms_norm(mask=) bounding the rows / columns of a partial tile (NxDI's
rmsnorm_kernel); and the error for a tensor indexed by nl.affine_range
objects (nkipy's playground)."""
import json

import numpy as np
import pytest

import tpbsim
from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
import tpbsim.nki.typing as nt

RNG = np.random.default_rng(41)


def _line(fn, text):
    """The line of fn's source holding text (an error names it)."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(lines) if text in s)


# ---- nt.tensor[nt.mutable] ----

def test_typing_tensor_mutable_is_the_tensor_type():
    """nt.tensor[nt.mutable] (NKI beta-1) is an annotation: the tensor type,
    as nt.mutable_tensor; other items keep tensor[shape, dtype]'s error."""
    assert nt.tensor[nt.mutable] is nt.tensor is nt.mutable_tensor
    with pytest.raises(NkiError, match=r"nki.typing.tensor\[\.\.\.\]: expected sizes "
                                       r"\(tensor\[128, 512\]\), a shape and a dtype "
                                       r"\(tensor\[\[128, 512\], nl.float32\]\) or "
                                       r"nki.typing.mutable, got 'mutable'"):
        nt.tensor["mutable"]


@nki.jit
def add_in_place(buf: nt.tensor[nt.mutable], x: nt.tensor):
    t = nl.load(buf[0:4, 0:8]) + nl.load(x[0:4, 0:8])
    nl.store(buf[0:4, 0:8], value=t)
    return buf


def test_mutable_annotation_written_in_place_numpy():
    """A kernel writing its `nt.tensor[nt.mutable]` argument and returning
    it: the call returns the written tensor (the argument array untouched,
    as for any call); nki.simulate_kernel writes it into the caller's array."""
    b = np.arange(48, dtype=np.float32).reshape(6, 8)
    x = RNG.standard_normal((6, 8)).astype(np.float32)
    want = b.copy()
    want[0:4] += x[0:4]
    arg = b.copy()
    np.testing.assert_array_equal(add_in_place(arg, x), want)
    np.testing.assert_array_equal(arg, b)
    nki.simulate_kernel(add_in_place, arg, x)
    np.testing.assert_array_equal(arg, want)


@nki.jit(platform_target="trn2", experimental_flags="enable-mutable-parameter")
def write_kv_at_batch(K: nt.tensor, V: nt.tensor, K_prior: nt.tensor[nt.mutable],
                      V_prior: nt.tensor[nt.mutable], batch_idx):
    """NxDI 2.27's write_kv_cache_at_batch_kernel, in its forms: a loaded
    batch index, nl.mgrid, Python branches on the program id (K on program
    0, V on the last), oob_mode.skip."""
    batch_idx = nl.load(batch_idx)
    _, h, s, d = K.shape
    n_prgs = nl.num_programs(axes=0) if nl.program_ndim() else 1
    prg_id = nl.program_id(axis=0) if nl.program_ndim() else 0
    _, i_h, i_s, i_d = nl.mgrid[:1, :h, :s, :d]
    if prg_id == 0:
        nisa.dma_copy(src=K, dst=K_prior[batch_idx, i_h, i_s, i_d], oob_mode=nisa.oob_mode.skip)
    if prg_id == n_prgs - 1:
        nisa.dma_copy(src=V, dst=V_prior[batch_idx, i_h, i_s, i_d], oob_mode=nisa.oob_mode.skip)
    return K_prior, V_prior


@pytest.mark.parametrize("grid", [None, (nl.nc(2),)])
@pytest.mark.parametrize("idx", [0, 2])
def test_write_kv_cache_at_batch_form_numpy(grid, idx):
    K = RNG.standard_normal((1, 2, 5, 64)).astype(np.float32)
    V = RNG.standard_normal((1, 2, 5, 64)).astype(np.float32)
    Kp = RNG.standard_normal((3, 2, 8, 64)).astype(np.float32)
    Vp = RNG.standard_normal((3, 2, 8, 64)).astype(np.float32)
    bi = np.array([idx], np.int32)
    wK, wV = Kp.copy(), Vp.copy()
    wK[idx, :, :5], wV[idx, :, :5] = K[0], V[0]
    k = write_kv_at_batch if grid is None else write_kv_at_batch[grid]
    if grid is not None:
        doc = json.loads(tpbsim.kernel_json(k, K, V, Kp, Vp, bi))
        assert doc["grid"] == ["nc(2)"] and [op["op"] for op in doc["body"]] == ["if", "if"]
    gK, gV = k(K, V, Kp.copy(), Vp.copy(), bi)
    np.testing.assert_array_equal(gK, wK)
    np.testing.assert_array_equal(gV, wV)
    aK, aV = Kp.copy(), Vp.copy()   # beta-1's simulate_kernel: written in place
    nki.simulate_kernel(k, K, V, aK, aV, bi)
    np.testing.assert_array_equal(aK, wK)
    np.testing.assert_array_equal(aV, wV)


# ---- beta-1 forms with Python control flow on nl.program_id() ----

@nki.jit
def two_copies(a, b):
    """An (even unused) nl.mgrid made the kernel beta-1, which kept the
    symbolic trace's "control flow may not depend on nl.program_id()"."""
    oa = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ob = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:4, 0:8]
    pid = nl.program_id(axis=0)
    if pid == 0:
        nisa.dma_copy(src=a[i_p, i_f], dst=oa[i_p, i_f])
    if pid == nl.num_programs(axes=0) - 1:
        nisa.dma_copy(src=b[i_p, i_f], dst=ob[i_p, i_f])
    return oa, ob


@pytest.mark.parametrize("launch", ["nc2", "lnc2", "grid4", "baremetal3"])
def test_beta1_mgrid_branch_on_program_id_numpy(launch):
    """(nl.nc(2),): two cores; kernel[2] and kernel[4]: beta-1's grid (the
    mgrid makes kernel[n] one core's n instances); nki.baremetal(k)[3]."""
    k = {"nc2": two_copies[(nl.nc(2),)], "lnc2": two_copies[2], "grid4": two_copies[4],
         "baremetal3": nki.baremetal(two_copies.fn)[3]}[launch]
    a = RNG.standard_normal((4, 8)).astype(np.float32)
    b = RNG.standard_normal((4, 8)).astype(np.float32)
    oa, ob = k(a, b)
    np.testing.assert_array_equal(oa, a)
    np.testing.assert_array_equal(ob, b)


@nki.jit
def split_dim0(tensor, rank, num_partitions):
    """NxDI's split_along_dim0_kernel (the rank-th of num_partitions row
    blocks; the last program takes the remainder of the columns: `if
    prg_id == n_prgs - 1` re-makes the mgrid), its HBM-to-HBM copy staged
    through SBUF."""
    rows = tensor.shape[0] // num_partitions
    rank_sb = nl.load(rank.reshape((1, 1)))
    F = rows * tensor.shape[1]
    tensor = tensor.reshape((num_partitions, F))
    out_tensor = nl.ndarray((1, F), dtype=tensor.dtype, buffer=nl.shared_hbm)
    n_prgs, prg_id = nl.num_programs(axes=0), nl.program_id(axis=0)
    sharded_F = F // n_prgs
    F_offset = sharded_F * prg_id
    i_p, i_f = nl.mgrid[:1, :sharded_F]
    if prg_id == n_prgs - 1:
        i_p, i_f = nl.mgrid[:1, :(F - (n_prgs - 1) * sharded_F)]
    nl.store(out_tensor[i_p, F_offset + i_f], value=nl.load(tensor[rank_sb, F_offset + i_f]))
    return out_tensor.reshape((rows, F // rows))


def test_beta1_split_dim0_last_program_remainder_numpy():
    t = RNG.standard_normal((12, 15)).astype(np.float32)   # 4 parts of 3 rows, F 45
    r = np.array([2], np.int32)
    np.testing.assert_array_equal(split_dim0[(nl.nc(2),)](t, r, 4), t[6:9])


def test_program_id_control_flow_past_256_programs_names_the_limit():
    """The one limit left: a grid of more than 256 programs is traced once
    for all programs, so Python control flow on the id is refused, naming
    that limit."""
    line = _line(two_copies.fn, "if pid == 0")
    with pytest.raises(NkiError, match=r"test_pki_forms.py:%d: control flow may not depend on "
                                       r"nl.program_id\(\) in a kernel traced once for all "
                                       r"programs \(a launch grid of more than 256 programs; "
                                       % line):
        tpbsim.kernel_json(two_copies[257, 1], np.zeros((4, 8), np.float32),
                           np.zeros((4, 8), np.float32))


# ---- nl.rms_norm(mask=) ----

def _rms(x, w, n, eps=1e-6):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).sum(-1, keepdims=True) / n + eps) * w.astype(np.float64)


@nki.jit
def rmsnorm_tiles(x, w):
    """NxDI 2.27's rmsnorm_kernel: 128-row tiles, the last one partial,
    masked by `i * 128 + ix < S` in the load, nl.rms_norm and the store."""
    S, D = x.shape
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ix = nl.arange(128)[:, None]
    iy = nl.arange(D)[None, :]
    w_tile = nl.load(w.reshape((1, D))[nl.arange(1)[:, None], iy])
    for i in nl.affine_range((S + 127) // 128):
        m = (i * 128 + ix < S)
        t = nl.load(x[i * 128 + ix, iy], mask=m)
        r = nl.rms_norm(t, w_tile, 1, D, 1e-6, mask=m)
        nl.store(out[i * 128 + ix, iy], value=r, mask=m)
    return out


@pytest.mark.parametrize("S", [200, 128, 60])
def test_rms_norm_partial_tile_mask_numpy(S):
    x = RNG.standard_normal((S, 256)).astype(np.float32)
    w = RNG.standard_normal(256).astype(np.float32)
    np.testing.assert_allclose(rmsnorm_tiles(x, w), _rms(x, w, 256), rtol=2e-5, atol=2e-5)


RECTS = {   # name -> (mask of (i_p, i_f), rows, columns)
    "rows": (lambda i, j: i < 70, slice(0, 70), slice(0, 64)),
    "cols": (lambda i, j: j < 40, slice(0, 128), slice(0, 40)),
    "both": (lambda i, j: (i < 100) & (j < 48), slice(0, 100), slice(0, 48)),
    "inner": (lambda i, j: (i >= 32) & (i < 90) & (j >= 5) & (j <= 50), slice(32, 90),
              slice(5, 51)),
}


def _rect_kernel(name):
    mask_of = RECTS[name][0]

    @nki.jit
    def k(x, w):
        out = nl.ndarray((2,) + x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:x.shape[0], 0:x.shape[1]]
        a = nl.load(x)
        wt = nl.load(w)
        r = nl.full(x.shape, -1.0, dtype=nl.float32, buffer=nl.sbuf)
        r[...] = nl.rms_norm(a, wt, axis=1, n=32, mask=mask_of(i_p, i_f))   # in place
        nl.store(out[0], r)
        t = nl.rms_norm(a, wt, axis=1, n=32, mask=mask_of(i_p, i_f))
        nl.store(out[1][i_p, i_f], t, mask=mask_of(i_p, i_f))   # the rectangle only
        return out
    return k


@pytest.mark.parametrize("full_w", [False, True])
@pytest.mark.parametrize("name", sorted(RECTS))
def test_rms_norm_rectangle_mask_numpy(name, full_w):
    """mask= bounding rows and / or columns: the norm of that rectangle of
    x (its sum over the kept columns, divided by n), written there; the
    rest of an assigned tile keeps its values (NKI's masked instruction
    computes the smaller tile only).  w [1, F] broadcast or of x's shape."""
    _, rows, cols = RECTS[name]
    x = RNG.standard_normal((128, 64)).astype(np.float32)
    w = RNG.standard_normal((128 if full_w else 1, 64)).astype(np.float32)
    got = _rect_kernel(name)(x, w)
    want = np.full((128, 64), -1.0)
    want[rows, cols] = _rms(x[rows, cols], w[rows if full_w else slice(0, 1), cols], 32)
    np.testing.assert_allclose(got[0], want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got[1][rows, cols], want[rows, cols], rtol=2e-5, atol=2e-5)


@nki.jit
def rms_two_index_mask(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:x.shape[0], 0:x.shape[1]]
    a = nl.load(x)
    nl.store(out, nl.rms_norm(a, a, axis=1, n=8, mask=(i_p < i_f)))
    return out


def test_rms_norm_mask_not_a_rectangle_refused():
    line = _line(rms_two_index_mask.fn, "nl.rms_norm(")
    with pytest.raises(NkiError) as e:
        rms_two_index_mask(np.zeros((16, 8), np.float32))
    assert str(e.value) == (
        "test_pki_forms.py:%d: nl.rms_norm: argument 'mask': an index-expression mask is not "
        "supported by tpbsim for nl.rms_norm (a condition on loop variables only is, and "
        "bounds on single indices: i_p < n, i_f >= m)" % line)


# ---- a tensor indexed by nl.affine_range objects ----

@nki.jit
def add_by_ranges(a, b):
    """nkipy's playground "Beta 3" add: the inputs indexed by affine_range
    objects, which NKI documents as loop iterators only."""
    ix = nl.affine_range(a.shape[0])
    iy = nl.affine_range(a.shape[1])
    c = nl.add(nl.load(a[ix, iy]), nl.load(b[ix, iy]))
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out[ix, iy], value=c)
    return out


def test_affine_range_as_index_refused_naming_the_line():
    line = _line(add_by_ranges.fn, "nl.load(a[ix, iy])")
    a = np.zeros((128, 64), np.float32)
    with pytest.raises(NkiError) as e:
        add_by_ranges(a, a)
    assert str(e.value) == (
        "test_pki_forms.py:%d: 'a'[...]: an index is a generator, such as nl.affine_range(n) / "
        "nl.sequential_range(n) return: those are loop iterators (`for i in "
        "nl.affine_range(n)`), not indices; index with slices (a[0:n, 0:m]) or nl.arange "
        "(nl.arange(n)[:, None], nl.arange(m)[None, :])" % line)
