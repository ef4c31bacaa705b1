#!/usr/bin/env bash
# Runs a binary over a suite of CSV files with the C++ reference's own
# flags, the way scripts written for the reference do, and reads the
# reference's stderr line (seconds, then PASS or FAIL) back. minimalloc
# takes these flags unchanged; so does the reference's binary.
#
# usage: scripts/run_like_reference.sh [BINARY] [DIR]
#   BINARY  default target/release/minimalloc
#   DIR     default benchmarks/challenging (files named NAME.CAPACITY.csv)
# Prints one row per file; exits 1 if any run failed or did not PASS.
set -euo pipefail
bin=${1:-target/release/minimalloc}
dir=${2:-benchmarks/challenging}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=0
printf '%-24s %10s %s\n' file seconds verdict
for input in "$dir"/*.csv; do
  name=$(basename "$input" .csv)
  capacity=${name##*.}
  status=0
  err=$("$bin" --capacity="$capacity" --input="$input" --output="$out/$name.csv" \
    --timeout=60s --validate --section_inference=true --canonical_only=true 2>&1 >/dev/null) \
    || status=$?
  # The reference's line: seconds with three decimals, PASS or FAIL.
  line=$(grep -E '^[0-9]+\.[0-9]{3}(PASS|FAIL)$' <<<"$err" | tail -1 || true)
  seconds=${line%????}
  verdict=${line:${#seconds}}
  if [[ $status -ne 0 || $verdict != PASS ]]; then
    failed=1
    verdict="${verdict:-none} (exit $status)"
  fi
  printf '%-24s %10s %s\n' "$name" "${seconds:--}" "$verdict"
done
exit $failed
