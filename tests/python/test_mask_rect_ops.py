"""NKI beta-1 mask= on nki.isa ops whose tpbsim function has no mask
(docs/python.md "Beta-1 call forms"): tensor_tensor_scan, activation_reduce,
tensor_scalar_reduce, bn_stats / bn_aggr, dropout, range_select and
select_reduce run on the rectangle the mask keeps (bounds on single indices
of their data), the rest of dst left unwritten; affine_select and
tensor_copy_predicated take any mask over dst's indices; others refuse an
index mask naming the op.  A condition on loop variables only (a bool) is
no mask when True and writes nothing when False, in every call form.
Against NumPy, the targets pre-filled."""
import numpy as np
import pytest

from tpbsim import nki
from tpbsim.nki._state import NkiError
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

RNG = np.random.default_rng(7)
P, F = 128, 64
f32 = nl.float32

# over the data's indices i (partitions), j (free)
MASKS = {
    "rows": lambda i, j: i < 100,
    "cols": lambda i, j: j >= 8,
    "both": lambda i, j: (i < 100) & (j >= 8) & (j < 40),
    "all": lambda i, j: (i < 128) & (j < 64),
}


def _keep(mask_of, shape=(P, F)):
    return np.broadcast_to(mask_of(np.arange(shape[0])[:, None],
                                   np.arange(shape[1])[None, :]), shape)


def _rect(keep):
    """The kept rows and the kept columns of a rectangle mask."""
    return keep.any(1), keep.any(0)


