#!/usr/bin/env bash
# Every tool's man page renders with man -l without a single warning, and
# carries both its --help options and its docs page.
# usage: man_test.sh BUILD_DIR
set -euo pipefail
build=$1
tools=(extract-ir make-corpus combine-training-corpus validate-corpus harvest-logs training-log merge-harvest mlgo-policy compare-harvests mlgo-ir2vec export-decisions)
command -v man >/dev/null || { echo "FAIL: man is not installed (scripts/setup.sh installs man-db)" >&2; exit 1; }
status=0
for t in "${tools[@]}"; do
  page=$build/man/$t.1
  [ -s "$page" ] || { echo "FAIL: $page was not generated" >&2; status=1; continue; }
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=100 man --warnings=all -l "$page" 2>&1 >/dev/null || true)
  if [ -n "$warnings" ]; then
    echo "FAIL: man -l $page warns:" >&2; echo "$warnings" >&2; status=1
  fi
  text=$(LC_ALL=C MANWIDTH=100 man -l "$page" 2>/dev/null | col -b)
  grep -q "^OPTIONS" <<<"$text" || { echo "FAIL: $t.1 has no OPTIONS section" >&2; status=1; }
  grep -q -- "--version" <<<"$text" || { echo "FAIL: $t.1 does not list --version" >&2; status=1; }
  grep -q "^DETAILS" <<<"$text" || { echo "FAIL: $t.1 has no DETAILS (docs page) section" >&2; status=1; }
  # A sentence of the docs page's first paragraph appears in the page.
  docs=$(dirname "$0")/../../docs/$t.md
  [ "$t" = merge-harvest ] && docs=$(dirname "$0")/../../docs/cluster.md
  first=$(awk 'NR > 1 && NF && !/^#/ { print; exit }' "$docs" | sed 's/`//g' | cut -c1-30)
  grep -qF -- "$first" <<<"$(tr -s ' \t\n' ' ' <<<"$text")" || { echo "FAIL: $t.1 lacks its docs page ('$first')" >&2; status=1; }
done
[ "$status" = 0 ] && echo "PASS: ${#tools[@]} man pages render cleanly"
exit "$status"
