# failure_reasons.awk CTEST_LOG: for each test that failed in a `ctest --output-on-failure` log,
# one line "why NAME: LINE" per line of its output that says why (expect.sh's and faults_run's
# verdicts, a timeout and the stacks tests/stacks_on_timeout.sh printed before it; for a late
# faults job what was busiest then), at most 6 (12 with stacks); else its last
# output line. scripts/test puts these in its
# summary: CI shows the end of the output, where a failure's own output is long gone.
function flush(   i) {
  if (name == "") return
  if (nwhy == 0 && last != "") why[nwhy++] = last
  for (i = 0; i < nwhy; ++i) printf "why %s: %s\n", name, substr(why[i], 1, 400)
  name = ""; nwhy = 0; last = ""; busiest = 0
}
/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
  flush()
  if ($0 ~ /\*\*\*(Failed|Timeout|Exception)/) { name = $4; if ($0 ~ /\*\*\*Timeout/) why[nwhy++] = "timed out" }
  next
}
/^ *Start +[0-9]+: / || /^The following tests FAILED:/ || /tests passed, [0-9]+ tests failed/ { flush(); next }
name != "" && NF > 0 {
  last = $0
  if (nwhy < 12 && $0 ~ /^stacks_on_timeout: /) why[nwhy++] = $0
  else if (nwhy < 6 && $0 ~ /^expect\.sh: |^faults_run: FAILED|^faults_run: the job is still running|^faults_run:   pressure io: |^[a-z_]+: .*FAILED|check failed|Segmentation fault|core dumped/) why[nwhy++] = $0
  else if (nwhy < 6 && !busiest && $0 ~ /^faults_run:   busiest: /) { why[nwhy++] = $0; busiest = 1 }
}
END { flush() }
