#!/bin/bash
# stacks_on_timeout.sh SECONDS -- COMMAND...: runs COMMAND and exits with its status. If it is
# still running after SECONDS (tsmpi_mpi_test sets this below ctest's TIMEOUT), prints the stack
# of every thread of every MPI process it started, one line per thread, kills them all and exits
# 124. A test that hangs once in a thousand runs in CI is otherwise only "timed out": these lines
# are what scripts/lib/failure_reasons.awk puts in the summary. Needs gdb; without it, each
# thread's kernel wait channel instead.
set -u
limit=$1
shift
[ "${1:-}" = "--" ] && shift
wrapper=$$
# The timer: the command runs in the foreground, as it would without this script (a background
# job of a shell gets SIGINT ignored).
(
  sleep "$limit" </dev/null >/dev/null 2>&1 &
  sleeper=$!
  wait "$sleeper" || exit 0
  # Every process below COMMAND (the launcher, its daemons, the ranks), by parent links: this
  # script's children but the timer itself.
  timer=$BASHPID
  descendants() {
    local all=() i=0 p
    for p in $(pgrep -P "$wrapper"); do [ "$p" = "$timer" ] || all+=("$p"); done
    while [ $i -lt ${#all[@]} ]; do
      for p in $(pgrep -P "${all[$i]}"); do all+=("$p"); done
      i=$((i + 1))
    done
    printf '%s\n' "${all[@]}"
  }
  procs=$(descendants)
  echo "stacks_on_timeout: still running after $limit s: $(for p in $procs; do printf '%s ' "$(cat /proc/$p/comm 2>/dev/null)"; done)"
  for p in $procs; do
    grep -q 'libmpi' "/proc/$p/maps" 2>/dev/null || continue  # the ranks, not launchers or shells
    name=$(cat "/proc/$p/comm" 2>/dev/null)
    if command -v gdb >/dev/null; then
      # "#3  0x... in tsmpi::serial::wait_in_room (w=...) at ..." -> the function's name, innermost
      # first; frames of libc's waits are kept, they say how the thread waits.
      # Namespaces tsmpi:: and anonymous ones and template arguments are dropped: short lines.
      timeout 20 gdb -p "$p" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt 14' 2>/dev/null |
        awk -v pid="$p" -v name="$name" '
          # The event threads of the MPI, PMIx and UCX are in every process: left out.
          function flush() {
            if (t != "" && s !~ / (event_base_loop|ucs_event_set_wait) /) print "stacks_on_timeout: " name " " pid " thread " t ":" s
            t = ""; s = ""
          }
          /^Thread [0-9]+ / { flush(); t = $2; next }
          /^#[0-9]+ / {
            f = $0
            sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, "", f)
            gsub(/\(anonymous namespace\)::|tsmpi::/, "", f)
            while (gsub(/<[^<>]*>/, "", f)) {}  # template arguments
            sub(/ \(.*$/, "", f)
            s = s " " f
          }
          END { flush() }'
    else
      for t in /proc/"$p"/task/*; do
        echo "stacks_on_timeout: $name $p thread ${t##*/}: $(cat "$t/wchan" 2>/dev/null) $(cut -d' ' -f3 "$t/stat" 2>/dev/null)"
      done
    fi
  done
  for p in $procs; do kill -KILL "$p" 2>/dev/null; done
) &
timer=$!
"$@"
rc=$?
if kill -0 "$timer" 2>/dev/null; then
  pkill -P "$timer" 2>/dev/null
  kill "$timer" 2>/dev/null
  wait "$timer" 2>/dev/null
  exit $rc
fi
exit 124
