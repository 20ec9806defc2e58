#!/bin/bash
# try.sh BUILD_DIR NAME...: runs coverage programs tests/coverage/NAME.c outside ctest, against the
# tsmpi of BUILD_DIR (its bin/tsmpirun; the MPI is the one it was built for): compiles each with
# the MPI's mpicc into /tmp/tsmpi-coverage-MPI/, runs it natively and in the three modes as ctest
# would, and prints the coverage of everything run there so far. For writing a program quickly.
set -u
build=$(cd "$1" && pwd); shift
here=$(cd "$(dirname "$0")" && pwd)
mpi=$(grep -oE 'built for (openmpi|mpich)' <("$build/bin/tsmpi-info" 2>/dev/null) | head -1 | awk '{print $3}')
[ -n "$mpi" ] || { echo "try.sh: $build/bin/tsmpi-info does not say which MPI it is for"; exit 2; }
case $mpi in
  openmpi) mpicc=mpicc.openmpi mpiexec=mpiexec.openmpi low=single ;;
  mpich) mpicc=mpicc.mpich mpiexec=mpiexec.mpich low=serialized ;;
esac
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe OMPI_MCA_btl_tcp_disable_family=6 PMIX_MCA_gds=hash OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=/tmp/tsmpi-coverage-$mpi
mkdir -p "$out"
status=0
for name in "$@"; do
  src=$here/$name.c
  np=$(sed -n 's|^// ranks: \([0-9]*\)$|\1|p' "$src" | head -1)
  [ -n "$np" ] || { echo "try.sh: $src has no '// ranks: N' line"; status=1; continue; }
  procs=$(sed -n "s|^// processes ($mpi): \([0-9]*\).*|\1|p" "$src" | head -1)
  $mpicc -O2 -g -Wall -Wno-stringop-overflow -o "$out/$name" "$src" -lpthread -ldl || { status=1; continue; }
  for mode in native default serialize check; do
    env=()
    case $mode in
      native) cmd=(timeout 120 $mpiexec -np "$np" "$out/$name") ;;
      *) cmd=(timeout 180 "$build/bin/tsmpirun" -np "$np" "$out/$name")
         env=(TSMPI_STATS=2)
         [ $mode = serialize ] && env+=(TSMPI_UNDERLYING_LEVEL=$low)
         [ $mode = check ] && env+=(TSMPI_CHECK=warn) ;;
    esac
    if env "${env[@]}" "$here/run_mode.sh" "$out" "$name" "${procs:-$np}" $mode -- "${cmd[@]}" >"$out/$name.$mode.log" 2>&1; then
      echo "try.sh: $mpi $name $mode: ok"
    else
      echo "try.sh: $mpi $name $mode: FAILED ($out/$name.$mode.log):"; tail -20 "$out/$name.$mode.log"; status=1
    fi
  done
done
python3 "$here/coverage_report.py" --fn-ids "$build/generated/fn_ids.h" --outdir "$out" --mpi $mpi
exit $status
