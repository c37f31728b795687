"""NKI's narrow floats as NumPy dtypes (python/tpbsim/_dtypes*.c via
_ndtypes.py): nl.bfloat16, nl.float8_e4m3fn (OCP: no inf, max 448),
nl.float8_e4m3 (NKI's legacy IEEE-style e4m3: inf, max 240) and
nl.float8_e5m2 in NumPy code, as NKI's ml_dtypes types are used.

Expected bit patterns come from an independent NumPy reference written
here from the IEEE definitions (integer operations on float32 bits), and
for fp8 also from a nearest-value search over every code's value; never
from tpbsim's own conversion."""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import tpbsim
from tpbsim import _ndtypes, nki
import tpbsim.nki.isa as nisa
import tpbsim.nki.language as nl

pytestmark = pytest.mark.skipif(not _ndtypes.available(),
                                reason="tpbsim_dtypes not built (no Python headers)")

RNG = np.random.default_rng(19)

# (exponent bits, mantissa bits, has inf, canonical NaN code)
FORMATS = {"bfloat16": (8, 7, True, 0x7FC0), "float8_e4m3fn": (4, 3, False, 0x7F),
           "float8_e5m2": (5, 2, True, 0x7E), "float8_e4m3": (4, 3, True, 0x7C)}
TYPES = {"bfloat16": nl.bfloat16, "float8_e4m3fn": nl.float8_e4m3fn, "float8_e5m2": nl.float8_e5m2,
         "float8_e4m3": nl.float8_e4m3}
UINT = {2: np.uint16, 1: np.uint8}


def ref_round(x, name):
    """float32 array -> codes of format `name`, round to nearest even, by
    integer arithmetic on the float32 bits (the IEEE definition: shift the
    significand to the format's quantum, round the dropped bits)."""
    e_bits, m_bits, has_inf, nan = FORMATS[name]
    nbits = 1 + e_bits + m_bits
    bias = 2 ** (e_bits - 1) - 1
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.int64)
    sign = (u >> 31) << (nbits - 1)
    ef, frac = (u >> 23) & 0xFF, u & 0x7FFFFF
    e = np.where(ef == 0, -126, ef - 127)            # value = sig * 2^(e - 23)
    sig = np.where(ef == 0, frac, frac | 0x800000)
    te = np.maximum(e, 1 - bias)                      # quantum 2^(te - m_bits)
    shift = np.minimum(23 - m_bits + (te - e), 40)
    q, rem = sig >> shift, sig & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    q = q + ((rem > half) | ((rem == half) & (q & 1) == 1))
    carry = q >= 2 ** (m_bits + 1)
    q, te = np.where(carry, q >> 1, q), te + carry
    normal = q >= 2 ** m_bits
    field = np.where(normal, te + bias, 0)
    code = np.where(normal, (field << m_bits) | (q - 2 ** m_bits), q)
    if has_inf:   # IEEE: past the largest finite value is inf
        over = field >= 2 ** e_bits - 1
        big = (2 ** e_bits - 1) << m_bits
    else:         # e4m3fn: exponent field 15 holds finite values, mantissa 7 there is NaN
        over = (field > 2 ** e_bits - 1) | ((field == 2 ** e_bits - 1) & (code & 7 == 7))
        big = nan
    code = np.where(over, big, code)
    code = np.where((ef == 0xFF) & (frac == 0), big, code)         # +-inf
    code = np.where((ef == 0xFF) & (frac != 0), nan, code)          # NaN (sign kept)
    return (sign | code).astype(UINT[nbits // 8])


def decode(name):
    """Every code of an fp8 format -> its value (float64), from the bit fields."""
    e_bits, m_bits, has_inf, _ = FORMATS[name]
    bias = 2 ** (e_bits - 1) - 1
    c = np.arange(256)
    s, ef, mf = c >> 7, (c >> m_bits) & (2 ** e_bits - 1), c & (2 ** m_bits - 1)
    mag = np.where(ef == 0, mf / 2 ** m_bits * 2.0 ** (1 - bias),
                   (1 + mf / 2 ** m_bits) * 2.0 ** (ef - bias))
    v = np.where(s == 1, -mag, mag)
    top = ef == 2 ** e_bits - 1
    if has_inf:
        v = np.where(top & (mf == 0), np.copysign(np.inf, v), np.where(top, np.nan, v))
    else:
        v = np.where(top & (mf == 2 ** m_bits - 1), np.nan, v)
    return v


def edge_values(name):
    """float32 values that exercise the rounding of `name`: random bit
    patterns (NaN, inf, subnormal, huge), every exact midpoint between
    neighbouring values and the float32 values either side of it."""
    bits = RNG.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    vals = [bits.view(np.float32), RNG.standard_normal(5000).astype(np.float32),
            np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 465, 480, 57344, 61440,
                      61439.996, 3.4e38, -3.4e38, 1e-45, 2.0 ** -133, 2.0 ** -134], np.float32)]
    if name != "bfloat16":
        v = np.sort(decode(name)[np.isfinite(decode(name))])
        mid = ((v[1:] + v[:-1]) / 2).astype(np.float32)
        vals += [mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf)),
                 v.astype(np.float32)]
    else:
        mant = RNG.integers(0, 2 ** 16, 5000, dtype=np.uint64).astype(np.uint32)
        tie = (mant << 16) | 0x8000     # exactly halfway between two bf16 values
        vals += [tie.view(np.float32), (tie + 1).view(np.float32), (tie - 1).view(np.float32)]
    return np.concatenate(vals)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_float32_to_format_rounds_as_the_reference(name):
    x = edge_values(name)
    got = x.astype(TYPES[name]).view(UINT[np.dtype(TYPES[name]).itemsize])
    np.testing.assert_array_equal(got, ref_round(x, name))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3"])
