#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# truth.py - judge of 45-truth.t: kmemtrace's records against ftrace's record of the same calls.
"""Usage (every command prints CHECK<TAB>name<TAB>got<TAB>want and INFO<TAB>text lines for
tap_checks in tests/guest/lib.sh):

  truth.py formats EXPECTED DIR     the tracefs formats in DIR/format/ carry what
                                    kmemtrace records, and equal EXPECTED's table for the
                                    guest's kernel series (DIR/uname, DIR/uname-v)
  truth.py compare DIR PAGE_SIZE    DIR/kmt/cpuN.raw (kmemtrace) against
                                    DIR/ft/cpuN.raw (ftrace's trace_pipe_raw), per CPU
  truth.py wrap DIR PAGE_SIZE       put a trace-format.md file header in front of each
                                    DIR/kmt/cpuN.raw, as DIR/kmt/cpuN.out, for kmemtrace_check

DIR is what the guest script of 45-truth.t left in KMT_OUT.
"""
import bisect
import collections
import difflib
import os
import re
import struct
import sys

# The traced kernel's byte order (tests/guest/lib.sh exports it: ">" for s390x).
E = os.environ.get("KMT_GUEST_ENDIAN", "<")
# And its file-header fields (abi/kmemtrace_abi.h: KMT_BYTE_ORDER_LE 1, _BE 2; pointer bits).
BYTE_ORDER = 2 if E == ">" else 1
ORDER = "big" if E == ">" else "little"
WORD_BITS = int(os.environ.get("KMT_GUEST_WORD_BITS", "64"))

# --- output -------------------------------------------------------------------------------

def check(name, got, want):
    """One test; tap_checks splits on tabs, so no field may be empty or hold a tab."""
    clean = lambda v: (str(v).replace("\t", " ") or "-")
    print("CHECK\t%s\t%s\t%s" % (clean(name), clean(got), clean(want)))


def info(text):
    print("INFO\t%s" % (str(text).replace("\t", " ") or "-"))


# --- tracefs format files -----------------------------------------------------------------

FIELD_RE = re.compile(r"field:(.*?);\s*offset:(\d+);\s*size:(\d+);\s*signed:(\d+);")
DECL_RE = re.compile(r"^(.*?)\s*\b([A-Za-z_]\w*)\s*(\[[^\]]*\])?$")

Field = collections.namedtuple("Field", "type name offset size signed")


