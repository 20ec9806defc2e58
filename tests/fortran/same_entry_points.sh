#!/bin/bash
# same_entry_points.sh PROGDIR: every Fortran test program built with `use mpi` calls exactly the
# MPI entry points its mpif.h build calls (the undefined dynamic symbols naming MPI). This is why
# the use_mpi variants of the tests run under one MPI only (label one_mpi, tests/CMakeLists.txt):
# at run time tsmpi cannot tell the two bindings apart. On an MPI where they differ, this fails
# and the use_mpi variants must run there too.
set -uo pipefail
dir=$1
pairs=0 differ=0
entry_points() { nm -D --undefined-only "$1" | awk '{print $NF}' | grep -i 'mpi' | sed 's/@.*//' | sort -u; }
for use_mpi in "$dir"/*.use_mpi; do
  mpif_h=${use_mpi%.use_mpi}.mpif_h
  [ -x "$mpif_h" ] || { echo "FAILED: $use_mpi has no mpif.h build"; differ=$((differ + 1)); continue; }
  pairs=$((pairs + 1))
  if ! d=$(diff <(entry_points "$mpif_h") <(entry_points "$use_mpi")); then
    echo "FAILED: $(basename "${use_mpi%.use_mpi}"): use mpi and mpif.h call different entry points:"
    sed 's/^/  /' <<<"$d"
    differ=$((differ + 1))
  fi
done
[ $pairs -gt 0 ] || { echo "FAILED: no use_mpi program in $dir"; exit 1; }
echo "same_entry_points: $pairs programs, $differ differ"
[ $differ -eq 0 ]
