"""tpbsim.nki: run NKI beta-2 kernels on tpbsim.  Port a kernel by changing
its imports only:

    from tpbsim import nki
    import tpbsim.nki.isa as nisa
    import tpbsim.nki.language as nl

`@nki.jit` kernels run when called with NumPy arrays (`kernel(a, b)`,
`kernel[g0, g1](a, b)`, `kernel[nl.nc(2)](a)`) and return NumPy arrays.
See docs/python.md."""
import functools
import inspect
import os
import sys
import traceback

import numpy as np

from . import _alloc, _bench, _carried, _programs, _trace, compiler, isa, language
from ._bench import benchmark, profile  # noqa: F401  (NKI beta-2's, simulated)
from ._trace import NkiError, NkiTensor
from ._trace import NkiTensor as tensor   # NKI's nki.tensor (annotations)
from .language import dtype   # NKI's nki.dtype (annotations)

__all__ = ["jit", "trace", "simulate", "simulate_kernel", "benchmark", "profile", "isa", "language",
           "Kernel", "NkiError", "typed"]


class typed:
    """An input array with an explicit kernel dtype: `nki.typed(a, nl.bfloat16)`
    (bf16/fp8 inputs are float32 arrays of exactly representable values)."""

    def __init__(self, array, dtype):
        self.array = np.asarray(array)
        self.dtype = language._dtype(dtype)


# what becomes a kernel input (Kernel._trace's arg)
_ARRAYS = (typed, np.ndarray, _bench.TensorSpec)
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY = os.path.dirname(os.path.abspath(np.__file__))


def _kernel_frame(tb):
    """The innermost traceback frame outside the tpbsim package and NumPy
    (np.mean(tile) fails inside NumPy: the kernel's line called it)."""
    best = None
    for fs in traceback.extract_tb(tb):
        path = os.path.abspath(fs.filename)
        if not (path.startswith(_PKG + os.sep) or path.startswith(_NUMPY + os.sep) or
                fs.filename.startswith("<")):
            best = fs
    return best


class _Traced(tuple):
    """Kernel.trace's (kernel JSON text, output tensors, input arrays by
    name, several outputs?), with .written (the inputs an op writes),
    .prints (whether the kernel has nl.device_print ops) and .indirect (the
    (rows, cols, first col) of its a[idx_tile, cols] accesses, (size, 1,
    0, axis) of its run-time indices)."""

    def __new__(cls, text, outs, arrays, many, tr):
        t = tuple.__new__(cls, (text, outs, arrays, many))
        from ._beta1 import written_of
        t.written = written_of(tr, [b.name for b in tr.inputs])
        t.prints = any(op.startswith('{"op": "device_print"') for op in tr.body)
        t.indirect = tr.indirect
        return t


def _whole(t):
    """Whether view t is all of its tensor in order (a reshape of it): the
    outputs are fetched as the tensor, then given the view's shape."""
    stride = 1
    for st, n in reversed(t._ap):
        if n > 1 and st != stride:
            return False
        stride *= n
    return t.offset == 0 and stride == int(np.prod(t.base.shape))


