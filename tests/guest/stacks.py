#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# stacks.py - judge of 48-stacks.t: kernel stacks (trace format 1.2) in kmemtraced's cpuN.out files.
"""Usage (each command prints CHECK<TAB>name<TAB>got<TAB>want and INFO<TAB>text lines for
tap_checks in tests/guest/lib.sh):

  stacks.py chain DIR EXPECTED    the oracle's stacks pattern (EXPECTED: its stacks_expected
                                  file) in the trace DIR: each chain operation's events carry
                                  one stack, its frames from the call site on name the chain in
                                  order, with the oracle's exact counts; the page allocations
                                  and frees of its large objects too; the recursion gives one
                                  stack per depth
  stacks.py stream DIR FREES      every stack record and stack id of DIR is well formed: a
                                  stack is whole and earlier in its CPU's file than the events
                                  that use it; each allocation (and free when FREES is 1) has
                                  a stack or KMT_F_NO_STACK, other events neither; no stack
                                  holds a frame of the tracer; a slab event's stack starts at
                                  its call site; page allocations carry their migratetype
  stacks.py bulk DIR EXPECTED     the oracle's bulk pattern (EXPECTED: its bulk_expected file),
                                  recorded through kprobes: each bulk function's events carry a
                                  stack that starts at their call site in that function
  stacks.py report EXPECTED JSON FOLDED [NOSTACK]
                                  kmemtrace-report --stacks --json (JSON) and --folded (FOLDED)
                                  of the chain's trace: the chain's stacks with the oracle's
                                  exact counts, their frees by stack (stack_frees=1) too,
                                  one folded line per recursion depth; every
                                  allocation has a stack but, when the nostack pattern ran too
                                  (NOSTACK: its nostack_expected file), its away and far
                                  allocations, each marked KMT_F_NO_STACK
  stacks.py foreign DIR EXPECTED [TEXT]
                                  the oracle's nostack pattern (EXPECTED: its nostack_expected
                                  file): home's allocations carry a stack from their call site
                                  on; away's, which name home's call site while it is on no
                                  stack, exactly as many as the oracle made, carry
                                  KMT_F_NO_STACK and stack id 0 (the walk cache, which knows
                                  home's walk under that call site, never gives them one); so
                                  do far's, whose call site is on the stack but further out
                                  than the frames taken, while near's, one level out, have a
                                  stack from it on; the module's no_stack_unwind grew by at
                                  least away's and far's on their CPUs; every kfree() of
                                  theirs carries a stack when asked.
                                  TEXT: the text report of DIR, where no other allocation
                                  lacks a stack: it says that many events without a stack,
                                  all marked
  stacks.py knew BEFORE AFTER EXPECTED
                                  BEFORE, AFTER: copies of <debugfs>/kmemtrace/stacks around
                                  the nostack pattern (EXPECTED: its nostack_expected file),
                                  with the walk cache on and stack_check 0: the cache was in
                                  use then (it knew at least half as many stacks as home made
                                  allocations; the counters are per CPU, not per call site, so
                                  this does not prove home's own were among them) and never
                                  disagreed
  stacks.py nostack DIR JSON TEXT the report of DIR (JSON: --json, TEXT: the text report) says
                                  exactly as many allocations without a stack as the module
                                  counted (stack_frees off: only allocations are asked), with
                                  the uncounted duplicate events of large kmallocs apart
  stacks.py account DIR [FULL|lossy|cached]
                                  per CPU, the stream against the module's counters, which
                                  kmemtraced copied into DIR/kmemtrace.meta at the start and
                                  the end (stacks_start / stacks_end lines); with FULL, the
                                  table (stack_entries FULL) overflowed: every entry in use;
                                  with lossy, the buffers were too small: records and stacks
                                  were dropped, a stack cut short only by a LOST record;
                                  without loss, stacks unwound and known to the walk cache add
                                  up to the stacks asked for, and the cache never disagreed;
                                  with cached, it knew some of them
  stacks.py cache STACKS CHECK    STACKS: a copy of <debugfs>/kmemtrace/stacks after a run with
                                  the walk cache on and stack_check CHECK (0 or 1): the cache
                                  knew stacks and never disagreed with the unwinder

Symbols come from DIR/kallsyms, the guest's /proc/kallsyms that kmemtraced copies.
"""
import bisect
import collections
import os
import struct
import sys

# The traced kernel's byte order (tests/guest/lib.sh exports it: ">" for s390x).
E = os.environ.get("KMT_GUEST_ENDIAN", "<")

