#!/bin/bash
# run_mode.sh OUTDIR NAME NP MODE -- COMMAND...   (NP: processes, spawned ones included)
# One coverage run of test program NAME (tests/coverage/coverage.h: only rank 0 prints, so its
# standard output is the same from run to run). MODE "native" runs COMMAND (the MPI's own mpiexec)
# and keeps its standard output as the reference. Any other MODE runs COMMAND (tsmpirun with the
# mode's TSMPI_* variables and TSMPI_STATS=2) and checks that the program printed exactly what it
# printed natively, that tsmpi reported nothing on standard error but its NP statistics blocks,
# and writes the functions called through tsmpi (those blocks' "functions:" lines), one per line,
# to OUTDIR/NAME.MODE.functions for coverage_report.py.
set -u
outdir=$1 name=$2 np=$3 mode=$4
shift 4
[ "$1" = "--" ] && shift
mkdir -p "$outdir"
out=$outdir/$name.$mode.stdout err=$outdir/$name.$mode.stderr
# The program's report goes to a file of its own (coverage.h: COV_OUTPUT), not through mpiexec's
# forwarding of standard output, which Open MPI 5.0 mixed into standard error.
rm -f "$out"
COV_OUTPUT=$out "$@" >"$out.mpiexec" 2>"$err"
rc=$?
[ -f "$out" ] || cp "$out.mpiexec" "$out"  # a program that ended before its report
cat "$out.mpiexec" "$out"
cat "$err" >&2
if [ "$mode" = native ]; then
  [ $rc -eq 0 ] || { echo "run_mode.sh: native run of $name failed with status $rc"; exit 1; }
  grep -q "^$name: done$" "$out" || { echo "run_mode.sh: native run of $name did not end with '$name: done'"; exit 1; }
  cp "$out" "$outdir/$name.native.out"
  exit 0
fi
bad=0
[ $rc -eq 0 ] || { echo "run_mode.sh: $name under tsmpi ($mode) exited with status $rc"; bad=1; }
[ -f "$outdir/$name.native.out" ] || { echo "run_mode.sh: no native reference $outdir/$name.native.out"; exit 1; }
if ! diff "$out" "$outdir/$name.native.out" >"$outdir/$name.$mode.diff"; then
  echo "run_mode.sh: $name printed under tsmpi ($mode) (<) other than natively (>):"
  cat "$outdir/$name.$mode.diff"
  bad=1
fi
# mpiexec forwards each rank's standard error in chunks that may split lines, so tsmpi's output
# is searched as text, not line by line.
if grep -q "tsmpi: " "$err"; then
  echo "run_mode.sh: tsmpi reported on a correct program ($mode):"; grep "tsmpi: " "$err"; bad=1
fi
blocks=$(grep -o "tsmpi stats rank " "$err" | wc -l)
[ "$blocks" -eq "$np" ] || { echo "run_mode.sh: $blocks statistics blocks, expected $np"; bad=1; }
grep -oP '(?<![A-Za-z0-9_])MPIX?_[A-Za-z0-9_]+(?==[0-9]+)' "$err" | sort -u >"$outdir/$name.$mode.functions"
exit $bad
