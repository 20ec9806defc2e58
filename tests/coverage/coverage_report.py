#!/usr/bin/env python3
"""Function coverage of the coverage programs (tests/coverage): which of the functions tsmpi wraps
for this MPI were called through tsmpi, per mode, from the OUTDIR/*.MODE.functions files that
run_mode.sh writes. Prints one line per mode, writes the functions never called to
OUTDIR/uncovered.txt, and fails when a mode's coverage is below --min percent."""
import argparse
import glob
import os
import re
import sys


def wrapped_functions(fn_ids_h):
    text = open(fn_ids_h, encoding="utf-8").read()
    body = text[text.index("enum Id"):]
    return re.findall(r"^\s+(MPIX?_\w+),", body, re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fn-ids", required=True, help="the build's generated fn_ids.h")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--mpi", required=True)
    ap.add_argument("--modes", default="default,serialize,check")
    ap.add_argument("--min", type=float, default=0.0, help="fail below this percentage in any mode")
    args = ap.parse_args()

    wrapped = wrapped_functions(args.fn_ids)
    known = set(wrapped)
    status = 0
    uncovered_any = set()
    for mode in args.modes.split(","):
        called = set()
        for path in glob.glob(os.path.join(args.outdir, f"*.{mode}.functions")):
            called |= {line.strip() for line in open(path, encoding="utf-8") if line.strip()}
        stray = called - known
        if stray:
            print(f"coverage {args.mpi}: {mode}: functions called but not wrapped: {' '.join(sorted(stray))}")
            status = 1
        covered = called & known
        pct = 100.0 * len(covered) / len(wrapped)
        print(f"coverage {args.mpi}: {mode}: {len(covered)}/{len(wrapped)} wrapped functions exercised ({pct:.1f}%)")
        if pct < args.min:
            print(f"coverage {args.mpi}: {mode}: below {args.min:.0f}%")
            status = 1
        uncovered_any |= known - covered
    with open(os.path.join(args.outdir, "uncovered.txt"), "w", encoding="utf-8") as f:
        for name in sorted(uncovered_any, key=str.lower):
            f.write(name + "\n")
    print(f"coverage {args.mpi}: {len(uncovered_any)} functions not exercised in some mode: "
          f"{os.path.join(args.outdir, 'uncovered.txt')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
