"""NKI register_alloc / register_move / register_load / register_store:
rows = the 32x16 block of `table` starting at flat element `off` (a load
whose offset register was loaded from SBUF and copied); regs = [42 (moved
immediate), off (loaded), off (copied), 102 (the loop's last
register_alloc x)]; hreg = off loaded from HBM, moved, stored to HBM."""
import numpy as np


def make_inputs(rng):
    off = int(rng.integers(0, 64 * 16 - 32 * 16 + 1))
    return {"table": rng.standard_normal((64, 16)), "off": np.array([[off]])}


def reference(table, off):
    r = int(off[0, 0])
    rows = table.reshape(-1)[r:r + 32 * 16].reshape(32, 16)
    return {"rows": rows, "regs": np.array([[42, r, r, 102]], dtype=np.int32),
            "hreg": np.array([[r]], dtype=np.int32)}
