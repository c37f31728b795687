"""Register-offset (dynamic) DMA: a load and a store whose HBM address moves
by a register's value (an element offset read from the `off` input by
load_tensor_to_register): out = the 128x32 block of `table` that starts at
flat element off; out2 = zeros with that block written at flat element off."""
import numpy as np


def make_inputs(rng):
    off = int(rng.integers(0, 256 * 32 - 128 * 32 + 1))   # any element offset, not row aligned
    return {"table": rng.standard_normal((256, 32)), "off": np.array([[off]])}


def reference(table, off):
    r = int(off[0, 0])
    block = table.reshape(-1)[r:r + 128 * 32].reshape(128, 32)
    out2 = np.zeros((256, 32))
    out2.reshape(-1)[r:r + 128 * 32] = block.reshape(-1)
    return {"out": block, "out2": out2}
