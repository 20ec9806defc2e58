#!/bin/bash
# faults_run.sh [--within S] [--total S] [--grace S] -- COMMAND...
# Runs COMMAND (an mpiexec or tsmpirun job of tests/mpi/faults.c) in a session of its own, with
# one more argument, faults_marks=FILE: a new file the program appends its marks to (a launcher
# may drop a rank's last output when it ends the job), whose unique name also marks the job's
# processes. Echoes the job's output, then each mark as "faults_run: mark: LINE".
# Fails, printing a line that starts with "faults_run: FAILED", when
#   - the job has not ended --total S seconds after it started (default 60): a hang;
#   - it ended more than --within S seconds after the last "at t=SECONDS" mark of the program
#     (CLOCK_REALTIME just before MPI_Abort, raise(SIGKILL), exit or the end of main; from the
#     file, else from the output), or there is no mark at all (--within is optional);
#   - a process of the job (its session, a command line with the token, a descendant of the
#     launcher seen while the job ran) is still alive
#     --grace S seconds after the job's mpiexec returned (default 1).
# In the first and last case it prints every such process's threads' stacks (gdb; FAULTS_GDB=0:
# not) and kills them. Exit status: the job's, or 125 on a failure above (so expect.sh can
# check the job's status and --lacks "^faults_run: FAILED"); 213, the status of Open MPI 5's
# launcher failing to start, when the job ended so with no mark (expect.sh runs it again).
set -u
within=""; total=60; grace=1
while [ $# -gt 0 ]; do
  case "$1" in
    --within) within=$2; shift 2 ;;
    --total) total=$2; shift 2 ;;
    --grace) grace=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "faults_run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "faults_run.sh: no command" >&2; exit 2; }

out=$(mktemp "${TMPDIR:-/tmp}/faults_run.XXXXXX")
marks="$out.marks"
token="faults_marks=$marks"
trap 'rm -f "$out" "$marks" "$out.stalls" "$out.late"' EXIT
now() { date +%s.%N; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
fgt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

# Processes of the job that are not zombies: its session (setsid runs in place: session id =
# pid), every command line carrying the token (mpiexec's, the ranks'), and every descendant
# seen while the job ran (Hydra puts its proxy and each rank in a session of their own), the
# latter recorded as PID:STARTTIME so that a reused pid is not taken for one of them.
seen=""
stat_field() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f"$2"; }  # after "(comm) "
record_descendants() {
  local p
  for p in $(ps -eo pid=,ppid= | awk -v root="$pid" '
      { parent[$1] = $2 } END { n = 0; want[root] = 1
        do { added = 0; for (c in parent) if (!(c in want) && (parent[c] in want)) { want[c] = 1; added = 1 } } while (added)
        for (c in want) print c }'); do
    case " $seen " in *" $p:"*) continue ;; esac
    seen="$seen $p:$(stat_field "$p" 20)"
  done
}
job_processes() {
  local p st e
  { echo "$pid"; pgrep -s "$pid" 2>/dev/null; pgrep -f -- "$token" 2>/dev/null
    for e in $seen; do [ "$(stat_field "${e%%:*}" 20)" = "${e#*:}" ] && echo "${e%%:*}"; done
  } | sort -un | while read -r p; do
    [ "$p" = "$$" ] && continue
    alive "$p" && echo "$p"
  done
}
# A process is gone once all its threads are: a zombie main thread can still have others
# running (or stuck in the kernel).
alive() {
  local t st
  for t in /proc/"$1"/task/*; do
    st=$(sed 's/^.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && return 0
  done
  return 1
}

stacks_and_kill() {  # $1: why
  local procs
  procs=$(job_processes)
  describe_processes "$1" $procs
  for p in $procs; do kill -KILL "$p" 2>/dev/null; done
}
describe_processes() {  # $1: why, then the job's processes (none: nothing printed)
  local why=$1 procs
  shift
  procs=$*
  [ -n "$procs" ] || return 0
  echo "faults_run: $why: processes:"
  for p in $procs; do
    echo "faults_run:   $p $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")"
    for t in /proc/"$p"/task/*; do
      echo "faults_run:     thread ${t##*/}: state $(sed 's/^.*) //' "$t/stat" 2>/dev/null | cut -d' ' -f1)," \
        "in $(cat "$t/wchan" 2>/dev/null)"
      # In the kernel (a process in state D cannot die, and gdb cannot attach to it).
      sed 's/^/faults_run:       kernel: /' "$t/stack" 2>/dev/null | grep -v ' 0x0$\|entry_SYSCALL' | head -12
    done
  done
  if [ "${FAULTS_GDB:-1}" != 0 ] && command -v gdb >/dev/null; then
    for p in $procs; do
      echo "faults_run: ---- stacks of process $p ($(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-120))"
      timeout 60 gdb -p "$p" -batch -nx -ex "set pagination off" -ex "thread apply all bt" 2>/dev/null </dev/null |
        grep -E '^(Thread |#)' | sed 's/^/faults_run:   /'
    done
  fi
}
# A job still running --within S after its last mark fails; what it and the machine were doing
# at half that time is printed with the failure (taken in the background, into $out.late, while
# the job is watched on; no debugger, which would stop the job).
late_snapshot() {  # $1: seconds since the last mark
  echo "faults_run: the job is still running $1 s after the last mark; load: $(cat /proc/loadavg)"
  # Pressure stall information: whether tasks wait for the disk or for a CPU.
  for r in io cpu; do [ -r /proc/pressure/$r ] && echo "faults_run:   pressure $r: $(tr '\n' ' ' </proc/pressure/$r)"; done
  ps -eo pid=,ppid=,stat=,ni=,pcpu=,etimes=,comm= --sort=-pcpu 2>/dev/null | head -12 | sed 's/^/faults_run:   busiest: /'
  FAULTS_GDB=0 describe_processes "still running $1 s after the last mark" $(job_processes)
}