def test_fp8_is_the_nearest_value(name):
    """The same casts against a nearest-value search: the closest finite
    value, ties to the even code; past the overflow threshold inf (e5m2,
    e4m3: 240 below the tie at 248, inf from it) or NaN (e4m3fn: 448 up to
    the tie at 464, NaN above)."""
    table = decode(name)
    finite = np.isfinite(table)
    x = edge_values(name)
    x = x[np.isfinite(x) & (np.abs(x) < 1e5)]
    d = np.abs(x.astype(np.float64)[:, None] - np.where(finite, table, np.inf)[None, :])
    best = d.min(axis=1, keepdims=True)
    cand = (d == best) & finite[None, :]
    # among equally near codes prefer an even one, then the zero of x's sign
    neg = np.signbit(x)[:, None].astype(np.int64)
    score = np.where(cand, 2 * (np.arange(256) & 1) + ((np.arange(256) >> 7) != neg), 99)
    want = score.argmin(axis=1)
    vmax = table[finite].max()
    step = vmax - np.sort(table[finite])[-2]
    limit = vmax + step / 2
    has_inf = FORMATS[name][2]   # the largest finite code is odd: a tie goes up, to inf
    over = (np.abs(x) > limit) | ((np.abs(x) == limit) & has_inf)
    inf = {"float8_e5m2": 0x7C, "float8_e4m3": 0x78, "float8_e4m3fn": 0x7F}[name]
    want = np.where(over, np.where(x > 0, 0, 0x80) | inf, want)
    got = x.astype(TYPES[name]).view(np.uint8)
    np.testing.assert_array_equal(got, want.astype(np.uint8))


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_code_widens_exactly(name):
    dt = np.dtype(TYPES[name])
    codes = np.arange(2 ** (8 * dt.itemsize), dtype=np.uint64).astype(UINT[dt.itemsize])
    got = codes.view(dt).astype(np.float32)
    if name == "bfloat16":
        want = (codes.astype(np.uint32) << 16).view(np.float32)
    else:
        want = decode(name).astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
    # float64 / float16 / back: exact both ways for every value
    np.testing.assert_array_equal(got[ok].astype(np.float64), codes[ok].view(dt).astype(np.float64))
    np.testing.assert_array_equal(got[ok].astype(dt).view(codes.dtype), codes[ok])


