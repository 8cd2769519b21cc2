#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# flame-check.py - judge of kmemtrace-report --html's flame graphs, for 45-report-stacks.t and
# 48-stacks.t.
"""Usage: flame-check.py PAGE ID FOLDED

Checks the flame graph <figure id=ID> of the HTML page PAGE against FOLDED, the output of
kmemtrace-report --folded with the same weight for the same trace: each drawn frame is a path
from the root whose weight is the sum of the folded lines through it; it sits inside its
caller's width; and exactly the frames narrower than the page's limit are left out, as many as
the caption says. Prints "same" and a "# ..." line, or what differs (exit 1).
"""
import collections, html, re, sys
page, gid, folded = sys.argv[1], sys.argv[2], sys.argv[3]
W, MIN_PX = 1160, 0.3


def fail(msg):
    print(msg)
    sys.exit(1)


want = collections.Counter()
for line in open(folded):
    path, w = line.rsplit(" ", 1)
    frames = path.split(";")
    for d in range(1, len(frames) + 1):
        want[tuple(frames[:d])] += int(w)
total = sum(w for p, w in want.items() if len(p) == 1)
s = open(page).read()
m = re.search(r'<figure class="flame" id="%s" data-total="(\d+)">(.*?)</figure>' % gid, s, re.S)
if not m:
    fail("no figure %s" % gid)
if int(m.group(1)) != total:
    fail("total %s, folded %d" % (m.group(1), total))
got, stack, bad = {}, [], []
for g in re.finditer(r'<g data-v="(\d+)" data-d="(\d+)"><title>(.*?): \d+ [a-z]+, [0-9.]+%</title>'
                     r'<rect x="([0-9.]+)" y="\d+" width="([0-9.]+)"', m.group(2)):
    v, d, name, x, w = int(g[1]), int(g[2]), html.unescape(g[3]), float(g[4]), float(g[5])
    if d > len(stack):
        fail("%s at depth %d under a frame of depth %d" % (name, d, len(stack) - 1))
    del stack[d:]
    if stack and not (stack[-1][1] - 0.02 <= x and x + w <= stack[-1][1] + stack[-1][2] + 0.02):
        bad.append(name)
    stack.append((name, x, w))
    got[tuple(f[0] for f in stack)] = v
drawn = {p: w for p, w in want.items() if w * W / total >= MIN_PX}
hidden = len(want) - len(drawn)
cap = re.search(r"(\d+) frames narrower than", m.group(2))
if got != drawn:
    diff = [p for p in set(got) | set(drawn) if got.get(p) != drawn.get(p)]
    fail("%d frames differ, e.g. %s: page %s, folded %s" %
         (len(diff), ";".join(diff[0]), got.get(diff[0]), drawn.get(diff[0])))
if (int(cap.group(1)) if cap else 0) != hidden:
    fail("caption says %s hidden, %d are" % (cap.group(1) if cap else 0, hidden))
if bad:
    fail("%d frames outside their caller, e.g. %s" % (len(bad), bad[0]))
print("same\n# %s: %d frames drawn, %d hidden" % (gid, len(got), hidden))
