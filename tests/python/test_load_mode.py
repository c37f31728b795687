"""NKI's nki.isa.constants module (beta-1's neuronxcc.nki.isa.constants,
NKI 0.x's nki.isa.constants: `from ... import oob_mode` after a plain
import rename) and beta-1's nl.load / nl.store mode= (NxDI's paged KV-cache
gather `buf[i_p, i_f] = nl.load(cache[block_tables[...], i_f],
mode=oob_mode.skip)`), checked against NumPy."""
import importlib

import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim.nki.isa.constants import oob_mode
from tpbsim.nki._trace import NkiError

RNG = np.random.default_rng(29)


def test_isa_constants_module():
    """Every import spelling of the enums' module, holding nisa's own
    objects (NKI's values: oob_mode.skip 1, dge_mode.hwdge 2, ...)."""
    import tpbsim.nki.isa.constants as c
    from tpbsim.nki.isa import constants as c2
    assert c is c2 is nisa.constants is importlib.import_module("tpbsim.nki.isa.constants")
    for n in ("engine", "reduce_cmd", "dge_mode", "oob_mode", "matmul_perf_mode", "nc_version",
              "dma_engine", "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine",
              "unknown_engine"):
        assert getattr(c, n) is getattr(nisa, n), n
    assert (c.oob_mode.error.value, c.oob_mode.skip.value) == (0, 1)
    assert c.dge_mode.hwdge.value == 2 and c.engine.tensor.value == 1
    assert nisa.constants.engine.tensor is nisa.engine.tensor   # the arch guide's spelling
    from tpbsim.nki.language.constants import sizeinbytes
    assert sizeinbytes(nl.bfloat16) == 2


def _gather(fill, n=300, dtype=None):
    @nki.jit
    def k(cache, idx):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        buf = nl.full((nl.par_dim(128), 64), fill, dtype=nl.float32)
        it = nl.load(idx)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        buf[i_p, i_f] = nl.load(cache[it[i_p, 0], i_f], dtype=dtype, mode=oob_mode.skip)
        nl.store(out, buf)
        return out
    return k


def test_load_mode_skip_keeps_old_contents_numpy():
    """A row whose index is past the cache (or negative) is skipped: buf
    keeps its contents there; the others are the cache's rows."""
    cache = RNG.standard_normal((300, 64)).astype(np.float32)
    idx = RNG.integers(0, 300, (128, 1)).astype(np.int32)
    idx[::5] = 100000
    idx[3] = -2
    ok = (idx >= 0) & (idx < 300)
    want = np.where(ok, cache[np.clip(idx[:, 0], 0, 299)], np.float32(-3.5))
    np.testing.assert_array_equal(_gather(-3.5)(cache, idx), want)
    # with dtype= given (the cache's: nothing to convert)
    np.testing.assert_array_equal(_gather(-3.5, dtype=nl.float32)(cache, idx), want)


