"""ref_blas - the check scripts' NumPy references on OpenBLAS.

Debian's python3-numpy calls libblas.so.3, which is the netlib reference
BLAS unless an optimised one is installed system-wide, and these machines
have the reference one: a float32 matmul runs at ~2.5 GFLOP/s there.  The
unit tests and the NumPy references that nki-samples-check,
nki-sdk-check, nki-samples-misc and nki-library-check run are matmul-heavy
(nki-samples' flash_attn_bwd test at seq 8192 spent 260 s of its 342 s in
five matmuls of its reference, the kernel's trace, compile and simulation
11 s), so each script's main() calls use_openblas() first: the script runs
again in a fresh process with OpenBLAS found through LD_LIBRARY_PATH, as
scripts/bench's matmul reference does (bench_blas.openblas_dir: the
system's libopenblas0-pthread if installed, else that Debian package
unpacked under <build>/openblas; the system's BLAS alternatives are never
switched), and its pytest children inherit it.  What the kernel computes
does not depend on it (the simulator is C; the Python front end makes no
BLAS call); the references' float32 sums come out in another order, which
the checks' tolerances are for.

TPBSIM_REF_BLAS=default keeps NumPy's default BLAS; TPBSIM_REF_BLAS=DIR
uses the libblas.so.3 in DIR (the re-run process has it set so)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEY = "TPBSIM_REF_BLAS"


def _run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _build_dir():
    """The build tree of the libtpb in use (TPBSIM_LIB), else ROOT/build."""
    lib = os.environ.get("TPBSIM_LIB")
    return os.path.dirname(os.path.dirname(os.path.abspath(lib))) if lib else os.path.join(ROOT, "build")


def blas_dir():
    """The directory whose libblas.so.3 the references should load, or None
    for NumPy's default."""
    want = os.environ.get(KEY)
    if want == "default":
        return None
    if want:
        return want
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from bench_blas import openblas_dir
    return openblas_dir(_build_dir(), _run)


def use_openblas():
    """Run this script again with OpenBLAS for NumPy (see the module doc),
    unless it already runs so or no OpenBLAS can be had; prints which BLAS
    the references use."""
    d = blas_dir()
    if d is None:
        print("NumPy references: NumPy's default BLAS", flush=True)
        return
    paths = os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    if paths[0] == d and os.environ.get(KEY) == d:
        print("NumPy references: BLAS from %s" % d, flush=True)
        return
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join([d] + [p for p in paths if p]))
    env[KEY] = d
    # OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE pin an older, slower kernel here
    # (bench_blas.numpy_matmul_time drops them as well)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
