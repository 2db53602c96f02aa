#!/usr/bin/env python3
"""The file system's floor of a small-file build (README, "Small files: system time"): read every
source file under SOURCE and write three small files per source into 256 fan-out folders under
OUT, each under a temporary name and renamed (what any atomic writer does), single-threaded.
Run it under `/usr/bin/time` and compare its system seconds with a cold build's.

Usage: python3 scripts/benchmarks/fs-floor.py SOURCE OUT
"""
import sys

if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
    asked = sys.argv[1:2] in (["-h"], ["--help"])
    (sys.stdout if asked else sys.stderr).write(__doc__)
    sys.exit(0 if asked else 64)

import os
import sys


def main():
    source, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    written = 0
    for root, _, files in os.walk(source):
        for name in sorted(files):
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            for copy in range(3):
                written += 1
                folder = os.path.join(out, "%02x" % (written % 256))
                if not os.path.isdir(folder):
                    os.mkdir(folder)
                final = os.path.join(folder, "%08d-%d.jpg" % (written, copy))
                temporary = final + ".tmp"
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.write(fd, data[:700])
                os.close(fd)
                os.rename(temporary, final)


if __name__ == "__main__":
    main()
