#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# json-doc-check.py - checks kmemtrace-report's JSON documents against their contract,
# Documentation/report-json.md, table by table: every key a table's objects have is in the
# first column of the section that documents it, and every key a section documents is in some
# document given (or in ALLOWED_UNSEEN, with the reason it cannot be). Per section, not over the
# whole page, so that a key documented for one table does not excuse it in another.
#
# Usage: json-doc-check.py DOC FILE.json...   prints one line per mismatch; exits 1 if any
import json
import re
import sys

# Keys that only a trace the generator cannot write gives, and why.
ALLOWED_UNSEEN = {
    # file:line come from DWARF (--vmlinux, --ko): a generated trace has no kernel image.
    "file": "DWARF", "line": "DWARF", "alloc_file": "DWARF", "alloc_line": "DWARF",
    "free_file": "DWARF", "free_line": "DWARF",
}
IDENT = r"`([a-z][a-z0-9_]*)`"


def sections(path):
    """[(heading, tables it documents, keys in its tables' first column)]"""
    out = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            head = line[3:].strip()
            if head == "Top level":
                names = ["(top)"]
            elif head.startswith("`--interval"):
                names = ["(interval)"]
            else:
                names = re.findall(r"`([a-z_]+)(?:\[\])?`", head)
            out.append((head, names, set()))
        elif out and line.startswith("| `"):
            out[-1][2].update(re.findall(IDENT, line.split("|")[1]))
    return [s for s in out if s[1]]


def row_keys(v, keys):
    """The keys of a table: an array of objects, or one object."""
    rows = v if isinstance(v, list) else [v]
    for r in rows:
        if isinstance(r, dict):
            keys.update(r)


def emitted(files):
    """{table: keys} over every document."""
    got = {}
    for f in files:
        d = json.load(open(f, encoding="utf-8"))
        if d.get("view") == "interval":
            # One section documents the whole document: its head, intervals[], rows[].
            k = got.setdefault("(interval)", set())
            k.update(d)
            for i in d["intervals"]:
                k.update(i)
                k.update(i["total"])
                row_keys(i["rows"], k)
            continue
        got.setdefault("(top)", set()).update(d)
        for name, v in d.items():
            if isinstance(v, (list, dict)):
                row_keys(v, got.setdefault(name, set()))
    return got


def main():
    secs = sections(sys.argv[1])
    got = emitted(sys.argv[2:])
    where = {n: s for s in secs for n in s[1]}
    bad = []
    for table, keys in sorted(got.items()):
        if table not in where:
            bad.append(f"{table}: a table the document has and no section documents")
            continue
        for k in sorted(keys - where[table][2]):
            bad.append(f"{table}: key '{k}' is not in section '{where[table][0]}'")
    for head, names, keys in secs:
        seen = set().union(*(got.get(n, set()) for n in names))
        if not seen:
            bad.append(f"section '{head}': none of its tables is in the documents")
            continue
        for k in sorted(keys - seen - set(ALLOWED_UNSEEN)):
            bad.append(f"section '{head}': documents key '{k}', which no document has")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
