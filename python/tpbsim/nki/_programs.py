"""Kernels traced once per program (docs/python.md "Control flow on
nl.program_id()").

A kernel is first traced once for every program, nl.program_id() a
symbol (Lin) that only slices and offsets may use.  When that trace fails
after the kernel asked for a program id (Python `if` / `for` / `int()` /
list index on it, a slice bound the symbolic form cannot check, ...), the
kernel is traced again once per program with the program's id as a plain
int, as NKI itself runs a kernel per program.  The per-program kernels
become one kernel file whose body is one `if` per program:

    {"op": "if", "cond": "pid == 3", "body": [...program 3's ops...]}

The compiler's front-end runs once per program with `pid` bound, so each
program compiles only its own body; the programs must still declare the
same HBM tensors (merged here) and meet at the same core barriers and
collectives (checked by the compiler)."""
import json

from ._state import NkiError

# programs traced one by one at most: beyond, the symbolic trace's error
MAX_PROGRAMS = 256


class PerProgram(BaseException):
    """Private: the symbolic trace failed after the kernel used
    nl.program_id(); Kernel._trace_split traces it per program.  A
    BaseException, so a kernel's `except Exception` does not swallow it."""


def program_ids(grid, pid):
    """Program pid's per-axis ids on a row-major launch grid."""
    ids = []
    for n in reversed(grid):
        ids.append(pid % n)
        pid //= n
    return tuple(reversed(ids))


def _decls(doc, key):
    return {d["name"]: d for d in doc.get(key, [])}


def _union(docs, key, name):
    """The union of the programs' top-level declarations `key` (scratch,
    constants), program 0's order first; a name declared differently by
    two programs is an error."""
    out, seen = [], {}
    for p, doc in enumerate(docs):
        for d in doc.get(key, []):
            if d["name"] not in seen:
                seen[d["name"]] = p
                out.append(d)
            elif _decls(docs[seen[d["name"]]], key)[d["name"]] != d:
                raise NkiError("%s: programs %d and %d declare the HBM tensor '%s' differently "
                               "(%s and %s)" % (name, seen[d["name"]], p, d["name"],
                                                _decls(docs[seen[d["name"]]], key)[d["name"]], d))
    return out


def merge(texts, name):
    """One kernel file from the per-program kernel files texts[p]."""
    docs = [json.loads(t) for t in texts]
    d0 = docs[0]
    for p, doc in enumerate(docs[1:], 1):
        for key in ("inputs", "outputs"):
            if doc.get(key) != d0.get(key):
                raise NkiError("%s: program %d's %s differ from program 0's (%s and %s): every "
                               "program must return the same tensors" % (
                                   name, p, key, doc.get(key), d0.get(key)))
    out = {k: d0[k] for k in ("kernel", "grid", "inputs", "outputs") if k in d0}
    for key in ("constants", "scratch"):
        u = _union(docs, key, name)
        if u:
            out[key] = u
    sched = []
    for doc in docs:
        for pair in doc.get("schedule", []):
            if pair not in sched:
                sched.append(pair)
    if sched:
        out["schedule"] = sched
    out["body"] = [{"op": "if", "cond": "pid == %d" % p, "body": doc["body"]}
                   for p, doc in enumerate(docs)]
    return json.dumps(out) + "\n"
