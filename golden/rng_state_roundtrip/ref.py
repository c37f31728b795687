"""nki.isa rand_set_state / rng / rand_get_state on the GpSimd engine: one
XORWOW generator (6 state words x, y, z, w, v, d) per partition.  rng keeps
the low bits of each 32-bit output; restoring a saved state repeats the
sequence (c == b)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _xorwow as xw  # noqa: E402


def make_inputs(rng):
    return {"seeds": rng.integers(1, 2**32, (16, 6), dtype=np.uint64).astype(np.uint32)}


def reference(seeds):
    states = [[[int(w) for w in seeds[p]]] for p in range(16)]
    a = xw.draw(states, 16, 32, 1)
    st = np.array([states[p][0] for p in range(16)], dtype=np.uint32)
    b = xw.draw(states, 16, 8, 1).astype(np.uint16)       # low 16 bits
    return {"a": a, "st": st, "b": b, "c": b.copy()}
