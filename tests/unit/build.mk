# SPDX-License-Identifier: GPL-2.0-only
# tests/unit/build.mk - placeholder until its programs land.
