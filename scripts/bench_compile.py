"""bench_compile - the compile workloads of scripts/bench: kernels of n small
ops (tiny chains, mixed engines, side DMAs, long live ranges, three
interleaved chains) and the measurement of `tpb compile` on them: CPU per op,
ratio per doubling, peak RSS and KiB per op."""
import json
import os
import re
import shutil
import subprocess
import time


def touch_fresh(mib, advice):
    """Seconds to touch `mib` MiB of a fresh private anonymous mapping a
    page at a time, advised with `advice` (a mmap.MADV_* name) from a 2 MiB
    boundary; None when the advice is not available."""
    import ctypes
    import mmap
    if not hasattr(mmap, advice):
        return None
    n, huge = mib << 20, 2 << 20
    # private: a shared anonymous mapping is shmem, whose huge pages follow
    # another setting
    m = mmap.mmap(-1, n + huge, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = ctypes.addressof(ctypes.c_char.from_buffer(m))
    off = -base % huge
    del base
    m.madvise(getattr(mmap, advice), off, n)
    t0 = time.perf_counter()
    for i in range(off, off + n, 4096):
        m[i] = 1
    dt = time.perf_counter() - t0
    m.close()
    return dt


def print_fault_cost(mib=32):
    """The machine's cost of first-touch memory, which dominates compile
    time on a VM that exits to the hypervisor on each page fault
    (performance-log.md "Page faults on a virtual machine"): 4 KiB pages, and
    2 MiB huge pages first on memory the process has not had (which may be
    new to the host) and then on the memory it has just given back."""
    huge_fresh = touch_fresh(mib, "MADV_HUGEPAGE")
    small = touch_fresh(mib, "MADV_NOHUGEPAGE")
    huge_again = touch_fresh(mib, "MADV_HUGEPAGE")
    path = "/sys/kernel/mm/transparent_hugepage/enabled"
    thp = open(path).read().strip() if os.path.exists(path) else "?"
    line = "first-touch memory:"
    if small is not None:
        line += f" {small / (mib * 256) * 1e6:.2f} us per 4 KiB page;"
    if huge_fresh is not None:
        line += (f" 2 MiB page {huge_fresh / (mib / 2) * 1e3:.2f} ms fresh,"
                 f" {huge_again / (mib / 2) * 1e3:.2f} ms just freed;")
    print(f"{line} THP {thp}")


def compile_tiny_kernel(n):
    """n dependent tensor_scalar adds on a [1,4] tile: the smallest op there is."""
    return {"kernel": "compile_tiny", "target": "trn2",
            "inputs": [{"name": "a", "shape": [1, 4], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [1, 4], "dtype": "float32"}],
            "body": [
                {"op": "tile", "name": "t", "shape": [1, 4], "dtype": "float32"},
                {"op": "tile", "name": "u", "shape": [1, 4], "dtype": "float32"},
                {"op": "load", "dst": "t", "src": "a"},
                {"op": "tensor_copy", "dst": "u", "src": "t", "engine": "dve"},
                {"op": "for", "var": "i", "range": [0, n], "body": [
                    {"op": "tensor_scalar", "dst": "u", "src": "u", "op0": "add", "operand0": 1.0,
                     "engine": "dve"}]},
                {"op": "store", "dst": "out", "src": "u"}]}, n + 3


def compile_mixed_kernel(n):
    """n iterations of: 4 tiles declared in the loop, a load of a slice that
    depends on i, DVE / Act / Pool ops, a store of a slice (5 ops)."""
    sl = "[(i%2)*128:(i%2)*128+128, :]"
    body = [{"op": "tile", "name": t, "shape": [128, 64], "dtype": "float32"} for t in "tuvw"]
    body += [{"op": "load", "dst": "t", "src": "a" + sl},
             {"op": "tensor_scalar", "dst": "u", "src": "t", "op0": "add", "operand0": 1.0, "engine": "dve"},
             {"op": "activation", "dst": "v", "src": "u", "func": "exp", "engine": "act"},
             {"op": "tensor_tensor", "dst": "w", "in0": "v", "in1": "t", "operator": "add", "engine": "pool"},
             {"op": "store", "dst": "out" + sl, "src": "w"}]
    return {"kernel": "compile_mixed", "target": "trn2",
            "inputs": [{"name": "a", "shape": [256, 64], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [256, 64], "dtype": "float32"}],
            "body": [{"op": "for", "var": "i", "range": [0, n], "body": body}]}, 5 * n


def compile_sidedma_kernel(n):
    """n x (a load into a fresh tile nobody reads, a DVE add on a tile no
    DMA touches): DVE never waits on the DMA queues."""
    return {"kernel": "compile_sidedma", "target": "trn2",
            "inputs": [{"name": "a", "shape": [128, 64], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [128, 64], "dtype": "float32"}],
            "body": [
                {"op": "tile", "name": "u", "shape": [128, 64], "dtype": "float32"},
                {"op": "memset", "dst": "u", "value": 0.0, "engine": "dve"},
                {"op": "for", "var": "i", "range": [0, n], "body": [
                    {"op": "tile", "name": "t", "shape": [128, 64], "dtype": "float32"},
                    {"op": "load", "dst": "t", "src": "a"},
                    {"op": "tensor_scalar", "dst": "u", "src": "u", "op0": "add", "operand0": 1.0,
                     "engine": "dve"}]},
                {"op": "store", "dst": "out", "src": "u"}]}, 2 * n + 2


def compile_live_kernel(n):
    """n [1,4] tiles, each loaded from its own row, all stored at the end:
    n tiles live at the same time."""
    body = [{"op": "tile", "name": f"t{i}", "shape": [1, 4], "dtype": "float32"} for i in range(n)]
    body += [{"op": "load", "dst": f"t{i}", "src": f"a[{i}:{i + 1}, :]"} for i in range(n)]
    body += [{"op": "store", "dst": f"out[{i}:{i + 1}, :]", "src": f"t{i}"} for i in range(n)]
    return {"kernel": "compile_live", "target": "trn2",
            "inputs": [{"name": "a", "shape": [n, 4], "dtype": "float32"}],
            "outputs": [{"name": "out", "shape": [n, 4], "dtype": "float32"}], "body": body}, 2 * n


def compile_once(tpb, kf, art):
    """One `tpb compile --stats`: (wall s, cpu s, peak RSS bytes, output,
    page faults), or None on failure (output printed by the caller)."""
    shutil.rmtree(art, ignore_errors=True)
    t0 = time.perf_counter()
    p = subprocess.Popen([tpb, "compile", kf, "-o", art, "--stats"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    p.stdout.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        return None, out
    # The peak that `tpb compile --stats` prints (VmHWM of its own address
    # space); wait4's ru_maxrss also counts this driver's pages, which the
    # forked child held before its exec, so it is only the fallback.
    m = re.search(r"^peak memory (\d+) KiB$", out, re.M)
    kib = int(m.group(1)) if m else ru.ru_maxrss
    # page faults: on a VM each one exits to the hypervisor (~10 us for a
    # 4 KiB page here), a large part of a compile's CPU time (performance-log.md
    # "Page faults on a virtual machine")
    return (wall, ru.ru_utime + ru.ru_stime, kib * 1024, out, ru.ru_minflt + ru.ru_majflt), out


def compile_mix3_kernel(n):
    """The tiny-mixed kernel: n iterations of three independent [1,4] chains
    (DVE tensor_scalar, Activation relu, Pool tensor_tensor), 3n + 7 ops."""
    tiles = [{"op": "tile", "name": nm, "shape": [1, 4], "dtype": "float32"}
             for nm in ["tx", "td", "ta", "tp"]]
    return {"kernel": "compile_mix3", "target": "trn2",
            "inputs": [{"name": "x", "shape": [1, 4], "dtype": "float32"}],
            "outputs": [{"name": nm, "shape": [1, 4], "dtype": "float32"} for nm in ["od", "oa", "op"]],
            "body": tiles + [
                {"op": "load", "dst": "tx", "src": "x"},
                {"op": "tensor_copy", "dst": "td", "src": "tx", "engine": "dve"},
                {"op": "tensor_copy", "dst": "ta", "src": "tx", "engine": "act"},
                {"op": "tensor_copy", "dst": "tp", "src": "tx", "engine": "pool"},
                {"op": "for", "var": "i", "range": [0, n], "body": [
                    {"op": "tensor_scalar", "dst": "td", "src": "td", "op0": "multiply",
                     "operand0": 0.5, "engine": "dve"},
                    {"op": "activation", "dst": "ta", "src": "ta", "func": "relu"},
                    {"op": "tensor_tensor", "dst": "tp", "in0": "tp", "in1": "tx", "operator": "add",
                     "engine": "pool"}]},
                {"op": "store", "dst": "od", "src": "td"},
                {"op": "store", "dst": "oa", "src": "ta"},
                {"op": "store", "dst": "op", "src": "tp"}]}, 3 * n + 7


def bench_compile(tpb, work, name, make, n, reps=3):
    """Time `tpb compile` of make(n) (best wall of reps; CPU = user+sys and
    peak RSS of that run) and of make(n // 2) (best of reps), and print the
    ratio per doubling (CPU time at n over CPU time at n/2), the memory per
    op (peak RSS / ops) and the CPU per op added between the two sizes."""
    best = {}
    least_cpu = {}   # the least CPU of the reps at each size, for the marginal rate
    for size in (n // 2, n):
        kernel, ops = make(size)
        kf = os.path.join(work, f"{name}-{size}.json")
        with open(kf, "w") as f:
            json.dump(kernel, f)
        art = os.path.join(work, name)
        for _ in range(reps):
            r, out = compile_once(tpb, kf, art)
            if r is None:
                print(f"{name:24s} compile failed: " + (out.strip().splitlines() or ["?"])[-1])
                return
            if size not in best or r[0] < best[size][0]:
                best[size] = r + (ops,)
            least_cpu[size] = min(least_cpu.get(size, r[1]), r[1])
    wall, cpu, rss, out, faults, ops = best[n]
    half_cpu, half_rss, half_ops = best[n // 2][1], best[n // 2][2], best[n // 2][5]
    # the growth of peak RSS per added op (the fixed start-up memory cancels)
    marginal = (rss - half_rss) / max(1, ops - half_ops) / 1024
    bundles = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("PE", "Activation", "Pool", "DVE", "SP") and parts[1].isdigit():
            bundles += int(parts[1])
    ratio = cpu / half_cpu if half_cpu > 0 else float("nan")
    # The time per op added between the two sizes: the process's fixed
    # start-up (exec, the dynamic loader, first touches; ~4 ms here, which
    # is most of a 6 000-op compile) cancels, as it does for memory.
    added_cpu = least_cpu[n] - least_cpu[n // 2]
    per_added = added_cpu / max(1, ops - half_ops)
    print(f"{name:24s} {ops:>11,d} ops  {bundles:>10,d} bundles  compile {wall:7.3f} s wall"
          f"  {cpu:7.3f} s cpu  {cpu / ops * 1e6:6.2f} us/op cpu  {ops / cpu / 1e6 if cpu else 0:5.2f} M ops/s")
    print(f"{'':24s} ratio per doubling {ratio:4.2f} (cpu at {half_ops:,d} ops: {half_cpu:.3f} s)"
          f"  peak RSS {rss / 2**20:7.1f} MiB  {rss / ops / 1024:6.2f} KiB/op"
          f" ({marginal:5.2f} KiB per added op)  page faults {faults:,d}")
    rate = f"{1e-6 / per_added:5.2f} M ops/s" if per_added > 0 else "  n/a"
    print(f"{'':24s} per added op {per_added * 1e6:6.2f} us cpu = {rate} (least cpu of the reps:"
          f" {least_cpu[n // 2] * 1e3:.2f} ms at {half_ops:,d} ops, {least_cpu[n] * 1e3:.2f} ms at {ops:,d})")
