"""Vector-engine PRNG after nki.isa.set_rng_seed(42): four XORWOW
generators per partition (24 state words), element i of a partition's run
drawing from generator i % 4.  rng keeps the 32 bits as int32; rand2 is
min + (max - min) * u in fp32 with u = (bits >> 8) * 2^-24; dropout (the
same generators) zeroes an element when u < prob; rand_get_state returns
the 24 words (generator-major, x y z w v d each)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _xorwow as xw  # noqa: E402

P = 8


def make_inputs(rng):
    return {"x": rng.uniform(0.5, 1.5, (P, 40)), "lo": rng.uniform(-4.0, 4.0, (P, 1))}


def _uniform(states, n, lo, hi):
    u = xw.unit(xw.draw(states, P, n, xw.GENS_VECTOR))
    lo = np.broadcast_to(np.asarray(lo, dtype=np.float32).reshape(-1, 1), (P, 1))
    hi = np.broadcast_to(np.asarray(hi, dtype=np.float32).reshape(-1, 1), (P, 1))
    span = (hi - lo).astype(np.float32)
    return (lo + (span * u).astype(np.float32)).astype(np.float32)


def reference(x, lo):
    states = [[xw.seed_state(42, p, g) for g in range(xw.GENS_VECTOR)] for p in range(P)]
    r = xw.draw(states, P, 40, xw.GENS_VECTOR).view(np.int32)
    u = _uniform(states, 40, -1.0, 3.0)
    v = _uniform(states, 16, lo.astype(np.float32), 5.0)
    keep = xw.unit(xw.draw(states, P, 40, xw.GENS_VECTOR)) >= np.float32(0.25)
    d = np.where(keep, x.astype(np.float32), np.float32(0))
    st = np.array([[w for g in range(xw.GENS_VECTOR) for w in states[p][g]] for p in range(P)],
                  dtype=np.uint32)
    return {"r": r, "u": u, "v": v, "d": d, "st": st}