# When it can (as root), this script watches at a higher priority than the job, which runs at
# the priority it would have had: on a starved machine a late look must not make the job look
# slow or hung.
job_nice=0
renice -n -10 -p $$ >/dev/null 2>&1 && job_nice=10
start=$(now)
nice -n "$job_nice" setsid -w "$@" "$token" >"$out" 2>&1 </dev/null &
pid=$!
ended() { ! alive "$pid"; }
hung=0
# Machine stalls: this loop wakes every 0.1 s; a wake more than 2 s late means the whole machine
# stood still (the virtual machines here do, for 30-60 s at times: the kernel logs "workqueue
# lockup", and nothing runs). Such time is not the job's: it is left out of the times measured,
# each stall with the wall-clock time it ended, so that only those after the last mark count.
stalls=""
note_gap() {  # $1: now; a wake more than 2 s after the previous one ($prev) is a stall
  local gap
  gap=$(fsub "$1" "$prev")
  fgt "$gap" 2 && stalls="$stalls $1:$gap" && echo "faults_run: the machine stood still for $gap s" >>"$out.stalls"
  prev=$1
}
# The program's last "at t=SECONDS" mark: from the marks file, else from the job's output.
last_mark() {
  local from=$out
  [ -s "$marks" ] && from=$marks
  grep -Eo 'at t=[0-9]+\.[0-9]+$' "$from" | cut -d= -f2 | sort -n | tail -1
}
stalled() {  # total stall seconds that ended after time $1
  local sum=0 s
  for s in $stalls; do fgt "${s%%:*}" "$1" && sum=$(awk -v a="$sum" -v b="${s#*:}" 'BEGIN { printf "%.3f", a + b }'); done
  echo "$sum"
}
prev=$start
late_pid=""
while ! ended; do
  t=$(now)
  note_gap "$t"
  if fgt "$(fsub "$(fsub "$t" "$start")" "$(stalled "$start")")" "$total"; then hung=1; break; fi
  record_descendants
  if [ -n "$within" ] && [ -z "$late_pid" ]; then
    mark=$(last_mark)
    if [ -n "$mark" ]; then
      since=$(fsub "$(fsub "$t" "$mark")" "$(stalled "$mark")")
      if fgt "$since" "$(awk -v w="$within" 'BEGIN { print w / 2 }')"; then
        late_snapshot "$since" >"$out.late" 2>&1 &
        late_pid=$!
      fi
    fi
  fi
  sleep 0.1
done
end=$(now)
# The last wait counts too: a stall there (its `sleep 0.1` once returned 19.7 s late, the job
# having ended in the meantime) was taken for a job ending late (the ~40 s faults failures).
note_gap "$end"
[ -s "$out.stalls" ] && cat "$out.stalls" && rm -f "$out.stalls"
[ -n "$late_pid" ] && wait "$late_pid"
failed=0
if [ $hung = 1 ]; then
  cat "$out"
  [ -s "$marks" ] && sed 's/^/faults_run: mark: /' "$marks"
  echo "faults_run: FAILED: the job has not ended after $total s"
  stacks_and_kill "the job has not ended after $total s"
  wait "$pid" 2>/dev/null
  exit 125
fi
wait "$pid"; rc=$?
cat "$out"
[ -s "$marks" ] && sed 's/^/faults_run: mark: /' "$marks"
elapsed=$(fsub "$end" "$start")
last=$(last_mark)
if [ -n "$last" ]; then
  after=$(fsub "$(fsub "$end" "$last")" "$(stalled "$last")")
  echo "faults_run: status $rc after $elapsed s, $after s after the last mark"
else
  echo "faults_run: status $rc after $elapsed s, no mark"
fi
# Status 213 with no mark: Open MPI 5's prterun did not start the job (expect.sh launches it
# again); say so with that status rather than as a program that printed no mark.
if [ -z "$last" ] && [ $rc -eq 213 ]; then
  echo "faults_run: the launcher failed with status 213 before the program ran"
elif [ -n "$within" ]; then
  if [ -z "$last" ]; then
    echo "faults_run: FAILED: the program printed no 'at t=' mark"; failed=1
  elif fgt "$after" "$within"; then
    echo "faults_run: FAILED: the job ended $after s after the last mark, more than $within s"; failed=1
    [ -s "$out.late" ] && cat "$out.late"
  fi
fi
# Processes left behind: give those the launcher has just killed a moment to go.
deadline=$(awk -v a="$(now)" -v g="$grace" 'BEGIN { printf "%.3f", a + g }')
while [ -n "$(job_processes)" ] && fgt "$deadline" "$(now)"; do sleep 0.1; done
if [ -n "$(job_processes)" ]; then
  echo "faults_run: FAILED: processes of the job alive $grace s after it ended"
  stacks_and_kill "left behind"
  failed=1
fi
[ $failed = 0 ] || exit 125
exit $rc
