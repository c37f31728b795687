"""NumPy references for scripts/nki-library-check: NKI Library kernels
that need NKI 0.x's tensor views and run-time selects (docs/python.md "NKI
0.x tensor views"), on parameter sets taken from the library's
test/integration files.  Written here from what the library's torch
reference computes; nothing of the library is stored."""
import numpy as np

from tpbsim.nki import language as nl

from nkilib_refs import _close


def _dyn_add(lib, m, h, tiles):
    """dynamic_elementwise_add (experimental/dynamic_shapes): a + b over
    the first tiles * 128 rows, the trip count read at run time (a
    dynamic_range over a register) and every row block addressed by
    .ap(scalar_offset=) from an SBUF row counter.  bf16 in and out: the
    fp32 sum rounded once.  The rows past tiles * 128 are left unwritten
    (the kernel's docstring), so only the written rows are compared."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, h)).astype(np.float32).astype(nl.bfloat16)
    b = rng.standard_normal((m, h)).astype(np.float32).astype(nl.bfloat16)
    got = lib.mod("experimental.dynamic_shapes.dynamic_elementwise_add").dynamic_elementwise_add(
        a, b, np.array([[tiles]], np.int32))
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(nl.bfloat16)
    rows = tiles * 128
    return _close(np.asarray(got)[:rows], want[:rows], 0, 0)


def checks(lib):
    # the library's fast test: M in (128, 256, 1024) x H in (512, 1024, 2048),
    # num_m_tiles = M // 128; and one run over fewer tiles than M has
    return [(f"dynamic_elementwise_add {m}x{h}{'' if t == m // 128 else f' {t} tiles'}",
             lambda m=m, h=h, t=t: _dyn_add(lib, m, h, t))
            for m, h, t in ((128, 512, 1), (256, 1024, 2), (1024, 2048, 8), (1024, 512, 3))]
