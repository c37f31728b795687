"""Op families for the GpSimd data-movement ops and the DMA transpose:
nc_n_gather, local_gather, nonzero_with_count, sequence_bounds,
nc_stream_shuffle and dma_transpose.  Every model is a selection or a
copy of stored values: bit-exact.  Sources: NKI's isa docstrings and the
SDK's NumPy semantics (nki/test/test_nki_isa_local_gather.py,
test_nki_isa_sequence_bounds.py)."""
import numpy as np

from .numerics import FLOATS, NPDT, as64

ANY_DT = FLOATS + ["int32", "uint8", "uint32"]


def load_host(p, host, dtype, record=True):
    """nl.load of a whole host array the caller made; checked exact."""
    nm = p.param(host)
    t = p.new_tile(host.shape, dtype, record=record)
    p.emit("%s = nl.load(%s)" % (t.name, nm))
    if record:
        p.check("load[%s %s]" % (host.shape, dtype), t, lambda env, h=as64(host): (h, "exact", None))
    return t


def _data(p, shape, dtype):
    """A data operand of any dtype, special float values sometimes."""
    kind = "normal"
    if dtype in FLOATS and p.r() < 0.3:
        kind = "special"
    elif dtype in ("int32", "uint32") and p.r() < 0.5:
        kind = "big"
    return p.operand(shape, dtype, kind) if kind == "normal" else p.load(shape, dtype, kind)


def n_gather(p):
    """nc_n_gather: per partition, data's free axes flattened, dst[p, j] =
    data[p, indices[p, j]]; dst's free shape any with indices' count."""
    P = p.randint(1, 129)
    dtype = p.choice(ANY_DT)
    dshape = (P, p.randint(1, 601)) if p.r() < 0.7 else (P, p.randint(1, 5), p.randint(1, 120))
    nf = int(np.prod(dshape[1:]))
    x = _data(p, dshape, dtype)
    ishape = (P, p.randint(1, 513)) if p.r() < 0.7 else (P, p.randint(1, 4), p.randint(1, 100))
    idx = p.rng.integers(0, nf, ishape).astype(np.uint32)
    it = load_host(p, idx, "uint32")
    ni = int(np.prod(ishape[1:]))
    oshape = ishape if p.r() < 0.7 else (P, ni)
    t = p.new_tile(oshape, dtype)
    p.ndarray(t)
    p.emit("nisa.nc_n_gather(dst=%s, data=%s, indices=%s)" % (t.name, x.name, it.name))

    def model(env):
        flat = as64(x.get(env)).reshape(P, nf)
        return np.take_along_axis(flat, idx.reshape(P, ni).astype(np.int64), 1).reshape(oshape), "exact", None
    p.check("nc_n_gather[%s %s idx%s ->%s]" % (dshape, dtype, ishape, oshape), t, model)