REC = 64
KMALLOC, CACHE_ALLOC, PAGE_ALLOC, KFREE, CACHE_FREE, PAGE_FREE, DESC, LOST, STACK = range(1, 10)
ALLOCS = (KMALLOC, CACHE_ALLOC, PAGE_ALLOC)
FREES = (KFREE, CACHE_FREE, PAGE_FREE)
SLAB = (KMALLOC, CACHE_ALLOC, KFREE, CACHE_FREE)
F_PROBED = 0x10
F_NO_STACK = 0x20
PAGE_MT_VALID = 0x100
SLOT_FRAMES = 5

# The tracer's frames: the kernel's tracepoint, kprobe and unwinder machinery, and kmemtrace.ko's
# probe side. kmemtrace.ko's other functions (writing "enabled", reading a buffer) are callers
# of the allocator like any other.
TRACER_PREFIXES = ("__traceiter_", "__SCT__", "stack_trace_save", "arch_stack_walk",
                   "kprobe_", "__kprobe", "kretprobe_", "__kretprobe", "trampoline_handler")
# kmt_stack itself, and its helpers kmt_stack_*: not kmt_stacks_open, which reading the stacks
# file calls, and whose allocation is an event like any other.
PROBE_NAMES = ("kmt_stack",)
PROBE_PREFIXES = ("kmt_record", "kmt_tp_", "kmt_on_", "kmt_take_stack", "kmt_stack_",
                  "kmt_write_stack", "kmt_alloc_bulk_", "kmt_free_bulk_pre", "kmt_kmalloc_nolock_",
                  "kmt_kfree_nolock_", "kmt_kfree_rcu_sheaf_")
# The walk cache keys on x86-64's ORC unwinder: another arch's guest has none (lib.sh says).
WALK_CACHE = os.environ.get("KMT_GUEST_WALK_CACHE", "1") == "1"
# An interrupt or exception entry: the frames beyond it are the interrupted context's, which may
# be a probe that the interrupt arrived in (before or after its interrupts-off part).
# x86-64's entry stubs are asm_*, i386's handle_exception; arm64's from kernel mode el1h_64_*
# (el1h_64_irq, _sync, _fiq); s390's ext_int_handler, io_int_handler, mcck_int_handler and
# pgm_check_handler (its exceptions: a page fault in copy_to_user, say).
ENTRY_PREFIX = ("asm_", "handle_exception", "el1h_64_", "ext_int_handler", "io_int_handler",
                "mcck_int_handler", "pgm_check_handler")


def check(name, got, want):
    clean = lambda v: (str(v).replace("\t", " ") or "-")
    print("CHECK\t%s\t%s\t%s" % (clean(name), clean(got), clean(want)))


def info(text):
    print("INFO\t%s" % (str(text).replace("\t", " ") or "-"))


class Event:
    __slots__ = ("type", "flags", "cpu", "seq", "ts", "call_site", "ptr", "cache_id",
                 "bytes_req", "bytes_alloc", "stack_id", "frames")


class Cpu:
    """One cpuN.out: its events, its stacks (id -> frames as last defined) and defects."""

    def __init__(self, path):
        self.events = []
        self.stack_defs = 0          # whole stacks written
        self.partial = 0             # stacks cut short by a LOST record
        self.ids = set()
        self.defects = []
        with open(path, "rb") as f:
            head = f.read(REC)
            data = f.read()
        magic, major, minor = struct.unpack_from(E + "IHH", head)
        if magic != 0x52544d4b or (major, minor) < (1, 2):
            self.defects.append("%s: header %#x %d.%d, not a 1.2 trace" %
                                (path, magic, major, minor))
        data = data[:len(data) - len(data) % REC]
        stacks = {}
        part = None                  # (id, depth, frames so far) of a stack being read
        for off in range(0, len(data), REC):
            rec = data[off:off + REC]
            t, flags, cpu, seq, ts = struct.unpack_from(E + "BBHIQ", rec)
            if part is not None and t != STACK:
                # Its remaining slots were dropped: a LOST record says so, nothing else may.
                if t == LOST:
                    self.partial += 1
                else:
                    self.defects.append("seq %d: stack %d cut short by a record of type %d" %
                                        (seq, part[0], t))
                part = None
            if t == STACK:
                sid, depth, first, nf = struct.unpack_from(E + "HBBB", rec, 16)
                frames = struct.unpack_from(E + "5Q", rec, 24)
                ok = 1 <= nf <= SLOT_FRAMES and first + nf <= depth and sid and \
                    all(x == 0 for x in frames[nf:])
                if not ok:
                    self.defects.append("seq %d: malformed stack slot" % seq)
                    part = None
                    continue
                if first == 0:
                    if part is not None:
                        self.defects.append("seq %d: stack %d cut short by another stack" %
                                            (seq, part[0]))
                    part = (sid, depth, list(frames[:nf]))
                elif part is None or part[0] != sid or part[1] != depth or \
                        len(part[2]) != first:
                    self.defects.append("seq %d: stack %d slot at %d out of order" %
                                        (seq, sid, first))
                    part = None
                    continue
                else:
                    part[2].extend(frames[:nf])
                if len(part[2]) == part[1]:
                    stacks[sid] = tuple(part[2])
                    self.ids.add(sid)
                    self.stack_defs += 1
                    part = None
            elif t in ALLOCS + FREES:
                e = Event()
                e.type, e.flags, e.cpu, e.seq, e.ts = t, flags, cpu, seq, ts
                (e.call_site, e.ptr, e.cache_id, e.bytes_req, e.bytes_alloc,
                 e.stack_id) = struct.unpack_from(E + "QQQII", rec, 16) + \
                    struct.unpack_from(E + "H", rec, 62)
                e.frames = stacks.get(e.stack_id) if e.stack_id else None
                if e.stack_id and e.frames is None:
                    self.defects.append("seq %d: stack id %d used before it was written" %
                                        (seq, e.stack_id))
                self.events.append(e)
        self.lost = sum(1 for off in range(0, len(data), REC) if data[off] == LOST)


