"""NKI beta-2's device entry points that time a kernel -- `nki.benchmark`
and `nki.profile` -- and the `nki.typing.tensor[shape, dtype]` placeholders
they are called with, answered by the simulator: the latency is tpbsim's
simulated device time, the profile its Perfetto trace and run statistics
(docs/python.md "Benchmarking and profiling")."""
import numbers
import os
import shutil
import tempfile

import numpy as np

from ._state import NkiError

# the percentiles neuron-bench reports (NKI's nki.benchmark documentation)
PERCENTILES = (0, 1, 10, 25, 50, 90, 99, 100)


class TensorSpec:
    """`nki.typing.tensor[shape, dtype]`: an input given by shape and dtype
    only, for kernels that are benchmarked or profiled (NKI: those do not
    use the inputs' values).  tpbsim runs the kernel on zeros."""

    def __init__(self, shape, dtype):
        from . import language
        if isinstance(shape, numbers.Integral):
            shape = (shape,)
        try:
            dims = tuple(shape)
        except TypeError:
            raise NkiError("nki.typing.tensor[shape, dtype]: shape is a list of sizes, got %r"
                           % (shape,)) from None
        if not dims or not all(isinstance(d, numbers.Integral) and d > 0 for d in dims):
            raise NkiError("nki.typing.tensor[shape, dtype]: shape is a list of positive sizes, "
                           "got %r" % (shape,))
        self.shape = tuple(int(d) for d in dims)
        self.dtype = language._dtype(dtype)

    def zeros(self):
        """The zeros the kernel runs on, as a host array the simulator
        takes for self.dtype (float32 for NKI's narrow floats)."""
        try:
            host = np.dtype(self.dtype)
        except TypeError:
            host = np.dtype(np.float32)
        if host.kind not in "biuf":
            host = np.dtype(np.float32)
        return np.zeros(self.shape, dtype=host)

    def __repr__(self):
        return "tensor[%s, %s]" % (list(self.shape), self.dtype)


class mutable:
    """`nki.typing.mutable`: NKI beta-1's marker in the annotation
    `nt.tensor[nt.mutable]` (NxDI 2.27 / 2.28's KV-cache and EAGLE kernels,
    with `experimental_flags='enable-mutable-parameter'`) of an input the
    kernel writes in place; tpbsim lets a kernel write any input, so the
    annotation is the tensor type, as `nt.mutable_tensor` is."""


class ShapeAnnotation:
    """`nki.typing.tensor[128, 512]`: NKI 0.3's parameter annotation of a
    tensor's expected shape (the SDK's migration guide, "nki.typing
    module"; its tests annotate tiles `tensor[128, 6]` too).  An annotation
    only: tpbsim does not check it, and it is no input placeholder (that
    needs a dtype: `tensor[[128, 512], nl.float32]`)."""

    def __init__(self, dims):
        if not dims or not all(d > 0 for d in dims):
            raise NkiError("nki.typing.tensor[%s]: shape is a list of positive sizes" %
                           ", ".join(map(str, dims)))
        self.shape = tuple(int(d) for d in dims)

    def __repr__(self):
        return "tensor[%s]" % ", ".join(map(str, self.shape))


def _size(x):
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def tensor_spec(cls, item):
    """NkiTensor[...]: sizes alone, `tensor[128, 512]` or `tensor[[128,
    512]]` (a ShapeAnnotation); a shape and a dtype, `tensor[[128, 512],
    nl.bfloat16]` (an input placeholder); or the annotation
    `tensor[mutable]` (cls itself)."""
    if item is mutable:
        return cls
    dims = item if type(item) in (tuple, list) else (item,)
    if all(_size(d) for d in dims):
        return ShapeAnnotation(dims)
    if not isinstance(item, tuple) or len(item) != 2:
        raise NkiError("nki.typing.tensor[...]: expected sizes (tensor[128, 512]), a shape and "
                       "a dtype (tensor[[128, 512], nl.float32]) or nki.typing.mutable, got %r"
                       % (item,))
    return TensorSpec(*item)


