#!/bin/bash
# models/check.sh MODEL.pml WORKDIR [--safety-only] [--expect-livelock-without DEFINE]
#                 [--expect-deadlock-without DEFINE] [--expect-assertion-with MUTANT]...
#                 [--expect-deadlock-with MUTANT]... [-DDEFINE...]
# Model-checks MODEL with spin: no assertion violations, no invalid end states (deadlock) and,
# under weak fairness, no non-progress cycles (livelock); --safety-only leaves the livelock
# check out (for models that do not claim livelock freedom). The negative controls show that
# the model can fail: with --expect-livelock-without D it also checks the model without -DD and
# requires spin to find a non-progress cycle there; with --expect-deadlock-without D it requires
# spin to find an invalid end state (deadlock) without -DD. Mutants are the other way round:
# with --expect-assertion-with M (--expect-deadlock-with M) spin must find an assertion
# violation (an invalid end state) in the model with -DM added; both may be repeated.
set -euo pipefail
model=$(realpath "$1"); work=$2; shift 2
control=""; control_kind=""; safety_only=""; mutants=()
while [ $# -gt 0 ]; do
  case $1 in
    --expect-livelock-without) control=$2; control_kind=livelock; shift 2 ;;
    --expect-deadlock-without) control=$2; control_kind=deadlock; shift 2 ;;
    --safety-only) safety_only=1; shift ;;
    --expect-assertion-with) mutants+=("$2:assertion"); shift 2 ;;
    --expect-deadlock-with) mutants+=("$2:deadlock"); shift 2 ;;
    *) break ;;
  esac
done
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
    gcc -O2 -w -DNP -DNFAIR=4 -o pan pan.c
    out=$(./pan -m1000000 -l -f)
  fi
  printf '%s\n' "$out" >pan.out
  cd ..
  grep -E "errors:|non-progress cycle|invalid end state|assertion violated|states, stored|elapsed time|max search depth too small" <<<"$out" | sed "s/^/  $name: /" >&2
  if grep -q "max search depth too small" <<<"$out"; then echo truncated; return; fi
  grep -oE "errors: [0-9]+" <<<"$out" | awk '{print $2}'
}

status=0
e=$(verify deadlock safety "${defines[@]+"${defines[@]}"}")
if [ "$e" != 0 ]; then
  if [ "$e" = truncated ]; then echo "FAIL: spin's search was truncated (depth limit)"
  elif grep -q "assertion violated" deadlock/pan.out; then echo "FAIL: spin found an assertion violation"
  else echo "FAIL: spin found a deadlock"; fi
  status=1
fi
if [ -z "$safety_only" ]; then
  e=$(verify livelock progress "${defines[@]+"${defines[@]}"}"); [ "$e" = 0 ] || { echo "FAIL: spin found a livelock"; status=1; }
fi
if [ -n "$control" ]; then
  others=()
  for d in "${defines[@]+"${defines[@]}"}"; do [ "$d" = "-D$control" ] || others+=("$d"); done
  if [ "$control_kind" = livelock ]; then
    e=$(verify control progress "${others[@]+"${others[@]}"}")
    [ "$e" != 0 ] || { echo "FAIL: without -D$control spin should find the livelock"; status=1; }
  else
    e=$(verify control safety "${others[@]+"${others[@]}"}")
    { [ "$e" != 0 ] && grep -qE "^pan:[0-9]+: invalid end state" control/pan.out; } ||
      { echo "FAIL: without -D$control spin should find the deadlock (an invalid end state)"; status=1; }
  fi
fi
caught=""
for m in "${mutants[@]+"${mutants[@]}"}"; do
  d=${m%%:*}; kind=${m#*:}
  e=$(verify "mutant_$d" safety "${defines[@]+"${defines[@]}"}" "-D$d")
  if [ "$kind" = assertion ]; then
    pattern="^pan:[0-9]+: assertion violated"; what="an assertion violation"
  else
    pattern="^pan:[0-9]+: invalid end state"; what="the deadlock (an invalid end state)"
  fi
  if [ "$e" != 0 ] && [ "$e" != truncated ] && grep -qE "$pattern" "mutant_$d/pan.out"; then
    caught+="${caught:+, }$d ($kind)"
  else
    echo "FAIL: with -D$d spin should find $what"; status=1
  fi
done
if [ -n "$safety_only" ]; then
  summary="no deadlock, no assertion violation (livelock not checked)"
else
  summary="no deadlock, no livelock"
fi
[ $status = 0 ] && echo "spin: $(basename "$model"): $summary${control:+; $control_kind found without -D$control as expected}${caught:+; mutants caught: $caught}"
exit $status