def test_float64_to_fp8_is_correctly_rounded_bf16_through_float32():
    # 1 + 2^-4 is the e4m3 midpoint between 1 and 1.125; a float64 a hair
    # above it is 1.125 (correctly rounded, as ml_dtypes rounds float64 to
    # fp8), though float32 rounds it to the midpoint itself (-> even 1.0)
    x = np.array([1 + 2.0 ** -4 + 2.0 ** -40, -(1 + 2.0 ** -4 + 2.0 ** -40), 1 + 2.0 ** -4])
    for e4 in (nl.float8_e4m3fn, nl.float8_e4m3):   # the same below their tops
        assert x.astype(e4).astype(np.float32).tolist() == [1.125, -1.125, 1.0]
        assert x.astype(np.float32).astype(e4).astype(np.float32).tolist() == [1, -1, 1]
    # e5m2 likewise: 1 + 2^-3 is the midpoint of 1 and 1.25
    y = np.array([1 + 2.0 ** -3 + 2.0 ** -40, 1 + 2.0 ** -3 - 2.0 ** -40])
    assert y.astype(nl.float8_e5m2).astype(np.float32).tolist() == [1.25, 1.0]
    # bf16 goes through float32 (ml_dtypes' bfloat16 does too): the float64
    # just above the 1 + 2^-8 midpoint becomes the midpoint, then 1.0
    z = np.array([1 + 2.0 ** -8 + 2.0 ** -40])
    assert z.astype(nl.bfloat16).astype(np.float32).tolist() == [1.0]
    # a float64 overflow: inf / NaN as from float32
    big = np.array([1e300, -1e300])
    with np.errstate(over="ignore"):   # NumPy's float64 -> float32 overflow warning
        assert np.isnan(big.astype(nl.float8_e4m3fn).astype(np.float32)).all()
        assert big.astype(nl.float8_e4m3).astype(np.float32).tolist() == [np.inf, -np.inf]
        assert big.astype(nl.float8_e5m2).astype(np.float32).tolist() == [np.inf, -np.inf]


@pytest.mark.parametrize("t", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                               np.int64, np.uint64, np.bool_, np.float16, np.float64])
def test_casts_with_numpy_types_go_through_float32(t):
    """format -> t is float32 -> t (NumPy's own cast: ints truncate); t ->
    format is t -> float32 -> format."""
    x = np.concatenate([RNG.uniform(-300, 300, 500), RNG.uniform(0, 5, 100),
                        [0.0, 1.0, 2.5, -2.5, 255, 256]]).astype(np.float32)
    if np.dtype(t).kind in "ub":
        x = np.abs(x)
    for name, typ in TYPES.items():
        v = x.astype(typ)
        f = v.astype(np.float32)
        finite = np.isfinite(f)
        with np.errstate(invalid="ignore"):   # e4m3's inf cast to an int (then masked off)
            np.testing.assert_array_equal(v.astype(t)[finite], f.astype(t)[finite])
        src = f[finite].astype(t)
        want = ref_round(src.astype(np.float32), name)
        np.testing.assert_array_equal(src.astype(typ).view(want.dtype), want)


def test_npy_dtype_objects_and_names():
    assert np.dtype(nl.bfloat16).itemsize == 2 and np.dtype(nl.float8_e5m2).itemsize == 1
    assert nl.float8_e4m3 is not nl.float8_e4m3fn   # two formats, as in NKI
    assert nl._dtype(nl.float8_e4m3) == "float8_e4m3" and nl._dtype(nl.float8_e4m3fn) == "float8_e4m3fn"
    assert [np.dtype(TYPES[n]).name for n in sorted(FORMATS)] == sorted(FORMATS)
    assert np.zeros((2, 3), dtype=nl.bfloat16).dtype == np.dtype(nl.bfloat16)
    assert nl.bfloat16.dtype == np.dtype(nl.bfloat16)
    # the kernel-side names equal the types (a kernel's `t.dtype == nl.bfloat16`)
    assert nl._dtype(nl.bfloat16) == "bfloat16" == nl._dtype("bfloat16")
    assert nl._dtype("bfloat16") == nl.bfloat16 and nl.bfloat16 == nl._dtype(np.dtype(nl.bfloat16))
    assert nl._dtype("bfloat16") != nl.float8_e5m2 and nl._dtype("float32") != nl.bfloat16
    assert nl.bf16 == nl.bfloat16 and nl.fp8_e5m2 == nl.float8_e5m2
    # a tile's dtype (the name) works as a NumPy dtype, as NKI's does
    assert np.dtype(nl._dtype(nl.bfloat16)) == np.dtype(nl.bfloat16)
    assert np.dtype("float8_e5m2").itemsize == 1
    assert nl.finfo(nl.bfloat16).max == float(np.float32(2 ** 127 * (2 - 2 ** -7)))
    assert nl.finfo(nl.float8_e4m3fn).max == 448.0 and nl.finfo(nl.float8_e4m3).max == 240.0


