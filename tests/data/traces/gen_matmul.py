#!/usr/bin/python3
"""Write matmul.json: a hand-modelled trace of a tiled matmul in the format of
docs/trace-format.md, for developing and documenting `tpb view` before real
simulator traces exist.  The timing is invented (plausible, not simulated).

C[128 x 2048] = A[128 x 1024] @ B[1024 x 2048] in 8 K-tiles x 4 N-chunks:
SP triggers the loads of A/B tiles on two DMA queues (double-buffered), PE
waits on the load semaphore, runs LdWeights + Matmul per chunk, Activation
evacuates PSUM to SBUF, DVE adds the bias and SP stores each result chunk."""
import json
import sys

CLK = 1.4  # reference GHz
ev, ctr_ev = [], []
sems = {}


def us(c):
    return round(c / (1000.0 * CLK), 6)


def X(tid, name, cat, pc, start, end, opcode, fields, wait=None, wait_cycles=0,
      waited_for=None, issue=None, **extra):
    args = {"pc": pc, "opcode": opcode, "start_cycle": start, "end_cycle": end,
            "issue_cycle": start - wait_cycles if issue is None else issue,
            "wait_cycles": wait_cycles, "fields": fields}
    if wait:
        args["wait"] = wait
        args["waited_for"] = waited_for or []
    args.update(extra)
    ev.append({"ph": "X", "pid": 1, "tid": tid, "name": name, "cat": cat,
               "ts": us(start), "dur": us(end - start), "args": args})


def sem(name, cyc, value):
    sems[name] = value
    ctr_ev.append({"ph": "C", "pid": 1, "name": name, "ts": us(cyc), "args": {"value": value}})


meta = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "core0"}},
        {"ph": "M", "name": "process_sort_index", "pid": 1, "args": {"sort_index": 0}}]
for tid, n in [(1, "PE"), (2, "Activation"), (3, "Pool"), (4, "DVE"), (5, "SP")]:
    meta.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": n}})
    meta.append({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": tid,
                 "args": {"sort_index": tid}})
for q, qn in [(0, "qSyncIO0"), (1, "qSyncIO1"), (2, "qSyncIO2")]:
    for slot in range(2):
        meta.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": 100 + q * 8 + slot,
                     "args": {"name": "q%d %s [%d]" % (q, qn, slot)}})

for s in ["sem S1 qSyncIO0", "sem S2 PE", "sem S3 Act", "sem S4 DVE"]:
    sem(s, 0, 0)

