# SPDX-License-Identifier: GPL-2.0-only
# kmemtraced/build.mk - placeholder until its programs land.
