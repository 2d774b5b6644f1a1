#!/usr/bin/env bash
# Instructions per operation for each depot-compare workload and engine, under callgrind.
#
#   Benchmarks/scripts/instructions.sh                          # every workload, every engine
#   Benchmarks/scripts/instructions.sh doc_insert,doc_get c,documents
#   SMALL=2000 LARGE=4000 Benchmarks/scripts/instructions.sh scan lmdb
#   Benchmarks/scripts/instructions.sh read_txn                 # one read transaction per get
#
# Builds depot-compare in release, strips its debug info (valgrind 3.19 cannot read Swift 6.3's),
# and runs `depot-compare --callgrind WORKLOAD ENGINE N` (a synchronous entry point) under
# `valgrind --tool=callgrind --collect-atstart=no` at two sizes. Only each workload's measured
# region is counted (the region between its two clock reads); the figure is
# (Ir at LARGE - Ir at SMALL) / (LARGE - SMALL), so fixed costs (transaction begin and commit,
# cursor open) cancel out. Instruction counts are deterministic to within a fraction of a percent,
# unlike wall clock on a shared machine. Run from the repository root. Output: a Markdown table,
# with the calls to pthread_mutex_lock per operation counted the same way (a proxy for
# contention between threads that repeats on any machine: a read path should make none).
set -euo pipefail

ALL_WORKLOADS="append_put,random_put,random_get,scan,doc_insert,doc_get,doc_field,doc_scan,doc_write_txn,codec,read_txn"
WORKLOADS="${1:-$ALL_WORKLOADS}"
ENGINES="${2:-c,lmdb,documents,codable,indexed,grdb,json}"
SMALL="${SMALL:-2000}"
LARGE="${LARGE:-6000}"

root="$(cd "$(dirname "$0")/../.." && pwd)"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

# A build folder planned before sources moved fails with "missing inputs": plan it again once.
swift build -c release --package-path "$root/Benchmarks" --product depot-compare >&2 || {
    rm -f "$root"/Benchmarks/.build/*/release/description.json
    swift build -c release --package-path "$root/Benchmarks" --product depot-compare >&2
}
bin="$(swift build -c release --package-path "$root/Benchmarks" --show-bin-path)/depot-compare"
work="$(mktemp -d "${TMPDIR:-/tmp}/depot-instructions-XXXXXX")"
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$bin" "$work/depot-compare"

# Instructions counted in the measured region of one run, and the calls to pthread_mutex_lock
# in it: "IR LOCKS".
count() { # workload engine n
    local out="$work/callgrind.$1.$2.$3"
    valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out" \
        "$work/depot-compare" --callgrind "$1" "$2" "$3" "$work" >"$work/log" 2>&1 \
        || { cat "$work/log" >&2; return 1; }
    local ir locks
    ir=$(grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}')
    # callgrind names a function once as "cfn=(ID) NAME" and later as "cfn=(ID)"; the line after
    # a cfn= line is "calls=COUNT ...".
    locks=$(awk '
        /^c?fn=\(/ { match($0, /\([0-9]+\)/); id = substr($0, RSTART, RLENGTH); rest = substr($0, RSTART + RLENGTH + 1)
                     if (rest != "") names[id] = rest }
        /^cfn=\(/  { callee = names[id]; want = (callee ~ /pthread_mutex_lock/); next }
        /^calls=/  { if (want) { split($0, a, /[= ]/); total += a[2] } want = 0; next }
        END { print total + 0 }' "$out")
    echo "$ir $locks"
}

engines_for() { # the engines a workload has (as depot-compare's Workload.engines)
    case "$1" in
        codec) echo "documents codable json" ;;
        doc_insert|doc_get) echo "c lmdb documents codable indexed grdb" ;;
        doc_field) echo "c documents" ;;
        doc_scan) echo "c documents codable view" ;;
        doc_write_txn) echo "c documents codable indexed" ;;
        read_txn) echo "c lmdb documents codable" ;;
        *) echo "c lmdb grdb" ;;
    esac
}

echo "| workload | engine | instructions/op | mutex locks/op | Ir at $SMALL | Ir at $LARGE |"
echo "|---|---|---:|---:|---:|---:|"
for w in ${WORKLOADS//,/ }; do
    for e in $(engines_for "$w"); do
        [[ ",$ENGINES," == *",$e,"* ]] || continue
        read -r small small_locks < <(count "$w" "$e" "$SMALL") || { echo "| $w | $e | failed | | | |"; continue; }
        read -r large large_locks < <(count "$w" "$e" "$LARGE") || { echo "| $w | $e | failed | | | |"; continue; }
        per=$(awk -v a="$small" -v b="$large" -v m="$SMALL" -v n="$LARGE" 'BEGIN { printf "%.0f", (b - a) / (n - m) }')
        locks=$(awk -v a="$small_locks" -v b="$large_locks" -v m="$SMALL" -v n="$LARGE" 'BEGIN { printf "%.2f", (b - a) / (n - m) }')
        echo "| $w | $e | $per | $locks | $small | $large |"
    done
done
