"""SBUF spilling (docs/compiler.md "SBUF spilling"): a kernel whose live
tiles exceed trn1's SBUF compiles by spilling one to HBM and reloading it;
its values are NumPy's."""
import json
import os

import numpy as np

import tpbsim
from tpbsim import nki
import tpbsim.nki.language as nl

# nine [128, 6144] fp32 tiles live at once (216 KiB per partition, more
# than trn1's 192 KiB) and then the sum's tile
N, F = 9, 6144


@nki.jit
def sum_reversed(x):
    """Every tile loaded first, then summed last to first: t0 is live,
    unused, across the longest stretch (the spill victim)."""
    out = nl.ndarray((128, F), dtype=x.dtype, buffer=nl.shared_hbm)
    ts = [nl.load(x[i]) for i in range(N)]
    acc = nl.add(ts[N - 1], ts[N - 2])
    for i in range(N - 3, -1, -1):
        acc = nl.add(acc, ts[i])
    nl.store(out, acc)
    return out


def _reference(x):
    acc = x[N - 1] + x[N - 2]
    for i in range(N - 3, -1, -1):
        acc = acc + x[i]   # float32 throughout, the kernel's order
    return acc


def test_spilled_kernel_matches_numpy(tmp_path):
    x = np.random.default_rng(7).uniform(-4, 4, (N, 128, F)).astype(np.float32)
    r = tpbsim.simulate(sum_reversed, x, target="trn1")
    np.testing.assert_array_equal(r.outputs, _reference(x))
    # t0 makes room for t8, t1 for the first sum: two [128, 6144] fp32
    # tiles (3 MiB each) stored once and loaded back once
    assert r.stats["spill_save_bytes"] == 2 * 128 * F * 4
    assert r.stats["spill_reload_bytes"] == 2 * 128 * F * 4
    # the compile spilled: its spill transfers have the production queue names
    art = str(tmp_path / "art")
    tpbsim.compile(sum_reversed, x, out_dir=art, target="trn1")
    with open(os.path.join(art, "nc0", "sg0", "def.json")) as f:
        text = f.read()
    assert "qSyncSpillReload0" in text
    # trn2 (224 KiB per partition) holds the nine loads but not the first
    # sum beside them: one tile (t0) spilled
    r2 = tpbsim.simulate(sum_reversed, x, target="trn2")
    np.testing.assert_array_equal(r2.outputs, _reference(x))
    assert r2.stats["spill_save_bytes"] == 128 * F * 4
    assert r2.stats["spill_reload_bytes"] == 128 * F * 4
