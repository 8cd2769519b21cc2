#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 24-kmemtraced-modules.t - modules loaded and unloaded while kmemtraced traces, against a fake
# debugfs (KMEMTRACED_TEST_FAKE_DEBUGFS=1) and a fake /proc/modules and /proc/kallsyms
# (KMEMTRACED_TEST_PROC_DIR, honoured only with the fake debugfs): the modules file gets the
# documented "+" and "-" lines in the order they were seen (one load lasting only between two
# scans included), kallsyms.loaded the loaded modules' symbols, with the init symbols the
# module's init_kallsyms kept for them (once, also when /proc/kallsyms had them), and
# kmemtrace-report names every call site by the load it falls in (a module reloaded elsewhere by
# both loads, the newest load winning over an unloaded one, which it says; init code by the
# symbols kept for it). A trace without changes has neither, and -f removes an earlier trace's
# kallsyms.loaded.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
D=$BIN/kmemtraced
GEN=$BIN/kmemtrace-gen
REPORT=$BIN/kmemtrace-report

require_tools kmemtraced kmemtrace-gen kmemtrace-report
scratch_dir modules

export KMEMTRACED_TEST_FAKE_DEBUGFS=1
K=$T/fake/kmemtrace
fake_module "$K" 1.1
P=$T/proc
mkdir -p "$P"
export KMEMTRACED_TEST_PROC_DIR=$P

# /proc/modules lists the newest first; names no host has as a module (no .text in /sys).
mods() {	# mods NAME:BASE:SIZE... -> $P/modules
	local m
	for m in "$@"; do
		IFS=: read -r name base size <<<"$m"
		printf '%s %s 0 - Live %s (OE)\n' "$name" "$size" "$base"
	done >"$P/modules"
}
mods kmtx_old:0xffffffffc0050000:4096 kmtx_goner:0xffffffffc0010000:8192 \
	kmtx_keep:0xffffffffc0000000:16384
cat >"$P/kallsyms" <<'KS'
ffffffff81000000 T _stext
ffffffff81000100 T core_fn
ffffffffc0000100 t keep_fn	[kmtx_keep]
ffffffffc0000200 d keep_data	[kmtx_keep]
ffffffffc0010100 t goner_fn	[kmtx_goner]
ffffffffc0050100 t old_fn	[kmtx_old]
KS
cp "$P/kallsyms" "$T/kallsyms.start"

# One allocation at each call site the loads make.
cat >"$T/script" <<'SC'
kmalloc 0 0xffffffffc0000111 0xffff888100000100 8 8
kmalloc 0 0xffffffffc0010111 0xffff888100000200 8 8
kmalloc 0 0xffffffffc0030111 0xffff888100000300 8 8
kmalloc 0 0xffffffffc0020111 0xffff888100000400 8 8
kmalloc 0 0xffffffffc0050111 0xffff888100000500 8 8
kmalloc 0 0xffffffffc0040111 0xffff888100000600 8 8
kmalloc 0 0xffffffffc0060111 0xffff888100000700 8 8
SC
"$GEN" -o "$T/gen" --cpus 1 --script "$T/script" >/dev/null ||
	{ echo "Bail out! kmemtrace-gen failed"; exit 1; }
tail -c +65 "$T/gen/cpu0.out" >"$T/records"

# During the trace: kmtx_brief is loaded, seen by a scan (every 500 ms), unloaded with
# kmtx_old and kmtx_goner; kmtx_goner comes back elsewhere, kmtx_newmod is new, and kmtx_big's
# code runs over the base kmtx_old had. kmemtrace.ko kept the init symbols of kmtx_goner (which
# /proc/kallsyms still lists: its init is running), kmtx_newmod and kmtx_keep (not a load seen).
cat >"$T/during.sh" <<EOS
set -e
$(declare -f mods)
P=$P
mods kmtx_brief:0xffffffffc0040000:8192 kmtx_old:0xffffffffc0050000:4096 \\
	kmtx_goner:0xffffffffc0010000:8192 kmtx_keep:0xffffffffc0000000:16384
printf 'ffffffffc0040100 t brief_fn\\t[kmtx_brief]\\n' >>"\$P/kallsyms"
# kmemtraced appends each change to the modules file as it sees it: wait for that (50 s at
# most), not for a time.
for i in \$(seq 500); do
	grep -q '^+kmtx_brief ' "$T/t1/modules" && break
	sleep 0.1
done
grep -c '^[-+]' "$T/t1/modules" >"$T/live-changes"
printf '%s\\t[%s]\\n' 'ffffffffc0061000 t goner_init' kmtx_goner \\
	'ffffffffc0060000 t newmod_init' kmtx_newmod 'ffffffffc0000800 t keep_init' kmtx_keep \\
	>"$K/init_kallsyms"
mods kmtx_big:0xffffffffc004f000:12288 kmtx_newmod:0xffffffffc0020000:4096 \\
	kmtx_goner:0xffffffffc0030000:8192 kmtx_keep:0xffffffffc0000000:16384
