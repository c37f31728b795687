#!/usr/bin/python3
"""Independent reference encoder for the golden encoding files.

Reads the ISA tables (isa/*.def) with regular expressions and the operand
layouts as documented in isa/fields.def, parses the assembly lines of
tests/encodings/<family>.s, and writes the expected bytes as a
`# encoding: [0x..,...]` comment under each instruction line.  It shares no
code with the C assembler/codec, so the C tests comparing against these
bytes check the codec against a second, separate reading of the table.

usage: tests/encodings/mkgolden.py [--check] [file.s ...]
  (default: every tests/encodings/*.s except invalid-*.s)
  --check  do not rewrite; exit 1 if a file would change
"""
import glob
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_def(name):
    with open(os.path.join(ROOT, 'isa', name)) as f:
        text = f.read()
    return re.sub(r'/\*.*?\*/', '', text, flags=re.S)


def load_tables():
    enums = {}
    for e, _id, val, name in re.findall(r'ENUMV\((\w+),\s*(\w+),\s*(\d+),\s*"(\w+)"\)', read_def('enums.def')):
        enums.setdefault(e, {})[name] = int(val)
    enums['DTYPE'] = {}
    for _id, val, asm in re.findall(r'DTYPE\((\w+),\s*(\d+),\s*"(\w+)"', read_def('dtypes.def')):
        enums['DTYPE'][asm] = int(val)
    enums['BOOL'] = {'0': 0, '1': 1}
    ops = {}
    for _id, mn, l2, fmt in re.findall(r'OPCODE\((\w+),\s*"(\w+)",\s*(0x[0-9A-Fa-f]+|\d+),\s*[^,]+,\s*(\w+),', read_def('opcodes.def')):
        ops[mn] = (int(l2, 0), fmt)
    formats = {}
    cur = None
    for line in read_def('fields.def').splitlines():
        m = re.match(r'\s*FMT_BEGIN\((\w+)', line)
        if m:
            cur = m.group(1)
            formats[cur] = []
            continue
        m = re.match(r'\s*FIELD\(\w+,\s*(\w+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\w+)\)', line)
        if m:
            formats[cur].append(('F', m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)))
            continue
        m = re.match(r'\s*TAP\(\w+,\s*(\w+),\s*(\d+),\s*(\d+)\)', line)
        if m:
            formats[cur].append(('TAP', m.group(1), int(m.group(2)), int(m.group(3))))
            continue
        m = re.match(r'\s*(PTR|DAP)\(\w+,\s*(\w+),\s*(\d+)\)', line)
        if m:
            formats[cur].append((m.group(1), m.group(2), int(m.group(3))))
    return enums, ops, formats


ENUMS, OPS, FORMATS = load_tables()


