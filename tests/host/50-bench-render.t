#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 50-bench-render.t - scripts/bench-render on results the test writes itself (a probes run of
# the bulk workloads, kmemtrace-top's runs beside the drain load, a stacks run): the added cost
# per event, the bulk ÷ single-object ratios, kmemtrace-top's CPU, and kmemtrace with stacks
# against perf record -g (cost, bytes, the stacks' depth read from a trace) are the ones the
# test's own numbers give; --update keeps every section of BENCHMARKS.md it has no results for, word for
# word, and adds the new ones in their place; malformed results end in an error naming the
# file. Part 1 with an arm64 kernel beside an amd64 one: its own column, "not measured" for
# perf when its guest has none and perf's figures when it has its own, its own summary line,
# and the plot's data amd64's only. Context switches counted in a guest: their medians and each
# method's added cost at equal switches, fitted from the test's own runs. No guest: a quick test
# of the script.
set -u

# shellcheck source=tests/host/lib.sh
. "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RENDER=$TOP/scripts/bench-render
require_cmds python3
scratch_dir bench-render

K=6.1.0-56-amd64
R=$T/res
P=$R/probes/$K
mkdir -p "$P" "$R/drain"
cat >"$R/run.txt" <<EOF
date 2026-01-01 00:00 UTC
commit 0123abc
parts probes,stacks,drain
kernels $K
guest_kernel $K
load_before 1.00 1.00 1.00
load_after 2.00 2.00 2.00
EOF
echo 16 >"$P/batch.txt"
printf '# path how detail\nkmem_cache_alloc_bulk kretprobe x\nkmem_cache_free_bulk kprobe x\n' \
	>"$P/coverage.txt"

# Workload times: untraced base + added * events, three rounds around the middle one.
pairs=5000
ev=$((2 * pairs))
declare -A base=([module]=700000 [cache]=600000 [bulk]=400000 [kfree_bulk]=390000 [bulk1]=650000
	[nolock]=800000)
declare -A probe=([module]=221 [cache]=250 [bulk]=190 [kfree_bulk]=175 [bulk1]=410 [nolock]=205)
declare -A kmtd=([module]=300 [cache]=330 [bulk]=270 [kfree_bulk]=260 [bulk1]=480 [nolock]=290)
: >"$P/overhead.tsv"
for r in 1 2 3; do
	d=$(((r - 2) * 1000))	# the median round is round 2
	for w in module cache bulk kfree_bulk bulk1 nolock; do
		printf '%s\tnone\t%s\t%s\t%s\t0\t0\t0\t0\n' "$r" "$w" $((base[$w] + d)) "$ev"
		printf '%s\tkmemtrace-probe\t%s\t%s\t%s\t%s\t0\t0\t0\n' "$r" "$w" \
			$((base[$w] + probe[$w] * ev + d)) "$ev" $((ev + 7))
		printf '%s\tkmemtrace\t%s\t%s\t%s\t%s\t0\t%s\t0\n' "$r" "$w" \
			$((base[$w] + kmtd[$w] * ev + d)) "$ev" $((ev + 9)) $(((ev + 9) * 64))
	done >>"$P/overhead.tsv"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# render DESC ARG...: bench-render ARG..., which must exit 0 (its page in $out).
