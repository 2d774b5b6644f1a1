#!/usr/bin/env bash
# Instructions per operation for each depot-compare workload and engine, under callgrind.
#
#   Benchmarks/scripts/instructions.sh                          # every workload, every engine
#   Benchmarks/scripts/instructions.sh doc_insert,doc_get c,documents
#   SMALL=2000 LARGE=4000 Benchmarks/scripts/instructions.sh scan lmdb
#
# Builds depot-compare in release, strips its debug info (valgrind 3.19 cannot read Swift 6.3's),
# and runs `depot-compare --callgrind WORKLOAD ENGINE N` (a synchronous entry point) under
# `valgrind --tool=callgrind --collect-atstart=no` at two sizes. Only each workload's measured
# region is counted (the region between its two clock reads); the figure is
# (Ir at LARGE - Ir at SMALL) / (LARGE - SMALL), so fixed costs (transaction begin and commit,
# cursor open) cancel out. Instruction counts are deterministic to within a fraction of a percent,
# unlike wall clock on a shared machine. Run from the repository root. Output: a Markdown table.
set -euo pipefail

ALL_WORKLOADS="append_put,random_put,random_get,scan,doc_insert,doc_get,doc_field,codec"
WORKLOADS="${1:-$ALL_WORKLOADS}"
ENGINES="${2:-c,lmdb,documents,grdb,json}"
SMALL="${SMALL:-2000}"
LARGE="${LARGE:-6000}"

root="$(cd "$(dirname "$0")/../.." && pwd)"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

swift build -c release --package-path "$root/Benchmarks" --product depot-compare >&2
bin="$(swift build -c release --package-path "$root/Benchmarks" --show-bin-path)/depot-compare"
work="$(mktemp -d "${TMPDIR:-/tmp}/depot-instructions-XXXXXX")"
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$bin" "$work/depot-compare"

# Instructions counted in the measured region of one run.
count() { # workload engine n
    local out="$work/callgrind.$1.$2.$3"
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out" \
        "$work/depot-compare" --callgrind "$1" "$2" "$3" "$work" >"$work/log" 2>&1 \
        || { cat "$work/log" >&2; return 1; }
    grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}'
}

engines_for() { # the engines a workload has (as depot-compare's Workload.engines)
    case "$1" in
        codec) echo "documents json" ;;
        doc_insert|doc_get) echo "c lmdb documents grdb" ;;
        doc_field) echo "c documents" ;;
        *) echo "c lmdb grdb" ;;
    esac
}

echo "| workload | engine | instructions/op | Ir at $SMALL | Ir at $LARGE |"
echo "|---|---|---:|---:|---:|"
for w in ${WORKLOADS//,/ }; do
    for e in $(engines_for "$w"); do
        [[ ",$ENGINES," == *",$e,"* ]] || continue
        small=$(count "$w" "$e" "$SMALL") || { echo "| $w | $e | failed | | |"; continue; }
        large=$(count "$w" "$e" "$LARGE") || { echo "| $w | $e | failed | | |"; continue; }
        per=$(awk -v a="$small" -v b="$large" -v m="$SMALL" -v n="$LARGE" 'BEGIN { printf "%.0f", (b - a) / (n - m) }')
        echo "| $w | $e | $per | $small | $large |"
    done
done
