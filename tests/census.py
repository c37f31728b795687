#!/usr/bin/env python3
"""Malformed-input census (docs/reliability.md): bad inputs through every
loader and CLI (`tpb sim`, `tpb compile`, `tpb as`, `tpb dis`, `tpb check`,
`tpb run`).  Each case asserts
  - the exit status (never a crash or a sanitizer report),
  - the key words of the message: the file (or option) and the field /
    offset / op it is about,
  - that nothing is left behind: no output file or directory the run was
    asked to write, no temporary (*.tpbtmp.*, .tpbtxn.*), and outputs of an
    earlier run untouched.
Inputs are generated here from golden/tensor_add (nothing bulky committed).

usage: census.py TPB SOURCE_DIR [--group G] [-v]
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

TPB, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
GROUP = sys.argv[sys.argv.index("--group") + 1] if "--group" in sys.argv else None
VERBOSE = "-v" in sys.argv
CASE = os.path.join(SRC, "golden", "tensor_add")
INPUTS = os.path.join(CASE, "inputs")

cases = []


def case(group, name, rc, words, **kw):
    cases.append(dict(group=group, name=name, rc=rc, words=words, **kw))


# ---------------------------------------------------------------- helpers
def npy_bytes(descr="<f4", fortran="False", shape="(300, 128)", data=None, version=1, hlen=None,
              header=None):
    if header is None:
        header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    h = header.encode("latin1")
    pad = (64 - (len(h) + 11) % 64) % 64
    h = h + b" " * pad + b"\n"
    n = len(h) if hlen is None else hlen
    if version == 1:
        head = b"\x93NUMPY\x01\x00" + struct.pack("<H", n)
    else:
        head = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", n)
    if data is None:
        data = np.zeros((300, 128), np.float32).tobytes()
    return head + h + data


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def leftovers(root):
    bad = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            if ".tpbtmp." in n or n.startswith(".tpbtxn.") or ".tpbold." in n:
                bad.append(os.path.join(d, n))
    return bad


# ---------------------------------------------------------------- npy inputs
GOOD = np.load(os.path.join(INPUTS, "a.npy"))
NPY = [
    ("empty", b"", ["bad.npy", "magic"]),
    ("eight_bytes", b"\x93NUMPY\x01\x00", ["bad.npy", "magic"]),
    ("bad_magic", b"PK\x03\x04" + b"\0" * 200, ["bad.npy", "magic"]),
    ("version_9", npy_bytes(version=9), ["bad.npy", "version"]),
    ("v2_truncated_len", b"\x93NUMPY\x02\x00\x10\x00", ["bad.npy", "header_len"]),
    ("header_past_eof", npy_bytes(hlen=60000, data=b""), ["bad.npy", "header_len"]),
    ("v2_header_4gib", npy_bytes(version=2, hlen=0xFFFFFFF0), ["bad.npy", "header_len"]),
    ("no_descr", npy_bytes(header="{'fortran_order': False, 'shape': (300, 128), }"),
     ["bad.npy", "descr"]),
    ("descr_unquoted", npy_bytes(header="{'descr': f4, 'fortran_order': False, 'shape': (300, 128), }"),
     ["bad.npy", "descr"]),
    ("descr_unterminated", npy_bytes(header="{'descr': '<f4"), ["bad.npy", "descr"]),
    ("big_endian", npy_bytes(descr=">f4"), ["bad.npy", "descr", ">f4"]),
    ("complex", npy_bytes(descr="<c8"), ["bad.npy", "descr", "<c8"]),
    ("object", npy_bytes(descr="|O"), ["bad.npy", "descr"]),
    ("descr_long", npy_bytes(descr="<f4" * 20), ["bad.npy", "descr"]),
    ("fortran_true", npy_bytes(fortran="True"), ["bad.npy", "fortran_order", "Fortran"]),
    ("fortran_fale", npy_bytes(fortran="Fale"), ["bad.npy", "fortran_order"]),
    ("fortran_missing", npy_bytes(header="{'descr': '<f4', 'shape': (300, 128), }"),
     ["bad.npy", "fortran_order"]),
    ("shape_missing", npy_bytes(header="{'descr': '<f4', 'fortran_order': False, }"),
     ["bad.npy", "shape"]),
    ("shape_list", npy_bytes(shape="[300, 128]"), ["bad.npy", "shape"]),
    ("shape_word", npy_bytes(shape="(300, x)"), ["bad.npy", "shape"]),
    ("shape_negative", npy_bytes(shape="(-300, 128)"), ["bad.npy", "shape"]),
    ("shape_unclosed", npy_bytes(shape="(300, 128"), ["bad.npy", "shape"]),
    ("shape_9_dims", npy_bytes(shape="(1, 1, 1, 1, 1, 1, 1, 1, 1)"), ["bad.npy", "shape", "dims"]),
    ("shape_huge_1e10", npy_bytes(shape="(100000, 100000)", data=b""), ["bad.npy", "data", "need"]),
    ("shape_overflow", npy_bytes(shape="(4611686018427387903, 4611686018427387903)", data=b""),
     ["bad.npy", "shape", "limit"]),
    ("shape_2_62", npy_bytes(shape="(9223372036854775807,)", data=b""), ["bad.npy", "shape"]),
    ("shape_over_limit", npy_bytes(shape="(1099511627776, 1024)", data=b""),
     ["bad.npy", "shape", "limit"]),
    ("data_short_4", npy_bytes(data=GOOD.tobytes()[:-4]), ["bad.npy", "data", "153600"]),
    ("data_none", npy_bytes(data=b""), ["bad.npy", "data", "153600"]),
    ("shape_mismatch", npy_bytes(shape="(300, 129)", data=b"\0" * (300 * 129 * 4)),
     ["shape", "300", "129"]),
    ("rank_mismatch", npy_bytes(shape="(38400,)", data=GOOD.tobytes()), ["shape"]),
    ("int64", npy_bytes(descr="<i8", data=b"\0" * (300 * 128 * 8)), ["bad.npy", "descr", "<i8"]),
]
for name, data, words in NPY:
    case("npy", name, 2, words, npy=data)
case("npy", "directory", 2, ["bad.npy", "directory"], npy_dir=True)
case("npy", "missing_file", 2, ["bad.npy"], npy_missing=True)
case("npy", "device", 2, ["/dev/zero", "device"], npy_path="/dev/zero")

# ---------------------------------------------------------------- artifact directory
TM = "tensor-map.json"
S = "nc0/sg0/"
ART = [
    # (name, file, content or None=delete or callable(text)->text, rc, words)
    ("map_missing", TM, None, 1, [TM]),
    ("map_empty", TM, "", 1, [TM, "empty"]),
    ("map_invalid", TM, "{\"format\": ", 1, [TM, "invalid JSON", "offset"]),
    ("map_trailing", TM, lambda t: t + "x", 1, [TM, "offset"]),
    ("map_deep", TM, "[" * 5000 + "]" * 5000, 1, [TM, "nested deeper", "1000"]),
    ("map_array", TM, "[]", 1, [TM]),
    ("map_no_tensors", TM, lambda t: t.replace('"tensors"', '"tensorz"'), 1, [TM, "tensors"]),
    ("map_tensors_object", TM, lambda t: t[:t.index('"tensors"')] + '"tensors": {}}', 1, [TM, "tensors"]),
    ("map_kind", TM, lambda t: t.replace('"kind":\t"input"', '"kind":\t"inptu"', 1), 1,
     [TM, "kind", "inptu"]),
    ("map_dtype", TM, lambda t: t.replace('"dtype":\t"float32"', '"dtype":\t"float33"', 1), 1,
     [TM, "dtype", "float33"]),
    ("map_shape_string", TM, lambda t: t.replace('[300, 128]', '"300x128"', 1), 1, [TM, "shape"]),
    ("map_shape_negative", TM, lambda t: t.replace('[300, 128]', '[-300, 128]', 1), 1, [TM, "shape"]),
    ("map_shape_float", TM, lambda t: t.replace('[300, 128]', '[300.5, 128]', 1), 1, [TM, "shape"]),
    ("map_shape_9", TM, lambda t: t.replace('[300, 128]', '[1,1,1,1,1,1,1,1,38400]', 1), 1,
     [TM, "shape"]),
    ("map_no_addr", TM, lambda t: t.replace('"hbm_addr":\t0,', '', 1), 1, [TM, "hbm_addr"]),
    ("map_addr_past_end", TM, lambda t: t.replace('"hbm_addr":\t0,', '"hbm_addr":\t460000,', 1), 1,
     [TM, "hbm"]),
    ("map_addr_negative", TM, lambda t: t.replace('"hbm_addr":\t0,', '"hbm_addr":\t-64,', 1), 1,
     [TM, "hbm_addr"]),
    ("map_bytes_small", TM, lambda t: t.replace('"bytes":\t153600', '"bytes":\t1536', 1), 1,
     [TM, "bytes"]),
    ("map_hbm_huge", TM, lambda t: t.replace('"hbm_bytes":\t460800', '"hbm_bytes":\t1e18'), 1,
     [TM, "hbm_bytes"]),
    ("map_hbm_small", TM, lambda t: t.replace('"hbm_bytes":\t460800', '"hbm_bytes":\t64'), 1,
     [TM, "hbm"]),
    ("map_cores_0", TM, lambda t: t.replace('"num_cores":\t1', '"num_cores":\t0'), 1,
     [TM, "num_cores"]),
    ("map_cores_many", TM, lambda t: t.replace('"num_cores":\t1', '"num_cores":\t100000'), 1,
     [TM, "num_cores"]),
    ("map_target", TM, lambda t: t.replace('"target":\t"trn2"', '"target":\t"trn9"'), 1,
     [TM, "target", "trn9"]),
    ("map_format", TM, lambda t: t.replace('tpbsim-tensor-map', 'something-else'), 1, [TM, "format"]),
    ("map_version", TM, lambda t: t.replace('"version":\t1', '"version":\t99'), 1, [TM, "version"]),
    ("map_addr_fraction", TM, lambda t: t.replace('"hbm_addr":\t0,', '"hbm_addr":\t0.5,', 1), 1,
     [TM, "hbm_addr", "integer"]),
    ("map_cores_fraction", TM, lambda t: t.replace('"num_cores":\t1', '"num_cores":\t1.5'), 1,
     [TM, "num_cores", "integer"]),
    ("map_hbm_fraction", TM, lambda t: t.replace('"hbm_bytes":\t460800', '"hbm_bytes":\t460800.5'),
     1, [TM, "hbm_bytes", "integer"]),
    ("map_dup_name", TM, lambda t: t.replace('"name":\t"b"', '"name":\t"a"'), 1, [TM, "a"]),
    ("map_is_dir", TM, "DIR", 1, [TM, "directory"]),
    # the map declares input a smaller than the program reads: refused at load
    # (sim/hbmcheck.c), naming the stream, the instruction, the byte range and
    # the nearest tensor with its extent
    ("map_input_smaller_than_read", TM,
     lambda t: t.replace('[300, 128]', '[150, 128]', 1).replace('"bytes":\t153600', '"bytes":\t76800', 1),
     1, ["SP.bin", "instruction", "PseudoDmaDirect2d", "operand src", "HBM bytes [76800, ",
         "not inside a tensor", "'a' (input)", "[0, 76800)"]),
    ("core_dir_missing", "nc0", None, 1, ["nc0/sg0", "missing core directory"]),
    ("no_streams", S + "SP.bin", "NOSTREAMS", 1, ["nc0/sg0", "no instruction stream"]),
    ("sp_empty", S + "SP.bin", b"", 1, ["SP.bin", "empty instruction stream"]),
    ("sp_63", S + "SP.bin", lambda b: b[:63], 1, ["SP.bin", "offset"]),
    ("sp_trailing", S + "SP.bin", lambda b: b + b"\0" * 10, 1, ["SP.bin", "offset"]),
    ("sp_garbage", S + "SP.bin", b"\xff" * 128, 1, ["SP.bin", "offset"]),
    ("sp_bad_opcode", S + "SP.bin", lambda b: b[:64] + b"\xee" + b[65:], 1, ["SP.bin", "offset 64"]),
    ("sp_is_dir", S + "SP.bin", "DIR", 1, ["SP.bin", "directory"]),
    ("dve_zero_bundle", S + "DVE.bin", lambda b: b"\0" * 64 + b[64:], 1, ["DVE.bin", "offset 0"]),
    ("dve_cut_prefix", S + "DVE.bin", lambda b: b[64:], 1, ["DVE.json", "pc", "outside"]),
    ("act_garbage", S + "Activation.bin", bytes(range(256)) * 4, 1, ["Activation.bin", "offset"]),
    ("sidecar_invalid", S + "SP.json", "{\"debug\": [", 1, ["SP.json", "invalid JSON"]),
    ("sidecar_empty", S + "SP.json", "", 1, ["SP.json"]),
    ("sidecar_deep", S + "SP.json", "{\"debug\": " + "[" * 3000 + "]" * 3000 + "}", 1,
     ["SP.json", "nested deeper"]),
    ("sidecar_debug_object", S + "SP.json", "{\"debug\": {}}", 1, ["SP.json", "debug"]),
    ("sidecar_is_dir", S + "SP.json", "DIR", 1, ["SP.json", "directory"]),
    ("def_invalid", S + "def.json", "{", 1, ["def.json", "invalid JSON"]),
    ("def_empty", S + "def.json", "", 1, ["def.json", "empty"]),
    ("def_sem_string", S + "def.json", "{\"semaphores\": \"x\"}", 1, ["def.json", "semaphores"]),
    ("def_is_dir", S + "def.json", "DIR", 1, ["def.json", "directory"]),
    ("def_sem_fraction", S + "def.json", '{"semaphores": [{"id": 1.5}]}', 1,
     ["def.json", "semaphores[0]", "integer"]),
    ("def_queue_fraction", S + "def.json", '{"queues": [{"id": 0.25}]}', 1,
     ["def.json", "queues[0]", "integer"]),
    # placement.json is copied into stats.json and the trace: only the
    # compiler's table (numbers, arrays of numbers) is accepted, never a tree
    # that nests the trace past what a JSON reader takes (found by fuzz_map)
    ("placement_nested", "placement.json",
     '{"instances": ' + "[" * 997 + "]" * 997 + "}", 1, ["placement.json", "instances[0]"]),
    ("placement_grid_string", "placement.json", '{"grid": "4", "instances": []}', 1,
     ["placement.json", "grid"]),
    ("placement_no_instances", "placement.json", '{"grid": [4]}', 1,
     ["placement.json", "instances"]),
]
for name, f, content, rc, words in ART:
    case("artifact", name, rc, words, art_file=f, art_content=content)
case("artifact", "not_a_dir", 2, ["not an artifact directory"], art_not_dir=True)

# ---------------------------------------------------------------- kernel files
KJ = open(os.path.join(CASE, "kernel.json")).read()
KERNEL = [
    ("empty", "", ["k.json", "invalid JSON"]),
    ("invalid", "{\"kernel\": ", ["k.json", "invalid JSON"]),
    ("trailing", KJ + "}", ["k.json", "invalid JSON"]),
    ("deep", "[" * 4000 + "]" * 4000, ["k.json", "invalid JSON", "1:1001"]),
    ("array", "[]", ["k.json"]),
    ("no_body", KJ.replace('"body"', '"bodie"'), ["k.json", "body"]),
    ("bad_dtype", KJ.replace('"float32"', '"float31"', 1), ["k.json", "dtype", "float31"]),
    ("negative_shape", KJ.replace("300,", "-300,", 1), ["k.json", "shape"]),
    ("zero_shape", KJ.replace("300,", "0,", 1), ["k.json", "shape"]),
    ("huge_shape", KJ.replace("300,", "30000000000000,", 1), ["k.json", "shape"]),
    ("shape_string", KJ.replace("[\n        300,\n        128\n      ]", "\"300x128\"", 1),
     ["k.json", "shape"]),
    ("no_inputs_name", KJ.replace('"name": "a"', '"nam": "a"', 1), ["k.json", "name"]),
    ("target", KJ.replace('"target": "trn2"', '"target": "trn7"'), ["k.json", "target", "trn7"]),
]
for name, text, words in KERNEL:
    case("kernel", name, 1, words, kernel=text)
case("kernel", "directory", 1, ["k.json", "directory"], kernel="DIR")
case("kernel", "missing", 1, ["k.json"], kernel=None)

# ---------------------------------------------------------------- assembly
ASM = [
    ("unknown_mnemonic", "Frobnicate x=1\n", ["bad.s:1", "Frobnicate"]),
    ("bad_field", "Nop bogus=1\n", ["bad.s:1", "bogus"]),
    ("bad_value", "Nop\nHalt\nDmaTrigger queue=zz\n", ["bad.s:3", "queue"]),
    ("value_range", "DmaTrigger queue=99999999999\n", ["bad.s:1", "queue"]),
    ("undefined_label", "Jump target=@nowhere\n", ["bad.s:1"]),
    ("bundle_short", ".bundle 00 01\n", ["bad.s:1", "bundle"]),
    ("bundle_hex", ".bundle zz\n", ["bad.s:1"]),
    ("unknown_directive", ".frob 1\n", ["bad.s:1", ".frob"]),
    ("binary_text", "\x01\x02\x03\xff\n", ["bad.s:1"]),
    ("second_line", "Nop\nNop nonsense\n", ["bad.s:2"]),
]
for name, text, words in ASM:
    case("asm", name, 1, words, asm=text)
case("asm", "directory", 1, ["bad.s", "directory"], asm="DIR")

# ---------------------------------------------------------------- disassembler
DIS = [
    ("short", b"\0" * 63, ["63", "trailing"]),
    ("garbage", b"\xff" * 64, ["bad.bin", "offset 0x0", "header"]),
    ("second_bad", "GOOD+BAD", ["bad.bin", "offset 0x40", "header"]),
]
for name, data, words in DIS:
    case("dis", name, 1, words, dis=data)
case("dis", "directory_without_streams", 1, ["no"], dis="DIR")

# ---------------------------------------------------------------- checker
CHK = [
    ("got_missing", None, ["out.npy"]),
    ("got_empty", b"", ["out.npy", "magic"]),
    ("got_shape", npy_bytes(shape="(300, 127)", data=b"\0" * (300 * 127 * 4)), ["out", "shape"]),
    ("got_truncated", npy_bytes(data=b"\0" * 100), ["out.npy", "data"]),
    ("got_fortran", npy_bytes(fortran="True"), ["out.npy", "fortran_order"]),
]
for name, data, words in CHK:
    case("check", name, 1, words, check=data)

# ---------------------------------------------------------------- outputs of tpb sim
OUT = [
    # each runs a good simulation with one output path that cannot be written
    ("trace_in_missing_dir", dict(trace="nodir/t.json"), ["nodir/t.json", "does not exist"]),
    ("trace_is_dir", dict(trace="DIR"), ["is a directory"]),
    ("stats_is_dir", dict(stats="DIR"), ["is a directory"]),
    ("stats_trailing_slash", dict(stats="s/"), ["is a directory"]),
    ("stats_in_missing_dir", dict(stats="no/such/s.json"), ["no/such/s.json", "does not exist"]),
    ("out_is_file", dict(out="FILE"), ["not a directory"]),
    ("out_npy_is_dir", dict(out_npy_dir=True), ["out.npy", "is a directory"]),
    ("stats_equals_trace", dict(stats="same.json", trace="same.json"), ["same.json", "two outputs"]),
    ("out_in_file", dict(out="FILE/sub"), ["FILE"]),
    ("trace_over_dir_slash", dict(trace="t/"), ["is a directory"]),
]
for name, spec, words in OUT:
    case("outputs", name, 1, words, outputs=spec)

# ---------------------------------------------------------------- command lines
CLI = [
    (["sim", "ART", "--bogus"], 2, ["--bogus"]),
    (["sim", "ART", "--max-cycles", "abc"], 2, ["--max-cycles", "abc"]),
    (["sim", "ART", "--max-cycles", "0"], 2, ["--max-cycles"]),
    (["sim", "ART", "--max-cycles"], 2, ["--max-cycles"]),
    (["sim", "ART", "--target", "trn9"], 2, ["trn9"]),
    (["sim"], 2, ["artifact-dir"]),
    (["sim", "ART", "--inputs", "=x.npy"], 2, ["=x.npy"]),
    (["sim", "ART", "--inputs", "nosuchdir"], 2, ["nosuchdir", "not a directory"]),
    (["sim", "ART", "--inputs", "zz=x.npy"], 2, ["zz"]),
    (["sim", "ART"], 2, ["missing input", "a"]),
    (["compile", "K", "--mode", "7", "-o", "X"], 2, ["CodeGenMode"]),
    (["compile", "K", "--target", "trn9", "-o", "X"], 2, ["trn9"]),
    (["compile", "K"], 2, ["-o"]),
    (["compile", "-o", "X"], 2, ["kernel file"]),
    (["compile", "K", "K", "-o", "X"], 2, ["more than one"]),
    (["compile", "K", "--max-memory", "lots", "-o", "X"], 2, ["--max-memory"]),
    (["frobnicate"], 2, ["frobnicate"]),
    (["compile", "K", "--max-memory", "1K", "-o", "X"], 1, ["--max-memory", "memory limit", "bytes per op"]),
    (["compile", "K", "--max-memory", "-5", "-o", "X"], 2, ["--max-memory", "-5"]),
]
for i, (argv, rc, words) in enumerate(CLI):
    case("cli", "%02d_%s" % (i, "_".join(a.strip("-") for a in argv[:3])), rc, words, cli=argv)


# ---------------------------------------------------------------- running
def run(argv, cwd):
    env = dict(os.environ)
    p = subprocess.run([TPB] + argv, cwd=cwd, capture_output=True, text=True, errors="replace",
                       env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def prepare_art(w, base_art):
    art = os.path.join(w, "art")
    shutil.copytree(base_art, art)
    return art


def do_case(c, w, base_art):
    """Returns (argv, cwd, must_not_exist, must_keep) after setting up w."""
    g = c["group"]
    out = os.path.join(w, "out")
    stats = os.path.join(w, "stats.json")
    trace = os.path.join(w, "trace.json")
    if g == "npy":
        art = prepare_art(w, base_art)
        bad = c.get("npy_path") or os.path.join(w, "bad.npy")
        if c.get("npy_dir"):
            os.mkdir(bad)
        elif "npy" in c:
            write(bad, c["npy"])
        return (["sim", art, "--inputs", "a=" + bad, "b=" + os.path.join(INPUTS, "b.npy"), "-o", out,
                 "--stats-json", stats, "--trace", trace], w, [out, stats, trace], [])
    if g == "artifact":
        art = prepare_art(w, base_art)
        if c.get("art_not_dir"):
            art = os.path.join(w, "file")
            write(art, "x")
        else:
            p = os.path.join(art, c["art_file"])
            content = c["art_content"]
            if content is None:
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
            elif content == "DIR":
                os.remove(p)
                os.mkdir(p)
            elif content == "NOSTREAMS":
                for n in os.listdir(os.path.dirname(p)):
                    if n.endswith(".bin"):
                        os.remove(os.path.join(os.path.dirname(p), n))
            elif callable(content):
                mode = "rb" if p.endswith(".bin") else "r"
                with open(p, mode) as f:
                    old = f.read()
                write(p, content(old))
            else:
                write(p, content)
        return (["sim", art, "--inputs", INPUTS, "-o", out, "--stats-json", stats, "--trace", trace],
                w, [out, stats, trace], [])
    if g == "kernel":
        k = os.path.join(w, "k.json")
        if c["kernel"] == "DIR":
            os.mkdir(k)
        elif c["kernel"] is not None:
            write(k, c["kernel"])
        return (["compile", k, "-o", out], w, [out], [])
    if g == "asm":
        s = os.path.join(w, "bad.s")
        if c["asm"] == "DIR":
            os.mkdir(s)
        else:
            write(s, c["asm"].encode("latin1"))
        o = os.path.join(w, "out.bin")
        return (["as", s, "-o", o], w, [o], [])
    if g == "dis":
        b = os.path.join(w, "bad.bin")
        if c["dis"] == "DIR":
            os.mkdir(b)
        elif c["dis"] == "GOOD+BAD":
            with open(os.path.join(base_art, "nc0/sg0/SP.bin"), "rb") as f:
                good = f.read()[:64]
            write(b, good + b"\xff" * 64)
        else:
            write(b, c["dis"])
        return (["dis", b], w, [], [])
    if g == "check":
        got = os.path.join(w, "got")
        os.mkdir(got)
        if c["check"] is not None:
            write(os.path.join(got, "out.npy"), c["check"])
        return (["check", got, os.path.join(CASE, "expected")], w, [], [])
    if g == "outputs":
        art = prepare_art(w, base_art)
        spec = c["outputs"]
        # an earlier run's outputs, which must survive the failed run
        os.mkdir(out)
        write(os.path.join(out, "out.npy"), b"OLD")
        write(stats, "OLD")
        keep = [os.path.join(out, "out.npy"), stats]
        argv = ["sim", art, "--inputs", INPUTS, "-q"]
        o = spec.get("out")
        if o == "FILE":
            write(os.path.join(w, "afile"), "x")
            argv += ["-o", os.path.join(w, "afile")]
            keep = [os.path.join(w, "afile")]
        elif o == "FILE/sub":
            write(os.path.join(w, "afile"), "x")
            argv += ["-o", os.path.join(w, "afile", "sub")]
        else:
            argv += ["-o", out]
        if spec.get("out_npy_dir"):
            os.remove(os.path.join(out, "out.npy"))
            os.mkdir(os.path.join(out, "out.npy"))
            keep = [stats]
        for key, opt in (("stats", "--stats-json"), ("trace", "--trace")):
            v = spec.get(key)
            if v is None:
                v = stats if key == "stats" else trace
            elif v == "DIR":
                v = os.path.join(w, key + "-dir")
                os.mkdir(v)
            elif v.endswith("/"):
                v = os.path.join(w, v)
            else:
                v = os.path.join(w, v)
            argv += [opt, v]
        return argv, w, [trace], keep
    if g == "cli":
        argv = []
        for a in c["cli"]:
            if a == "ART":
                a = prepare_art(w, base_art) if not os.path.isdir(os.path.join(w, "art")) else \
                    os.path.join(w, "art")
            elif a == "K":
                a = os.path.join(CASE, "kernel.json")
            elif a == "X":
                a = os.path.join(w, "x-out")
            argv.append(a)
        return argv, w, [os.path.join(w, "x-out")], []
    raise AssertionError(g)


def main():
    top = tempfile.mkdtemp(prefix="tpb-census.")
    base_art = os.path.join(top, "base-art")
    rc, o, e = run(["compile", os.path.join(CASE, "kernel.json"), "-o", base_art], top)
    assert rc == 0, e
    selected = [c for c in cases if GROUP is None or c["group"] == GROUP]
    failures = []
    for i, c in enumerate(selected):
        w = os.path.join(top, "c%03d" % i)
        os.mkdir(w)
        argv, cwd, must_not_exist, keep = do_case(c, w, base_art)
        before = {p: open(p, "rb").read() for p in keep if os.path.isfile(p)}
        rc, out, err = run(argv, cwd)
        text = out + err
        why = []
        if rc != c["rc"]:
            why.append("exit %d, want %d" % (rc, c["rc"]))
        if "Sanitizer" in text or "runtime error" in text:
            why.append("sanitizer report")
        for word in c["words"]:
            if word.lower() not in text.lower():
                why.append("no '%s' in the message" % word)
        for p in must_not_exist:
            if os.path.exists(p) and p not in before:
                why.append("left behind: %s" % os.path.relpath(p, w))
        for p, data in before.items():
            if not os.path.exists(p) or open(p, "rb").read() != data:
                why.append("earlier output changed: %s" % os.path.relpath(p, w))
        lo = leftovers(w)
        if lo:
            why.append("temporaries left: %s" % ", ".join(os.path.relpath(p, w) for p in lo))
        line = "%-9s %-28s exit %d  %s" % (c["group"], c["name"], rc,
                                           (err.strip().splitlines() or [""])[-1][:150])
        if why:
            failures.append("%s\n    FAILED: %s" % (line, "; ".join(why)))
        elif VERBOSE:
            print(line)
        shutil.rmtree(w, ignore_errors=True)
    shutil.rmtree(top, ignore_errors=True)
    print("census: %d malformed inputs, %d failed" % (len(selected), len(failures)))
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
