# SPDX-License-Identifier: GPL-2.0-only
# account.py - per-CPU record accounting of kmemtraced's cpuN.out files, for the guest tests.
#
# Usage: python3 account.py DIR/cpuN.out...
# One line per file: "CPU DATA LOSTSUM LOSTMARKERS GAPS FIRSTSEQ ENDSEQ": data records, the sum
# of the LOST records' counts, how many LOST records, seq breaks of the reader rule (a data
# record carries the expected seq; a LOST record carries expected + count), the first record's
# seq, and ENDSEQ, the seq the next data record would carry (a LOST record consumes none).
# FIRSTSEQ and ENDSEQ are "-" for a file without records. A trailing part-record is ignored.
import os
import struct
import sys

# The traced kernel's byte order (tests/guest/lib.sh exports it: ">" for s390x).
E = os.environ.get("KMT_GUEST_ENDIAN", "<")

LOST = 8

for path in sys.argv[1:]:
    with open(path, "rb") as f:
        f.read(64)
        data = f.read()
    data = data[:len(data) - len(data) % 64]
    ndata = lost_sum = markers = gaps = 0
    first = expect = None
    for t, _, _, seq, _, count in struct.iter_unpack(E + "BBHIQQ40x", data):
        if first is None:
            first = expect = seq
        if t == LOST:
            gaps += seq != (expect + count) % 2**32
            expect = seq
            lost_sum += count
            markers += 1
        else:
            gaps += seq != expect
            expect = (seq + 1) % 2**32
            ndata += 1
    cpu = int(os.path.basename(path)[3:].split(".")[0])
    print(cpu, ndata, lost_sum, markers, gaps, first if first is not None else "-",
          expect if expect is not None else "-")
