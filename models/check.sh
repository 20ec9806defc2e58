#!/bin/bash
# models/check.sh MODEL.pml WORKDIR [--expect-livelock-without DEFINE] [-DDEFINE...]
# Model-checks MODEL with spin: no invalid end states (deadlock) and, under weak fairness, no
# non-progress cycles (livelock). With --expect-livelock-without D it also checks the model
# without -DD and requires spin to find a non-progress cycle there: the negative control that
# shows the model can fail.
set -euo pipefail
model=$(realpath "$1"); work=$2; shift 2
control=""
if [ "${1:-}" = "--expect-livelock-without" ]; then control=$2; shift 2; fi
defines=("$@")
mkdir -p "$work" && cd "$work"

verify() {  # verify NAME MODE [defines...]; prints spin's summary, returns pan's error count
  local name=$1 mode=$2; shift 2
  rm -rf "$name" && mkdir "$name" && cd "$name"
  spin "$@" -a "$model" >/dev/null
  local out
  if [ "$mode" = safety ]; then
    gcc -O2 -w -DSAFETY -o pan pan.c
    out=$(./pan -m1000000)
  else
    gcc -O2 -w -DNP -DNFAIR=3 -o pan pan.c
    out=$(./pan -m1000000 -l -f)
  fi
  cd ..
  grep -E "errors:|non-progress cycle|invalid end state|states, stored" <<<"$out" | sed "s/^/  $name: /" >&2
  grep -oE "errors: [0-9]+" <<<"$out" | awk '{print $2}'
}

status=0
e=$(verify deadlock safety "${defines[@]}"); [ "$e" = 0 ] || { echo "FAIL: spin found a deadlock"; status=1; }
e=$(verify livelock progress "${defines[@]}"); [ "$e" = 0 ] || { echo "FAIL: spin found a livelock"; status=1; }
if [ -n "$control" ]; then
  others=()
  for d in "${defines[@]}"; do [ "$d" = "-D$control" ] || others+=("$d"); done
  e=$(verify control progress "${others[@]+"${others[@]}"}")
  [ "$e" != 0 ] || { echo "FAIL: without -D$control spin should find the livelock"; status=1; }
fi
[ $status = 0 ] && echo "spin: $(basename "$model"): no deadlock, no livelock${control:+; livelock found without -D$control as expected}"
exit $status
