"""Forms the NKI Library's attention-side kernels (scripts/nki-library-check,
scripts/nkilib_refs_attn.py) need, each checked against NumPy here,
independent of the library."""
import numpy as np

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(11)


def test_tile_size_sbuf_sizes():
    """nl.tile_size's SBUF sizes, read while tracing: bytes per partition
    (total_available_sbuf_size, sbuf_fmax_bytes: trn2 224 KiB, trn1 192 KiB),
    fp32 elements per partition (sbuf_fmax) and all partitions' bytes
    (sbuf_size_bytes)."""
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


def test_nki_object_plain_class_attributes_are_fields():
    """A @dataclass NKIObject whose fields are plain class attributes
    (`idx = None`, no annotation; attention_cte's SectionParams) takes them
    by keyword, each defaulting to its class value."""
    from dataclasses import dataclass

    @dataclass
    class Sec(nl.NKIObject):
        idx = None
        offset = 0

    s = Sec(idx=3)
    assert (s.idx, s.offset) == (3, 0)
    assert Sec(offset=5).offset == 5


def test_dma_compute_three_bf16_sources_numpy():
    """dma_compute of three bf16 sources into a bf16 dst (qkv_tkg's fused
    residual add): the fp32 sum, rounded once to bf16."""
    @nki.jit
    def k(a, b, c):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_compute(out, (a, b, c), scales=(1.0, 1.0, 1.0), reduce_op=nl.add)
        return out
    a, b, c = (RNG.standard_normal((4, 256)).astype(np.float32).astype(nl.bfloat16) for _ in range(3))
    want = (a.astype(np.float32) + b.astype(np.float32) + c.astype(np.float32)).astype(nl.bfloat16)
    np.testing.assert_array_equal(k(a, b, c).astype(np.float32), want.astype(np.float32))


def test_dict_keyed_by_nl_dtype_finds_a_tile_dtype():
    """A dict keyed by nl.float8_e4m3 / nl.bfloat16 finds a tile's dtype
    (the NKI Library's get_max_positive_value_for_dtype); the types still
    work as NumPy dtypes."""
    limits = {nl.float8_e4m3: 240.0, nl.bfloat16: 3.0}
    seen = []

    @nki.jit
    def k(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        seen.append(limits.get(t.dtype))
        nisa.dma_copy(dst=t, src=x)
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    for dt in (nl.float8_e4m3, nl.bfloat16):
        xd = x.astype(dt)
        np.testing.assert_array_equal(k(xd).astype(np.float32), xd.astype(np.float32))
    assert seen == [240.0, 3.0]
