# Timing helpers shared by the bench/ scripts (sourced).
# shellcheck shell=bash

now() { date +%s.%N; }
# The median of the arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
timed() { # CMD...: prints the seconds CMD took
  local t0 t1
  t0=$(now)
  "$@"
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