def _x(lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, (P, F)).astype(np.float32)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_tensor_tensor_scan_mask_numpy(mask):
    """The scan runs over the kept elements only: a rectangle starting at
    column 8 starts its carry there, from initial."""
    @nki.jit
    def k(x0, x1):
        out = nl.ndarray((P, F), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        init = nl.full((P, 1), 0.5, dtype=f32, buffer=nl.sbuf)
        r = nl.full((P, F), -1.0, dtype=f32, buffer=nl.sbuf)
        r[...] = nisa.tensor_tensor_scan(nl.load(x0), nl.load(x1), init, np.multiply, np.add,
                                         mask=MASKS[mask](i, j))
        nl.store(out, r)
        return out
    x0, x1 = _x(0.5, 1.0), _x()
    rows, cols = _rect(_keep(MASKS[mask]))
    want = np.full((P, F), -1.0)
    c = np.flatnonzero(cols)
    acc = np.full(P, 0.5)
    for col in c:
        acc = x0[:, col] * acc + x1[:, col]
        want[rows, col] = acc[rows]
    np.testing.assert_allclose(k(x0, x1), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_activation_and_tensor_scalar_reduce_mask_numpy(mask):
    """The reductions see the kept columns only; reduce_res, bias and
    operand rows follow the rectangle."""
    @nki.jit
    def k(x, b):
        out = nl.ndarray((P, 2 * F + 2), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        a = nl.load(x)
        bias = nl.load(b)
        r = nl.full((P, 2 * F + 2), -1.0, dtype=f32, buffer=nl.sbuf)
        r[:, 0:F] = nisa.activation_reduce(op=nl.exp, data=a, reduce_op=nl.add,
                                           reduce_res=r[:, 2 * F:2 * F + 1], bias=bias,
                                           scale=0.5, mask=MASKS[mask](i, j))
        r[:, F:2 * F] = nisa.tensor_scalar_reduce(data=a, op0=nl.multiply, operand0=bias,
                                                  reduce_op=nl.add,
                                                  reduce_res=r[:, 2 * F + 1:2 * F + 2],
                                                  mask=MASKS[mask](i, j))
        nl.store(out, r)
        return out
    x, b = _x(), RNG.uniform(-1, 1, (P, 1)).astype(np.float32)
    keep = _keep(MASKS[mask])
    rows = keep.any(1)
    e, s = np.exp(0.5 * x + b), x * b
    want = np.concatenate([np.where(keep, e, -1), np.where(keep, s, -1),
                           np.where(rows, np.where(keep, e, 0).sum(1), -1)[:, None],
                           np.where(rows, np.where(keep, s, 0).sum(1), -1)[:, None]], 1)
    np.testing.assert_allclose(k(x, b), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_bn_stats_bn_aggr_mask_numpy(mask):
    """bn_stats over the kept columns of the kept rows, bn_aggr of those rows."""
    @nki.jit
    def k(x):
        out = nl.ndarray((P, 2), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        i6, j6 = nl.mgrid[0:P, 0:6]
        st = nisa.bn_stats(nl.load(x), mask=MASKS[mask](i, j), dtype=f32)
        r = nl.full((P, 2), -1.0, dtype=f32, buffer=nl.sbuf)
        r[...] = nisa.bn_aggr(st, mask=MASKS[mask](i6, 8))   # its rows
        nl.store(out, r)
        return out
    x = _x()
    keep = _keep(MASKS[mask])
    rows, cols = _rect(keep)
    sel = x[:, cols]
    want = np.where(rows[:, None], np.stack([sel.mean(1), sel.var(1)], 1), -1.0)
    np.testing.assert_allclose(k(x), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mask", sorted(MASKS))
def test_select_ops_and_dropout_mask_numpy(mask):
    """dropout (prob 0: a copy), range_select (each element keeps its own
    free index: range_start follows the rectangle), select_reduce and
    tensor_copy_predicated (their beta-1 forms name dst) on the rectangle."""
    @nki.jit
    def k(x, pr, b0, b1):
        out = nl.ndarray((P, 4 * F + 2), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        a = nl.load(x)
        r = nl.full((P, 4 * F + 2), -1.0, dtype=f32, buffer=nl.sbuf)
        r[:, 0:F] = nisa.dropout(a, 0.0, mask=MASKS[mask](i, j))
        r[:, F:2 * F] = nisa.range_select(on_true_tile=a, comp_op0=nl.greater_equal,
                                          comp_op1=nl.less, bound0=nl.load(b0),
                                          bound1=nl.load(b1), range_start=4,
                                          reduce_res=r[:, 3 * F:3 * F + 1],
                                          on_false_value=-5.0, mask=MASKS[mask](i, j))
        nisa.select_reduce(dst=r[:, 2 * F:3 * F], predicate=nl.load(pr), on_true=a,
                           on_false=-3.0, reduce_res=r[:, 3 * F + 1:3 * F + 2],
                           mask=MASKS[mask](i, j))
        nisa.tensor_copy_predicated(dst=r[:, 3 * F + 2:], src=a, predicate=nl.load(pr),
                                    mask=MASKS[mask](i, j))
        nl.store(out, r)
        return out
    x = _x()
    pr = RNG.integers(0, 2, (P, F)).astype(np.uint8)
    b0 = RNG.integers(0, 30, (P, 1)).astype(np.float32)
    b1 = b0 + RNG.integers(1, 40, (P, 1)).astype(np.float32)
    keep = _keep(MASKS[mask])
    rows = keep.any(1)
    idx = np.arange(F)[None, :] + 4
    rs = np.where((idx >= b0) & (idx < b1), x, -5.0)
    sr = np.where(pr != 0, x, -3.0)
    want = np.concatenate([np.where(keep, x, -1), np.where(keep, rs, -1),
                           np.where(keep, sr, -1),
                           np.where(rows, np.where(keep, rs, -np.inf).max(1), -1)[:, None],
                           np.where(rows, np.where(keep, sr, -np.inf).max(1), -1)[:, None],
                           np.where(keep & (pr != 0), x, -1)], 1)
    np.testing.assert_allclose(k(x, pr, b0, b1), want, rtol=1e-6)


# affine_select's mask is the kernel format's (over dst's indices, which
# are its input's; any affine comparisons): a band too
MASKS_ANY = dict(MASKS, band=lambda i, j: (i + j < 150) & (j - i >= -40))


@pytest.mark.parametrize("mask", sorted(MASKS_ANY))
def test_affine_select_mask_numpy(mask):
    @nki.jit
    def k(x):
        out = nl.ndarray((P, F), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        r = nl.full((P, F), -1.0, dtype=f32, buffer=nl.sbuf)
        r[...] = nisa.affine_select(i - j >= 0, nl.load(x), -9.0, mask=MASKS_ANY[mask](i, j))
        nl.store(out, r)
        return out
    x = _x()
    ii, jj = np.arange(P)[:, None], np.arange(F)[None, :]
    np.testing.assert_array_equal(
        k(x), np.where(_keep(MASKS_ANY[mask]), np.where(ii >= jj, x, -9.0), -1))


def _refused(body, match):
    @nki.jit
    def k(x):
        out = nl.ndarray((P, F), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        body(nl.load(x), i, j)
        nl.store(out, nl.load(x))
        return out
    with pytest.raises(NkiError, match=match):
        k(_x())


def test_unsupported_index_masks_refused_naming_the_op():
    _refused(lambda a, i, j: nisa.tensor_tensor_scan(a, a, 0.0, np.multiply, np.add,
                                                     mask=(j < i)),
             r"nisa\.tensor_tensor_scan: argument 'mask': only bounds on one index")
    _refused(lambda a, i, j: nisa.tensor_copy_predicated(dst=a, src=a, predicate=a,
                                                         mask=(i + j < 150)),
             r"nisa\.tensor_copy_predicated: argument 'mask': only bounds on one index")
    _refused(lambda a, i, j: nisa.nc_stream_shuffle(src=a, dst=a, shuffle_mask=[0] * 32,
                                                    mask=(i < 64)),
             r"nisa\.nc_stream_shuffle: argument 'mask': an index-expression mask is not "
             r"supported")
    _refused(lambda a, i, j: nisa.sequence_bounds(segment_ids=a, mask=(i < 64)),
             r"nisa\.sequence_bounds: argument 'mask': an index-expression mask is not "
             r"supported")


@pytest.mark.parametrize("on", [True, False])
def test_isa_condition_mask_every_call_form_numpy(on):
    """mask=True is no mask, mask=False writes nothing: beta-2 calls with
    dst= (a beta-1 op's own dst= form: select_reduce), beta-1 calls whose
    op has a mask, beta-1 calls whose op has none, memset / iota."""
    @nki.jit
    def k(x, pr):
        out = nl.ndarray((P, 6 * F), dtype=f32, buffer=nl.shared_hbm)
        i, j = nl.mgrid[0:P, 0:F]
        a = nl.load(x)
        r = nl.full((P, 6 * F), -1.0, dtype=f32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r[:, 0:F], src=a, mask=on)
        nisa.select_reduce(dst=r[:, F:2 * F], predicate=nl.load(pr), on_true=a, on_false=0.0,
                           mask=on)
        r[:, 2 * F:3 * F] = nisa.tensor_tensor_scan(a, a, 0.0, np.multiply, np.add, mask=on)
        r[:, 3 * F:4 * F] = nisa.tensor_scalar(a, np.add, 1.0, mask=on)
        r[:, 4 * F:5 * F] = nisa.memset((P, F), 2.0, f32, mask=on)
        r[:, 5 * F:6 * F] = nisa.iota(j, dtype=f32, mask=on)
        nl.store(out, r)
        return out
    x = _x(0.5, 1.0)
    pr = RNG.integers(0, 2, (P, F)).astype(np.uint8)
    scan = np.zeros((P, F))
    acc = np.zeros(P)
    for c in range(F):
        acc = x[:, c] * acc + x[:, c]
        scan[:, c] = acc
    want = np.concatenate([x, np.where(pr != 0, x, 0.0), scan, x + 1, np.full((P, F), 2.0),
                           np.tile(np.arange(F, dtype=np.float32), (P, 1))], 1)
    np.testing.assert_allclose(k(x, pr), want if on else np.full(want.shape, -1.0),
                               rtol=1e-5)
