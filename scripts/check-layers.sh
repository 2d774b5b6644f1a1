#!/usr/bin/env bash
# Checks the module layers (README, "Where to change what"): dependencies point down only, and
# the document layer never needs LMDB, so that an app storing only in PostgreSQL builds without
# liblmdb.
#
#   CLMDB ← DepotLMDB ← Depot (the LMDB driver, re-exporting DepotCore)
#   DepotSupport ← DepotEngine (storage protocols, records, errors, layout, schema, changes, undo)
#                ← DepotCore (documents over the engine) ← DepotPostgres, DepotCrypto, …
#
# Reads the target graph from `swift package describe --type json` (needs jq) and the sources'
# imports, and that only the record engine writes storage. Exits non-zero, naming the offending
# target or file, when a rule is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v jq >/dev/null || { echo "check-layers: jq is not installed" >&2; exit 1; }
desc="$(swift package describe --type json)"

# Every target `$1` depends on, directly or not (itself included).
closure() {
    jq -r --arg t "$1" '
        (.targets | map({(.name): (.target_dependencies // [])}) | add) as $deps
        | def reach($seen): ($seen + [$seen[] | $deps[.][]?] | unique) as $next
            | if ($next | length) == ($seen | length) then $seen else reach($next) end;
        reach([$t]) | .[]' <<<"$desc"
}

status=0
forbid() { # target, forbidden dependency...
    local target="$1"; shift
    local deps; deps="$(closure "$target")"
    for bad in "$@"; do
        if grep -qx "$bad" <<<"$deps"; then
            echo "check-layers: $target depends on $bad ($(tr '\n' ' ' <<<"$deps"))" >&2
            status=1
        fi
    done
}
forbid DepotSupport DepotLMDB DepotEngine DepotCore Depot CLMDB
forbid DepotEngine CLMDB DepotLMDB DepotCore Depot
forbid DepotLMDB DepotCore Depot
forbid DepotCore CLMDB DepotLMDB Depot
for target in DepotPostgres DepotCrypto DepotDriverTesting DepotMacros; do
    forbid "$target" CLMDB DepotLMDB Depot
done

# A module can import another that happens to be built first without declaring it: check the
# sources as well.
for dir in Sources/DepotSupport Sources/DepotEngine Sources/DepotCore Sources/DepotPostgres Sources/DepotCrypto Sources/DepotDriverTesting Sources/DepotMacros; do
    if grep -rnE '^\s*(@_exported |@testable )?import (CLMDB|DepotLMDB|Depot)\s*$' "$dir" --include='*.swift'; then
        echo "check-layers: $dir imports LMDB or the Depot umbrella (above)" >&2
        status=1
    fi
done
# The engine sits below the document layer: it never imports it.
if grep -rnE '^\s*(@_exported |@testable )?import DepotCore\s*$' Sources/DepotEngine --include='*.swift'; then
    echo "check-layers: Sources/DepotEngine imports DepotCore (above); the engine sits below it" >&2
    status=1
fi
# The record engine (Sources/DepotEngine) is the only writer of records, index entries and meta
# records: DepotCore (or a module above it) that calls a storage transaction's put, putIfAbsent,
# delete, clear or drop itself is a side door past the write pipeline (indexes, checksums,
# change sets). The document layer writes through `TransactionContext` (writeRecord,
# deleteRecord, clearRecords, setRecordStatus, reconcile, dropCollection, recordMigration, …).
if grep -rnE '[tT]xn\??\.(put|putIfAbsent|delete|clear|drop)\(|\.(put|putIfAbsent)\(.*forKey:.*in:|\.delete\(forKey:' \
        Sources/DepotCore Sources/DepotEngine --include='*.swift' | grep -vE '^Sources/DepotEngine/'; then
    echo "check-layers: DepotCore writes storage itself (above); go through the record engine (Sources/DepotEngine)" >&2
    status=1
fi
# The engine's state and write paths live in DepotEngine only: DepotCore has no Engine folder.
if [ -d Sources/DepotCore/Engine ]; then
    echo "check-layers: Sources/DepotCore/Engine exists; the record engine is Sources/DepotEngine" >&2
    status=1
fi
[ "$status" -eq 0 ] && echo "check-layers: ok (DepotEngine, DepotCore, DepotPostgres, DepotCrypto, DepotDriverTesting and DepotMacros need no LMDB; only the engine writes storage)"
exit "$status"