sp_pc, pe_pc, act_pc, dve_pc = 0, 0, 0, 0
sp_t = 0
pe_t = act_t = dve_t = 0
q_free = {0: [0, 0], 1: [0, 0], 2: [0, 0]}
loads_done = []   # cycle when k-tile k is resident
load_refs = []
KT, NC = 8, 4
for k in range(KT):
    # SP issues the A and B tile loads
    refs = []
    done = 0
    for q, nbytes, nd in [(0, 128 * 128 * 2, 16), (1, 128 * 512 * 2 * NC // 2, 64)]:
        X(5, "DmaTrigger", "dma", sp_pc, sp_t, sp_t + 40, 0xC1,
          "queue=%d desc=%d sem=S1 inc=1" % (q, nd))
        issuer = {"pid": 1, "tid": 5, "pc": sp_pc}
        slot = 0 if q_free[q][0] <= q_free[q][1] else 1
        start = max(sp_t + 40, q_free[q][slot] if k >= 2 else sp_t + 40)
        dur = 300 + nbytes // 96
        end = start + dur
        q_free[q][slot] = end
        X(100 + q * 8 + slot, "dma %s" % ("A" if q == 0 else "B"), "dma", sp_pc, start, end,
          0xC1, "queue=%d desc=%d" % (q, nd), queue=q, bytes=nbytes, descriptors=nd,
          issuer=issuer, op_name="load_%s_k%d" % ("A" if q == 0 else "B", k))
        refs.append({"pid": 1, "tid": 5, "pc": sp_pc})
        done = max(done, end)
        sp_pc += 1
        sp_t += 60
    sem("sem S1 qSyncIO0", done, 2 * (k + 1))
    loads_done.append(done)
    load_refs.append(refs)
    # PE: wait for the tile, then LdWeights + Matmul per N chunk
    for n in range(NC):
        ready = loads_done[k]
        w = max(0, ready - pe_t) if n == 0 else 0
        X(1, "LdWeights", "matmul", pe_pc, pe_t + w, pe_t + w + 128, 0x01,
          "w=sb[0x%05x] part=128 cols=128 dtype=bf16" % (0x4000 * k),
          wait="S1>=%d" % (2 * (k + 1)) if n == 0 else None, wait_cycles=w,
          waited_for=refs if n == 0 else None, issue=pe_t, src="body[%d]" % (2 * n),
          op_name="mm_k%d_n%d" % (k, n))
        pe_t += w + 128
        pe_pc += 1
        X(1, "Matmul", "matmul", pe_pc, pe_t, pe_t + 512, 0x02,
          "in=sb[0x%05x] psum=p%d rows=128 cols=512 acc=%d" % (0x20000 + 0x800 * n, n,
                                                                int(k > 0)),
          src="body[%d]" % (2 * n + 1), op_name="mm_k%d_n%d" % (k, n))
        pe_t += 512
        pe_pc += 1
    sem("sem S2 PE", pe_t, k + 1)
pe_last_pc = pe_pc - 1
# Activation evacuates each PSUM chunk, DVE adds bias, SP stores
act_t = 100
for n in range(NC):
    w = pe_t - act_t if n == 0 else 0
    X(2, "Activation", "act", act_pc, act_t + w, act_t + w + 420, 0x20,
      "func=copy in=psum p%d out=sb[0x%05x] scale=1.0" % (n, 0x40000 + 0x1000 * n),
      wait="S2>=%d" % KT if n == 0 else None, wait_cycles=w,
      waited_for=[{"pid": 1, "tid": 1, "pc": pe_last_pc}] if n == 0 else None,
      issue=act_t, op_name="evac_n%d" % n)
    act_t += w + 420
    sem("sem S3 Act", act_t, n + 1)
    ws = max(0, act_t - dve_t)
    X(4, "TensorTensor", "vector", dve_pc, dve_t + ws, dve_t + ws + 610, 0x41,
      "op=add in0=sb[0x%05x] in1=sb[0x60000] out=sb[0x%05x] dtype=fp32" %
      (0x40000 + 0x1000 * n, 0x70000 + 0x1000 * n),
      wait="S3>=%d" % (n + 1), wait_cycles=ws,
      waited_for=[{"pid": 1, "tid": 2, "pc": act_pc}], issue=dve_t, op_name="bias_n%d" % n)
    dve_t += ws + 610
    sem("sem S4 DVE", dve_t, n + 1)
    act_pc += 1
    st = max(sp_t, dve_t)
    X(5, "DmaTrigger", "dma", sp_pc, st, st + 40, 0xC1, "queue=2 desc=16 sem=S5 inc=1",
      wait="S4>=%d" % (n + 1), wait_cycles=st - sp_t,
      waited_for=[{"pid": 1, "tid": 4, "pc": dve_pc}], issue=sp_t)
    dve_pc += 1
    slot = 0 if q_free[2][0] <= q_free[2][1] else 1
    s0 = max(st + 40, q_free[2][slot])
    X(100 + 16 + slot, "dma C", "dma", sp_pc, s0, s0 + 900, 0xC1, "queue=2 desc=16",
      queue=2, bytes=128 * 512 * 4, descriptors=16, issuer={"pid": 1, "tid": 5, "pc": sp_pc},
      op_name="store_C_n%d" % n)
    q_free[2][slot] = s0 + 900
    sp_pc += 1
    sp_t = st + 40
total = max(max(v) for v in q_free.values())
X(5, "Halt", "control", sp_pc, total, total + 1, 0xA1, "")
total += 1
doc = {"displayTimeUnit": "ns",
       "otherData": {"format": "tpbsim-trace", "version": 1, "kernel": "matmul_128x1024x2048",
                     "target": "trn2", "clock_ghz": CLK, "total_cycles": total,
                     "num_cores": 1,
                     "engine_clock_ghz": {"PE": 2.8, "Activation": 1.4, "Pool": 1.4,
                                          "DVE": 0.96, "SP": 1.4}},
       "traceEvents": meta + sorted(ev + ctr_ev, key=lambda e: e["ts"])}
out = sys.argv[1] if len(sys.argv) > 1 else "matmul.json"
with open(out, "w") as f:
    json.dump(doc, f, indent=0)
    f.write("\n")
