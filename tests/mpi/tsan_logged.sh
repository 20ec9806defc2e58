#!/bin/bash
# tsan_logged.sh DIR COMMAND...: runs COMMAND with ThreadSanitizer's reports written to files in
# DIR (one per process), then prints them after COMMAND's own output, and exits with COMMAND's
# status. The launcher forwards each process's output in pieces: a report printed on stderr
# while another rank prints could be cut mid-line (TSan writes a report's "Thread T1 'name'"
# line in three writes), and its patterns then not be found.
set -u
dir=$1
shift
rm -rf "$dir"
mkdir -p "$dir"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}log_path=$dir/report"
"$@"
rc=$?
for f in "$dir"/report.*; do
  [ -e "$f" ] && cat "$f"
done
exit $rc
