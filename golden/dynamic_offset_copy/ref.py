"""Register-offset (dynamic) dma_copy: the HBM side of each copy moves by a
register's value (an element offset read from the `off` input by
load_tensor_to_register).  out = the 128x32 block of `table` that starts at
flat element off (HBM -> HBM, src_reg); out2 = zeros with table's first 64
rows written at flat element off (HBM -> HBM, dst_reg); out3 = zeros with
the block of out written at flat element off2 (HBM -> SBUF with src_reg,
then SBUF -> HBM with dst_reg, a second register)."""
import numpy as np

N = 256 * 32


def make_inputs(rng):
    off = int(rng.integers(0, N - 128 * 32 + 1))   # any element offset, not row aligned
    off2 = int(rng.integers(0, N - 128 * 32 + 1))
    return {"table": rng.standard_normal((256, 32)), "off": np.array([[off, off2]])}


def reference(table, off):
    r, r2 = int(off[0, 0]), int(off[0, 1])
    flat = table.reshape(-1)
    block = flat[r:r + 128 * 32].reshape(128, 32)
    out2 = np.zeros(N)
    out2[r:r + 64 * 32] = flat[:64 * 32]
    out3 = np.zeros(N)
    out3[r2:r2 + 128 * 32] = block.reshape(-1)
    return {"out": block, "out2": out2.reshape(256, 32), "out3": out3.reshape(256, 32)}