class LatencyResult:
    """`benchmark_result.nc_latency`: the simulated device latency.  The
    simulation is deterministic, so every percentile is the same run."""

    def __init__(self, stats, warmup, iters):
        self.ns = float(stats["sim_time_ns"])
        self.cycles = int(stats["total_cycles"])
        self.clock_ghz = float(stats["clock_ghz"])
        self.target = stats.get("target")
        self.warmup, self.iters = warmup, iters

    def get_latency_percentile(self, percentile):
        """The latency at `percentile` (one of PERCENTILES), in microseconds."""
        if (isinstance(percentile, bool) or not isinstance(percentile, numbers.Real) or
                percentile not in PERCENTILES):
            raise ValueError("get_latency_percentile(%r): available percentiles are %s" %
                             (percentile, list(PERCENTILES)))
        return self.ns / 1000.0

    def __repr__(self):
        return "LatencyResult(%.3f us, %d cycles at %g GHz, %s)" % (
            self.ns / 1000.0, self.cycles, self.clock_ghz, self.target)


class BenchmarkResult:
    """A benchmarked kernel's `benchmark_result` (NKI: `.nc_latency`)."""

    def __init__(self, nc_latency, stats):
        self.nc_latency = nc_latency
        self.stats = stats


class _Record:
    """The last result of a benchmarked kernel, shared by the copies that
    kernel[grid] and with_schedule make of it."""
    result = None


def _int_option(who, name, v, least):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < least:
        raise NkiError("%s: %s must be an integer >= %d, got %r" % (who, name, least, v))
    return int(v)


def _artifact_names(neff, ntff):
    """Where the artifacts named like NKI's go: the compiled program
    (`file.neff` -> the artifact directory `file.tpb`, for `tpb sim`,
    `tpb view`, `tpb dis`), the trace (`profile.ntff` -> the Perfetto trace
    `profile.json`) and the run statistics beside it
    (`profile.summary.json`).  None where the name is None."""
    def swap(name, old, new):
        if name is None:
            return None
        name = os.fspath(name)
        return (name[:-len(old)] if name.endswith(old) else name) + new
    trace = swap(ntff, ".ntff", ".json")
    return (swap(neff, ".neff", ".tpb"), trace,
            None if trace is None else trace[:-len(".json")] + ".summary.json")


def _refuse_existing(paths, who):
    there = [p for p in paths if os.path.lexists(p)]
    if there:
        raise NkiError("%s: %s already exists (overwrite=True replaces it)" % (who, there[0]))


def _publish(tmp, pairs, overwrite, who):
    """Move the files made in tmp (name in tmp, final path) into place: all
    of them or, when one is there already and overwrite is False, none."""
    if not overwrite:
        _refuse_existing([dst for _, dst in pairs], who)
    for src, dst in pairs:
        if os.path.isdir(dst) and not os.path.islink(dst):
            shutil.rmtree(dst)
        elif os.path.lexists(dst):
            os.remove(dst)
        os.replace(os.path.join(tmp, src), dst)


def _timed_run(kernel, args, kwargs, neff, ntff, overwrite, who):
    """Simulate kernel once; write the artifacts named (NKI names, mapped by
    _artifact_names) all together; return (tpbsim.Result, the paths
    written)."""
    import json
    from .. import _run
    art, trace, summary = _artifact_names(neff, ntff)
    finals = [p for p in (art, trace, summary) if p is not None]
    for p in finals:
        d = os.path.dirname(os.path.abspath(p))
        if not os.path.isdir(d):
            raise NkiError("%s: directory %s does not exist (for %s)" % (who, d, p))
    if not overwrite:   # before the run, which may be long
        _refuse_existing(finals, who)
    # made beside their final place (one file system), then moved in together
    base = os.path.dirname(os.path.abspath(finals[0])) if finals else None
    tmp = tempfile.mkdtemp(prefix=".tpbsim-bench-", dir=base)
    try:
        r = _run(kernel, args, kwargs, None,
                 os.path.join(tmp, "trace") if trace else None,
                 os.path.join(tmp, "art") if art else None, False)
        pairs = []
        if art:
            pairs.append(("art", art))
        if trace:
            with open(os.path.join(tmp, "summary"), "w") as f:
                json.dump(r.stats, f, indent=1)
                f.write("\n")
            pairs += [("trace", trace), ("summary", summary)]
        _publish(tmp, pairs, overwrite, who)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return r, [p for p in (art, trace, summary) if p]


