"""matmul_sparse: a structured-sparse stationary, Kc compressed rows with
uint8 tags (each row's offset inside its group of 4 dense rows), times a
dense moving of K = Kc * compress_ratio rows (docs/semantics.md
"LdWeightsSparse / MatmulSparse"): out = dense(w, tags).T @ moving, the
dense weights built here from the definition, 2:4 and 1:4."""
import numpy as np


def _tags(rng, kc, m, ratio):
    keep = 4 // ratio
    t = np.zeros((kc, m), np.uint8)
    for g in range(kc // keep):
        for c in range(m):
            t[g * keep:(g + 1) * keep, c] = rng.permutation(4)[:keep]
    return t


def _dense(w, tags, ratio):
    keep = 4 // ratio
    d = np.zeros((w.shape[0] * ratio, w.shape[1]), np.float64)
    for j in range(w.shape[0]):
        for c in range(w.shape[1]):
            d[4 * (j // keep) + int(tags[j, c]), c] = w[j, c]
    return d


def make_inputs(rng):
    return {"w2": rng.standard_normal((64, 32)).astype(np.float32), "t2": _tags(rng, 64, 32, 2),
            "w4": rng.standard_normal((32, 48)).astype(np.float32), "t4": _tags(rng, 32, 48, 4),
            "mv": rng.standard_normal((128, 96)).astype(np.float32)}


def reference(w2, t2, w4, t4, mv):
    m = mv.astype(np.float64)
    return {"out2": _dense(w2, t2, 2).T @ m, "out4": _dense(w4, t4, 4).T @ m}