render() {
	local desc=$1
	shift
	run "$RENDER" "$@"
	is "$rc" 0 "$desc" || echo "# $err"
}
# part TEXT FROM TO: TEXT's lines from the first matching the sed pattern FROM to the next
# matching TO (or its end: TO '$').
part() {
	if [ "$3" = '$' ]; then
		printf '%s\n' "$1" | sed -n "/$2/,\$p"
	else
		printf '%s\n' "$1" | sed -n "/$2/,/$3/p"
	fi
}
commas() { printf '%s' "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }

# kmemtrace-top: one rate, two runs each; the medians are what the test expects.
rate=500000
secs=3
events=$((rate * secs))
top_line() {	# SETUP REP LOAD_NS TOP_NS KMTD_NS STATUS WRITTEN DROPPED
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t0\t1000\t%s\t250\t100\t%s\t%s\t%s\t%s\t%s\n' \
		"$rate" "$2" "$1" "$rate" "$rate" "$events" "$3" "$4" "$5" "$secs" "$6" \
		$((events / 2)) "$7" "$8"
}
{
	for rep in 1 2; do
		top_line untraced "$rep" $((169 * events)) 0 0 - 0 0
		top_line kmemtraced "$rep" $((400 * events)) 0 $((90 * events)) - "$events" 0
		top_line follow "$rep" $((403 * events)) $((360 * events + rep - 1)) \
			$((90 * events)) 0 "$events" 0
		top_line live "$rep" $((410 * events)) $((80 * events)) 0 0 "$events" 0
	done
	top_line live-locked 1 $((400 * events)) 0 $((90 * events)) 3 "$events" 0
} >"$R/drain/top.tsv"
echo "kmemtrace-top: kmemtraced is draining the buffers" >"$R/drain/top-live-locked.err"
echo "$K" >"$R/drain/kernel.txt"

# Kernel stacks: kmemtrace at two depths beside perf record and perf record -g, module workload.
S=$R/stacks/$K
mkdir -p "$S/kmt-kmemtrace-stacks32-module"
declare -A sadd=([kmemtrace]=300 [kmemtrace-stacks8]=5000 [kmemtrace-stacks32]=5200 [perf]=1600
	[perf-g]=6500)
declare -A sbytes=([kmemtrace]=64 [kmemtrace-stacks8]=66 [kmemtrace-stacks32]=67 [perf]=100
	[perf-g]=200)
: >"$S/overhead.tsv"
for r in 1 2 3; do
	printf '%s	none	module	%s	%s	0	0	0	0
' "$r" 700000 "$ev"
	for m in kmemtrace kmemtrace-stacks8 kmemtrace-stacks32 perf perf-g; do
		printf '%s	%s	module	%s	%s	%s	0	%s	0
' "$r" "$m" \
			$((700000 + sadd[$m] * ev)) "$ev" "$ev" $((sbytes[$m] * ev))
	done
done >>"$S/overhead.tsv"
printf 'perf-module	%s	0	0
perf-g-module	%s	0	0
' "$ev" "$ev" >"$S/perf-stats.tsv"
# A trace whose events carry a stack of 5 frames (three events) and one of 9 (one event).
python3 - "$S/kmt-kmemtrace-stacks32-module/cpu0.out" <<'PY'
import struct, sys
recs = [bytes(64)]
for sid, depth in ((1, 5), (2, 9)):
    recs.append(struct.pack("<BBHIQHBBB3x40x", 9, 0, 0, 0, 0, sid, depth, 0, min(depth, 5)))
for sid in (1, 1, 1, 2):
    recs.append(struct.pack("<BBHIQ46xH", 1, 0, 0, 0, 0, sid))
open(sys.argv[1], "wb").write(b"".join(recs))
PY

render "bench-render --update -n: exit 0" --update -n "$R"
page=$out
sec6=$(part "$page" '^## 6\.' '^## 7\.')
sec7=$(part "$page" '^## 7\.' '^## 8\.')
sec8=$(part "$page" '^## 8\.' '$')
like "$sec6" "| probes only: kmem_cache_alloc_bulk() + kmem_cache_free_bulk(), 16 objects a call (kretprobe + kprobe) | ${probe[bulk]} |" \
	"probes only, bulk: the added instructions per event the results hold"
like "$sec6" "| with kmemtraced: kmem_cache_alloc_bulk() + kfree_bulk(), 16 objects a call (kretprobe + kprobe) | ${kmtd[kfree_bulk]} |" \
	"with kmemtraced, kfree_bulk: likewise"
like "$sec6" "| **bulk ÷ kmem_cache_alloc/free's**, probes only | **$(ratio "${probe[bulk]}" "${probe[cache]}")** |" \
	"bulk ÷ the single-object cache path, probes only"
like "$sec6" "| **bulk of 1 ÷ kmem_cache_alloc/free's**, with kmemtraced | **$(ratio "${kmtd[bulk1]}" "${kmtd[cache]}")** |" \
	"bulk of 1 ÷ the single-object cache path, with kmemtraced"
like "$sec6" "| **kmalloc_nolock/kfree_nolock ÷ kmalloc/kfree's**, probes only | **$(ratio "${probe[nolock]}" "${probe[module]}")** |" \
	"kmalloc_nolock ÷ kmalloc, probes only"
like "$sec6" "| records kept, probes only: bulk | $(commas $((ev + 7))) of $(commas "$ev") (lost 0) |" \
	"records kept against the objects' events"
like "$sec6" "commit 0123abc" "the section names the run it comes from"
# kmemtrace-top's CPU per second of the load, and its share of a CPU.
cpu() { awk -v n="$1" -v e="$events" -v s="$secs" 'BEGIN { printf "%.1f ms/s (%.2f%%)", n * e / s / 1e6, n * e / s / 1e7 }'; }
like "$sec7" "| kmemtraced + kmemtrace-top -d (follow) | 403 | $((403 - 169)) | +$((403 - 400)) | $(cpu 360) | 360.0 |" \
	"follow: the load's cost per event, against untraced and kmemtraced alone, and kmemtrace-top's CPU (medians of 2 runs)"
like "$sec7" "| kmemtrace-top live alone (no kmemtraced) | 410 | $((410 - 169)) | +$((410 - 400)) | $(cpu 80) | 80.0 |" \
	"live: likewise"
like "$sec7" "refused, exit 3" "live beside kmemtraced: the refusal is shown"
like "$(part "$page" '^## Summary' '^## 1\.')" \
	"- kmemtrace-top: following kmemtraced's directory (-d), at 500 k events/s per CPU: $(awk -v e="$events" -v s="$secs" 'BEGIN { printf "%.1f", 360 * e / s / 1e7 }')% of a CPU, 360 instructions per event (4.0 times kmemtraced's own); the traced load's cost per event against kmemtraced alone: +3." \
	"the summary has kmemtrace-top's line"

# Kernel stacks: each row's added cost and bytes against perf -g's, the depth, the summary.
like "$sec8" "| kmemtrace with stacks, stack_depth=8 (frees too) | ${sadd[kmemtrace-stacks8]} | $(ratio "${sadd[kmemtrace-stacks8]}" "${sadd[perf-g]}") | ${sbytes[kmemtrace-stacks8]}.0 | $(ratio "${sbytes[kmemtrace-stacks8]}" "${sbytes[perf-g]}") |" \
	"stacks at depth 8: added cost and bytes per event, each against perf -g's"
like "$sec8" "| perf record -a -g, the same four kmem events with callchains | ${sadd[perf-g]} | 1.00 | ${sbytes[perf-g]}.0 | 1.00 |" \
	"perf -g's own row"
like "$sec8" "stack_depth=32: 5 frames (median)" "the median depth of the events' stacks, from the trace"
like "$(part "$page" '^## Summary' '^## 1\.')" \
	"- Stacks (6.1, module workload): kmemtrace's added cost per event with stacks ÷ perf record -g's, by stack_depth: 8: $(ratio "${sadd[kmemtrace-stacks8]}" "${sadd[perf-g]}")x, 32: $(ratio "${sadd[kmemtrace-stacks32]}" "${sadd[perf-g]}")x" \
	"the summary has the stacks line"

# Every section of the page the run had no results for is kept word for word, in order.
# A section per file, without the blank lines that end it (the page's separators).
split() {
	awk -v d="$2" '/^## / { flush(); n++ } { buf[++m] = $0 }
		function flush() { while (m && buf[m] == "") m--; for (i = 1; i <= m; i++) print buf[i] > (d "/" n + 0); m = 0 }
		END { flush() }' "$1"
}
mkdir -p "$T/old" "$T/new"
printf '%s\n' "$page" >"$T/page.md"
split "$TOP/BENCHMARKS.md" "$T/old"
split "$T/page.md" "$T/new"
heads_old=$(grep '^## ' "$TOP/BENCHMARKS.md" | grep -v '^## [678]\.')
heads_new=$(grep '^## ' "$T/page.md" | grep -v '^## [678]\.')
is "$heads_new" "$heads_old" "the other sections' headings, in order"
same=0
for f in "$T"/old/*; do
	h=$(head -n 1 "$f")
	case $h in "## Summary" | "## 6."* | "## 7."* | "## 8."*) continue ;; esac
	g=$(grep -lxF -- "$h" "$T"/new/* | head -n 1)
	[ -n "$g" ] && cmp -s "$f" "$g" && continue
	[ "$h" = "$(head -n 1 "$T/old/0")" ] && [ "$(basename "$f")" = 0 ] && cmp -s "$f" "$T/new/0" &&
		continue
	echo "#   changed: $h"
	same=1
done
ok "$same" "the sections without results are unchanged"

# Malformed results: an error naming the file, not a traceback.
printf '500000\t1\tfollow\n' >>"$R/drain/top.tsv"
run "$RENDER" --update -n "$R"
ok "$([ "$rc" = 1 ]; echo $?)" "a short line in top.tsv: exit 1"
like "$err" "top.tsv: a line with 3 fields" "... naming the file and what is wrong"
ok "$([[ $err != *Traceback* ]]; echo $?)" "... without a traceback"
echo x >"$P/batch.txt"
run "$RENDER" --update -n "$R"
like "$err" "batch.txt: 'x' is not a batch size" "a bad batch.txt: named"

# Part 1 on amd64 and on arm64 (its guest has no perf): one column each, one summary line each.
R2=$T/res2
A=6.1.0-56-arm64
mkdir -p "$R2/overhead/$K" "$R2/overhead/$A"
cat >"$R2/run.txt" <<EOF
date 2026-01-01 00:00 UTC
commit 0123abc
parts overhead
kernels $K
cross_kernels $A
cross_missing s390x
guest_kernel $K
qemu_arm64 qemu-system-aarch64: QEMU emulator version 7.2.0
EOF
echo arm64 >"$R2/overhead/$A/arch.txt"
declare -A x86=([kmemtrace]=300 [kmemtrace-probe]=220 [ftrace]=600 [perf]=1600)
declare -A arm=([kmemtrace]=480 [kmemtrace-probe]=360 [ftrace]=690)
oh_lines() {	# DIR ADDED-ARRAY-NAME: three rounds of both workloads
	local -n add=$2
	local r w m a
	for r in 1 2 3; do
		for w in module user; do
			printf '%s\tnone\t%s\t700000\t%s\t0\t0\t0\t0\n' "$r" "$w" "$ev"
			for m in "${!add[@]}"; do
				a=${add[$m]}
				printf '%s\t%s\t%s\t%s\t%s\t%s\t0\t%s\t0\n' "$r" "$m" "$w" \
					$((700000 + a * ev)) "$ev" "$ev" $((64 * ev))
			done
		done
	done >"$1/overhead.tsv"
}
# perf_stats DIR: perf report --stats' counts for perf's runs of both workloads, one per event.
perf_stats() {
	printf 'perf-module\t%s\t0\t0\nperf-user\t%s\t0\t0\n' "$ev" "$ev" >"$1/perf-stats.tsv"
}
# render_part1 DESC ARG...: render, then part 1's section in $sec1 and the summary in $sum.
render_part1() {
	render "$@"
	sec1=$(part "$out" '^## 1\.' '^## 4\.')
	sum=$(part "$out" '^## Summary' '^## 1\.')
}
oh_lines "$R2/overhead/$K" x86
oh_lines "$R2/overhead/$A" arm
perf_stats "$R2/overhead/$K"
render_part1 "bench-render -n, overhead on amd64 and arm64: exit 0" -n "$R2"
like "$sec1" "| added instructions / slab event | 6.1 \`$K\` | 6.1 arm64 \`$A\` |" \
	"an arm64 column beside amd64's"
like "$sec1" "| kmemtrace (module + kmemtraced draining to a file) | ${x86[kmemtrace]} | ${arm[kmemtrace]} |" \
	"each column's added cost per event"
like "$sec1" "| perf record -a, the same four kmem events | ${x86[perf]} | not measured |" \
	"arm64's perf cell: not measured"
x_r=$(ratio "${x86[kmemtrace]}" "${x86[ftrace]}")
a_r=$(ratio "${arm[kmemtrace]}" "${arm[ftrace]}")
like "$sec1" "| **kmemtrace ÷ ftrace** | **$x_r** | **$a_r** |" "the ratio to ftrace in each column"
like "$sec1" "perf: not measured on arm64 (no perf binary for the guest)" "the page says why"
like "$sec1" "Not measured: s390x, whose kernel of the matrix is not installed here (\`scripts/install-cross s390x\`)." \
	"an architecture asked for without its kernel: said so"
like "$sum" "- Overhead: kmemtrace's added cost per event against ftrace's (module / user workload): 6.1 ${x_r}x / ${x_r}x; target" \
	"the summary's amd64 line has amd64's kernels only"
like "$sum" "- Overhead: arm64: kmemtrace's added cost per event against ftrace's (module / user workload): 6.1 arm64 ${a_r}x / ${a_r}x; target at most 0.4x on every kernel: **missed** on 6.1 arm64 (module), 6.1 arm64 (user)." \
	"the summary's arm64 line, judged against the target"
p_r=$(ratio "${x86[kmemtrace]}" "${x86[perf]}")
like "$sum" "6.1 ${p_r}x / ${p_r}x; perf: not measured on arm64 (no perf binary for the guest)." \
	"perf's summary line: amd64's ratio, and arm64 not measured"
like "$out" "qemu-system-aarch64: QEMU emulator version 7.2.0" "the arm64 guest's qemu is named"
like "$(part "$out" "^#### $A" '^## ')" \
	"perf: not measured on arm64 (no perf binary for the guest)." "... and again in arm64's own tables"
# The plot compares one instruction set: its data has amd64's kernels only.
is "$(head -n 1 "$R2/plot/overhead-module.dat")" "method 6.1" "the plot's data: amd64's kernels only"
is "$(cut -d' ' -f1 "$R2/plot/overhead-module.dat" | sed 1d | tr '\n' ' ')" \
	'"kmemtrace" "kmemtrace-probe" "ftrace" "perf" ' "... and the methods the part ran only"

# The write-floor method (the kernel's writes of kmemtraced's bytes alone): its whole time an
# event, not less the untraced time; the drain (kmemtrace less its probes) over it, in the
# table and the summary; not a line of the plot.
R2f=$T/res2f
mkdir -p "$R2f/overhead/$K"
sed '/^cross_/d' "$R2/run.txt" >"$R2f/run.txt"
floor=64
oh_lines "$R2f/overhead/$K" x86
for r in 1 2 3; do
	for w in module user; do
		printf '%s	write-floor	%s	%s	%s	0	0	%s	0
' "$r" "$w" \
			$((floor * ev + (r - 2) * 100)) "$ev" $((64 * ev))
	done
done >>"$R2f/overhead/$K/overhead.tsv"
perf_stats "$R2f/overhead/$K"
render_part1 "bench-render -n, overhead with write-floor: exit 0" -n "$R2f"
like "$sec1" "| no tracing: write(2) of the bytes kmemtraced wrote, to tmpfs alone (its whole time, not added: the drain's floor) | $floor |" \
	"write-floor's row: its whole time an event"
f_r=$(ratio $((x86[kmemtrace] - x86[kmemtrace-probe])) "$floor")
like "$sec1" "| kmemtraced's drain ÷ the same bytes' write(2) alone (write-floor) | $f_r |" \
	"the drain over the floor"
like "$sum" "kmemtraced's drain against the kernel's write(2) of the same bytes to tmpfs alone, the floor of a drain through the page cache (module / user workload): 6.1 ${f_r}x / ${f_r}x." \
	"... and in the summary"
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }
like "$(part "$out" "^#### $K" '^## ')" "$(commas $((64 * ev))) bytes written" \
	"its kept column: the bytes it wrote"
[[ $(cut -d' ' -f1 "$R2f/plot/overhead-module.dat") != *write-floor* ]]
ok $? "write-floor is no line of the plot"

# The same with arm64's own perf in its guest (bench-guest's perf.txt: install-cross --perf):
# its perf cells and ratio measured, the perf summary line has both, no "not measured".
R2p=$T/res2p
mkdir -p "$R2p/overhead"
cp "$R2/run.txt" "$R2p/"
cp -r "$R2/overhead/$K" "$R2/overhead/$A" "$R2p/overhead/"
echo 6.1.192-3 >"$R2p/overhead/$A/perf.txt"
arm[perf]=2400
oh_lines "$R2p/overhead/$A" arm
perf_stats "$R2p/overhead/$A"
render_part1 "bench-render -n, overhead on amd64 and on arm64 with its perf: exit 0" -n "$R2p"
like "$sec1" "| perf record -a, the same four kmem events | ${x86[perf]} | ${arm[perf]} |" \
	"arm64's perf cell: measured, with its own perf"
ap_r=$(ratio "${arm[kmemtrace]}" "${arm[perf]}")
like "$sec1" "| **kmemtrace ÷ perf record** (same four events) | **$p_r** | **$ap_r** |" \
	"... and its ratio"
like "$sum" "6.1 ${p_r}x / ${p_r}x; 6.1 arm64 ${ap_r}x / ${ap_r}x." \
	"perf's summary line: amd64's and arm64's ratios"
like "$sec1" "perf is Debian 12's arm64 linux-perf (6.1.192-3), run in the guest with the shared libraries it needs." \
	"the page names the guest's perf"
[[ $out != *"not measured on arm64"* ]]
ok $? "... and never says it was not measured"
unset 'arm[perf]'

# Beside the previous commit (KMT_BENCH_BASE: bench-guest's kmemtrace-base method and base.txt):
# its rows and ratio, named by the commit, and its ratios in the summary line.
R3=$T/res3
mkdir -p "$R3/overhead/$K"
sed '/^cross_/d; /^qemu_arm64/d' "$R2/run.txt" >"$R3/run.txt"
declare -A x86b=([kmemtrace]=300 [kmemtrace-base]=330 [kmemtrace-probe]=220
	[kmemtrace-probe-base]=235 [ftrace]=600 [perf]=1600)
oh_lines "$R3/overhead/$K" x86b
cp "$R2/overhead/$K/perf-stats.tsv" "$R3/overhead/$K/"
printf 'HEAD~1\t89abcdef0123456789abcdef0123456789abcdef\n' >"$R3/overhead/$K/base.txt"
render "bench-render -n, overhead beside the previous commit: exit 0" -n "$R3"
# Another base than HEAD~1 is named by its id alone.
sed -i 's/^HEAD~1/e401eb3/' "$R3/overhead/$K/base.txt"
run "$RENDER" -n "$R3"
like "$out" "| kmemtrace at commit 89abcde ÷ ftrace | $(ratio "${x86b[kmemtrace-base]}" "${x86b[ftrace]}") |" \
	"a base other than the previous commit: named by its id"
sed -i 's/^e401eb3/HEAD~1/' "$R3/overhead/$K/base.txt"
render_part1 "bench-render -n, overhead beside the previous commit, again: exit 0" -n "$R3"
like "$out" "Beside this commit's, the same rounds trace each workload with the module and kmemtraced of commit 89abcde" \
	"the section says what the base rows are"
like "$sec1" "| kmemtrace at the previous commit (89abcde) (its module + kmemtraced, likewise) | ${x86b[kmemtrace-base]} |" \
	"the previous commit's added cost per event, named by its commit"
like "$sec1" "| kmemtrace probes only at the previous commit (89abcde) (its module, no daemon) | ${x86b[kmemtrace-probe-base]} |" \
	"the previous commit's probes alone, likewise"
like "$sec1" "| kmemtraced's drain (kmemtrace less its probes only) | $((x86b[kmemtrace] - x86b[kmemtrace-probe])) |" \
	"what kmemtraced's drain adds: kmemtrace less its probes alone"
like "$sec1" "| kmemtraced's drain at the previous commit (89abcde), likewise | $((x86b[kmemtrace-base] - x86b[kmemtrace-probe-base])) |" \
	"... and at the previous commit"
b_r=$(ratio "${x86b[kmemtrace-base]}" "${x86b[ftrace]}")
x_r=$(ratio "${x86b[kmemtrace]}" "${x86b[ftrace]}")
like "$sec1" "| kmemtrace at the previous commit (89abcde) ÷ ftrace | $b_r |" \
	"... and its ratio to ftrace, measured in the same guest"
like "$sum" "6.1 ${x_r}x / ${x_r}x; target at most 0.4x on every kernel: **missed** on 6.1 (module), 6.1 (user); at the previous commit (89abcde) in the same guests: 6.1 ${b_r}x / ${b_r}x." \
	"the summary line has the previous commit's ratios beside this one's"

# Context switches where the guest counted them (the tenth column; "-" where not): a column of
# their medians in that workload's table only, and each method's added cost at equal switches.
# Each of the user workload's runs takes 1,000 ns more a switch, its method's count different
# from the untraced runs': less that, each method's added cost is its own again.
R4=$T/res4
cp -r "$R3" "$R4"
awk -F '\t' -v OFS='\t' '{
	base = $2 == "none" ? 2000 : $2 == "ftrace" ? 800 : 3000 + length($2)
	c = base + 10 * $1
	if ($3 == "user") $4 += 1000 * c
	print $0, $3 == "user" ? c : "-"
}' "$R3/overhead/$K/overhead.tsv" >"$R4/overhead/$K/overhead.tsv"
render_part1 "bench-render -n, overhead with context switches counted: exit 0" -n "$R4"
# The per-kernel table's rows: untraced, ftrace's, each with the median last.
row_of() { printf '%s\n' "$sec1" | grep -F "| $1 | " | grep -F "ms |" | grep -F " | $2 |"; }
is "$(printf '%s\n' "$sec1" | grep -cF '| events kept | context switches (median) |')" 1 \
	"a column of them in the user workload's table only, not the module workload's"
like "$(row_of untraced 2,020)" "| untraced |" "... the median of the untraced runs' counts"
like "$(row_of 'ftrace: kmem events into the ring buffer (no reader)' 820)" "| ftrace" \
	"... and of ftrace's"
like "$sec1" "Its time follows its count of context switches" "... and a line says what they mean"
like "$(row_of 'kmemtrace (module + kmemtraced draining to a file)' 3,029)" \
	" | 3,029 | ${x86b[kmemtrace]} |" "kmemtrace's added cost at equal switches: its own again"
like "$(row_of 'ftrace: kmem events into the ring buffer (no reader)' 820)" \
	" | 820 | ${x86b[ftrace]} |" "... and ftrace's, whose runs switched less than the untraced"

# --update: the new part's summary lines stand where those they replace stood.
render "bench-render --update -n, overhead: exit 0" --update -n "$R2"
sum=$(part "$out" '^## Summary' '^## 1\.')
first=$(printf '%s\n' "$sum" | grep -m 1 '^- ')
old_first=$(part "$(cat "$TOP/BENCHMARKS.md")" '^## Summary' '^## 1\.' | grep -m 1 '^- ')
if [[ $old_first == "- Overhead: "* ]]; then
	like "$first" "- Overhead: kmemtrace's added cost per event" \
		"--update: the overhead lines replace the old ones in place, not at the end"
else
	skip "BENCHMARKS.md's summary does not start with the overhead lines"
fi

# Part 3, the report's speed, beside an earlier commit (bench-report --base) with a profile: the
# events per second, speed-ups, verdicts and profile times are those of the numbers written here.
R3=$T/res3
mkdir -p "$R3"
printf 'date 2026-01-01 00:00 UTC\ncommit 0123abc\nparts report\n' >"$R3/run.txt"
printf 'base\t0084913\t0084913aaaabbbbccccddddeeeeffff00001111\n' >"$R3/report-base.txt"
n3=100000000
# tool CPU-seconds (this commit) and CPU-seconds (earlier), over three rounds around the middle.
declare -A cpu_now=([cat]=0.50 [check]=1.25 [report]=2.50 [report-json]=3.20 [report-life]=4.00
	[report-alloc]=4.50 [report-stacks]=4.80 [report-html]=6.00 [report-j2]=2.60)
# Elapsed seconds: the default view takes 3.0 s on one thread and 2.0 s with -j 2.
declare -A el_now=([report]=3.00 [report-j2]=2.00)
declare -A cpu_old=([report]=5.00 [report-json]=5.50 [report-life]=8.00 [report-alloc]=9.00
	[report-stacks]=6.40 [report-html]=9.00 [report-j2]=5.20)
# ... and the earlier commit's: 6.0 s on one thread, 4.8 s with -j 2.
declare -A el_old=([report]=6.00 [report-j2]=4.80)
{
	printf 'events\tbytes\ttool\tcache\tround\telapsed_s\tuser_s\tsys_s\tmaxrss_kb\tstatus\n'
	for r in 1 2 3; do
		d=$(awk -v r="$r" 'BEGIN { printf "%.2f", (r - 2) * 0.01 }')
		for t in "${!cpu_now[@]}"; do
			printf '%s\t%s\t%s\twarm\t%s\t%s\t%s\t%s\t10000\t0\n' "$n3" $((n3 * 64)) "$t" "$r" \
				"${el_now[$t]:-9}" \
				"$(awk -v a="${cpu_now[$t]}" -v d="$d" 'BEGIN { printf "%.2f", a - 0.10 + d }')" 0.10
		done
		for t in "${!cpu_old[@]}"; do
			printf '%s\t%s\t%s@base\twarm\t%s\t%s\t%s\t0.00\t10000\t0\n' "$n3" $((n3 * 64)) \
				"$t" "$r" "${el_old[$t]:-9}" "$(awk -v a="${cpu_old[$t]}" -v d="$d" 'BEGIN { printf "%.2f", a + d }')"
		done
	done
} >"$R3/report.tsv"
printf 'commit\tsymbol\tpercent\nthis\tfeed_batch\t60.00\nthis\tmerge_run\t20.00\nbase\tfeed_batch\t80.00\nbase\t(kernel) _copy_to_iter\t5.00\n' \
	>"$R3/report-profile.tsv"
render "bench-render -n, report speed beside an earlier commit: exit 0" -n "$R3"
sec3=$(part "$out" '^## 3\.' '^## 4\.')
like "$sec3" "| 100,000,000 | kmemtrace-report (text) | 40.0 M/s | 20.0 M/s | 2.00x |" \
	"side by side: the text report's events/s now and before, and the speed-up"
like "$sec3" "| 100,000,000 | kmemtrace-report --lifetimes | 25.0 M/s | 12.5 M/s | 2.00x |" \
	"side by side: --lifetimes likewise"
like "$sec3" "kmemtrace-report (text): 40.0 M events/s on one thread, median of 3 rounds (target 30.0 M): **met**" \
	"the text report's target is 30 M events/s"
like "$sec3" "kmemtrace-report (text): 40.0 M events/s on one thread, median of 3 rounds (target 30.0 M): **met** (best round 40.2 M); 20.0 M at 0084913 in the same run;" \
	"... beside the earlier commit's rate"
like "$sec3" "5.0x cat's CPU time from the page cache (target 5x): **met**" \
	"... and within 5x cat's CPU"
like "$sec3" "-j 2 (the files read ahead on a second thread) is 1.50x as fast as -j 1 by elapsed time (target for -j N: 1.7x on 2 cores): **missed**" \
	"-j 2 against -j 1, by elapsed time, against its target"
like "$sec3" "**missed** (1.25x at 0084913 in the same run)" \
	"... and the earlier commit's -j 2 against its -j 1, measured in the same rounds"
like "$sec3" "| 100,000,000 | kmemtrace-report (text), -j 2: the files read ahead on a second thread | 38.5 M/s | 19.2 M/s | 2.00x |" \
	"side by side: -j 2 now and before"
like "$sec3" "kmemtrace-report --json: 31.2 M events/s on one thread, median of 3 rounds (target 30.0 M): **met**" \
	"--json: 30 M events/s too"
like "$sec3" "kmemtrace-report --alloc: 22.2 M events/s on one thread, median of 3 rounds (target 20.0 M): **met**" \
	"--alloc: 20 M events/s"
like "$sec3" "kmemtrace-report --stacks (a trace with stacks): 20.8 M events/s on one thread, median of 3 rounds (target 20.0 M): **met**" \
	"--stacks: 20 M events/s"
like "$sec3" "| feed_batch | 80.0% | 4.00 s | 60.0% | 1.50 s |" \
	"the profile: a function's share and time, before and now"
like "$sec3" "| (kernel) _copy_to_iter | 5.0% | 0.25 s | (not in its top 12) |  |" \
	"... and one in the earlier profile only"

done_testing