class Bundle:
    def __init__(self):
        self.b = bytearray(64)

    def put(self, bitpos, width, value):
        value &= (1 << width) - 1
        for i in range(width):
            p = bitpos + i
            if (value >> i) & 1:
                self.b[p // 8] |= 1 << (p % 8)


def num(s):
    return int(s, 16) if s.lower().startswith(('0x', '-0x')) else int(s, 10)


def f32_bits(s):
    m = re.fullmatch(r'bits\((0x[0-9a-fA-F]+)\)', s)
    if m:
        return int(m.group(1), 16)
    return struct.unpack('<I', struct.pack('<f', float.fromhex(s) if 'p' in s else float(s)))[0]


def scalar(ftype, s):
    if ftype in ('U', 'S'):
        return num(s)
    if ftype == 'HEX':
        m = re.fullmatch(r'f32\((.*)\)', s)
        return f32_bits(m.group(1)) if m else num(s)
    if ftype == 'F32':
        return f32_bits(s)
    return ENUMS[ftype][s]


def dims(s):
    if not s:
        return []
    return [tuple(int(x) for x in d.split('x')) for d in s[1:-1].split(',')]


def tap(s):
    m = re.fullmatch(r'(\w+)\[(\d+)(?::(\d+))?\]@(\w+):(\w+)(<[^>]*>)?', s)
    assert m, 'bad TAP ' + s
    start = int(m.group(2))
    end = int(m.group(3)) if m.group(3) else start + 1
    return dict(space=ENUMS['SPACE'][m.group(1)], start=start, nparts=end - start,
                addr=num(m.group(4)), dtype=ENUMS['DTYPE'][m.group(5)], dims=dims(m.group(6)))


def put_tap(b, byte, t):
    base = byte * 8
    b.put(base, 24, t['addr'])
    b.put(base + 24, 4, t['dtype'])
    b.put(base + 28, 2, t['space'])
    b.put(base + 30, 7, t['start'])
    b.put(base + 37, 8, t['nparts'])
    b.put(base + 45, 3, len(t['dims']))
    for d, (step, count) in enumerate(t['dims'][:2]):
        b.put(base + (6 + 4 * d) * 8, 16, step)
        b.put(base + (8 + 4 * d) * 8, 16, count)


def put_ptr(b, byte, s):
    m = re.fullmatch(r'(\w+)@(\w+):(\w+)', s)
    assert m, 'bad PTR ' + s
    b.put(byte * 8, 24, num(m.group(2)))
    b.put(byte * 8 + 24, 4, ENUMS['DTYPE'][m.group(3)])
    b.put(byte * 8 + 28, 2, ENUMS['SPACE'][m.group(1)])


def put_dap(b, byte, s):
    m = re.fullmatch(r'(?:nc(\d+):)?(\w+)(?:\[(\d+)\])?@(\w+):(\w+)(<[^>]*>)?', s)
    assert m, 'bad DAP ' + s
    addr = num(m.group(4)) + (int(m.group(3)) << 18 if m.group(3) else 0)
    b.put(byte * 8, 32, addr)
    b.put((byte + 4) * 8, 4, ENUMS['DTYPE'][m.group(5)])
    b.put((byte + 4) * 8 + 4, 2, ENUMS['SPACE'][m.group(2)])
    b.put((byte + 5) * 8, 3, int(m.group(1) or 0))
    for d, (step, count) in enumerate(dims(m.group(6))):
        b.put((byte + 6 + 6 * d) * 8, 32, step)
        b.put((byte + 10 + 6 * d) * 8, 16, count)


def header(b, key, val):
    hdr = {f[1]: f for f in FORMATS['HDR']}

    def put(name, v):
        _, _, byte, bit, width, _ = hdr[name]
        b.put(byte * 8 + bit, width, v)
    if key == 'wait':
        m = re.fullmatch(r'S(\d+)>=(\w+)', val)
        put('wait_en', 1)
        put('wait_sem', int(m.group(1)))
        put('wait_val', num(m.group(2)))
    elif key == 'upd':
        m = re.fullmatch(r'(?:nc(\d+):)?S(\d+)\.(\w+)(?:\((\w+)\))?@(read|complete)', val)
        put('upd_en', 1)
        if m.group(1) is not None:
            put('upd_remote', 1)
            put('upd_core', int(m.group(1)))
        put('upd_sem', int(m.group(2)))
        put('upd_op', ENUMS['SEMOP'][m.group(3)])
        put('upd_val', num(m.group(4) or '0'))
        put('upd_at_read', 1 if m.group(5) == 'read' else 0)
    else:
        f = hdr[key]
        put(key, scalar(f[5], val))


def encode_line(line, explicit_ext):
    """Bytes of one line; an ApExt is prepended for 3-4 dim TAPs unless an
    explicit ApExt line came just before (explicit_ext)."""
    toks = line.split()
    mn, kv = toks[0], dict(t.split('=', 1) for t in toks[1:])
    l2, fmt = OPS[mn]
    b = Bundle()
    b.b[0] = l2
    b.b[1] = 0x10
    ext = {}
    for f in FORMATS[fmt]:
        kind, name = f[0], f[1]
        if name not in kv:
            continue
        val = kv.pop(name)
        if kind == 'F':
            _, _, byte, bit, width, ftype = f
            b.put(byte * 8 + bit, width, scalar(ftype, val))
        elif kind == 'TAP':
            t = tap(val)
            put_tap(b, f[2], t)
            if len(t['dims']) > 2:
                ext[f[3]] = t['dims'][2:]
        elif kind == 'PTR':
            put_ptr(b, f[2], val)
        else:
            put_dap(b, f[2], val)
    for key, val in kv.items():
        header(b, key, val)
    out = []
    if ext and not explicit_ext:
        x = Bundle()
        x.b[0] = OPS['ApExt'][0]
        x.b[1] = 0x10
        for slot, ds in ext.items():
            for k, (step, count) in enumerate(ds):  # o<slot>_step<2+k> at byte 12 + slot*8 + k*4
                x.put((12 + slot * 8 + k * 4) * 8, 16, step)
                x.put((14 + slot * 8 + k * 4) * 8, 16, count)
        out.append(x.b)
    out.append(b.b)
    return b''.join(out)


def process(path, check):
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    i = 0
    pending_ext = False
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        code = line.split('#')[0].split(';')[0].strip()
        if not code or code.endswith(':'):
            continue
        if i < len(lines) and lines[i].lstrip().startswith('# encoding:'):
            i += 1
        mn = code.split()[0]
        enc = encode_line(code, pending_ext)
        if mn == 'ApExt':
            pending_ext = True
        elif mn != 'PredExt':
            pending_ext = False
        out.append('# encoding: [' + ','.join('0x%02x' % c for c in enc) + ']')
    text = '\n'.join(out) + '\n'
    with open(path) as f:
        same = f.read() == text
    if not check and not same:
        with open(path, 'w') as f:
            f.write(text)
    return same


def main():
    args = sys.argv[1:]
    check = '--check' in args
    files = [a for a in args if a != '--check'] or sorted(
        p for p in glob.glob(os.path.join(ROOT, 'tests', 'encodings', '*.s'))
        if not os.path.basename(p).startswith('invalid-'))
    stale = [p for p in files if not process(p, check)]
    for p in stale:
        print(('stale: ' if check else 'updated: ') + p)
    return 1 if check and stale else 0


if __name__ == '__main__':
    sys.exit(main())
