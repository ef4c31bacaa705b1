#!/usr/bin/env bash
# Runs the coverage-guided fuzz target of the C ABI (fuzz/: libFuzzer
# through cargo fuzz, AddressSanitizer on) for a bounded time:
# `scripts/fuzz.sh [seconds]` (default 120). Installs cargo-fuzz from
# crates.io if it is missing. Fails on any finding (a panic, a crash, an
# ASan or LeakSanitizer report, a broken check of the driver); the input
# is then in fuzz/artifacts/c_abi/; once fixed, copy it into
# fuzz/regressions/, which every run replays first.
#
# cargo fuzz passes -Z flags to rustc (the sanitizer, coverage options);
# the stable toolchain, the only one this project's machines have, takes
# them with RUSTC_BOOTSTRAP=1. Nothing else is built that way.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-120}
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi
corpus=target/corpus/c_abi
mkdir -p "$corpus"
log=$(mktemp)
status=0
# Every input that once found a defect is replayed first: a fix must hold.
RUSTC_BOOTSTRAP=1 cargo fuzz run c_abi regressions/* >"$log" 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
  tail -n 60 "$log"
  echo "fuzz: a regression input fails again (fuzz/regressions/)" >&2
  exit "$status"
fi
RUSTC_BOOTSTRAP=1 cargo fuzz run c_abi "$corpus" -- \
  -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || status=$?
grep -E "^Done [0-9]+ runs|stat::number_of_executed_units|DONE" "$log" || true
if [[ $status -ne 0 ]]; then
  tail -n 60 "$log"
  echo "fuzz: a finding (see above); the input is in fuzz/artifacts/c_abi/" >&2
fi
rm -f "$log"
exit "$status"