def load(d):
    cpus = {}
    for name in sorted(os.listdir(d)):
        if name.startswith("cpu") and name.endswith(".out"):
            cpus[int(name[3:-4])] = Cpu(os.path.join(d, name))
    return cpus


class Syms:
    """Text symbols of a /proc/kallsyms copy: the function (and module) of an address."""

    def __init__(self, path):
        syms = []
        for line in open(path):
            f = line.split()
            if len(f) >= 3 and f[1] in "tTwW":
                mod = f[3].strip("[]") if len(f) > 3 else ""
                syms.append((int(f[0], 16), f[2], mod))
        syms.sort()
        self.syms = syms
        self.addrs = [s[0] for s in syms]

    def __call__(self, addr):
        """(function, module) of a return address: the call lies just before it."""
        i = bisect.bisect_right(self.addrs, addr - 1) - 1
        if i < 0:
            return ("?", "")
        return self.syms[i][1:]


def is_tracer(sym):
    name, mod = sym
    return (mod == "kmemtrace" and (name.startswith(PROBE_PREFIXES) or name in PROBE_NAMES)) or \
        name.startswith(TRACER_PREFIXES)


def tracer_frames(frames, syms):
    """(tracer frames of the event itself, tracer frames of an interrupted context)."""
    own, beyond, entry = [], [], False
    for a in frames:
        s = syms(a)
        entry = entry or s[0].startswith(ENTRY_PREFIX)
        if is_tracer(s):
            (beyond if entry else own).append("%s [%s]" % s)
    return own, beyond


def parse_expected(path):
    exp, done, failed = {}, {}, {}
    for line in open(path):
        k, _, v = line.rstrip("\n").partition(" ")
        if k in ("done", "failed"):
            op, c = v.split()
            (done if k == "done" else failed)[op] = int(c)
        else:
            exp[k] = v
    return exp, done, failed


def cmd_stream(d, frees):
    cpus = load(d)
    syms = Syms(os.path.join(d, "kallsyms"))
    check("the trace has cpuN.out files", len(cpus) > 0, True)
    defects = [x for c in cpus.values() for x in c.defects]
    for x in defects[:5]:
        info(x)
    check("stack records well formed, each written before its first use", len(defects), 0)
    wrong_flag, tracer, not_at_site, bad_mt, pages = 0, collections.Counter(), 0, 0, 0
    interrupted = 0
    nstack = nnone = 0
    for c in cpus.values():
        for e in c.events:
            want = e.type in ALLOCS or (frees and e.type in FREES)
            has = e.stack_id != 0
            none = bool(e.flags & F_NO_STACK)
            if (has or none) != want or (has and none):
                wrong_flag += 1
            nstack += has
            nnone += none
            if e.frames:
                own, beyond = tracer_frames(e.frames, syms)
                tracer.update(own)
                interrupted += bool(beyond)
                if e.type in SLAB and e.frames[0] != e.call_site:
                    not_at_site += 1
            if e.type == PAGE_ALLOC:
                pages += 1
                if not (e.cache_id & PAGE_MT_VALID) or e.cache_id & ~0x1ff or \
                        (e.cache_id & 0xff) > 7:
                    bad_mt += 1
    info("%d events with a stack, %d without (KMT_F_NO_STACK), %d page allocations" %
         (nstack, nnone, pages))
    check("events with a stack", nstack > 0, True)
    check("every allocation%s has a stack id or KMT_F_NO_STACK, other events neither" %
          (" and free" if frees else ""), wrong_flag, 0)
    for name, cnt in tracer.most_common(5):
        info("tracer frame %s in %d stacks" % (name, cnt))
    check("no stack holds a frame of the tracer (kmemtrace.ko's probes, tracepoint iterators, "
          "kprobes, the unwinder)", sum(tracer.values()), 0)
    info("%d events in an interrupt that arrived while a probe ran (its frames beyond the "
         "interrupt entry)" % interrupted)
    check("a slab event's stack starts at its call site", not_at_site, 0)
    check("page allocations: cache_id is KMT_PAGE_MT_VALID | a migratetype", bad_mt, 0)


