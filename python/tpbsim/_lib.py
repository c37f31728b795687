"""ctypes binding of libtpb (lib/tpb.h).  Every call returns 0/-1 in C;
here a failure raises TpbError with libtpb's message.  The library never
exits or aborts the interpreter on a kernel or input error."""
import ctypes
import os

import numpy as np

API_VERSION = 1


class TpbError(Exception):
    """An error reported by libtpb (compile or simulate), or a kernel error
    found while tracing.  The message names the kernel file:line and field."""


def _candidates():
    env = os.environ.get("TPBSIM_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for b in ("build", "build-asan"):
        yield os.path.join(root, b, "lib", "libtpb.so")
    yield "libtpb.so"


def _load():
    tried = []
    for p in _candidates():
        if os.path.sep in p and not os.path.exists(p):
            tried.append(p)
            continue
        try:
            lib = ctypes.CDLL(p)
        except OSError as e:
            tried.append("%s (%s)" % (p, e))
            continue
        _declare(lib)
        if lib.tpb_v1_api_version() != API_VERSION:
            tried.append("%s (API version %d)" % (p, lib.tpb_v1_api_version()))
            continue
        return lib
    raise ImportError("tpbsim: libtpb.so not found; build it with scripts/setup "
                      "(or set TPBSIM_LIB).  Tried: " + "; ".join(tried))


def _declare(lib):
    c = ctypes
    vp, cp, i64, sz = c.c_void_p, c.c_char_p, c.c_int64, c.c_size_t
    sig = {
        "tpb_v1_api_version": (c.c_int, []),
        "tpb_v1_new": (vp, []),
        "tpb_v1_free": (None, [vp]),
        "tpb_v1_error": (cp, [vp]),
        "tpb_v1_check_json": (c.c_int, [vp, cp, sz, cp, cp, cp, c.POINTER(i64),
                                        c.POINTER(c.c_int)]),
        "tpb_v1_compile_json": (c.c_int, [vp, cp, sz, cp, cp, cp, cp]),
        "tpb_v1_compile_file": (c.c_int, [vp, cp, cp, cp]),
        "tpb_v1_set_max_memory": (c.c_int, [vp, c.c_uint64]),
        "tpb_v1_compiled_bundles": (i64, [vp]),
        "tpb_v1_sim_load": (c.c_int, [vp, cp, cp, c.c_int]),
        "tpb_v1_sim_set_input": (c.c_int, [vp, cp, cp, c.c_int, c.POINTER(i64), vp, sz]),
        "tpb_v1_sim_run": (c.c_int, [vp]),
        "tpb_v1_sim_fetch": (c.c_int, [vp, cp, c.c_char_p, c.POINTER(c.c_int),
                                       c.POINTER(i64), c.POINTER(sz)]),
        "tpb_v1_sim_fetch_copy": (c.c_int, [vp, vp, sz]),
        "tpb_v1_sim_cycles": (c.c_uint64, [vp]),
        "tpb_v1_sim_stats_json": (cp, [vp]),
        "tpb_v1_sim_write_trace": (c.c_int, [vp, cp]),
        "tpb_v1_sim_write_outputs": (c.c_int, [vp, cp]),
        "tpb_v1_sim_write_stats": (c.c_int, [vp, cp]),
    }
    # newer than some libtpb builds: used when present (sim_fetch(bits=True))
    sig["tpb_v1_sim_fetch_bits"] = sig["tpb_v1_sim_fetch"]
    for name, (res, args) in sig.items():
        if name == "tpb_v1_sim_fetch_bits" and not hasattr(lib, name):
            continue
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


_LIB = None


def lib():
    global _LIB
    if _LIB is None:
        _LIB = _load()
    return _LIB


def _b(s):
    return None if s is None else os.fsencode(s) if not isinstance(s, bytes) else s


class Context:
    """One libtpb context (tpb_ctx_t); closed when garbage-collected.
    max_memory: the compile memory budget in bytes (None: three quarters
    of physical memory), as `tpb compile --max-memory`."""

    def __init__(self, max_memory=None):
        self._lib = lib()
        self._c = self._lib.tpb_v1_new()
        if not self._c:
            raise MemoryError("tpb_v1_new failed")
        if max_memory is not None:
            self.set_max_memory(max_memory)

    def set_max_memory(self, nbytes):
        """Compiles after this refuse a kernel estimated to need more than
        nbytes (0: the default budget) while it unrolls."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise ValueError("max_memory: a byte count >= 0 (0: the default), got %r" % (nbytes,))
        self._check(self._lib.tpb_v1_set_max_memory(self._c, nbytes))

    def close(self):
        if self._c:
            self._lib.tpb_v1_free(self._c)
            self._c = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _check(self, rc):
        if rc != 0:
            msg = self._lib.tpb_v1_error(self._c).decode("utf-8", "replace")
            raise TpbError(msg)

    def check_json(self, text, source, target=None, base_dir=None):
        t = text.encode()
        nops, nprog = ctypes.c_int64(), ctypes.c_int()
        self._check(self._lib.tpb_v1_check_json(self._c, t, len(t), _b(source), _b(base_dir),
                                                _b(target), ctypes.byref(nops),
                                                ctypes.byref(nprog)))
        return nops.value, nprog.value

    def compile_json(self, text, source, out_dir, target=None, base_dir=None):
        t = text.encode()
        self._check(self._lib.tpb_v1_compile_json(self._c, t, len(t), _b(source),
                                                  _b(base_dir), _b(target), _b(out_dir)))
        return self._lib.tpb_v1_compiled_bundles(self._c)

    def compile_file(self, path, out_dir, target=None):
        self._check(self._lib.tpb_v1_compile_file(self._c, _b(path), _b(target), _b(out_dir)))

    def sim_load(self, art_dir, target=None, trace=False):
        self._check(self._lib.tpb_v1_sim_load(self._c, _b(art_dir), _b(target), int(bool(trace))))

    def sim_set_input(self, name, arr):
        from ._ndtypes import to_exchange
        a = np.ascontiguousarray(to_exchange(np.asarray(arr)))   # bf16/fp8 as float32
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        if a.dtype == np.bool_:
            a = a.astype(np.uint8)
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        self._check(self._lib.tpb_v1_sim_set_input(
            self._c, _b(name), a.dtype.str.encode(), a.ndim, shape,
            a.ctypes.data_as(ctypes.c_void_p), a.nbytes))

    def sim_run(self):
        self._check(self._lib.tpb_v1_sim_run(self._c))

    def sim_fetch(self, name, bits=False):
        """Output `name` as NumPy; bits: a bf16 / fp8 tensor as its raw bits
        (uint16 / uint8, every byte as stored), when the library has
        tpb_v1_sim_fetch_bits, else as float32 (NaN payloads lost)."""
        descr = ctypes.create_string_buffer(8)
        nd = ctypes.c_int()
        shape = (ctypes.c_int64 * 8)()
        nbytes = ctypes.c_size_t()
        fn = self._lib.tpb_v1_sim_fetch
        if bits and hasattr(self._lib, "tpb_v1_sim_fetch_bits"):
            fn = self._lib.tpb_v1_sim_fetch_bits
        self._check(fn(self._c, _b(name), descr, ctypes.byref(nd), shape, ctypes.byref(nbytes)))
        out = np.empty(tuple(shape[:nd.value]), dtype=np.dtype(descr.value.decode()))
        self._check(self._lib.tpb_v1_sim_fetch_copy(
            self._c, out.ctypes.data_as(ctypes.c_void_p), nbytes.value))
        return out

    def sim_cycles(self):
        return self._lib.tpb_v1_sim_cycles(self._c)

    def sim_stats_json(self):
        s = self._lib.tpb_v1_sim_stats_json(self._c)
        if s is None:
            self._check(-1)
        return s.decode()

    def sim_write_trace(self, path):
        self._check(self._lib.tpb_v1_sim_write_trace(self._c, _b(path)))

    def sim_write_outputs(self, d):
        self._check(self._lib.tpb_v1_sim_write_outputs(self._c, _b(d)))
