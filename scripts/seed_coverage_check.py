#!/usr/bin/python3
"""Check docs/seed-coverage.md: the summary's totals match the rows, every
row has a known status, and every test a DONE row names exists (a ctest name
given on the command line's list file, or a cmocka test function)."""
import glob
import re
import sys

STATUSES = ("DONE", "DIFFERENT", "NOT APPLICABLE", "NOT DONE")


def main(doc, ctest_list, tests_dir):
    text = open(doc).read()
    rows = re.findall(r"^\| [A-Z0-9]+-\d+ \| .* \| \*\*([A-Z ]+)\*\* \| (.*) \|$", text, re.M)
    count = {s: 0 for s in STATUSES}
    for status, _ in rows:
        if status not in count:
            sys.exit(f"unknown status {status!r}")
        count[status] += 1
    m = re.search(r"^\| \*\*all\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \([^)]*\) \| (\d+) \| (\d+) \| (\d+) \|$",
                  text, re.M)
    if not m:
        sys.exit("no summary row")
    want = tuple(int(x) for x in m.groups())
    got = (len(rows), count["DONE"], count["DIFFERENT"], count["NOT APPLICABLE"], count["NOT DONE"])
    if want != got:
        sys.exit(f"summary says {want}, rows give {got}")
    ctests = set(open(ctest_list).read().split())
    sources = "".join(open(f).read() for f in glob.glob(f"{tests_dir}/*.c"))
    for status, pin in rows:
        if status != "DONE":
            continue
        for name in re.findall(r"`((?:test|seed|cli)_[a-z0-9_]+)`", pin):
            if name not in ctests and f"static void {name}(" not in sources:
                sys.exit(f"row cites {name}, which is neither a ctest nor a test function")
        for case in re.findall(r"golden `([a-z0-9_]+)`", pin):
            if f"golden_{case}" not in ctests:
                sys.exit(f"row cites golden {case}, which has no ctest")
    print(f"{len(rows)} rows, {count['DONE']} DONE: summary and citations consistent")


if __name__ == "__main__":
    main(*sys.argv[1:4])