def frame_funcs(frames, syms):
    return [syms(a)[0] for a in frames]


def cmd_chain(d, expected):
    cpus = load(d)
    syms = Syms(os.path.join(d, "kallsyms"))
    exp, done, failed = parse_expected(expected)
    chain = exp["chain"].split()
    size, large = int(exp["stack_size"]), int(exp["stack_large_size"])
    events = [e for c in cpus.values() for e in c.events]
    check("the oracle ran once, with no failed allocation",
          (exp["stacks_runs"], sum(failed.values())), ("1", 0))
    check("no records lost", sum(c.lost for c in cpus.values()), 0)

    # The chain's slab events: their stacks from the call site on name the chain.
    def on_chain(e):
        return e.frames is not None and len(e.frames) >= len(chain) and \
            frame_funcs(e.frames[:len(chain)], syms) == chain
    in_c = [e for e in events if e.type in SLAB and syms(e.call_site)[0] == chain[0]]
    check("every slab event at a call site in %s has a stack" % chain[0],
          sum(1 for e in in_c if not e.frames), 0)
    small_ptrs = {e.ptr for e in in_c if e.type == KMALLOC and e.bytes_req == size}
    large_ptrs = {e.ptr for e in in_c if e.type == KMALLOC and e.bytes_req == large}
    ops = {
        "chain_kmalloc": lambda e: e.type == KMALLOC and e.bytes_req == size,
        "chain_cache_alloc": lambda e: e.type == CACHE_ALLOC,
        "chain_kfree": lambda e: e.type == KFREE and e.ptr in small_ptrs,
        "chain_cache_free": lambda e: e.type == CACHE_FREE,
        "chain_large_alloc": lambda e: e.type == KMALLOC and e.bytes_req == large,
        "chain_large_free": lambda e: e.type == KFREE and e.ptr in large_ptrs,
    }
    sites = {}
    for op, match in ops.items():
        evs = [e for e in in_c if match(e)]
        check("%s: events whose stack is %s, from the call site on" % (op, " <- ".join(chain)),
              sum(1 for e in evs if on_chain(e)), done[op])
        check("%s: every such event in one distinct stack" % op,
              len({e.frames for e in evs}), 1)
        sites[op] = {e.call_site for e in evs}
        if evs and evs[0].frames:
            info("%s: %s" % (op, " <- ".join(frame_funcs(evs[0].frames, syms)[:8])))

    # Page events of the large objects: the chain further out, after the page allocator's
    # frames; the frame in chain[0] is the kmalloc's (kfree's) own call site.
    def through(e, site_set):
        f = e.frames or ()
        for i in range(len(f) - 2):
            if f[i] in site_set and frame_funcs(f[i + 1:i + len(chain)], syms) == chain[1:]:
                return True
        return False
    # Only blocks of the large objects' size. Seen once on 7.3: 32 page frees through the
    # large kfree's stack for 16 objects; an interrupt taken inside kfree (an RCU batch, say)
    # that frees pages has the interrupted frames, the chain among them, beyond its own.
    block = {e.bytes_alloc for e in events if e.type == KMALLOC and e.bytes_req == large}
    palloc = [e for e in events if e.type == PAGE_ALLOC and e.bytes_alloc in block and
              through(e, sites["chain_large_alloc"])]
    pfree = [e for e in events if e.type == PAGE_FREE and e.bytes_alloc in block and
             through(e, sites["chain_large_free"])]
    others = collections.Counter(e.bytes_alloc for e in events if e.type == PAGE_FREE and
                                 e.bytes_alloc not in block and
                                 through(e, sites["chain_large_free"]))
    if others:
        info("other page frees through the large kfree's stack, by bytes: %s" %
             ", ".join("%d x %d" % (n, b) for b, n in sorted(others.items())))
    check("page allocations whose stack passes the large kmalloc's call site and the chain",
          len(palloc), done["chain_large_alloc"])
    check("page frees whose stack passes the large kfree's call site and the chain",
          len(pfree), done["chain_large_free"])
    check("those page allocations: migratetype MIGRATE_UNMOVABLE (0) of GFP_KERNEL",
          sorted({e.cache_id for e in palloc}), [PAGE_MT_VALID])
    starts = collections.Counter(syms(e.frames[0])[0] for e in palloc + pfree if e.frames)
    info("page event stacks start in: %s" % ", ".join("%s (%d)" % kv for kv in starts.items()))
    check("their stacks start outside the tracer", sum(is_tracer(syms(e.frames[0]))
                                                       for e in palloc + pfree), 0)

    # The recursion: one stack per depth k, with k + 1 frames of recurse_fn after the leaf.
    leaf, rfn, m = exp["recurse_leaf"], exp["recurse_fn"], int(exp["recurse"])
    rec = [e for e in events if e.type in (KMALLOC, KFREE) and syms(e.call_site)[0] == leaf]
    for typ, op in ((KMALLOC, "recurse_alloc"), (KFREE, "recurse_free")):
        evs = [e for e in rec if e.type == typ]
        check("%s: events at %s's call site with a stack" % (op, leaf),
              sum(1 for e in evs if e.frames), done[op])
        levels = collections.Counter()
        for e in evs:
            if not e.frames:
                continue
            f = frame_funcs(e.frames, syms)
            k = 0
            while 1 + k < len(f) and f[1 + k] == rfn:
                k += 1
            if 1 + k < len(f) and f[1 + k] == chain[-1]:
                levels[k] += 1
        check("%s: one stack per depth, %s nested 2..%d times, then %s" % (op, rfn, m + 1,
                                                                           chain[-1]),
              sorted(levels.items()), [(k + 1, 1) for k in range(1, m + 1)])
        check("%s: %d distinct stacks" % (op, m), len({e.frames for e in evs if e.frames}), m)