class Kernel:
    """A traced NKI kernel (what @nki.jit returns)."""

    def __init__(self, fn, grid=(1,), **opts):
        self.fn = fn
        # per axis an int or a language.nc (the axis spread over cores)
        self.grid = tuple(grid)
        self.opts = opts
        # launched kernel[n] with one integer: NKI 0.x's Logical NeuronCore
        # degree, or NKI beta-1's one-axis grid (launch_grid decides)
        self.lnc = False
        functools.update_wrapper(self, fn)

    def with_schedule(self, edges):
        """NKI's scheduling API: `kernel.with_schedule([("b", "a"), ("c",
        ["a", "b"])])` -- a copy of the kernel in which the op named by the
        first item of each pair runs after the op(s) named by the second
        (docs/kernel-format.md "Scheduling")."""
        pairs = []
        for e in edges:
            if not isinstance(e, (tuple, list)) or len(e) != 2:
                raise NkiError("%s.with_schedule: expected (name, name or [names]) pairs, got "
                               "%r" % (self.fn.__name__, e))
            a, b = e
            b = [b] if isinstance(b, str) else list(b)
            if not isinstance(a, str) or not all(isinstance(x, str) for x in b):
                raise NkiError("%s.with_schedule: instruction names are strings, got %r" %
                               (self.fn.__name__, e))
            pairs.append([a, b])
        return self.with_opts(schedule=self.opts.get("schedule", []) + pairs)

    def with_opts(self, **opts):
        """A copy of the kernel (same function, grid and launch form) with
        opts added to its options."""
        k = Kernel(self.fn, self.grid, **dict(self.opts, **opts))
        k.lnc = self.lnc
        return k

    def __getitem__(self, g):
        single = not isinstance(g, (tuple, language.nc))
        if not isinstance(g, tuple):
            g = (g,)
        if not 1 <= len(g) <= 4:
            raise NkiError("%s: a launch grid has 1 to 4 axes, not %d" % (self.fn.__name__, len(g)))
        dims = []
        for d in g:
            if not isinstance(d, language.nc):
                d = language._grid_int(d, "%s: launch grid axis" % self.fn.__name__)
                if d < 1:
                    raise NkiError("%s: launch grid axis of size %d" % (self.fn.__name__, d))
            dims.append(d)
        if sum(isinstance(d, language.nc) for d in dims) > 1:
            raise NkiError("%s: nl.nc() may annotate one launch-grid axis only" %
                           self.fn.__name__)
        k = Kernel(self.fn, dims, **self.opts)
        k.lnc = single
        return k

    def beta1(self):
        """Whether the kernel came through an NKI beta-1 entry point: jit
        options only beta-1 had (mode= a beta-1 runner: "simulation",
        "baremetal", "benchmark", "auto"; platform_target=), @nki.baremetal,
        @nki.benchmark, @nki.trace or nki.simulate_kernel.  mode="trace"
        alone is not: the NKI Library's moe_cte kernels, written in NKI
        0.x's forms and launched at LNC 2, carry it (a beta-1 kernel's own
        forms still make it one: _trace.beta1_form)."""
        mode = self.opts.get("mode")
        return ((mode is not None and mode != "trace") or
                any(o in self.opts for o in ("platform_target", "tpbsim_beta1")))

    def launch_grid(self, target):
        """(grid traced for target, how kernel[n] is read: None, "lnc" or
        "over").  kernel[n] with ONE integer is NKI 0.x's Logical
        NeuronCore launch: n physical cores (program i on core i), n at most
        the target's LNC degree (2 on trn2, 1 on trn1; "lnc"), more is an
        error, as NKI raises ("over": traced as beta-1's grid, then refused
        unless the kernel is beta-1).  A kernel of a beta-1 entry point
        (beta1()) or written in beta-1 forms (_trace.beta1_form) gets
        beta-1's one-axis launch grid instead: n instances one after the
        other on one core (docs/python.md "Launch: LNC and grids")."""
        if not self.lnc or self.grid == (1,) or self.beta1():
            return self.grid, None
        n, most = self.grid[0], (1 if target == "trn1" else 2)
        if n > most:
            return self.grid, "over"
        return (language.nc(n),), "lnc"

    def _too_many(self, target):
        n, most = self.grid[0], (1 if target == "trn1" else 2)
        return NkiError("%s[%d]: one integer is the Logical NeuronCore degree (NKI 0.x), the "
                        "number of physical cores: 1..%d on %s (a launch grid of %d instances "
                        "on one core is kernel[%d, 1], or NKI beta-1's entry points: "
                        "nki.jit(mode=...), nki.baremetal, nki.simulate_kernel)" %
                        (self.fn.__name__, n, most, target or "trn2", n, n))

    def target(self, target=None):
        """The target this kernel is traced and compiled for: target= (of
        tpbsim.simulate / compile), else the jit option platform_target=
        (NKI beta-1's @nki.jit(platform_target='trn2')), else
        NEURON_PLATFORM_TARGET_OVERRIDE, else None (the compiler's default,
        trn2); NKI's aliases (gen2, inf2, gen3) named as tpbsim's targets."""
        from .. import _target
        return _target(target or self.opts.get("platform_target"))

    def trace(self, *args, **kwargs):
        """Run the body at trace time for self.target(); returns (kernel JSON
        text, output tensors, input arrays by name).  As trace_for."""
        return self.trace_for(self.target(), args, kwargs)

    def trace_for(self, target, args, kwargs):
        """trace() for target (a resolved target name or None: what
        nisa.get_nc_version() reports).  affine_range / sequential_range
        bodies are traced once; when one cannot be (Retrace: Python control
        flow on its variable, ...), or the kernel fails after one was, the
        kernel is traced again from scratch with every loop run per
        iteration, so its Python side effects happen twice (docs/python.md
        "Loops").  When it has PSUM (or SBUF) block-dim tiles and the
        compiler cannot fit its PSUM (SBUF) tiles, it is traced again with
        those stored one tile per logical block (docs/python.md "PSUM
        reuse", "SBUF blocks past a partition"), unless that trace fails."""
        try:
            res = self._trace_split(args, kwargs, (), target)
        except _trace.Beta1Launch:   # beta-1 forms under kernel[n]: beta-1's grid
            return _beta1_kernel(self).trace_for(target, args, kwargs)
        split = ()
        while True:   # at most once per buffer
            want = _alloc.split_wanted(res[0], self.fn.__name__, target, split)
            if not want:
                return res
            try:
                res = self._trace_split(args, kwargs, split + want, target)
            except NkiError:
                return res
            split += want

    def _trace_split(self, args, kwargs, split, target, pid=None):
        """split: the buffers ("psum", "sbuf") whose block-dim tiles are
        stored one tile per logical block; pid: _programs.py."""
        try:
            return _programs.retraced(self, args, kwargs, split, target, pid)
        except _programs.PerProgram:   # traced once per program, merged
            return _programs.per_program(self, args, kwargs, split, target)

    def _trace(self, args, kwargs, symbolic, split=(), target=None, pid=None):
        sig = inspect.signature(self.fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise NkiError("%s: %s" % (self.fn.__name__, e)) from None
        bound.apply_defaults()
        grid, launch = self.launch_grid(target)
        tr = _programs.new_trace(self.fn.__name__, grid, symbolic, pid)
        tr.lnc = launch == "lnc"
        tr.beta1_entry = self.beta1()   # beta-1's reduction axes (_refuse.reduce_axes)
        tr.target = target   # nisa.get_nc_version()
        # @nki.compiler.force_auto_alloc: direct allocations are ignored
        tr.force_auto_alloc = getattr(self.fn, "tpbsim_force_auto_alloc", False)
        tr.split_psum, tr.split_sbuf = "psum" in split, "sbuf" in split
        arrays = {}

        def arg(name, v):
            """The kernel's argument for v: an input tensor for an array
            (the array kept under the input's name, Trace.input_name)."""
            if isinstance(v, typed):
                t, arr = tr.add_input(name, v.array.shape, v.dtype), v.array
            elif isinstance(v, np.ndarray):
                t, arr = tr.add_input(name, v.shape, language._dtype(v.dtype)), v
            elif isinstance(v, _bench.TensorSpec):   # nki.typing.tensor[shape, dtype]
                t, arr = tr.add_input(name, v.shape, v.dtype), v.zeros()
            elif isinstance(v, _bench.ShapeAnnotation):
                raise NkiError("%s: argument '%s' is %r, an annotation (sizes without a dtype): "
                               "pass an array, or tensor[%s, <dtype>] as a placeholder" %
                               (self.fn.__name__, name, v, list(v.shape)))
            else:
                return v
            arrays[t.base.name] = arr
            return t

        def nested(name, v):
            """arg() of v, and of each array inside v when v is a list or
            tuple (nested ones too): the input name_<i>[_<j>...], the
            container rebuilt around the inputs."""
            if type(v) in (list, tuple) and _holds_array(v):
                return type(v)(nested("%s_%d" % (name, i), x) for i, x in enumerate(v))
            return arg(name, v)

        def args_of(name, v):
            """(input name, value) of each value argument `name` holds."""
            kind = sig.parameters[name].kind
            if kind == inspect.Parameter.VAR_POSITIONAL:   # *args: inputs args_0, args_1, ...
                return [("%s_%d" % (name, i), x) for i, x in enumerate(v)]
            if kind == inspect.Parameter.VAR_KEYWORD:      # **kwargs: inputs by their keys
                return list(v.items())
            return [(name, v)]

        # the inputs' names all taken before the first is named (input_name)
        tr.names.update(n for name, v in bound.arguments.items() for n0, x0 in args_of(name, v)
                        for n, x in _leaves(n0, x0) if isinstance(x, _ARRAYS))
        for name, v in bound.arguments.items():
            vals = [nested(n, x) for n, x in args_of(name, v)]
            kind = sig.parameters[name].kind
            bound.arguments[name] = (tuple(vals) if kind == inspect.Parameter.VAR_POSITIONAL else
                                     dict(zip(v, vals)) if kind == inspect.Parameter.VAR_KEYWORD
                                     else vals[0])
        _trace.stack().append(tr)
        try:
            ret = _sbuf_returns(self.fn(*bound.args, **bound.kwargs))
            if tr.retrace:   # a loop closed early, or a kernel caught a Retrace
                raise _trace.Retrace()
            _alloc.note_trace(tr)   # for split_wanted
        except _trace.Retrace:
            raise
        except Exception as e:
            if tr.lnc and tr.beta1_forms:
                raise _trace.Beta1Launch() from None
            if tr.used_symbolic or _programs.retry(self, tr, launch):   # per iteration / program
                raise (_trace.Retrace() if tr.used_symbolic else _programs.PerProgram()) from None
            if launch == "over" and not tr.beta1_forms:
                raise self._too_many(target) from None
            self._error(e)
        finally:
            _trace.stack().pop()
        if tr.lnc and tr.beta1_forms:
            raise _trace.Beta1Launch()
        if launch == "over" and not tr.beta1_forms:
            raise self._too_many(target)
        outs = ret if isinstance(ret, (tuple, list)) else (ret,) if ret is not None else ()
        for o in outs:
            if not isinstance(o, NkiTensor) or o.base.kind != "hbm":
                raise NkiError("%s: the kernel must return HBM tensors made with nl.ndarray("
                               "..., buffer=nl.shared_hbm), got %r" % (self.fn.__name__, o))
            if tuple(o.shape) != tuple(o.base.shape) and not _whole(o):
                raise NkiError("%s: the kernel returns a part of '%s' (%s of %s): tpbsim "
                               "returns whole tensors or reshapes of them" % (
                                   self.fn.__name__, o.base.name, list(o.shape),
                                   list(o.base.shape)))
        return _programs.noted(self, launch, tr, outs, _Traced(tr.to_json(outs, self.opts.get(
            "schedule")), outs, arrays, isinstance(ret, (tuple, list)), tr))

    @staticmethod
    def _error(e):
        """Re-raise a kernel's exception as an NkiError naming its line."""
        try:
            raise e
        except NkiError as e:
            fs = _kernel_frame(e.__traceback__)
            msg = str(e)
            if fs and not msg.startswith(os.path.basename(fs.filename) + ":"):
                msg = "%s:%d: %s" % (os.path.basename(fs.filename), fs.lineno, msg)
            raise NkiError(msg) from None
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, AssertionError,
                ZeroDivisionError, OverflowError) as e:
            fs = _kernel_frame(e.__traceback__)
            where = "%s:%d: " % (os.path.basename(fs.filename), fs.lineno) if fs else ""
            raise NkiError("%s%s: %s" % (where, type(e).__name__, e)) from e

    @property
    def benchmark_result(self):
        """An nki.benchmark kernel's result, once called (_bench.py)."""
        rec = self.opts.get("tpbsim_bench")
        if rec is None or self.opts.get("tpbsim_timed") != "benchmark":
            raise AttributeError("%s: benchmark_result belongs to kernels made with "
                                 "nki.benchmark" % self.fn.__name__)
        if rec.result is None:
            raise AttributeError("%s: benchmark_result is set when the kernel is called"
                                 % self.fn.__name__)
        return rec.result

    def __call__(self, *args, **kwargs):
        if _trace.stack():   # called from a kernel being traced: inlined, as NKI does
            return self.fn(*args, **kwargs)
        timed = self.opts.get("tpbsim_timed")
        if timed == "benchmark":
            return _bench.bench_call(self, args, kwargs)
        if timed == "profile":
            return _bench.profile_call(self, args, kwargs)
        from .. import simulate as _simulate
        return _simulate(self, *args, **kwargs).outputs


