#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# 48-golden.t - every view of kmemtrace-report in every format, the HTML page and kmemtrace_check,
# on generated traces and a real guest trace, byte for byte as tests/golden/expected/ holds them
# (tests/golden/run; after an intended change: tests/golden/run --update, and review the diff).
cd "$(dirname "$0")/../.." || exit 1
exec tests/golden/run "$@"
