"""The kernel builder: a Prog collects the kernel's source lines, its host
inputs, its tiles and one check (a model) per op; the op families
(ops_nl, ops_isa, ops_pe) draw on its helpers."""
import numpy as np

from .numerics import F32, FLOATS, NPDT, as64, st, st_from

SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -3e-39, 1e30, -1e30,
                     65520.0, 70000.0, 3.5e38, 0.5, -2.5, 1.5])
INT_HOST = {"int32": (-1000, 1000), "uint8": (0, 255), "uint32": (0, 2000)}
INT_BIG = {"int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1)}


class Tile:
    """A tile of the kernel, or a view (base tile and NumPy index) of one."""

    def __init__(self, name, shape, dtype, buf="sbuf", base=None, idx=None):
        self.name, self.shape, self.dtype, self.buf = name, tuple(shape), dtype, buf
        self.base, self.idx = base, idx

    def get(self, env):
        """Its stored values (float64) in env, the outputs by tile name."""
        if self.base is None:
            return env[self.name]
        return self.base.get(env)[self.idx]


class Prog:
    def __init__(self, seed, any_start=False):
        self.rng = np.random.default_rng(seed)
        self.any_start = any_start
        self.lines = []        # kernel body
        self.params = []       # (name, host array)
        self.tiles = []        # every tile stored to an output
        self.checks = []       # (desc, tile, model(env) -> (expected, kind, arg))
        self.outs = []         # (output name, tile, store mode)
        self.n = 0
        self.no_special = False   # set for ops whose model depends on summation order

    # ---- small helpers
    def r(self):
        return self.rng.random()

    def choice(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    def randint(self, lo, hi):
        """An int in [lo, hi)."""
        return int(self.rng.integers(lo, hi))

    def name(self, prefix="t"):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def emit(self, s):
        self.lines.append("    " + s)

    def check(self, desc, tile, model):
        self.checks.append((desc, tile, model))

    def new_tile(self, shape, dtype, buf="sbuf", record=True):
        t = Tile(self.name(), shape, dtype, buf)
        if record:
            self.tiles.append(t)
        return t

    def ndarray(self, t):
        """Emit t = nl.ndarray(...) in t's buffer."""
        self.emit("%s = nl.ndarray(%s, dtype=nl.%s, buffer=nl.%s)" % (t.name, t.shape, t.dtype, t.buf))

    def shape(self, nd=None, maxf=600):
        """A random tile shape: (P, F) or (P, A, B) with A*B <= maxf."""
        P = self.choice([1, 2, 5, 32, 64, 100, 127, 128, self.randint(1, 129)])
        nd = nd or (2 if self.r() < 0.75 else 3)
        if nd == 2:
            F = self.choice([1, 2, 7, 64, 128, 300, 512, 600, self.randint(1, maxf + 1)])
            return (P, min(F, maxf))
        A = self.choice([1, 2, 3, 4, 8])
        B = self.choice([1, 5, 16, 33, 64, self.randint(1, maxf // A + 1)])
        return (P, A, min(B, maxf // A))

    def fscalar(self, lo=-3, hi=3):
        v = float(F32(self.rng.uniform(lo, hi)))
        if self.r() < 0.3:
            v = float(np.round(v * 4) / 4)
        return v

    # ---- host data
    def _float_host(self, shape, kind):
        rng = self.rng
        if kind == "pos":
            return rng.uniform(0.05, 6.0, shape)
        if kind == "near1":
            return rng.uniform(0.8, 1.25, shape)
        if kind == "small":
            return rng.uniform(-3.0, 3.0, shape)
        if kind == "bool":
            return (rng.random(shape) < 0.5).astype(np.float64)
        v = rng.normal(0, 2.0, shape)
        if kind == "special":
            m = rng.random(shape) < 0.3
            return np.where(m, SPECIALS[rng.integers(0, len(SPECIALS), shape)], v)
        if self.r() < 0.3:   # exact halves and integers: rounding ties
            v = np.round(v * 2) / 2
        return v

    def host(self, shape, dtype, kind="normal"):
        """Random host data of a kind: normal, pos, near1, small, bool,
        special (NaN, inf, subnormals, overflow), shift (0..7), big."""
        if dtype in FLOATS:
            with np.errstate(over="ignore"):   # 3.5e38 and 70000 overflow fp16: inf
                return self._float_host(shape, kind).astype(F32).astype(NPDT[dtype])
        lo, hi = INT_HOST[dtype]
        if kind == "pos":
            lo = 1
        elif kind == "shift":
            lo, hi = 0, 7
        elif kind == "big" and dtype in INT_BIG:
            lo, hi = INT_BIG[dtype]
        elif kind == "bool":
            lo, hi = 0, 1
        return self.rng.integers(lo, hi + 1, shape, dtype=np.int64).astype(NPDT[dtype])

    def param(self, arr):
        nm = "a%d" % len(self.params)
        self.params.append((nm, arr))
        return nm

    # ---- operands
    def _load_slices(self, shape, mode):
        """Offsets and steps of an HBM slice: plain, offset or stepped (every axis)."""
        nd = len(shape)
        offs, steps = [0] * nd, [1] * nd
        if mode == "offset":
            offs = [self.randint(0, 4) for _ in range(nd)]
        if mode == "step":
            steps = [self.randint(1, 4) for _ in range(nd)]
            offs = [self.randint(0, 3) for _ in range(nd)]
        return offs, steps

    def load(self, shape, dtype, kind="normal"):
        """A fresh input tile: nl.load or nisa.dma_copy of an HBM slice, or
        nl.load(dtype=) from another float dtype; checked on its own."""
        mode = self.choice(["plain", "plain", "offset", "step", "cast"])
        src_dtype = dtype
        if mode == "cast":
            if dtype in FLOATS:
                src_dtype = self.choice(FLOATS)
            else:
                mode = "plain"
        offs, steps = self._load_slices(shape, mode)
        hshape = tuple(o + (s - 1) * k + 1 + self.randint(0, 2) for o, s, k in zip(offs, shape, steps))
        host = self.host(hshape, src_dtype, kind)
        pn = self.param(host)
        sl = ", ".join("%d:%d%s" % (o, o + (s - 1) * k + 1, (":%d" % k) if k != 1 else "")
                       for o, s, k in zip(offs, shape, steps))
        t = self.new_tile(shape, dtype)
        if mode == "cast":
            self.emit("%s = nl.load(%s[%s], dtype=nl.%s)" % (t.name, pn, sl, dtype))
        elif self.r() < 0.5:
            self.emit("%s = nl.load(%s[%s])" % (t.name, pn, sl))
        else:
            self.ndarray(t)
            self.emit("nisa.dma_copy(dst=%s, src=%s[%s])" % (t.name, pn, sl))
        idx = tuple(slice(o, o + (s - 1) * k + 1, k) for o, s, k in zip(offs, shape, steps))
        expv = st_from(as64(host[idx]), src_dtype, dtype)
        self.check("load[%s %s %s->%s]" % (mode, shape, src_dtype, dtype), t,
                   lambda env, e=expv: (e, "exact", None))
        return t

    def _legal_starts(self, P, Pbase):
        """Start partitions an engine accepts for a P-partition view
        (docs/semantics.md section 2); any_start also tries the others,
        which tpbsim refuses with an error (counted as a failure)."""
        starts = [p0 for p0 in (0, 32, 64, 96) if p0 + P <= Pbase and
                  (P > 64 and p0 == 0 or 32 < P <= 64 and p0 in (0, 64) or P <= 32)]
        if self.any_start and self.r() < 0.1:
            starts = list(range(0, Pbase - P + 1))
        return starts

    def _view2d(self, shape, dtype):
        """A view b[p0:p0+P, f0:...:k] of a wider 2-D tile, or None."""
        P, F = shape
        c = [t for t in self.tiles if len(t.shape) == 2 and t.dtype == dtype and t.base is None
             and t.buf == "sbuf" and t.shape[0] >= P and t.shape[1] >= F]
        if not c:
            return None
        b = self.choice(c)
        p0 = self.choice(self._legal_starts(P, b.shape[0]))
        kmax = max(1, (b.shape[1] - 1) // max(F - 1, 1)) if F > 1 else 1
        k = self.randint(1, min(kmax, 3) + 1)
        f0 = self.randint(0, b.shape[1] - (F - 1) * k)
        sl = "%d:%d, %d:%d%s" % (p0, p0 + P, f0, f0 + (F - 1) * k + 1, (":%d" % k) if k > 1 else "")
        return Tile("%s[%s]" % (b.name, sl), shape, dtype, "sbuf", base=b,
                    idx=(slice(p0, p0 + P), slice(f0, f0 + (F - 1) * k + 1, k)))

    def _view3d(self, shape, dtype):
        """An integer-index view b[:, j, :] of a 3-D tile, or None."""
        P, F = shape
        c = [t for t in self.tiles if len(t.shape) == 3 and t.dtype == dtype and t.base is None
             and t.buf == "sbuf" and t.shape[0] == P and t.shape[2] == F]
        if not c:
            return None
        b = self.choice(c)
        j = self.randint(0, b.shape[1])
        return Tile("%s[:, %d, :]" % (b.name, j), shape, dtype, "sbuf", base=b,
                    idx=(slice(None), j, slice(None)))

    def operand(self, shape, dtype, kind="normal", reuse=0.5, psum_ok=False):
        """An operand: an earlier tile of that shape and dtype (kind normal
        only), a view of a larger one, else a fresh load."""
        shape = tuple(shape)
        if kind == "normal" and self.r() < reuse:
            c = [t for t in self.tiles if t.shape == shape and t.dtype == dtype
                 and (t.buf == "sbuf" or psum_ok) and t.base is None]
            if c:
                return self.choice(c)
        v = None
        if kind == "normal" and len(shape) == 2 and self.r() < 0.35:
            v = self._view2d(shape, dtype)
        if v is None and kind == "normal" and len(shape) == 2 and self.r() < 0.15:
            v = self._view3d(shape, dtype)
        if v is not None:
            return v
        if kind == "normal" and dtype in FLOATS and not self.no_special and self.r() < 0.1:
            kind = "special"
        return self.load(shape, dtype, kind)

    def column(self, P, kind="pos"):
        """A [P, 1] float32 operand: a fresh load, or (kind small) sometimes a
        column view t[:, j:j+1] of a wider tile."""
        c = [t for t in self.tiles if len(t.shape) == 2 and t.dtype == "float32" and t.base is None
             and t.buf == "sbuf" and t.shape[0] == P and t.shape[1] > 1]
        if kind == "small" and c and self.r() < 0.4:
            b = self.choice(c)
            j = self.randint(0, b.shape[1])
            return Tile("%s[:, %d:%d]" % (b.name, j, j + 1), (P, 1), "float32", "sbuf", base=b,
                        idx=(slice(None), slice(j, j + 1)))
        return self.load((P, 1), "float32", kind)

    # ---- outputs
    def _store_cast(self, t, src_name):
        """A narrowing fp32 -> bf16/fp16 store, checked against RNE."""
        nd_ = self.choice(["bfloat16", "float16"])
        nt = Tile("n_" + t.name, t.shape, nd_)
        o = "o_" + nt.name
        self.emit("%s = nl.ndarray(%s, dtype=nl.%s, buffer=nl.shared_hbm)" % (o, t.shape, nd_))
        self.emit("nl.store(%s, %s)" % (o, src_name))
        self.outs.append((o, nt, "plain"))
        self.check("store-cast[%s float32->%s]" % (t.shape, nd_), nt,
                   lambda env, t=t, nd_=nd_: (st(t.get(env), nd_), "exact", None))

    def _store(self, t):
        """Store t to an output of its own: plain, widened to fp32, or split
        in two stepped stores (even columns hold the first half)."""
        src_name = t.name
        if t.buf == "psum":
            src_name = t.name + "_sb"
            self.emit("%s = nl.ndarray(%s, dtype=nl.%s, buffer=nl.sbuf)" % (src_name, t.shape, t.dtype))
            self.emit("nisa.tensor_copy(dst=%s, src=%s)" % (src_name, t.name))
        if t.dtype == "float32" and self.r() < 0.15:
            self._store_cast(t, src_name)
        o, odt, mode = "o_" + t.name, t.dtype, "plain"
        r = self.r()
        if r < 0.12 and t.dtype in FLOATS and t.dtype != "float32":
            odt, mode = "float32", "cast"          # widening: exact
        elif r < 0.25 and len(t.shape) == 2 and t.shape[1] >= 2 and t.shape[1] % 2 == 0:
            mode = "split"
        self.emit("%s = nl.ndarray(%s, dtype=nl.%s, buffer=nl.shared_hbm)" % (o, t.shape, odt))
        if mode == "split":
            h = t.shape[1] // 2
            self.emit("nl.store(%s[:, 0:%d:2], %s[:, 0:%d])" % (o, 2 * h, src_name, h))
            self.emit("nl.store(%s[:, 1:%d:2], %s[:, %d:%d])" % (o, 2 * h, src_name, h, 2 * h))
        else:
            self.emit("nl.store(%s, %s)" % (o, src_name))
        self.outs.append((o, t, mode))

    def source(self):
        """Store every recorded tile, and return the kernel's source text."""
        for t in list(self.tiles):
            self._store(t)
        self.emit("return (%s,)" % ", ".join(o for o, _, _ in self.outs))
        head = ["from tpbsim import nki", "import tpbsim.nki.language as nl",
                "import tpbsim.nki.isa as nisa", "", "@nki.jit",
                "def kernel(%s):" % ", ".join(p for p, _ in self.params)]
        return "\n".join(head + self.lines) + "\n"
