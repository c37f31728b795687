"""while_loop with a register condition n = 9, past the 6 iterations the
front-end unrolls: iteration i adds 2^i * x to acc (x doubles on the
Activation engine each time), so total = (2^9 - 1) * x; the count ends at 0."""
import numpy as np

N = 9


def make_inputs(rng):
    x = rng.integers(-8, 9, (32, 16)).astype(np.float32)   # exact sums in fp32
    return {"x": x, "n": np.array([[N]], np.int32)}


def reference(x, n):
    acc = np.zeros_like(x, dtype=np.float64)
    t = x.astype(np.float64)
    for _ in range(int(n[0, 0])):
        acc += t
        t = t * 2
    return {"total": acc.astype(np.float32), "left": np.zeros((1, 1), np.int32)}