def local_gather(p):
    """local_gather (the SDK's NumPy semantics): each 16-partition core c
    flattens its index rows partition-first (order 'F'), keeps the first
    num_valid_indices, and for each index i and partition p of the core
    reads num_elem_per_idx elements of src_buffer[p] from element i.  The
    indices are drawn as multiples of num_elem_per_idx (the SDK's
    index * num_elem_per_idx): other offsets are not documented."""
    P = 16 * p.randint(1, 9)
    E = p.choice([1, 2, 4, 8, 16, 32])
    dtype = p.choice(ANY_DT)
    groups = p.randint(1, max(2, 600 // E) + 1)
    F = groups * E
    x = _data(p, (P, F), dtype) if p.r() < 0.7 else _data(p, (P, groups, E), dtype)
    m = p.randint(1, 9)
    idx = (p.rng.integers(0, groups, (P, m)) * E).astype(np.uint16)
    it = load_host(p, idx, "uint16", record=False)
    full = 16 * m
    nv = full if p.r() < 0.5 else p.randint(1, full + 1)
    arg = "" if nv == full and p.r() < 0.5 else ", num_valid_indices=%d" % nv
    shp = (P, nv, E) if p.r() < 0.7 or nv != full else (P, m, 16, E)
    t = p.new_tile(shp, dtype)
    p.ndarray(t)
    p.emit("nisa.local_gather(dst=%s, src_buffer=%s, index=%s, num_elem_per_idx=%d%s)" %
           (t.name, x.name, it.name, E, arg))

    def model(env):
        src = as64(x.get(env)).reshape(P, F)
        out = np.zeros((P, nv, E))
        for c in range(P // 16):
            rows = slice(16 * c, 16 * c + 16)
            ind = idx[rows].flatten(order="F")[:nv].astype(np.int64)
            cols = ind[:, None] + np.arange(E)[None, :]
            out[rows] = src[rows][:, cols]
        return out.reshape(shp), "exact", None
    p.check("local_gather[(%d,%d) %s E=%d m=%d nv=%d ->%s]" % (P, F, dtype, E, m, nv, shp), t, model)


def nonzero(p):
    """nonzero_with_count: on partitions 0, 16, ..., 112 only, the indices
    of the nonzero elements (+ index_offset), padding_val, and the count
    last; the other partitions of dst are left as they were (a memset)."""
    P = p.randint(1, 129)
    T = p.choice([1, 8, 64, 512, p.randint(1, 601)])
    dtype = p.choice(["float32", "int32"])
    dens = p.choice([0.0, 0.1, 0.5, 0.9, 1.0])
    if dtype == "float32":
        vals = p.host((P, T), "float32", "special")
        host = np.where(p.rng.random((P, T)) < dens, vals, p.choice([0.0, -0.0])).astype(np.float32)
    else:
        host = np.where(p.rng.random((P, T)) < dens, p.rng.integers(-5, 6, (P, T)), 0).astype(np.int32)
    x = load_host(p, host, dtype)
    off = p.choice([0, p.randint(-1000, 1000), p.randint(0, 2**31 - 1 - T)])
    pad = p.choice([-1, 0, p.randint(-2**31, 2**31 - 1)])
    fill = p.randint(-100, 100)
    t = p.new_tile((P, T + 1), "int32")
    p.ndarray(t)
    p.emit("nisa.memset(dst=%s, value=%d)" % (t.name, fill))
    args = ""
    if off != 0 or p.r() < 0.3:
        args += ", index_offset=%d" % off
    if pad != -1 or p.r() < 0.3:
        args += ", padding_val=%d" % pad
    p.emit("nisa.nonzero_with_count(dst=%s, src=%s%s)" % (t.name, x.name, args))

    def model(env):
        out = np.full((P, T + 1), float(fill))
        for q in range(0, P, 16):
            nzi = np.flatnonzero(host[q] != 0)
            row = np.full(T + 1, float(pad))
            row[:len(nzi)] = nzi + off
            row[T] = len(nzi)
            out[q] = row
        return out, "exact", None
    p.check("nonzero_with_count[(%d,%d) %s off=%d pad=%d]" % (P, T, dtype, off, pad), t, model)


def sequence_bounds_model(seq):
    """The SDK's compute_sequence_bounds (test_nki_isa_sequence_bounds.py)."""
    n = len(seq)
    lo, hi = np.zeros(n), np.zeros(n)
    lo[0] = 0 if seq[0] != 0 else n
    for i in range(1, n):
        lo[i] = n if seq[i] == 0 else lo[i - 1] if seq[i] == seq[i - 1] else i
    hi[-1] = n if seq[-1] != 0 else -1
    for i in range(n - 2, -1, -1):
        hi[i] = -1 if seq[i] == 0 else hi[i + 1] if seq[i] == seq[i + 1] else i + 1
    return np.vstack((lo, hi))


def sequence_bounds(p):
    """sequence_bounds of a [1, n] tile of segment ids (runs, zeros as
    padding, ids repeating after another run): [1, 2, n] start / end."""
    n = p.choice([1, 2, 9, 32, 512, p.randint(1, 601)])
    a, b = p.choice(["float32", "int32"]), p.choice(["float32", "int32"])
    seq = []
    while len(seq) < n:
        sid = 0 if p.r() < 0.25 else p.randint(1, 6 if p.r() < 0.5 else 1000)
        seq += [sid] * p.randint(1, 12)
    seq = np.array(seq[:n], np.float64)
    if p.r() < 0.5:   # sorted ids, as the SDK's example
        seq = np.sort(seq)
    x = load_host(p, seq.reshape(1, n).astype(NPDT[a]), a)
    t = p.new_tile((1, 2, n), b)
    p.ndarray(t)
    p.emit("nisa.sequence_bounds(dst=%s, segment_ids=%s)" % (t.name, x.name))
    p.check("sequence_bounds[n=%d %s->%s]" % (n, a, b), t,
            lambda env: (sequence_bounds_model(seq).reshape(1, 2, n), "exact", None))


def stream_shuffle(p):
    """nc_stream_shuffle: in each 32-partition quadrant, dst partition i
    copies src partition mask[i] of that quadrant; 255 leaves dst's
    partition as it was.  SBUF or PSUM; in place too.  Fewer than 32
    partitions: mask entries past them are 255 and sources within them
    (what the engine does past a tile's partitions is not documented)."""
    dtype = p.choice(ANY_DT)
    P = p.choice([32, 64, 96, 128, p.randint(1, 33)])
    F = p.choice([1, 7, 64, 512, p.randint(1, 513)])
    lim = min(P, 32)
    mask = [p.randint(0, lim) if i < lim and p.r() < 0.85 else 255 for i in range(32)]
    inplace = p.r() < 0.2
    buf = "psum" if dtype == "float32" and p.r() < 0.3 else "sbuf"
    src = _data(p, (P, F), dtype)
    t = p.new_tile((P, F), dtype, buf)
    p.ndarray(t)
    if inplace:
        p.emit("nisa.tensor_copy(dst=%s, src=%s)" % (t.name, src.name))
        s_txt = t.name
    else:
        fill = 3
        p.emit("nisa.memset(dst=%s, value=%d)" % (t.name, fill))
        s_txt = src.name
    p.emit("nisa.nc_stream_shuffle(dst=%s, src=%s, shuffle_mask=%s)" % (t.name, s_txt, mask))

    def model(env):
        s = as64(src.get(env))
        out = s.copy() if inplace else np.full((P, F), 3.0)
        for q0 in range(0, P, 32):
            for i in range(min(32, P - q0)):
                if mask[i] != 255:
                    out[q0 + i] = s[q0 + mask[i]]
        return out, "exact", None
    p.check("nc_stream_shuffle[(%d,%d) %s %s%s]" % (P, F, dtype, buf, " inplace" if inplace else ""), t, model)


DT_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def dma_transpose(p):
    """dma_transpose of a 2-, 3- or 4-D source (HBM or SBUF) into an SBUF
    tile, NKI's permutations (1, 0), (2, 1, 0), (3, 1, 2, 0), given or
    implied; hwdge with its constraints (2-byte dtype, 2-D src 16 rows)."""
    nd = p.choice([2, 2, 3, 4])
    hw = nd == 2 and p.r() < 0.25
    # NKI states 2-byte elements for hwdge and swdge; tpbsim also moves
    # 4-byte ones and refuses 1-byte ones (undocumented for the default mode)
    dtype = p.choice(["bfloat16", "float16"]) if hw or p.r() < 0.5 else \
        p.choice(["float32", "int32", "uint32"])
    last = p.randint(1, 129)
    if nd == 2:
        shape = (16 if hw else p.randint(1, 129), last)
    elif nd == 3:
        shape = (p.randint(1, 65), p.randint(1, 5), last)
    else:
        shape = (p.randint(1, 33), p.randint(1, 4), p.randint(1, 4), last)
    axes = DT_AXES[nd]
    if p.r() < 0.5:
        host = p.host(shape, dtype, "special" if dtype in FLOATS else "normal")
        src_txt = p.param(host)
        srcv = (lambda env, h=as64(host): h)
        where = "hbm"
    else:
        x = _data(p, shape, dtype)
        src_txt, srcv, where = x.name, x.get, "sbuf"
    oshape = tuple(shape[a] for a in axes)
    t = p.new_tile(oshape, dtype)
    p.ndarray(t)
    ax = ", axes=%s" % (axes,) if p.r() < 0.5 else ""
    dge = ", dge_mode=nisa.dge_mode.hwdge" if hw else ""
    p.emit("nisa.dma_transpose(dst=%s, src=%s%s%s)" % (t.name, src_txt, ax, dge))
    p.check("dma_transpose[%s %s %s%s]" % (where, shape, dtype, " hwdge" if hw else ""), t,
            lambda env: (np.transpose(srcv(env), axes), "exact", None))