def cmd_bulk(d, expected):
    cpus = load(d)
    syms = Syms(os.path.join(d, "kallsyms"))
    _, done, failed = parse_expected(expected)
    events = [e for c in cpus.values() for e in c.events if e.flags & F_PROBED]
    for func in ("oracle_bulk_alloc", "oracle_bulk_free", "oracle_single_bulk_free",
                 "oracle_kfree_bulk"):
        evs = [e for e in events if syms(e.call_site)[0] == func]
        good = [e for e in evs if e.frames and e.frames[0] == e.call_site]
        check("%s (kprobe): events with a stack from their call site on" % func,
              (len(good), len(evs)), (done[func], done[func]))
        if good:
            info("%s: %s" % (func, " <- ".join(frame_funcs(good[0].frames, syms)[:6])))


def cmd_report(expected, json_path, folded_path, nostack=None):
    import json
    exp, done, _ = parse_expected(expected)
    chain = exp["chain"].split()
    rep = json.load(open(json_path))
    tot = rep["totals"]
    ns = parse_expected(nostack)[1] if nostack else {}
    away = ns.get("away_alloc", 0) + ns.get("far_alloc", 0)
    check("report: every allocation has a stack but the nostack pattern's %d away and far ones, "
          "which the module marked (allocs - stack_allocs, events_without_stack, "
          "no_stack_allocs)" % away, (tot["allocs"] - tot["stack_allocs"],
                                      tot["events_without_stack"], tot["no_stack_allocs"]),
          (away, away, away))
    fn = lambda frame: frame.split("+")[0].split(" ")[0]
    ours = [st for st in rep["stacks"] if [fn(f) for f in st["frames"][:len(chain)]] == chain]
    allocs = ("chain_kmalloc", "chain_cache_alloc", "chain_large_alloc")
    check("report --stacks: the chain's stacks, allocations each (%s)" % ", ".join(allocs),
          sorted(st["hits"] for st in ours), sorted(done[op] for op in allocs))
    check("report --stacks: frees of their objects, and none outstanding",
          sorted((st["frees"], st["outstanding"]) for st in ours),
          sorted((done[op], 0) for op in ("chain_kfree", "chain_cache_free", "chain_large_free")))
    # Frees by stack (stack_frees=1): who frees the chain's objects, through the chain.
    frees = ("chain_kfree", "chain_cache_free", "chain_large_free")
    fours = [st for st in rep.get("stacks_frees", [])
             if [fn(f) for f in st["frames"][:len(chain)]] == chain]
    check("report --stacks: frees by stack, the chain's free stacks, frees each (%s)" %
          ", ".join(frees), (tot["has_free_stacks"], sorted(st["frees"] for st in fours)),
          (True, sorted(done[op] for op in frees)))
    check("report --stacks: frees by stack, every object they free allocated in the trace, "
          "as many bytes as the chain's allocation stacks allocated",
          ([st["frees_no_alloc"] for st in fours], sum(st["bytes_freed"] for st in fours)),
          ([0] * len(fours), sum(st["bytes_alloc"] for st in ours)))
    # 6.12 and 7.3 trace a large kmalloc twice, first from inside kmalloc (a stack of
    # __kmalloc_noprof, then the chain): counted once, that stack not at all.
    def via(fr):
        k = next((k for k in range(len(fr)) if [fn(f) for f in fr[k:k + len(chain)]] == chain),
                 None)
        return k is not None and all("kmalloc" in fn(f) for f in fr[:k])
    check("report --stacks: allocations through the chain, allocator frames before it or not,"
          " each counted once (%d large kmallocs traced twice)" % tot["kmalloc_duplicate_events"],
          sum(st["hits"] for st in rep["stacks"] if via(st["frames"])),
          sum(done[op] for op in allocs))
    leaf, rfn, m = exp["recurse_leaf"], exp["recurse_fn"], int(exp["recurse"])
    rec = [st for st in rep["stacks"] if st["frames"] and fn(st["frames"][0]) == leaf]
    check("report --stacks: one stack per recursion depth, one allocation each",
          sorted(st["hits"] for st in rec), [1] * m)

    # --folded: root first, "function_[module]" frames, offsets merged: the three allocating
    # operations of the chain are one line.
    lines = [l.rsplit(" ", 1) for l in open(folded_path).read().splitlines() if l.strip()]
    bare = lambda frame: frame.split("_[")[0]
    tails = [(l[0].split(";"), int(l[1])) for l in lines]
    on_chain = [c for f, c in tails if [bare(x) for x in f[-len(chain):]] == chain[::-1]]
    check("report --folded: the chain on one line with the oracle's allocations",
          on_chain, [sum(done[op] for op in allocs)])
    depths = sorted(sum(1 for x in f if bare(x) == rfn) for f, c in tails
                    if bare(f[-1]) == leaf and c == 1)
    check("report --folded: one line per recursion depth, count 1, %s %d..%d times" %
          (rfn, 2, m + 1), depths, list(range(2, m + 2)))


