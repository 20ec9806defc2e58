#!/bin/bash
# same_output.sh OUTDIR NAME MODE NP -- COMMAND...
# One run of a Fortran semantics program (tests/fortran/semantics.cmake). COMMAND is run with
# the argument OUTDIR/NAME.MODE added at its end; the program's NP ranks write their lines to
# OUTDIR/NAME.MODE.rank0 ... .rankNP-1 (one file per rank: mpiexec forwards the ranks' standard
# output in chunks that can split lines), which are joined in rank order into OUTDIR/NAME.MODE.out.
# MODE "native" (COMMAND: the MPI's own mpiexec) must exit 0 with one line "...: rank N: ok" per
# rank; its output becomes the reference OUTDIR/NAME.native.out. Any other MODE (COMMAND:
# tsmpirun with the mode's TSMPI_* variables) must exit 0, write exactly the reference, and
# tsmpi must print nothing (it prints only when asked).
set -u
outdir=$1 name=$2 mode=$3 np=$4
shift 4
[ "$1" = "--" ] && shift
mkdir -p "$outdir"
base=$outdir/$name.$mode
rm -f "$base".rank* "$base.out" "$base.diff"
[ "$mode" = native ] && rm -f "$outdir/$name.native.out"
"$@" "$base" >"$base.stdout" 2>"$base.stderr"
rc=$?
for ((r = 0; r < np; r++)); do
  [ -f "$base.rank$r" ] && cat "$base.rank$r"
done >"$base.out"
cat "$base.out"
cat "$base.stdout"
cat "$base.stderr" >&2
bad=0
[ $rc -eq 0 ] || { echo "same_output.sh: $name ($mode) exited with status $rc"; bad=1; }
for ((r = 0; r < np; r++)); do
  [ -f "$base.rank$r" ] || { echo "same_output.sh: $name ($mode): rank $r wrote no $base.rank$r"; bad=1; }
done
if [ "$mode" = native ]; then
  ok=$(grep -Ec ': rank [0-9]+: ok$' "$base.out")
  [ "$ok" -eq "$np" ] || { echo "same_output.sh: native run of $name: $ok of $np ranks ok"; bad=1; }
  [ $bad -eq 0 ] && cp "$base.out" "$outdir/$name.native.out"
  exit $bad
fi
if [ ! -f "$outdir/$name.native.out" ]; then
  echo "same_output.sh: no native reference $outdir/$name.native.out"
  exit 1
fi
if ! diff "$base.out" "$outdir/$name.native.out" >"$base.diff"; then
  echo "same_output.sh: $name printed under tsmpi ($mode) (<) other than natively (>):"
  cat "$base.diff"
  bad=1
fi
# mpiexec forwards standard error in chunks that may split lines: searched as text.
if grep -q "tsmpi" "$base.stdout" "$base.stderr"; then
  echo "same_output.sh: tsmpi printed something ($mode):"
  grep -h "tsmpi" "$base.stdout" "$base.stderr"
  bad=1
fi
exit $bad
