"""NKI sequence_bounds, written from the SDK test's NumPy reference: for
element i, the start is i when it begins a run of equal ids (else the
previous element's start), the end is i + 1 when it ends one (else the next
element's end); id 0 is padding with start n and end -1."""
import numpy as np


def make_inputs(rng):
    def ids(n):
        v = np.sort(rng.integers(0, n // 3, n))
        v[rng.integers(0, n, 3)] = 0      # padding inside runs too
        return v
    return {"ids": ids(64)[None, :].astype(np.float32),
            "idi": ids(40)[None, :].astype(np.int32)}


def bounds(seq):
    n = len(seq)
    lo = np.empty(n, np.int64)
    hi = np.empty(n, np.int64)
    for i in range(n):
        lo[i] = n if seq[i] == 0 else (lo[i - 1] if i > 0 and seq[i] == seq[i - 1] else i)
    for i in range(n - 1, -1, -1):
        hi[i] = -1 if seq[i] == 0 else (hi[i + 1] if i < n - 1 and seq[i] == seq[i + 1]
                                        else i + 1)
    return np.stack([lo, hi])


def reference(ids, idi):
    return {"b": bounds(ids[0])[None].astype(np.float32),
            "bi": bounds(idi[0])[None].astype(np.int32)}
