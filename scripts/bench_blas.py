"""bench_blas - the NumPy matmul reference of scripts/bench on OpenBLAS: a
child process with OpenBLAS found through LD_LIBRARY_PATH (never installed
system-wide), its timing with the same process boundaries as `tpb sim`, and
the matmul report line."""
import json
import os
import shutil
import subprocess

import numpy as np

NUMPY_MATMUL_CHILD = r"""
import ctypes, json, sys, time
import numpy as np

def blas_in_use():
    # the BLAS library this process mapped (NumPy loads it as libblas.so.3)
    with open("/proc/self/maps") as f:
        libs = sorted({ln.split()[-1] for ln in f if "blas" in ln.rsplit("/", 1)[-1]})
    name, threads = ", ".join(libs) or "?", None
    for lib in libs:
        try:
            h = ctypes.CDLL(lib)
            cfg = h.openblas_get_config
            cfg.restype = ctypes.c_char_p
            core = h.openblas_get_corename
            core.restype = ctypes.c_char_p
            name = "OpenBLAS %s (%s core) %s" % (cfg().decode(), core().decode(), lib)
            threads = h.openblas_get_num_threads()
        except (OSError, AttributeError):
            pass
    return name, threads

a_t, b = np.load(sys.argv[1]), np.load(sys.argv[2])
a = np.ascontiguousarray(a_t.T)
a @ b
best = 1e9
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - t0)
# the same process boundaries as `tpb sim`: load the inputs, compute, save
e2e = 1e9
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter()
    x, y = np.load(sys.argv[1]), np.load(sys.argv[2])
    np.save(sys.argv[4], np.ascontiguousarray(x.T) @ y)
    e2e = min(e2e, time.perf_counter() - t0)
name, threads = blas_in_use()
print(json.dumps({"compute": best, "e2e": e2e, "blas": name, "threads": threads}))
"""

OPENBLAS_PKG = "libopenblas0-pthread"
OPENBLAS_SUBDIR = os.path.join("usr", "lib", "x86_64-linux-gnu", "openblas-pthread")


def openblas_dir(build, run):
    """A directory holding OpenBLAS's libblas.so.3 for the NumPy child: the
    system's (if the package is installed), else the package unpacked under
    <build>/openblas (downloaded with apt-get and unpacked with dpkg-deb
    once; the system's BLAS alternatives are never switched).  None when
    neither works (the child then runs NumPy's default BLAS)."""
    system = os.path.join("/", OPENBLAS_SUBDIR)
    if os.path.exists(os.path.join(system, "libblas.so.3")):
        return system
    root = os.path.join(build, "openblas")
    local = os.path.join(root, OPENBLAS_SUBDIR)
    if os.path.exists(os.path.join(local, "libblas.so.3")):
        return local
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        return None
    os.makedirs(root, exist_ok=True)
    r = run(["apt-get", "download", OPENBLAS_PKG], cwd=root)
    debs = [f for f in os.listdir(root) if f.startswith(OPENBLAS_PKG) and f.endswith(".deb")]
    if r.returncode != 0 or not debs:
        print(f"bench: could not download {OPENBLAS_PKG} (NumPy uses its default BLAS): "
              + (r.stdout.strip().splitlines() or ["?"])[-1])
        return None
    r = run(["dpkg-deb", "-x", os.path.join(root, debs[0]), root])
    if r.returncode != 0 or not os.path.exists(os.path.join(local, "libblas.so.3")):
        return None
    return local


BLAS = {"dir": None, "threads": 1}


def numpy_matmul_time(work, a32, b32, reps):
    """Time float32 a_t.T @ b in a child process on OpenBLAS (see
    openblas_dir; LD_LIBRARY_PATH is set for the child only), with
    OPENBLAS_NUM_THREADS = --blas-threads and OPENBLAS_CORETYPE /
    OPENBLAS_L2_SIZE removed from the child's environment (they pin an
    old, slower kernel on this machine).  Returns a dict: compute = best
    a @ b (the transpose is done once outside, as the kernel's a_t layout
    is what the PE wants), e2e = best load + transpose + matmul + save
    (the boundaries of a `tpb sim` process), blas, threads."""
    pa, pb = os.path.join(work, "mm_a.npy"), os.path.join(work, "mm_b.npy")
    np.save(pa, a32)
    np.save(pb, b32)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["OPENBLAS_NUM_THREADS"] = str(BLAS["threads"])
    if BLAS["dir"]:
        env["LD_LIBRARY_PATH"] = BLAS["dir"] + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    r = subprocess.run(["/usr/bin/python3", "-c", NUMPY_MATMUL_CHILD, pa, pb, str(reps),
                        os.path.join(work, "mm_out.npy")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def report_matmul(name, n, runs, npr, why):
    """sim_run against NumPy's a @ b, and the whole `tpb sim` process
    against a NumPy process step with the same boundaries (load the
    inputs, compute, save the output): one line per `tpb sim --threads`
    count in runs [(threads, stats)], NumPy single-threaded in every one."""
    if runs is None or npr is None:
        print(f"{name:24s} skipped: {why or 'NumPy reference failed'}")
        return
    flop = 2.0 * n ** 3
    for i, (threads, st) in enumerate(runs):
        sim, e2e = st["wall_seconds"], st["process_wall"]
        label = name if i == 0 else ""
        print(f"{label:24s} {st['instructions']:>11,d} inst  {st['total_cycles']:>12,d} cycles  "
              f"sim {sim:8.3f} s ({flop / sim / 1e9:5.1f} GFLOP/s)  e2e {e2e:7.3f} s  "
              f"numpy {npr['compute'] * 1e3:8.1f} ms, e2e {npr['e2e'] * 1e3:8.1f} ms  "
              f"ratio sim {sim / npr['compute']:5.2f}x, e2e {e2e / npr['e2e']:5.2f}x  "
              f"(tpb sim --threads {threads})")
    print(f"{'':24s} numpy BLAS: {npr['blas']}, threads {npr['threads']}")