def cmd_nostack(d, json_path, text_path):
    import json
    ctr = meta_counters(d)
    want = sum(ctr["end"][c][i] - ctr["start"][c][i] for c in ctr["end"] for i in (1, 2))
    tot = json.load(open(json_path))["totals"]
    # A large kmalloc traced twice (6.12, 7.3) counts once; its uncounted first event, when
    # marked, is counted apart, and the module's count holds it.
    dup = tot["kmalloc_duplicates_without_stack"]
    check("report JSON: allocations without a stack + duplicate events without one = the "
          "module's no_stack counts (%d duplicates)" % dup,
          (tot["no_stack_allocs"] + dup, tot["events_without_stack"] + dup), (want, want))
    text = open(text_path).read()
    check("report text: says \"%d events without a stack\"" % (want - dup),
          ("%d events without a stack" % (want - dup)) in text, True)
    check("report text: and the duplicate kmalloc events without one, if any",
          ("and %d duplicate kmalloc events without one" % dup) in text, dup > 0)


def cmd_foreign(d, expected, text_path=None):
    cpus = load(d)
    syms = Syms(os.path.join(d, "kallsyms"))
    ctr = meta_counters(d)
    exp, done, failed = parse_expected(expected)
    site_fn, away_fn, run_fn = exp["site_fn"], exp["away_fn"], exp["run_fn"]
    reach_fn, down_fn = exp["reach_fn"], exp["down_fn"]
    size, rounds = int(exp["size"]), int(exp["rounds"])
    ops = ("home", "away", "near", "far")
    check("nostack: the oracle made its rounds, each allocation succeeded (%s, failed)" %
          ", ".join(ops), [done[op + "_alloc"] for op in ops] + [sum(failed.values())],
          [rounds] * len(ops) + [0])
    marked = done["away_alloc"] + done["far_alloc"]

    def from_site(e, then=None):
        """A stack from the event's call site on (and then through function THEN)."""
        f = e.frames or ()
        return len(f) > 1 and f[0] == e.call_site and not e.flags & F_NO_STACK and \
            (then is None or syms(f[1])[0] == then)

    allocs = collections.defaultdict(list)     # function of the call site -> allocations
    frees = collections.Counter()
    none = collections.Counter()
    for cpu, c in sorted(cpus.items()):
        for e in c.events:
            fn = syms(e.call_site)[0]
            if e.type == KFREE and fn in (site_fn, away_fn, down_fn):
                frees[fn, "all"] += 1
                frees[fn, "stack"] += from_site(e)
            if e.type != KMALLOC or fn not in (site_fn, reach_fn):
                continue
            allocs[fn].append(e)
            if e.flags & F_NO_STACK and not e.stack_id:
                none[cpu] += 1
    for fn, a, b in ((site_fn, "home", "away"), (reach_fn, "near", "far")):
        evs = allocs[fn]
        # One call site for both is what the walk cache test needs (it keys on the call
        # site); where there is no walk cache the compiler may make two (s390x's gcc does).
        sites = len({e.call_site for e in evs})
        check("nostack: allocations in %s: %s's and %s's, of %d bytes, at %s" %
              (fn, a, b, size, "one call site" if WALK_CACHE else "its call sites"),
              (len(evs), sorted({e.bytes_req for e in evs}), sites if WALK_CACHE else 0),
              (done[a + "_alloc"] + done[b + "_alloc"], [size], 1 if WALK_CACHE else 0))
        if not WALK_CACHE:
            info("nostack: %s's allocations at %d call site(s)" % (fn, sites))
        check("nostack: %s's allocations, with a stack from the call site on, <- %s" %
              (a, run_fn), sum(1 for e in evs if from_site(e, run_fn)), done[a + "_alloc"])
        check("nostack: %s's allocations: KMT_F_NO_STACK and stack id 0" % b,
              sum(1 for e in evs if e.flags & F_NO_STACK and not e.stack_id),
              done[b + "_alloc"])
    unwind = 0
    for cpu, k in sorted(none.items()):
        s, e = ctr["start"].get(cpu), ctr["end"].get(cpu)
        grew = e[2] - s[2] if s and e else None
        check("cpu%d: no_stack_unwind grew by at least its %d away and far allocations" %
              (cpu, k), grew is not None and grew >= k, True)
        unwind += grew or 0
    info("away and far allocations by CPU: %s; no_stack_unwind grew by %d there" %
         (", ".join("cpu%d %d" % kv for kv in sorted(none.items())), unwind))
    check("nostack: no_stack_unwind grew by at least %d on those CPUs" % marked,
          unwind >= marked, True)
    want = (done["home_free"], done["away_free"], done["near_free"] + done["far_free"])
    check("nostack: kfree()s in %s, %s and %s" % (site_fn, away_fn, down_fn),
          tuple(frees[fn, "all"] for fn in (site_fn, away_fn, down_fn)), want)
    if stack_frees(d):
        check("nostack: each of those kfree()s has a stack from its call site on",
              tuple(frees[fn, "stack"] for fn in (site_fn, away_fn, down_fn)), want)
    if text_path:
        text = open(text_path).read()
        said = ["%d events without a stack" % marked, "(%d marked," % marked]
        check("report text: says \"%s\" and \"%s\"" % tuple(said),
              [x in text for x in said], [True, True])


