# SPDX-License-Identifier: GPL-2.0-only
# report/build.mk - placeholder until its programs land.
