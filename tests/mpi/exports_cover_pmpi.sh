#!/bin/bash
# Every PMPI_X (and PMPIX_X) the MPI library exports must have an MPI_X in libtsmpi.so.
set -eu
tsmpi_lib=$1; mpi_lib=$2
missing=$(comm -23 \
  <(nm -D --defined-only "$mpi_lib" | awk '$3 ~ /^PMPIX?_/ {print substr($3, 2)}' | sort -u) \
  <(nm -D --defined-only "$tsmpi_lib" | awk '$3 ~ /^MPIX?_/ {print $3}' | sort -u))
pmpi=$(nm -D --defined-only "$mpi_lib" | awk '$3 ~ /^PMPI_/' | wc -l)
ours=$(nm -D --defined-only "$tsmpi_lib" | awk '$3 ~ /^MPI_/' | wc -l)
echo "MPI library exports $pmpi PMPI_ functions; libtsmpi.so defines $ours MPI_ functions"
if [ -n "$missing" ]; then
  echo "not wrapped:" $missing
  exit 1
fi