def test_load_mode_skip_block_dims_numpy():
    """NxDI's form: a block-dim buffer of zeros written per block in an
    affine_range loop, the row index from a block-dim tile of block ids."""
    @nki.jit
    def k(cache, bt):
        out = nl.ndarray((2, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        buf = nl.zeros((2, nl.par_dim(128), 32), dtype=nl.float32)
        tab = nl.ndarray((2, nl.par_dim(128), 3), dtype=nl.int32)
        for j in nl.affine_range(2):
            tab[j] = nl.load(bt[j])
        for j in nl.affine_range(2):
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(32)[None, :]
            buf[j, i_p, i_f] = nl.load(cache[tab[j, i_p, 1], i_f], dtype=nl.float32, mode=1)
            nl.store(out[j], buf[j])
        return out
    cache = RNG.standard_normal((40, 32)).astype(np.float32)
    bt = RNG.integers(0, 40, (2, 128, 3)).astype(np.int32)
    bt[:, ::3, 1] = 40
    col = bt[..., 1]
    want = np.where(((col >= 0) & (col < 40))[..., None], cache[np.clip(col, 0, 39)], 0)
    np.testing.assert_array_equal(k(cache, bt), want)


def _load_error(mode):
    @nki.jit
    def k(cache, idx):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        it = nl.load(idx)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        nl.store(out, nl.load(cache[it[i_p, 0], i_f], mode=mode))
        return out
    return k


def test_load_mode_error_numpy_and_index_error():
    """mode=oob_mode.error (the default): indices in range gather the rows;
    one out of range raises the documented IndexError (NumPy's words for
    the flat element index: row 40, column 0 of a [40, 64] cache)."""
    cache = RNG.standard_normal((40, 64)).astype(np.float32)
    idx = RNG.integers(0, 40, (128, 1)).astype(np.int32)
    np.testing.assert_array_equal(_load_error(oob_mode.error)(cache, idx), cache[idx[:, 0]])
    idx[5] = 40
    with pytest.raises(IndexError) as e:
        _load_error(nisa.oob_mode.error)(cache, idx)
    assert str(e.value) == "index 2560 is out of bounds for axis 0 with size 2560"


def test_store_mode_skip_scatter_numpy():
    """nl.store(out[idx_tile, cols], tile, mode=oob_mode.skip): the rows of
    an index out of range are not written (out keeps what it held)."""
    @nki.jit
    def k(src, idx):
        out = nl.ndarray((40, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.full((40, 64), 7.0, dtype=nl.float32))
        it = nl.load(idx)
        s = nl.load(src)
        i_p = nl.arange(32)[:, None]
        i_f = nl.arange(64)[None, :]
        nl.store(out[it[i_p, 0], i_f], s, mode=oob_mode.skip)
        return out
    src = RNG.standard_normal((32, 64)).astype(np.float32)
    idx = RNG.permutation(40)[:32].astype(np.int32).reshape(32, 1)
    idx[::4] = 1000
    want = np.full((40, 64), 7.0, np.float32)
    for p in range(32):
        if idx[p, 0] < 40:
            want[idx[p, 0]] = src[p]
    np.testing.assert_array_equal(k(src, idx), want)


def test_load_store_mode_skip_direct_numpy():
    """On a direct access nothing can be out of range: skip moves it all."""
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a[0:128, 0:64], mode=oob_mode.skip), mode=oob_mode.skip)
        return out
    a = RNG.standard_normal((128, 64)).astype(np.float32)
    np.testing.assert_array_equal(k(a), a)


def test_load_mode_refused():
    """A mode= tpbsim cannot honour raises NkiError naming it: another
    enum, skip with mask=, and a skip load that cannot be written into its
    target in place (a dtype conversion: the unwritten rows would be
    copied over the target's)."""
    cache = RNG.standard_normal((300, 64)).astype(np.float32)
    idx = RNG.integers(0, 300, (128, 1)).astype(np.int32)
    with pytest.raises(NkiError, match=r"mode=<dge_mode.swdge: 1> is not an nki.isa.oob_mode"):
        _load_error(nisa.dge_mode.swdge)(cache, idx)
    with pytest.raises(NkiError, match=r"mode=3: not a oob_mode value"):
        _load_error(3)(cache, idx)
    with pytest.raises(NkiError, match=r"nl.load\(\.\.\., mode=oob_mode.skip\) at .*in place"):
        _gather(0.0, dtype=nl.bfloat16)(cache, idx)

    @nki.jit
    def masked(cache, idx):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        it = nl.load(idx)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        nl.store(out, nl.load(cache[it[i_p, 0], i_f], mode=oob_mode.skip, mask=(i_p < 64)))
        return out
    with pytest.raises(NkiError, match=r"nl.load: mode=oob_mode.skip together with mask="):
        masked(cache, idx)

    @nki.jit
    def store_str(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.load(a), mode="skip")
        return out
    with pytest.raises(NkiError, match=r"nl.store: mode='skip' is not an nki.isa.oob_mode"):
        store_str(cache[:128])