# the frame that calls a kernel being traced: the loop-state check reads the
# kernel's frames up to it (_carried)
_carried.STOP.add(Kernel._trace.__code__)


def _leaves(name, v):
    """(input name, value) of v, or of everything inside v when v is a list
    or tuple holding an array (Kernel._trace's nested)."""
    if type(v) in (list, tuple) and _holds_array(v):
        return [p for i, x in enumerate(v) for p in _leaves("%s_%d" % (name, i), x)]
    return [(name, v)]


def _holds_array(v):
    """Whether the list / tuple v has an array inside (at any depth)."""
    return any(isinstance(x, _ARRAYS) or type(x) in (list, tuple) and _holds_array(x)
               for x in v)


def _sbuf_returns(ret):
    """NKI's simulation hands back returned SBUF tiles as arrays too (the
    SDK's nki/test kernels return their SBUF results): each returned SBUF
    tile is stored, at the kernel's end, to a new HBM output of its shape
    and dtype, which is returned in its place.  A returned input (an output
    that aliases an input, NKI Library's rope_hf writes and returns its
    q_out / k_out arguments) is copied, at the kernel's end, to a new HBM
    output likewise: the result holds what the kernel left in it."""
    many = isinstance(ret, (tuple, list))
    outs = list(ret) if many else [ret] if ret is not None else []
    sb = [isinstance(o, NkiTensor) and o._onchip() and o.base.buffer == language.sbuf
          for o in outs]
    inp = [isinstance(o, NkiTensor) and o.base.kind == "input" and o._contig() and
           o.offset == 0 for o in outs]
    if not any(sb) and not any(inp):
        return ret
    for i, o in enumerate(outs):
        if sb[i]:
            h = language.ndarray(o.shape, dtype=o.dtype, buffer=language.shared_hbm)
            language.store(h, o)
            outs[i] = h
        elif inp[i]:
            h = language.ndarray(o.shape, dtype=o.dtype, buffer=language.shared_hbm,
                                 name=o.base.name + "_result")
            isa.dma_copy(dst=h, src=o)
            outs[i] = h
    return type(ret)(outs) if many else outs[0]