def meta_counters(d):
    """{"start"|"end": {cpu: [with, full, unwind, written, dropped, used]}} from the meta."""
    out = {"start": {}, "end": {}}
    for line in open(os.path.join(d, "kmemtrace.meta")):
        w = line.split()
        # Six counters, then the walk cache's three (walked, cached, check_failed).
        if len(w) >= 8 and w[0] in ("stacks_start", "stacks_end"):
            out[w[0][7:]][int(w[1])] = [int(x) for x in w[2:]]
    return out


def cmd_account(d, full=None):
    """FULL: the table's size, or "lossy": buffers too small, records were dropped."""
    lossy = full == "lossy"
    want_cached = full == "cached"
    if lossy or want_cached:
        full = None
    cached = 0
    cpus = load(d)
    ctr = meta_counters(d)
    check("kmemtrace.meta has the stack counters of the start and the end",
          (len(ctr["start"]) > 0, len(ctr["end"]) > 0), (True, True))
    if lossy:
        check("records were lost (LOST records)", sum(c.lost for c in cpus.values()) > 0, True)
    else:
        check("no records lost", sum(c.lost for c in cpus.values()), 0)
    dropped = partial = 0
    for cpu, c in sorted(cpus.items()):
        s, e = ctr["start"].get(cpu), ctr["end"].get(cpu)
        if s is None or e is None:
            check("cpu%d: counters in the meta" % cpu, False, True)
            continue
        dw, dfull, dunw, dwritten, ddropped = (e[i] - s[i] for i in range(5))
        used = e[5]
        nstack = sum(1 for x in c.events if x.stack_id)
        nnone = sum(1 for x in c.events if x.flags & F_NO_STACK)
        check("cpu%d: events with a stack = with_stack" % cpu, nstack, dw)
        check("cpu%d: events with KMT_F_NO_STACK = no_stack_full + no_stack_unwind" % cpu,
              nnone, dfull + dunw)
        check("cpu%d: whole stacks in the file = stacks_written" % cpu, c.stack_defs, dwritten)
        dropped += ddropped
        partial += c.partial
        if lossy:
            check("cpu%d: stacks cut short by a LOST record <= stacks_dropped" % cpu,
                  c.partial <= ddropped, True)
            continue
        check("cpu%d: no stack dropped" % cpu, ddropped, 0)
        if len(e) >= 9:
            dwalked, dcached, dfailed = (e[i] - s[i] for i in range(6, 9))
            asked = dw + dfull + dunw
            if stack_check(d):
                check("cpu%d: stack_check: every stack asked for was unwound" % cpu,
                      dwalked, asked)
            else:
                check("cpu%d: stacks asked for = unwound + known to the walk cache" % cpu,
                      dwalked + dcached, asked)
            check("cpu%d: the walk cache never disagreed with the unwinder" % cpu, dfailed, 0)
            info("cpu%d: %d stacks unwound, %d known to the walk cache" % (cpu, dwalked, dcached))
            cached += dcached
        check("cpu%d: distinct stack ids in the file = entries in use" % cpu, len(c.ids), used)
        check("cpu%d: each entry written once (one reader): stacks_written = entries in use" %
              cpu, dwritten, used)
        if full is not None:
            check("cpu%d: the table is full (stack_entries %s)" % (cpu, full), used, int(full))
            check("cpu%d: events found it full" % cpu, dfull > 0, True)
            info("cpu%d: %d events with a stack, %d without (table full %d, no frames %d)" %
                 (cpu, nstack, nnone, dfull, dunw))
    if want_cached and WALK_CACHE:
        check("the walk cache knew some of the stacks", cached > 0, True)
    elif want_cached:
        check("no walk cache on this arch: every stack unwound", cached, 0)
    if lossy:
        info("%d stacks dropped, %d of them cut short in the files" % (dropped, partial))
        check("stacks were dropped with the buffers full", dropped > 0, True)