def bench_call(kernel, args, kwargs):
    """A call of an nki.benchmark kernel: run it once, record its
    benchmark_result, print the latency as neuron-bench does; returns the
    outputs (NKI's are undefined: the device run ignores the inputs; tpbsim's
    are the simulated ones)."""
    o = kernel.opts
    who = "nki.benchmark(%s)" % kernel.fn.__name__
    r, written = _timed_run(kernel, args, kwargs, o.get("save_neff_name"),
                            o.get("save_trace_name"), True, who)
    lat = LatencyResult(r.stats, o.get("warmup", 10), o.get("iters", 100))
    o["tpbsim_bench"].result = BenchmarkResult(lat, r.stats)
    print("%s: simulated latency %.3f us (%d cycles at %g GHz on %s; every percentile: a "
          "deterministic run)%s" % (who, lat.ns / 1000.0, lat.cycles, lat.clock_ghz, lat.target,
                                    "".join("; wrote " + p for p in written)), flush=True)
    return r.outputs


def profile_call(kernel, args, kwargs):
    """A call of an nki.profile kernel: run it once and write, in its
    working directory, the artifact directory, the Perfetto trace and the
    run statistics; returns None (as NKI's)."""
    o = kernel.opts
    wd = o["working_directory"]
    who = "nki.profile(%s)" % kernel.fn.__name__
    _, written = _timed_run(kernel, args, kwargs,
                            os.path.join(wd, o.get("save_neff_name") or "file.neff"),
                            os.path.join(wd, o.get("save_trace_name") or "profile.ntff"),
                            o.get("overwrite", False), who)
    print("%s: wrote %s" % (who, ", ".join(written)), flush=True)
    return None


def _wrap(fn, kind, opts):
    """The kernel object of nki.benchmark / nki.profile (kind)."""
    from . import Kernel
    timed = dict(opts, tpbsim_timed=kind, tpbsim_bench=_Record())
    if isinstance(fn, Kernel):   # benchmark(...)(a @nki.jit kernel)
        return fn.with_opts(**timed)
    return Kernel(fn, **timed)


def benchmark(kernel=None, warmup=10, iters=100, save_neff_name=None, save_trace_name=None,
              additional_compile_opt=None, **kwargs):
    """NKI beta-2's `@nki.benchmark(warmup=10, iters=100, save_neff_name=,
    save_trace_name=, additional_compile_opt=)`: calling the kernel runs it
    in the simulator and sets `kernel.benchmark_result.nc_latency`, whose
    `get_latency_percentile(p)` is the simulated latency in microseconds.
    save_neff_name / save_trace_name keep the artifact directory / write the
    Perfetto trace (_artifact_names)."""
    opts = dict(kwargs, tpbsim_beta1=True,
                warmup=_int_option("nki.benchmark", "warmup", warmup, 0),
                iters=_int_option("nki.benchmark", "iters", iters, 1),
                save_neff_name=save_neff_name, save_trace_name=save_trace_name,
                additional_compile_opt=additional_compile_opt)
    if kernel is None:
        return lambda f: _wrap(f, "benchmark", opts)
    return _wrap(kernel, "benchmark", opts)


def profile(func=None, working_directory=None, save_neff_name="file.neff",
            save_trace_name="profile.ntff", additional_compile_opt=None, overwrite=False,
            profile_nth=1, **kwargs):
    """NKI beta-2's `@nki.profile(working_directory=, save_neff_name=,
    save_trace_name=, additional_compile_opt=, overwrite=, profile_nth=)`:
    calling the kernel runs it in the simulator and writes its profile in
    working_directory (an absolute path, as NKI requires)."""
    if working_directory is None or not os.path.isabs(os.fspath(working_directory)):
        raise NkiError("nki.profile: working_directory must be given as an absolute path, got %r"
                       % (working_directory,))
    opts = dict(kwargs, tpbsim_beta1=True, working_directory=os.fspath(working_directory),
                save_neff_name=save_neff_name, save_trace_name=save_trace_name,
                additional_compile_opt=additional_compile_opt, overwrite=bool(overwrite),
                profile_nth=_int_option("nki.profile", "profile_nth", profile_nth, 1))
    if func is None:
        return lambda f: _wrap(f, "profile", opts)
    return _wrap(func, "profile", opts)
