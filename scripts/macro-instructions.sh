#!/usr/bin/env bash
# Instructions per operation of @BinaryCodable's generated codec against Codable, under callgrind.
#
#   scripts/macro-instructions.sh                      # every workload
#   scripts/macro-instructions.sh codec,get            # some workloads
#   SMALL=2000 LARGE=6000 scripts/macro-instructions.sh
#
# Builds depot-macro-bench in release, strips its debug info (valgrind cannot read Swift 6.3's),
# and runs `depot-macro-bench WORKLOAD N DIR` under
# `valgrind --tool=callgrind --toggle-collect='*measuredRegion*'` at two sizes: only the measured
# region is counted and (Ir at LARGE - Ir at SMALL) / (LARGE - SMALL) cancels fixed costs.
# Run from the repository root. Output: a Markdown table.
set -euo pipefail

WORKLOADS="${1:-codec,insert,get}"
SMALL="${SMALL:-2000}"
LARGE="${LARGE:-6000}"

root="$(cd "$(dirname "$0")/.." && pwd)"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }

# Trait `Macros`, in a build folder of its own so that the root's default build is not redone.
build=(swift build -c release --package-path "$root" --scratch-path "$root/.build-traits/macros" --traits Macros)
"${build[@]}" --product depot-macro-bench >&2
bin="$("${build[@]}" --show-bin-path)/depot-macro-bench"
work="$(mktemp -d "${TMPDIR:-/tmp}/depot-macro-instructions-XXXXXX")"
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$bin" "$work/depot-macro-bench"

count() { # workload n
    local out="$work/callgrind.$1.$2"
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measuredRegion*' \
        --callgrind-out-file="$out" "$work/depot-macro-bench" "$1" "$2" "$work/store-$1-$2" >"$work/log" 2>&1 \
        || { cat "$work/log" >&2; return 1; }
    grep -E '^(summary|totals):' "$out" | head -1 | awk '{print $2}'
}

echo "| workload | Codable | generated | ratio |"
echo "|---|---:|---:|---:|"
for w in ${WORKLOADS//,/ }; do
    per=()
    for variant in codable generated; do
        small=$(count "$w-$variant" "$SMALL")
        large=$(count "$w-$variant" "$LARGE")
        per+=("$(awk -v a="$small" -v b="$large" -v m="$SMALL" -v n="$LARGE" 'BEGIN { printf "%.0f", (b - a) / (n - m) }')")
    done
    echo "| $w | ${per[0]} | ${per[1]} | $(awk -v a="${per[0]}" -v b="${per[1]}" 'BEGIN { printf "%.2f", a / b }') |"
done