def parse_format(path):
    """(name, id, [Field]) of a tracefs events/SYSTEM/EVENT/format file."""
    name, ev_id, fields = None, None, []
    for line in open(path):
        if line.startswith("name:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("ID:"):
            ev_id = int(line.split(":", 1)[1])
        m = FIELD_RE.search(line)
        if m:
            d = DECL_RE.match(m.group(1).strip())
            typ = d.group(1).strip() + (d.group(3) or "")
            fields.append(Field(typ, d.group(2), int(m.group(2)), int(m.group(3)),
                                int(m.group(4)) == 1))
    return name, ev_id, fields


def field_text(f):
    """A field as the expectation table of 45-truth.t writes it: TYPE NAME:OFFSET:SIZE:u|s."""
    return "%s %s:%d:%d:%s" % (f.type, f.name, f.offset, f.size, "s" if f.signed else "u")


# Each event kmemtrace hooks and the fields of it that a kmemtrace record carries, with the
# kind of value kmemtrace stores: "addr" an address-wide field, 64 bits (32 on a 32-bit kernel),
# which the record keeps in 64 (call_site, ptr; pfn, which
# the record keeps in ptr), "uint" an unsigned count kmemtrace keeps in 32 bits (saturated,
# flag CLAMPED) or a 32-bit gfp_t, "sint" the signed 32-bit node.
HOOKED = {
    "kmalloc": [("call_site", "addr"), ("ptr", "addr"), ("bytes_req", "uint"),
                ("bytes_alloc", "uint"), ("gfp_flags", "uint"), ("node", "sint")],
    "kmem_cache_alloc": [("call_site", "addr"), ("ptr", "addr"), ("bytes_req", "uint"),
                         ("bytes_alloc", "uint"), ("gfp_flags", "uint"), ("node", "sint")],
    "kfree": [("call_site", "addr"), ("ptr", "addr")],
    "kmem_cache_free": [("call_site", "addr"), ("ptr", "addr")],
    "mm_page_alloc": [("pfn", "addr"), ("order", "uint"), ("gfp_flags", "uint")],
    "mm_page_free": [("pfn", "addr"), ("order", "uint")],
}


def compatible(f, kind):
    """Why field f cannot hold what kmemtrace records as kind, or None."""
    if kind == "addr":
        if f.size != WORD_BITS // 8 or f.signed or not ("*" in f.type or f.type == "unsigned long"):
            return "%s is '%s' (%d bytes, %s): not a %d-bit address" % (
                f.name, f.type, f.size, "signed" if f.signed else "unsigned", WORD_BITS)
    elif kind == "uint":
        if f.signed or f.size not in (4, 8) or "*" in f.type or "[" in f.type:
            return "%s is '%s' (%d bytes, %s): not an unsigned integer" % (
                f.name, f.type, f.size, "signed" if f.signed else "unsigned")
    elif kind == "sint":
        if not f.signed or f.size not in (4, 8) or "*" in f.type or "[" in f.type:
            return "%s is '%s' (%d bytes, %s): not a signed integer" % (
                f.name, f.type, f.size, "signed" if f.signed else "unsigned")
    return None


def major_minor(release):
    """(MAJOR, MINOR) of a kernel release such as 6.12.117+deb12-amd64, or None."""
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else None


def series_of(release, version, machine="x86_64"):
    """MAJOR.MINOR of the release, with "-rt" for a PREEMPT_RT kernel (whose ftrace entry
    header has one more common field, which moves every other field), and "-MACHINE" for
    another architecture than x86_64 (char is unsigned on aarch64 and s390x; a 32-bit kernel's
    longs and pointers are 4 bytes)."""
    mm = major_minor(release)
    series = "%d.%d" % mm if mm else release
    if "PREEMPT_RT" in version:
        series += "-rt"
    return series if machine == "x86_64" else series + "-" + machine


def read_expected(path):
    """{series: {event: [field text]}} from the table: a line "SERIES[,SERIES...] EVENT"
    starts an entry, indented lines are its fields in order, '#' lines are comments."""
    table, cur = {}, None
    for line in open(path):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            if cur is None:
                raise SystemExit("%s: a field line before any 'SERIES EVENT' line" % path)
            cur.append(line.strip())
        else:
            series, event = line.split()
            cur = []
            for s in series.split(","):
                table.setdefault(s, {})[event] = cur
    return table


def cmd_formats(expected_path, d):
    release = open(os.path.join(d, "uname")).read().strip()
    m_path = os.path.join(d, "uname-m")
    machine = open(m_path).read().strip() if os.path.exists(m_path) else "x86_64"
    series = series_of(release, open(os.path.join(d, "uname-v")).read(), machine)
    info("guest kernel %s: series %s" % (release, series))
    observed = {}
    for event, wanted in HOOKED.items():
        path = os.path.join(d, "format", event)
        if not os.path.exists(path) or not os.path.getsize(path):
            check("format %s: tracefs has the event" % event, "missing", "present")
            continue
        _, _, fields = parse_format(path)
        by_name = {f.name: f for f in fields}
        problems = []
        for fname, kind in wanted:
            f = by_name.get(fname)
            if f is None:
                problems.append("no field %s" % fname)
            else:
                why = compatible(f, kind)
                if why:
                    problems.append(why)
        check("format %s: holds %s with types kmemtrace can record" %
              (event, ", ".join(n for n, _ in wanted)),
              "; ".join(problems) or "ok", "ok")
        # The common fields (ftrace's entry header) once, as the pseudo-event "common".
        observed.setdefault("common", [field_text(f) for f in fields
                                       if f.name.startswith("common_")])
        observed[event] = [field_text(f) for f in fields if not f.name.startswith("common_")]

    # The full field lists, to notice any change of an event kmemtrace hooks.
    table = read_expected(expected_path)
    lines = ["%s %s\n" % (series, ev) + "".join("\t%s\n" % t for t in fl)
             for ev, fl in observed.items()]
    with open(os.path.join(d, "observed-formats"), "w") as out:
        out.write("".join(lines))
    want = table.get(series)
    if want is None:
        check("kernel series %s has an entry in the expected formats" % series,
              "unknown kernel series %s: add its expected formats (observed below, also in "
              "observed-formats)" % series, "a known series")
    else:
        for ev in ["common"] + list(HOOKED):
            got = observed.get(ev)
            if got is None:
                continue
            exp = want.get(ev)
            if got == exp:
                check("format %s: the field list is the one expected on %s" % (ev, series),
                      "same", "same")
            else:
                diff = [l[0] + l[2:] for l in difflib.ndiff(exp or [], got) if l[0] in "+-"]
                check("format %s: the field list is the one expected on %s" % (ev, series),
                      "changed: %s" % " | ".join(diff), "same")
    if want is None or any(want.get(ev) != fl for ev, fl in observed.items()):
        info("observed formats on %s (the table's syntax):" % release)
        for block in lines:
            for line in block.rstrip("\n").split("\n"):
                info(line.replace("\t", "    "))


# --- ftrace's binary ring-buffer pages (trace_pipe_raw) ------------------------------------

RB_MISSED_EVENTS = 1 << 31      # kernel/trace/ring_buffer.c: flags in a read page's commit
RB_MISSED_STORED = 1 << 30
RB_PADDING, RB_TIME_EXTEND, RB_TIME_STAMP = 29, 30, 31      # events/header_event
TS_SHIFT = 27


def parse_header_page(path):
    offs = {}
    for line in open(path):
        m = re.search(r"field:\s*(.*?)\s*\b(\w+);\s*offset:(\d+);\s*size:(\d+);", line)
        if m:
            offs.setdefault(m.group(2), (int(m.group(3)), int(m.group(4))))
    return offs


def u32(b, o):
    return struct.unpack_from(E + "I", b, o)[0]


def read_ftrace(path, hp):
    """([(ts, entry bytes)], pages, pages flagged as having missed events, errors)."""
    ts_off, ts_size = hp["timestamp"]
    c_off, c_size = hp["commit"]
    d_off, d_size = hp["data"]
    page = d_off + d_size
    raw = open(path, "rb").read()
    out, missed, errors = [], 0, []
    if len(raw) % page:
        errors.append("%s: %d bytes, not whole %d-byte pages" % (path, len(raw), page))
    for p in range(0, len(raw) - len(raw) % page, page):
        pg = raw[p:p + page]
        ts = int.from_bytes(pg[ts_off:ts_off + ts_size], ORDER)
        commit = int.from_bytes(pg[c_off:c_off + c_size], ORDER)
        if commit & (RB_MISSED_EVENTS | RB_MISSED_STORED):
            missed += 1
        length = commit & (RB_MISSED_STORED - 1)
        if length > d_size:
            errors.append("page at %d: commit %d beyond the page" % (p, length))
            continue
        data = pg[d_off:d_off + length]
        off = 0
        while off + 4 <= length:
            hdr = u32(data, off)
            # struct ring_buffer_event's bitfields, type_len:5 then time_delta:27, are
            # allocated from the most significant bit on a big-endian kernel.
            if ORDER == "big":
                tl, delta = hdr >> 27, hdr & ((1 << 27) - 1)
            else:
                tl, delta = hdr & 31, hdr >> 5
            if tl == RB_PADDING:
                if delta == 0:          # the rest of the page is empty
                    break
                off += 4 + u32(data, off + 4)   # a discarded event; its delta is not time
            elif tl == RB_TIME_EXTEND:
                ts += (u32(data, off + 4) << TS_SHIFT) + delta
                off += 8
            elif tl == RB_TIME_STAMP:
                absolute = (u32(data, off + 4) << TS_SHIFT) | delta
                ts = (ts & ~((1 << 59) - 1)) | absolute
                off += 8
            else:
                if tl == 0:
                    n = (u32(data, off + 4) - 4 + 3) & ~3
                    start = off + 8
                else:
                    n = tl * 4
                    start = off + 4
                ts += delta
                if start + n > length:
                    errors.append("page at %d: event at %d runs past the commit" % (p, off))
                    break
                out.append((ts, data[start:start + n]))
                off = start + n
    return out, len(raw) // page, missed, errors


def decode(entry, fields):
    """The fields of one trace entry, by the event's format."""
    v = {}
    for f in fields:
        if f.type.startswith("__data_loc") or f.type.startswith("__rel_loc"):
            loc = int.from_bytes(entry[f.offset:f.offset + 4], ORDER)
            start, n = loc & 0xffff, loc >> 16
            if f.type.startswith("__rel_loc"):
                start += f.offset + f.size
            v[f.name] = entry[start:start + n].split(b"\0")[0].decode("latin-1")
        elif f.type.endswith("[]") or f.size == 0:
            v[f.name] = entry[f.offset:].split(b"\0")[0].decode("latin-1")
        elif "[" in f.type:
            v[f.name] = entry[f.offset:f.offset + f.size]
        else:
            v[f.name] = int.from_bytes(entry[f.offset:f.offset + f.size], ORDER,
                                       signed=f.signed)
    return v


# --- kmemtrace records (Documentation/trace-format.md) ------------------------------------

KMALLOC, CACHE_ALLOC, PAGE_ALLOC, KFREE, CACHE_FREE, PAGE_FREE, CACHE_DESC, LOST = range(1, 9)
F_HARDIRQ, F_SOFTIRQ, F_CLAMPED, F_NAME_TRUNC = 0x01, 0x02, 0x04, 0x08
F_PROBED = 0x10     # (ABI 1.1) from a kprobe on a path no tracepoint covers
EVENT = struct.Struct(E + "BBHIQQQQIIIiIhH")
DESC = struct.Struct(E + "BBHIQQII32s")
U32_MAX = (1 << 32) - 1
ZERO_SIZE_PTR = 16      # include/linux/slab.h: ((void *)16)

# ftrace's common_flags bits (enum trace_flag_type, kernel/trace/trace.h; these two kept
# their values from 4.x through 6.12): hard interrupt, softirq being served. Not in any
# format file: if a kernel moves them, "paired events agree on irq context flags" fails.
TRACE_FLAG_HARDIRQ, TRACE_FLAG_SOFTIRQ = 0x08, 0x10

FT_TYPE = {"kmalloc": KMALLOC, "kmem_cache_alloc": CACHE_ALLOC, "mm_page_alloc": PAGE_ALLOC,
           "kfree": KFREE, "kmem_cache_free": CACHE_FREE, "mm_page_free": PAGE_FREE}
TYPE_NAME = {v: k for k, v in FT_TYPE.items()}


def read_kmt(path):
    """Events (dicts, in stream order, each cache event with the name its CPU's stream
    described the cache with), the number of data records, LOST records, unknown slots."""
    raw = open(path, "rb").read()
    events, ndata, lost, unknown, names = [], 0, 0, 0, {}
    for o in range(0, len(raw) - len(raw) % 64, 64):
        t = raw[o]
        if t == CACHE_DESC:
            ndata += 1
            _, fl, _, _, _, cid, _, _, name = DESC.unpack_from(raw, o)
            names[cid] = (name.split(b"\0")[0].decode("latin-1"), bool(fl & F_NAME_TRUNC))
        elif KMALLOC <= t <= PAGE_FREE:
            ndata += 1
            (typ, fl, cpu, seq, ts, cs, ptr, cid, req, alloc, gfp, node, pid, cnode,
             _) = EVENT.unpack_from(raw, o)
            events.append(dict(type=typ, flags=fl, cpu=cpu, seq=seq, ts=ts, call_site=cs,
                               ptr=ptr, cache_id=cid, bytes_req=req, bytes_alloc=alloc,
                               gfp_flags=gfp, node=node, pid=pid,
                               name=names.get(cid) if cid else None))
        elif t == LOST:
            lost += 1
        else:
            unknown += 1
    return events, ndata, lost, unknown


def ft_view(name, v, page_size):
    """An ftrace event as the kmemtrace record it should have, per trace-format.md."""
    typ = FT_TYPE[name]
    e = dict(type=typ, pid=v["common_pid"],
             ctx=(F_HARDIRQ if v["common_flags"] & TRACE_FLAG_HARDIRQ else 0) |
             (F_SOFTIRQ if v["common_flags"] & TRACE_FLAG_SOFTIRQ else 0))
    if typ in (PAGE_ALLOC, PAGE_FREE):
        # No call site in the page events; ptr is the pfn. mm_page_alloc stores pfn -1 for
        # a failed allocation, where trace-format.md gives ptr 0 for every failed one.
        e["call_site"] = 0
        e["ptr"] = 0 if v["pfn"] == (1 << 64) - 1 else v["pfn"]
        e["bytes_alloc"] = page_size << v["order"]
        if typ == PAGE_ALLOC:
            e["bytes_req"] = page_size << v["order"]
            e["gfp_flags"] = v["gfp_flags"]
    else:
        e["call_site"] = v["call_site"]
        e["ptr"] = v["ptr"]
        if typ in (KMALLOC, CACHE_ALLOC):
            for k in ("bytes_req", "bytes_alloc", "gfp_flags", "node"):
                e[k] = v[k]
        if "name" in v:
            e["name"] = v["name"]
    return e


def compare_fields(k, f):
    """[(field, kmemtrace's value, the value ftrace's event says it should have)]."""
    bad = []
    clamped = False
    for key in ("bytes_req", "bytes_alloc"):
        if key in f:
            want = min(f[key], U32_MAX)         # kmemtrace saturates and flags it
            clamped |= f[key] > U32_MAX
            if k[key] != want:
                bad.append((key, k[key], f[key]))
    if any(key in f for key in ("bytes_req", "bytes_alloc")) and \
            bool(k["flags"] & F_CLAMPED) != clamped:
        bad.append(("CLAMPED flag", bool(k["flags"] & F_CLAMPED), clamped))
    for key in ("gfp_flags", "node"):
        if key in f and k[key] != f[key]:
            bad.append((key, k[key], f[key]))
    return bad


class Symbols:
    def __init__(self, path):
        syms = []
        for line in open(path):
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW":
                syms.append((int(p[0], 16), p[2]))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def __call__(self, addr):
        if not addr:
            return "-"          # page events have no call site
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else "?"


def read_stats(path):
    s = {}
    for line in open(path):
        k, _, v = line.partition(":")
        s[k.strip()] = v.strip()
    return s


# Unpaired ftrace events allowed inside a CPU's window for a type: only among its EDGE first
# or last events of that type and within EDGE_NS of the window's start or end, and at most
# EDGE_MAX on a CPU. Why any: kmemtrace attaches (detaches) each probe while the tracepoint
# may be running on the other CPU. A call that loaded the probe list just before the change
# takes ftrace's timestamp only after it; if an interrupt (or, under TCG, the host not running
# that vCPU) delays it, that timestamp can fall after kmemtrace's first record of the type
# (or a call that loaded the new list can be stamped before kmemtrace's last one). The two
# probes take their own timestamps, so nothing pairs such an event. The delay is bounded by
# one interrupt; anywhere else an ftrace-only event is a bug. None was seen in the runs so far.
EDGE, EDGE_NS, EDGE_MAX = 3, 1000000, 2


def cmd_compare(d, page_size):
    page_size = int(page_size)
    fmts = {}
    for ev in list(FT_TYPE) + ["print"]:
        name, ev_id, fields = parse_format(os.path.join(d, "format", ev))
        fmts[ev_id] = (name, fields)
    hp = parse_header_page(os.path.join(d, "format", "header_page"))
    sym = Symbols(os.path.join(d, "kallsyms"))
    rt = "PREEMPT_RT" in open(os.path.join(d, "uname-v")).read()
    # Whether a task may move to another CPU between two probes of one tracepoint call: on
    # PREEMPT_RT, and wherever tracepoints call their probes under SRCU alone, preemptible
    # (7.3's tracepoint.h: guard(srcu_fast_notrace); 6.12's disables preemption around them,
    # and the matrix has no series between the two). Seen on 7.3 amd64 under load: a page
    # allocation in cpu0's ftrace stream and cpu1's kmemtrace one, 6.7 ms apart.
    mm = major_minor(open(os.path.join(d, "uname")).read())
    movable = rt or bool(mm and mm > (6, 12))
    clock = open(os.path.join(d, "ft", "trace_clock")).read()
    check("ftrace: the instance's trace_clock is mono (kmemtrace's ktime_get_mono_fast_ns)",
          re.search(r"\[(\S+)\]", clock).group(1) if "[" in clock else clock.strip(), "mono")

    # Both sides, per CPU.
    cpus = sorted(int(m.group(1)) for m in
                  (re.match(r"cpu(\d+)\.raw$", f) for f in os.listdir(os.path.join(d, "ft")))
                  if m)
    kstats = {}
    for line in open(os.path.join(d, "kmt", "stats")):
        if not line.startswith("#"):
            c, e, w, dr = (int(x) for x in line.split())
            kstats[c] = (e, w, dr)
    check("kmemtrace: total_overruns", open(os.path.join(d, "kmt", "total_overruns")).read()
          .strip(), "0")
    ft, kmt, markers = {}, {}, {}
    for c in cpus:
        entries, _, missed, errors = read_ftrace(os.path.join(d, "ft", "cpu%d.raw" % c), hp)
        st = read_stats(os.path.join(d, "ft", "cpu%d.stats" % c))
        for k in ("overrun", "commit overrun", "dropped events"):
            check("ftrace cpu%d: %s" % (c, k), st.get(k), "0")
        check("ftrace cpu%d: no page flagged with missed events" % c, missed, 0)
        check("ftrace cpu%d: trace_pipe_raw parsed without error" % c,
              "; ".join(errors[:3]) or "ok", "ok")
        evs, unknown = [], 0
        for ts, entry in entries:
            ev_id = struct.unpack_from(E + "H", entry, 0)[0]
            if ev_id not in fmts:
                unknown += 1
                continue
            name, fields = fmts[ev_id]
            v = decode(entry, fields)
            if name == "print":
                markers.setdefault(v["buf"].strip(), []).append(ts)
            else:
                e = ft_view(name, v, page_size)
                e["ts"] = ts
                evs.append(e)
        check("ftrace cpu%d: events parsed == the buffer's entries count" % c,
              len(entries), st.get("entries"))
        check("ftrace cpu%d: no event of a type not enabled" % c, unknown, 0)
        ft[c] = evs
        kpath = os.path.join(d, "kmt", "cpu%d.raw" % c)
        check("kmemtrace cpu%d: the guest read its cpu%d file" % (c, c), os.path.exists(kpath),
              True)
        k, ndata, lost, kunknown = read_kmt(kpath) if os.path.exists(kpath) else ([], 0, 0, 0)
        # Events of the paths no slab tracepoint covers (bulk API, lock-free API, kfree_rcu's
        # sheaves) come from kmemtrace's kprobes: ftrace has no record of them to compare with.
        probed = [x for x in k if x["flags"] & F_PROBED]
        print("INFO\tkmemtrace cpu%d: %d events from kprobes, not compared" % (c, len(probed)))
        check("kmemtrace cpu%d: probed events are slab events" % c,
              sorted(set(TYPE_NAME[x["type"]] for x in probed) -
                     {"kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free"}), [])
        kmt[c] = [x for x in k if not x["flags"] & F_PROBED]
        e, w, dr = kstats.get(c, (None, None, None))
        check("kmemtrace cpu%d: emitted == written (nothing dropped)" % c, e, w)
        check("kmemtrace cpu%d: dropped" % c, dr, 0)
        check("kmemtrace cpu%d: data records read == written" % c, ndata, w)
        check("kmemtrace cpu%d: no LOST record, no unknown slot" % c, (lost, kunknown), (0, 0))
        check("kmemtrace cpu%d: every record is this CPU's" % c,
              sorted(set(x["cpu"] for x in k) - {c}), [])
    for m in ("kmt45-on", "kmt45-off"):
        check("ftrace: one '%s' marker" % m, len(markers.get(m, [])), 1)
    t_on = markers.get("kmt45-on", [None])[0]
    t_off = markers.get("kmt45-off", [None])[0]
    if t_on is None or t_off is None:
        return

    # Pair every kmemtrace event with ftrace's record of the same call, per CPU.
    first, last = {}, {}
    for c in cpus:
        for k in kmt[c]:
            first[k["type"]] = min(first.get(k["type"], k["ts"]), k["ts"])
            last[k["type"]] = max(last.get(k["type"], k["ts"]), k["ts"])
    tot = collections.Counter()
    field_bad = collections.defaultdict(list)
    dts = []
    oracle_k, oracle_f = collections.Counter(), collections.Counter()
    site_k, site_f = collections.Counter(), collections.Counter()
    fevs, kevs, nulls, nullsets, unpaireds = {}, {}, {}, {}, {}
    for c in cpus:
        fev = sorted(ft[c], key=lambda e: e["ts"])
        # The documented difference: kmemtrace does not record kfree(NULL) nor
        # kfree(ZERO_SIZE_PTR), which the tracepoint reports (it fires before kfree()'s check).
        nullfree = [e for e in fev if e["type"] == KFREE and e["ptr"] in (0, ZERO_SIZE_PTR)]
        nullset = set(id(e) for e in nullfree)
        buckets = collections.defaultdict(list)
        for e in fev:
            if id(e) not in nullset:
                buckets[(e["type"], e["call_site"], e["ptr"])].append(e)
        kev = sorted(kmt[c], key=lambda e: e["ts"])
        unpaired = []
        for k in kev:
            cands = [e for e in buckets.get((k["type"], k["call_site"], k["ptr"]), ())
                     if "pair" not in e]
            # ftrace's probe was attached first, so it runs first: its partner is the latest
            # candidate at or before kmemtrace's timestamp (else the nearest after it).
            before = [e for e in cands if e["ts"] <= k["ts"]]
            f = before[-1] if before else (cands[0] if cands else None)
            if f is None:
                unpaired.append(k)
                continue
            f["pair"] = k
            k["pair"] = f
            dts.append(k["ts"] - f["ts"])
            for key, kv, fv in compare_fields(k, f):
                field_bad[key].append((c, k, kv, fv))
            if k["pid"] != f["pid"]:
                field_bad["pid"].append((c, k, k["pid"], f["pid"]))
            if k["flags"] & (F_HARDIRQ | F_SOFTIRQ) != f["ctx"]:
                field_bad["irq context flags"].append(
                    (c, k, k["flags"] & (F_HARDIRQ | F_SOFTIRQ), f["ctx"]))
            if "name" in f:
                kn = k["name"]
                if kn is None:
                    field_bad["cache name"].append((c, k, "no description", f["name"]))
                elif (kn[0] != f["name"][:31]) if kn[1] else (kn[0] != f["name"]):
                    field_bad["cache name"].append((c, k, repr(kn[0]), repr(f["name"])))
        fevs[c], kevs[c], nulls[c], nullsets[c], unpaireds[c] = (fev, kev, nullfree, nullset,
                                                                  unpaired)

    # Where a tracepoint's probes run preemptible (movable, above), the task can move to another
    # CPU between ftrace's probe and kmemtrace's, so one call can sit in two CPUs' streams. Such
    # pairs are made after every CPU's own, only there, and counted; elsewhere they would be a
    # defect and stay unpaired.
    xcpu = 0
    if movable:
        gb = collections.defaultdict(list)
        for c in cpus:
            for e in fevs[c]:
                if id(e) not in nullsets[c] and "pair" not in e:
                    gb[(e["type"], e["call_site"], e["ptr"])].append(e)
        for c in cpus:
            still = []
            for k in unpaireds[c]:
                cands = [e for e in gb.get((k["type"], k["call_site"], k["ptr"]), ())
                         if "pair" not in e]
                before = [e for e in cands if e["ts"] <= k["ts"]]
                f = before[-1] if before else None
                if f is None:
                    still.append(k)
                    continue
                f["pair"] = k
                k["pair"] = f
                xcpu += 1
                for key, kv, fv in compare_fields(k, f):
                    field_bad[key].append((c, k, kv, fv))
                if k["pid"] != f["pid"]:
                    field_bad["pid"].append((c, k, k["pid"], f["pid"]))
            unpaireds[c] = still
    info("calls whose two probes ran on different CPUs (PREEMPT_RT, and 7.3 on): %d" % xcpu)

    for c in cpus:
        fev, kev, nullfree, nullset, unpaired = (fevs[c], kevs[c], nulls[c], nullsets[c],
                                                 unpaireds[c])
        check("cpu%d: every kmemtrace event has ftrace's record of it (type, call_site, ptr)"
              % c, len(unpaired), 0)
        for k in unpaired[:5]:
            near = [e for e in fev if e["ptr"] == k["ptr"] and e["type"] == k["type"]]
            info("  unpaired kmemtrace %s call_site %s ptr %#x ts %d; ftrace has that ptr "
                 "and type at call sites %s" % (TYPE_NAME[k["type"]], sym(k["call_site"]),
                                                k["ptr"], k["ts"],
                                                sorted(set(sym(e["call_site"]) for e in near))
                                                or "none"))
        check("cpu%d: kmemtrace recorded no kfree(NULL) or kfree(ZERO_SIZE_PTR)" % c,
              sum(1 for k in kev if k["type"] == KFREE and k["ptr"] in (0, ZERO_SIZE_PTR)), 0)

        # The other way: inside the window when kmemtrace was on, every ftrace event has a
        # kmemtrace record. kmemtrace attaches its probes one event at a time (and detaches
        # them in turn), so each event type has its own window: from the earlier of the "on"
        # marker (written once enabling had returned) and the first record of that type on
        # any CPU, to the later of the "off" marker (written before disabling) and the last.
        win, missing, edge = [], [], []
        for t in sorted(TYPE_NAME):
            start = min([t_on] + [first[t]] if t in first else [t_on])
            end = max([t_off] + [last[t]] if t in last else [t_off])
            w = [e for e in fev if e["type"] == t and start <= e["ts"] <= end and
                 id(e) not in nullset]
            for i, e in enumerate(w):
                if "pair" not in e:
                    e["pos"] = (i, len(w))
                    missing.append(e)
                    if (i < EDGE or i >= len(w) - EDGE) and \
                            (e["ts"] - start <= EDGE_NS or end - e["ts"] <= EDGE_NS):
                        edge.append(e)
            win += w
        inwin = set(id(e) for e in win)
        check("cpu%d: ftrace recorded events while kmemtrace was on" % c, len(win) > 0, True)
        check("cpu%d: every ftrace event inside kmemtrace's window for its type has its record "
              "(but at most %d of the %d first or last, within %d us of an edge)" %
              (c, EDGE_MAX, EDGE, EDGE_NS // 1000),
              "%d inside, %d at the edges" % (len(missing) - len(edge), len(edge)),
              "0 inside, %s at the edges" % (len(edge) if len(edge) <= EDGE_MAX
                                             else "<= %d" % EDGE_MAX))
        for e in missing[:5]:
            info("  ftrace-only %s call_site %s ptr %#x ts %d (%d of the %d of its type in the "
                 "window)" % (TYPE_NAME[e["type"]], sym(e["call_site"]), e["ptr"], e["ts"],
                              e["pos"][0], e["pos"][1]))
        null_win = [e for e in nullfree if min(t_on, first.get(KFREE, t_on)) <= e["ts"] <=
                    max(t_off, last.get(KFREE, t_off))]
        nnull = len(null_win)
        inwin.update(id(e) for e in null_win)
        tot["kmt"] += len(kev)
        tot["paired"] += len(kev) - len(unpaired)
        tot["window"] += len(win)
        tot["nullfree"] += nnull
        tot["edge"] += len(edge)
        info("cpu%d: %d kmemtrace events, %d ftrace events in the windows (%d kfree(NULL/"
             "ZERO_SIZE_PTR) besides), %d unpaired at the edges" %
             (c, len(kev), len(win), nnull, len(edge)))

        # The oracle's call sites, counted on both sides.
        for k in kev:
            s = sym(k["call_site"])
            if s.startswith("oracle_"):
                kind = "alloc" if k["type"] in (KMALLOC, CACHE_ALLOC) else "free"
                oracle_k[(s, kind)] += 1
                site_k[(k["call_site"], k["type"])] += 1
        for e in fev:
            if id(e) not in inwin:
                continue
            s = sym(e["call_site"])
            if s.startswith("oracle_"):
                kind = "alloc" if e["type"] in (KMALLOC, CACHE_ALLOC) else "free"
                if id(e) in nullset:
                    kind = "nullfree"
                else:
                    site_f[(e["call_site"], e["type"])] += 1
                oracle_f[(s, kind)] += 1

    # Field by field, over every pair.
    for key in ("bytes_req", "bytes_alloc", "CLAMPED flag", "gfp_flags", "node", "pid",
                "irq context flags", "cache name"):
        bad = field_bad.get(key, [])
        check("paired events agree on %s" % key, "%d differ" % len(bad), "0 differ")
        if key == "gfp_flags":
            bad = [(c, k, hex(kv), hex(fv)) for c, k, kv, fv in bad]
        for c, k, kv, fv in bad[:4]:
            info("  cpu%d %s call_site %s ptr %#x: kmemtrace %s, ftrace %s" %
                 (c, TYPE_NAME[k["type"]], sym(k["call_site"]), k["ptr"], kv, fv))
        if len(bad) > 4:
            per = collections.Counter((TYPE_NAME[k["type"]], str(kv), str(fv))
                                      for _, k, kv, fv in bad)
            info("  all %d: %s" % (len(bad), ", ".join("%s kmemtrace %s ftrace %s x%d" %
                                                        (t, a, b, n) for (t, a, b), n in
                                                        per.most_common(6))))
    # Same clock, ftrace's probe first: ftrace's timestamp is never after kmemtrace's.
    check("paired events: ftrace's timestamp <= kmemtrace's (one clock, ftrace's probe first)",
          "%d pairs later in ftrace" % sum(1 for t in dts if t < 0), "0 pairs later in ftrace")
    if dts:
        dts.sort()
        info("pairs: %d; kmemtrace's timestamp minus ftrace's: min %d ns, median %d ns, "
             "max %d ns" % (len(dts), dts[0], dts[len(dts) // 2], dts[-1]))
    info("totals: %d kmemtrace events, %d paired; %d ftrace events in the windows, %d "
         "kfree(NULL/ZERO_SIZE_PTR), %d unpaired at the edges" %
         (tot["kmt"], tot["paired"], tot["window"], tot["nullfree"], tot["edge"]))

    # The oracle: what it says it did, on both sides, per function.
    done, failed, exp = {}, collections.Counter(), {}
    for line in open(os.path.join(d, "expected")):
        key, _, val = line.strip().partition(" ")
        if key in ("done", "failed"):
            f, n = val.split()
            (done.__setitem__(f, int(n)) if key == "done" else failed.__setitem__(f, int(n)))
        else:
            exp.setdefault(key, val)
    check("the oracle ran once", exp.get("runs"), "1")
    for f, n in sorted(done.items()):
        base, _, kind = f.partition("/")
        if f == "oracle_kfree_null":
            check("%s: kmemtrace records none of its calls" % f,
                  oracle_k[(f, "alloc")] + oracle_k[(f, "free")], 0)
            check("%s: ftrace has each of its kfree(NULL/ZERO_SIZE_PTR) calls" % f,
                  oracle_f[(f, "nullfree")], n)
            continue
        want = n + failed[f] if kind in ("", "alloc") else n
        if kind:
            got_k, got_f = oracle_k[(base, kind)], oracle_f[(base, kind)]
        else:
            got_k = oracle_k[(f, "alloc")] + oracle_k[(f, "free")]
            got_f = oracle_f[(f, "alloc")] + oracle_f[(f, "free")]
        check("%s: kmemtrace events == done + failed" % f, got_k, want)
        check("%s: ftrace events == done + failed" % f, got_f, want)
    diff = sorted("%s %s: kmemtrace %d ftrace %d" % (sym(cs), TYPE_NAME[t], site_k[(cs, t)],
                                                     site_f[(cs, t)])
                  for cs, t in set(site_k) | set(site_f) if site_k[(cs, t)] != site_f[(cs, t)])
    check("oracle call sites (%d): counts per call site and type equal on both sides"
          % len(set(site_k) | set(site_f)), "; ".join(diff) or "equal", "equal")


def cmd_wrap(d, page):
    """cpuN.raw (what cat of a cpuN debugfs file gave: records with no header) to cpuN.out
    with the file header of trace-format.md, so that kmemtrace_check can read it."""
    major, minor = (int(x) for x in open(os.path.join(d, "kmt", "abi_version")).read().split("."))
    page = int(page)
    for f in sorted(os.listdir(os.path.join(d, "kmt"))):
        m = re.match(r"cpu(\d+)\.raw$", f)
        if not m:
            continue
        raw = open(os.path.join(d, "kmt", f), "rb").read()
        first_ts = struct.unpack_from(E + "Q", raw, 8)[0] if len(raw) >= 64 else 0
        hdr = struct.pack(E + "IHHHHHBBB3xIQQ24x", 0x52544d4b, major, minor, 64, 64,
                          int(m.group(1)), BYTE_ORDER, WORD_BITS, 1, page, first_ts, 0)
        with open(os.path.join(d, "kmt", "cpu%s.out" % m.group(1)), "wb") as out:
            out.write(hdr + raw)


if __name__ == "__main__":
    cmds = {"formats": cmd_formats, "compare": cmd_compare, "wrap": cmd_wrap}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
