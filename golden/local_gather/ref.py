"""local_gather semantics (docs/semantics.md): the 16 partitions of each Pool
core form one flat buffer (partition-major, src[16g:16g+16].reshape(-1));
index i selects the run of num_elem_per_idx elements starting at element
i * num_elem_per_idx; the core's indices are read partition-major and the
gathered runs are written partition-major into the core's 16 dst partitions."""
import numpy as np

N_ELEM = 2


def make_inputs(rng):
    # 16 partitions x 32 elements = 512 elements = 256 runs of 2 per core
    return {"src": rng.standard_normal((128, 32)), "index": rng.integers(0, 256, (128, 4))}


def reference(src, index):
    out = np.zeros((128, 8), dtype=np.float64)
    for g in range(8):
        flat = src[16 * g:16 * (g + 1)].reshape(-1, N_ELEM)       # [runs, N_ELEM]
        idx = index[16 * g:16 * (g + 1)].reshape(-1)             # 64 indices
        out[16 * g:16 * (g + 1)] = flat[idx].reshape(16, 8)
    return {"out": out}