def test_ufuncs_compute_in_float32_and_round():
    for name, typ in TYPES.items():
        lim = 200 if name.startswith("float8_e4m3") else 1000
        a32 = RNG.uniform(-lim, lim, 400).astype(np.float32).astype(typ).astype(np.float32)
        b32 = RNG.uniform(0.5, 40, 400).astype(np.float32).astype(typ).astype(np.float32)
        a, b = a32.astype(typ), b32.astype(typ)

        def same(got, want32):
            assert got.dtype == np.dtype(typ)
            np.testing.assert_array_equal(got.view(UINT[got.itemsize]), ref_round(want32, name))

        with np.errstate(all="ignore"):
            same(a + b, a32 + b32)
            same(a - b, a32 - b32)
            same(a * b, a32 * b32)
            same(a / b, a32 / b32)
            same(-a, -a32)
            same(np.abs(a), np.abs(a32))
            same(np.maximum(a, b), np.maximum(a32, b32))
            same(np.minimum(a, b), np.minimum(a32, b32))
            same(np.sqrt(b), np.sqrt(b32))
            same(np.exp(b / b), np.exp(b32 / b32))
            same(np.square(a), np.square(a32))
        for op in (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal):
            np.testing.assert_array_equal(op(a, b), op(a32, b32))
        nan_inf = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32).astype(typ)
        f = nan_inf.astype(np.float32)
        for op in (np.isnan, np.isinf, np.isfinite):
            np.testing.assert_array_equal(op(nan_inf), op(f))
        assert a.max() == a32.max() and np.argmin(a) == np.argmin(a32)
        np.testing.assert_array_equal(np.sort(a).astype(np.float32), np.sort(a32))


def test_scalars():
    x = nl.bfloat16(1.5)
    assert type(x) is nl.bfloat16 and float(x) == 1.5 and repr(x) == "1.5"
    y = x + nl.bfloat16(2)
    assert type(y) is nl.bfloat16 and float(y) == 3.5
    assert float(nl.bfloat16(1.0) + nl.bfloat16(2.0 ** -8)) == 1.0   # rounded to bf16
    assert x == 1.5 and x < nl.bfloat16(2) and hash(x) == hash(1.5) and int(nl.bfloat16(-2.7)) == -2
    assert np.isnan(float(nl.float8_e4m3fn(500.0))) and float(nl.float8_e5m2(1e6)) == np.inf
    assert float(nl.float8_e4m3fn(464.0)) == 448.0
    assert float(nl.float8_e4m3(500.0)) == np.inf and float(nl.float8_e4m3(247.0)) == 240.0
    a = np.array([1.0, 2.0], np.float32).astype(nl.bfloat16)
    assert type(a[0]) is nl.bfloat16 and a.tolist() == [1.0, 2.0]
    a[1] = 3.3
    assert a[1] == nl.bfloat16(3.3) and float(a[1]) == 3.296875
    assert a.byteswap().view(np.uint16).tolist() == [0x803F, 0x5340]   # 0x3F80, 0x4053 swapped
    assert type(a.max()) is nl.bfloat16 and a.max() == 3.296875 and a.item(0) == 1.0
    assert np.arange(0, 3, dtype=nl.float8_e5m2).astype(np.float32).tolist() == [0, 1, 2]


