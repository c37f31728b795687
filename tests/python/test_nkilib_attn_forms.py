"""Forms the NKI Library's attention-side kernels (scripts/nki-library-check,
scripts/nkilib_refs_attn.py) need, each checked against NumPy here,
independent of the library."""
import numpy as np
import pytest

from tpbsim import NkiError, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)


def test_tensor_tensor_sbuf_and_psum_inputs_on_other_partitions_numpy():
    """qkv_tkg's accumulation: SBUF rows 0..n plus PSUM rows 32..32+n into
    SBUF rows 0..n (inputs in different memories may start apart)."""
    @nki.jit
    def k(x, y):
        a = nl.ndarray((7, 16), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a, src=x)
        b = nl.ndarray((64, 16), dtype=y.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=b, src=y)
        ps = nl.ndarray((64, 16), dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(dst=ps, src=b)
        nisa.tensor_tensor(a[0:7, :], a[0:7, :], ps[32:39, :], op=nl.add)
        out = nl.ndarray((7, 16), dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=a)
        return out
    x = RNG.standard_normal((7, 16)).astype(np.float32)
    y = RNG.standard_normal((64, 16)).astype(np.float32)
    np.testing.assert_array_equal(k(x, y), x + y[32:39])


def test_dma_copy_dge_mode_as_integer_numpy():
    """dge_mode=3 (the enum's value for none, as the library passes it)
    copies as dge_mode.none does; a value outside the enum is refused."""
    def make(mode):
        @nki.jit
        def k(x):
            t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x, dge_mode=mode)
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=t)
            return out
        return k
    x = RNG.standard_normal((32, 8)).astype(np.float32)
    np.testing.assert_array_equal(make(3)(x), x)
    with pytest.raises(NkiError, match="field 'dge_mode': 7 is not a dge_mode value"):
        make(7)(x)


def test_tile_size_sbuf_bytes_per_partition():
    """nl.tile_size.total_available_sbuf_size (NKI 0.x's name) and
    sbuf_fmax_bytes: the target's SBUF bytes per partition (trn2: 224 KiB,
    trn1: 192 KiB), read while tracing."""
    seen = {}

    def make(key):
        @nki.jit
        def k(x):
            seen[key] = (nl.tile_size.total_available_sbuf_size, nl.tile_size.sbuf_fmax_bytes,
                         nl.tile_size.sbuf_fmax, nl.tile_size.sbuf_size_bytes)
            t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
            nisa.dma_copy(dst=out, src=t)
            return out
        return k
    x = np.ones((4, 4), np.float32)
    import tpbsim
    tpbsim.simulate(make("trn2"), x, target="trn2")
    tpbsim.simulate(make("trn1"), x, target="trn1")
    assert seen["trn2"] == (224 * 1024, 224 * 1024, 56 * 1024, 128 * 224 * 1024)
    assert seen["trn1"][0] == 192 * 1024
