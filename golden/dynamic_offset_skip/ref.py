"""Register-offset dma_copy with oob_mode skip, HBM -> HBM (NKI dma_copy of
an .ap(scalar_offset=, indirect_dim=0) view; the KV-cache write by batch
index of NxDI's write_kv_cache_at_batch_kernel): `new` [1, H, 5, D] is
written into batch idx[k] of a copy of `cache` [B, H, 8, D], the register
holding idx[k] * H * 8 * D elements.  out0: in range, oob_mode error;
out1: in range, skip; out2: idx = B (past the end) and out3: idx < 0, both
out of bounds under skip -- the whole transfer is skipped, the copy of
cache stays as it is (docs/semantics-dma.md "Triggers and queues")."""
import numpy as np

B = 4


def make_inputs(rng):
    a, b = (int(x) for x in rng.integers(0, B, 2))
    return {"cache": rng.standard_normal((B, 2, 8, 16)),
            "new": rng.standard_normal((1, 2, 5, 16)),
            "idx": np.array([[a, b, B, -int(rng.integers(1, 100))]])}


def reference(cache, new, idx):
    outs = {}
    for k in range(4):
        o = np.array(cache, dtype=np.float64)
        b = int(idx[0, k])
        if 0 <= b < B:
            o[b, :, 0:5, :] = new[0]
        outs["out%d" % k] = o
    return outs