def test_npy_round_trip_and_the_cli(tmp_path):
    """np.save writes these arrays as NumPy void elements ('<V2', '|V1'),
    as ml_dtypes' are; tpb sim reads such a file as the raw bits of the
    input tensor's dtype, and tpb check takes a '<V2' expected file."""
    x = RNG.standard_normal((128, 64)).astype(np.float32).astype(nl.bfloat16)
    np.save(tmp_path / "x.npy", x)
    with open(tmp_path / "x.npy", "rb") as f:
        assert b"'descr': '<V2'" in f.read(128)
    back = np.load(tmp_path / "x.npy")
    np.testing.assert_array_equal(back.view(nl.bfloat16).view(np.uint16), x.view(np.uint16))
    p = pickle.loads(pickle.dumps(x))
    assert p.dtype == x.dtype and p.tobytes() == x.tobytes()

    art, ind, out = str(tmp_path / "art"), tmp_path / "in", tmp_path / "out"
    tpbsim.compile(relu_bf16, x, out_dir=art, inputs_dir=str(ind))
    assert np.load(ind / "x.npy").dtype == np.float32          # the CLI's exchange form
    np.save(ind / "x.npy", x)                                  # now the raw '<V2' bits
    tpb = os.path.join(os.path.dirname(os.path.dirname(os.environ["TPBSIM_LIB"])), "bin", "tpb")
    if not os.access(tpb, os.X_OK):
        pytest.skip("tpb CLI not next to libtpb")
    sim = subprocess.run([tpb, "sim", art, "--inputs", str(ind), "-q", "-o", str(out)],
                         capture_output=True, text=True)
    assert sim.returncode == 0, sim.stderr
    want = np.maximum(x.astype(np.float32), 0)
    np.testing.assert_array_equal(np.load(out / "out.npy"), want)
    np.save(tmp_path / "want.npy", want.astype(nl.bfloat16))
    chk = subprocess.run([tpb, "check", str(out / "out.npy"), str(tmp_path / "want.npy")],
                         capture_output=True, text=True)
    assert chk.returncode == 0, chk.stdout + chk.stderr

    # an fp8 file: '|V1' says neither format; the input tensor's decides
    y = RNG.standard_normal((128, 64)).astype(np.float32).astype(nl.float8_e5m2)
    tpbsim.compile(relu_bf16, y, out_dir=art, inputs_dir=str(ind))
    np.save(ind / "x.npy", y)
    sim = subprocess.run([tpb, "sim", art, "--inputs", str(ind), "-q", "-o", str(out)],
                         capture_output=True, text=True)
    assert sim.returncode == 0, sim.stderr
    np.testing.assert_array_equal(np.load(out / "out.npy"), np.maximum(y.astype(np.float32), 0))
    chk = subprocess.run([tpb, "check", str(out / "out.npy"), str(ind / "x.npy")],
                         capture_output=True, text=True)
    assert chk.returncode != 0 and "'|V1' is raw 1-byte values" in chk.stdout + chk.stderr


@nki.jit
def relu_bf16(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    assert x.dtype == nl.bfloat16 or x.dtype == nl.float8_e5m2
    assert np.dtype(x.dtype).itemsize == (2 if x.dtype == nl.bfloat16 else 1)
    t = nl.load(x)
    nl.store(out, nisa.activation(op=nl.relu, data=t, dtype=x.dtype))
    return out


@nki.jit
def scaled(x, dt):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=dt, buffer=nl.sbuf)
    t[...] = nl.load(x)
    nl.store(out, nl.multiply(t, 2.0, dtype=nl.float32))
    return out


def test_kernels_take_these_arrays():
    """A kernel given such an array sees a tensor of that dtype (the
    simulator gets the exact values); NumPy-side code as NKI tests write it."""
    a = np.random.rand(128, 32).astype(nl.bfloat16)
    r = relu_bf16(a)
    assert r.dtype == np.dtype(nl.bfloat16)   # a bf16 output is a bf16 array, as in NKI
    np.testing.assert_array_equal(r.astype(np.float32), a.astype(np.float32))
    e = relu_bf16(-a.astype(np.float32).astype(nl.float8_e5m2))
    assert e.dtype == np.dtype(nl.float8_e5m2) and not e.astype(np.float32).any()
    for dt in (nl.bfloat16, nl.float8_e4m3, nl.float8_e4m3fn, nl.float8_e5m2):
        x = np.ones((128, 8), dtype=dt) * np.array(0.75, dtype=dt)
        out = scaled(x, dt)
        np.testing.assert_allclose(out, x.astype(np.float32) * 2)
    # nl.static_cast gives these arrays (NKI's nl.static_cast on the host)
    s = nl.static_cast(np.float32([1 + 2 ** -8, 3]), nl.bfloat16)
    assert s.dtype == np.dtype(nl.bfloat16) and s.astype(np.float32).tolist() == [1.0, 3.0]


def test_without_the_module_numpy_refuses_with_the_reason():
    code = ("import numpy as np, tpbsim.nki.language as nl\n"
            "assert nl._dtype(nl.bfloat16) == 'bfloat16'\n"
            "try:\n    np.zeros(2, dtype=nl.bfloat16)\nexcept TypeError as e:\n    print(e)\n")
    env = dict(os.environ, TPBSIM_DTYPES=os.path.join(os.sep, "nonexistent", "tpbsim_dtypes.so"),
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tpbsim.__file__))))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "tpbsim has no NumPy bfloat16 dtype here" in r.stdout and "python3-dev" in r.stdout
