"""Findings of the compile-and-simulate oracle (docs/reliability.md) as the
Python front end meets them: a local_gather on fewer than 16 partitions
compiled to an IndirectCopy that the simulator refused when the kernel
ran; NKI requires src_buffer's partition count to be a multiple of 16, so
it is now refused at compile time (TpbError), naming the kernel line and
the field.
A 16-partition gather still matches a NumPy reference."""
import numpy as np
import pytest

from tpbsim import nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl
from tpbsim import TpbError


def _gather(parts, nidx):
    @nki.jit
    def k(src, index):
        s, ix = nl.load(src), nl.load(index)
        d = nl.ndarray((parts, nidx, 1), dtype=s.dtype, buffer=nl.sbuf)
        nisa.local_gather(d, s, ix)
        out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
        nl.store(out, d)
        return out
    return k


@pytest.mark.parametrize("parts", [1, 8])
def test_local_gather_under_16_partitions_refused(parts):
    src = np.arange(parts * 4, dtype=np.float32).reshape(parts, 4)
    index = np.zeros((parts, 1), np.uint16)
    with pytest.raises(TpbError) as e:
        # dst [P, P, 1]: what the validator asked for before (P indices per
        # core), which compiled and then failed in the simulator
        _gather(parts, parts)(src, index)
    msg = str(e.value)
    assert "test_oracle_found.py" in msg and "index" in msg and "multiple of 16" in msg


def test_local_gather_16_partitions_numpy():
    r = np.random.default_rng(1)
    src = r.random((16, 4), dtype=np.float32)
    index = r.integers(0, 4, (16, 1)).astype(np.uint16)
    out = _gather(16, 16)(src, index)
    # each partition p takes, for every index of the core (its 16 rows read
    # partition first), the element of its own row at that offset
    idx = index[:, 0]
    ref = np.stack([src[p, idx] for p in range(16)])[:, :, None]
    assert np.array_equal(out, ref)