grep -v -e kmtx_brief -e kmtx_old -e kmtx_goner "$T/kallsyms.start" >"\$P/kallsyms"
printf '%s\\t[%s]\\n' 'ffffffffc0030100 t goner_fn' kmtx_goner \\
	'ffffffffc0030200 d goner_data' kmtx_goner 'ffffffffc0061000 t goner_init' kmtx_goner \\
	'ffffffffc0020100 t newmod_fn' kmtx_newmod 'ffffffffc004f100 t big_fn' kmtx_big \\
	'ffffffffc0050080 t big_fn2' kmtx_big >>"\$P/kallsyms"
cat "$T/records" >>"$K/cpu0"
EOS

O=$T/t1
run "$D" -q -r "$T/fake" -o "$O" -- bash "$T/during.sh"
is "$rc" 0 "kmemtraced while modules come and go: exit 0"
is "$err" "" "... nothing on stderr"
is "$(cat "$O/kallsyms")" "$(cat "$T/kallsyms.start")" "kallsyms: /proc/kallsyms at the start"
is "$(cat "$O/modules")" "kmtx_old 0x0 0xffffffffc0050000 4096
kmtx_goner 0x0 0xffffffffc0010000 8192
kmtx_keep 0x0 0xffffffffc0000000 16384
# loaded (+) and unloaded (-) during the trace
+kmtx_brief 0x0 0xffffffffc0040000 8192
-kmtx_old 0x0 0xffffffffc0050000 4096
-kmtx_goner 0x0 0xffffffffc0010000 8192
-kmtx_brief 0x0 0xffffffffc0040000 8192
+kmtx_goner 0x0 0xffffffffc0030000 8192
+kmtx_newmod 0x0 0xffffffffc0020000 4096
+kmtx_big 0x0 0xffffffffc004f000 12288" \
	"modules: the start's lines, then each load (+) and unload (-) in the order seen"
is "$(cat "$O/kallsyms.loaded")" "$(printf '%s\t[%s]\n' 'ffffffffc0040100 t brief_fn' kmtx_brief \
	'ffffffffc0030100 t goner_fn' kmtx_goner 'ffffffffc0030200 d goner_data' kmtx_goner \
	'ffffffffc0061000 t goner_init' kmtx_goner \
	'ffffffffc0020100 t newmod_fn' kmtx_newmod 'ffffffffc004f100 t big_fn' kmtx_big \
	'ffffffffc0050080 t big_fn2' kmtx_big 'ffffffffc0060000 t newmod_init' kmtx_newmod)" \
	"kallsyms.loaded: each loaded module's kallsyms lines, read when its load was seen, then the init symbols kept for them that kallsyms had not"
is "$(stat -c %a "$O/kallsyms.loaded")" 600 "kallsyms.loaded: mode 0600"
is "$(cat "$T/live-changes")" 1 \
	"modules: a change is in the file (+kmtx_brief) while kmemtraced still traces"

run "$REPORT" --json -l 0 "$O"
is "$rc" 0 "report: exit 0"
got=$(printf '%s' "$out" | python3 -c 'import json, sys
for c in sorted(json.load(sys.stdin)["callsites"], key=lambda c: c["addr"]):
    print(c["addr"], c["symbol"])')
is "$got" "0xffffffffc0000111 keep_fn+0x11 [kmtx_keep]
0xffffffffc0010111 goner_fn+0x11 [kmtx_goner]
0xffffffffc0020111 newmod_fn+0x11 [kmtx_newmod]
0xffffffffc0030111 goner_fn+0x11 [kmtx_goner]
0xffffffffc0040111 brief_fn+0x11 [kmtx_brief]
0xffffffffc0050111 big_fn2+0x91 [kmtx_big]
0xffffffffc0060111 newmod_init+0x111 [kmtx_newmod]" \
	"report: every call site named by the load it falls in, the newest over an unloaded one, init code by its kept symbols"
like "$err" "warning: $O/modules: kmtx_old, unloaded during the trace, was at 0xffffffffc0050000, where kmtx_big was loaded later (at 0xffffffffc004f000): addresses there are named as the later load's, also those recorded before the unload" \
	"report: says that kmtx_old's range was given to kmtx_big"

# No change: neither the comment nor kallsyms.loaded; -f removes the earlier trace's.
mods kmtx_keep:0xffffffffc0000000:16384
cp "$T/kallsyms.start" "$P/kallsyms"
run "$D" -q -f -r "$T/fake" -o "$O" -- true
is "$rc" 0 "kmemtraced -f, no module loaded or unloaded: exit 0"
is "$(cat "$O/modules")" "kmtx_keep 0x0 0xffffffffc0000000 16384" "modules: the start's lines only"
ok_cmd "no kallsyms.loaded: the earlier trace's is gone" test ! -e "$O/kallsyms.loaded"

done_testing