def jit(fn=None, **kwargs):
    """@nki.jit / @nki.jit(...): wrap a kernel function (mode="benchmark":
    as @nki.benchmark)."""
    if kwargs.get("mode") == "benchmark":
        opts = {k: v for k, v in kwargs.items() if k != "mode"}
        return benchmark(fn, **opts) if fn is not None else lambda f: benchmark(f, **opts)
    if fn is None:
        return lambda f: Kernel(f, **kwargs)
    return Kernel(fn, **kwargs)


def _beta1_kernel(k):
    """k marked as coming through a beta-1 entry point (Kernel.beta1)."""
    if isinstance(k, Kernel):
        return k.with_opts(tpbsim_beta1=True)
    return Kernel(k, tpbsim_beta1=True)


def baremetal(fn=None, **kwargs):
    """NKI beta-1's @nki.baremetal / @nki.baremetal(...): as @nki.jit (the
    options -- save_neff_name, additional_compile_opt, ... -- are NKI's
    compiler's); kernel[n] is beta-1's launch grid (Kernel.launch_grid)."""
    kwargs["tpbsim_beta1"] = True
    return jit(fn, **kwargs)


def simulate(kernel):
    """NKI's nki.simulate(kernel)(*arrays): run the kernel as calling it
    does (the same launch reading: kernel[2] is LNC 2) and return its
    outputs as NumPy arrays; every argument array whose HBM tensor the
    kernel wrote is updated in place, as NKI's simulator does (the SDK's
    nki_simulator.rst, "How It Works"; its migration guide calls
    `nki.simulate(my_kernel)(X, Y)` with Y an output argument)."""
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)

    def run(*args, **kwargs):
        if _trace.stack() or k.opts.get("tpbsim_timed"):   # inlined / benchmark, profile
            return k(*args, **kwargs)
        from .. import _run
        return _run(k, args, kwargs, None, None, None, True).outputs

    functools.update_wrapper(run, k.fn)
    return run


def trace(fn=None, **kwargs):
    """NKI beta-1's @nki.trace: a kernel as @nki.jit makes it, usually run
    with nki.simulate_kernel; kernel[n] is beta-1's launch grid."""
    kwargs["tpbsim_beta1"] = True
    return jit(fn, **kwargs)


def simulate_kernel(kernel, *args, **kwargs):
    """NKI beta-1's nki.simulate_kernel(kernel, *arrays): run the kernel and
    return its outputs (as calling it does); an argument array the kernel
    writes (an output passed as a parameter, as beta-1 kernels take them)
    receives the kernel's result in place."""
    from .. import _run
    return _run(_beta1_kernel(kernel), args, kwargs, None, None, None, True).outputs


sys.modules.setdefault(__name__ + ".isa", isa)
sys.modules.setdefault(__name__ + ".language", language)