def stacks_config(d, key):
    """Whether the trace in D was taken with KEY 1 (its stacks_config line says)."""
    for line in open(os.path.join(d, "kmemtrace.meta")):
        w = line.split()
        if w and w[0] == "stacks_config":
            return key in w and w[w.index(key) + 1] == "1"
    return False


def stack_check(d):
    """Whether the trace in D was taken with stack_check=1."""
    return stacks_config(d, "check")


def stack_frees(d):
    """Whether the trace in D was taken with stack_frees=1."""
    return stacks_config(d, "frees")


def cmd_cache(path, want_check):
    """PATH: a copy of <debugfs>/kmemtrace/stacks after a run with the walk cache on."""
    lines = open(path).read().splitlines()
    head = lines[0].split() if lines else []
    conf = dict(zip(head[2::2], head[3::2]))
    if not WALK_CACHE:
        # The module turns stack_cache (and with it stack_check) off where it cannot work.
        check("stacks file: no walk cache on this arch (cache 0 check 0)",
              (conf.get("cache"), conf.get("check")), ("0", "0"))
    else:
        check("stacks file: the walk cache is on (cache N > 0)", int(conf.get("cache", "0")) > 0,
              True)
        check("stacks file: stack_check is %s" % want_check, conf.get("check"), want_check)
    tot = collections.Counter()
    for line in lines[2:]:
        w = [int(x) for x in line.split()]
        cpu, walked, cached, failed = w[0], w[7], w[8], w[9]
        check("cpu%d: the walk cache never disagreed with the unwinder" % cpu, failed, 0)
        tot.update(walked=walked, cached=cached)
    check("the walk cache knew some stacks" if WALK_CACHE else "no walk cache: it knew none",
          tot["cached"] > 0, WALK_CACHE)
    info("%d stacks unwound, %d known to the walk cache" % (tot["walked"], tot["cached"]))


def stacks_file(path):
    """{cpu: [the counters of its line]} of a copy of <debugfs>/kmemtrace/stacks."""
    return {w[0]: w[1:] for w in ([int(x) for x in line.split()]
                                  for line in open(path) if not line.startswith("#"))}


def cmd_knew(before, after, expected):
    """The walk cache around the nostack pattern: in use, never wrong."""
    _, done, _ = parse_expected(expected)
    b, a = stacks_file(before), stacks_file(after)
    # Columns after the CPU: with_stack ... walked (6), cached (7), check_failed (8).
    cached = sum(a[c][7] - b[c][7] for c in a if c in b)
    failed = sum(a[c][8] - b[c][8] for c in a if c in b)
    info("around the nostack pattern: %d stacks known to the walk cache, %d home allocations" %
         (cached, done["home_alloc"]))
    if WALK_CACHE:
        check("nostack: the walk cache knew at least half as many stacks as home's allocations",
              2 * cached >= done["home_alloc"] > 0, True)
    else:
        check("nostack: no walk cache on this arch, so it knew none", cached, 0)
    check("nostack: the walk cache never disagreed", failed, 0)

def main(argv):
    cmds = {"chain": (cmd_chain, 2), "stream": (cmd_stream, 2), "account": (cmd_account, 1),
            "bulk": (cmd_bulk, 2), "report": (cmd_report, 3), "foreign": (cmd_foreign, 2),
            "knew": (cmd_knew, 3),
            "nostack": (cmd_nostack, 3), "cache": (cmd_cache, 2)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 < cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    fn, _ = cmds[argv[1]]
    args = argv[2:]
    if argv[1] == "stream":
        args = [args[0], args[1] == "1"]
    fn(*args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
