"""local_gather with NKI's semantics (the SDK's NumPy reference for
nisa.local_gather): each 16-partition GpSimd core flattens its index
partitions column-major (partition first), keeps the first num_valid
indices, and every partition of the core gathers num_elem_per_idx
contiguous elements of its OWN free data starting at each index (an element
offset: the caller passes index * num_elem_per_idx).  dst is
[P, num_valid, num_elem_per_idx]."""
import numpy as np

N_ELEM = 2
N_VALID = 40


def make_inputs(rng):
    # src [128, 32, 2]: 32 runs of 2 elements per partition; index [128, 4]
    # holds run numbers 0..31 scaled to element offsets, as NKI callers do
    runs = rng.integers(0, 32, (16, 4))
    index = np.tile(runs, (8, 1)) * N_ELEM
    index[64:80] = rng.integers(0, 32, (16, 4)) * N_ELEM   # core 4 gathers differently
    return {"src": rng.standard_normal((128, 32, 2)), "index": index}


def reference(src, index):
    src = src.astype(np.float32)
    out = np.zeros((128, N_VALID, N_ELEM), dtype=np.float32)
    for c in range(8):
        p = slice(16 * c, 16 * (c + 1))
        idx = index[p].flatten(order="F")[:N_VALID] // N_ELEM   # runs of N_ELEM elements
        out[p] = np.take(src[p], idx, axis=1)
    return {"out": out}
