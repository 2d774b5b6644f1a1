#!/usr/bin/env bash
# Where the server's time goes in Depot's write of a new document with one index entry: the
# statements Depot sends (depot-indexed-write.sql: the opening with the key locks, the combined
# insert, COMMIT, as the server log shows them) replayed by pgbench, then the same without one
# part at a time (and merged-keyspace-check.sql: the two keyspace checks as one), and the bare
# inserts. One client, synchronous_commit=off (so that the WAL
# flush does not drown the statements' own cost), 2 s per variant, three rounds; prints the
# server's mean execution time per statement (log_min_duration_statement=0).
#
#   scripts/with-postgres.sh Benchmarks/scripts/postgres-statement-parts/run.sh
#
# Needs psql and pgbench (postgresql-client), a superuser connection in the PG* variables
# (as scripts/with-postgres.sh exports), and the server's log file readable: the newest
# /tmp/depot-postgres.*/*.log (scripts/with-postgres.sh), or $SERVER_LOG.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
log="${SERVER_LOG:-$(ls -t /tmp/depot-postgres.*/*.log | grep -v initdb | grep -v tls | head -1)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"; psql -qc "ALTER SYSTEM RESET log_min_duration_statement" >/dev/null; psql -qc "SELECT pg_reload_conf()" >/dev/null' EXIT
psql -q -f "$here/setup.sql" 2>/dev/null
psql -qc "ALTER SYSTEM SET log_min_duration_statement=0" >/dev/null
psql -qc "SELECT pg_reload_conf()" >/dev/null
variants="depot-indexed-write without-schema-check without-advisory-locks without-keyspace-checks merged-keyspace-check two-inserts-one-statement one-insert"
for round in 1 2 3; do
    for v in $variants; do
        psql -qc "TRUNCATE y.multi; DELETE FROM y.entries WHERE keyspace = 2"
        before=$(wc -l < "$log")
        PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -f "$here/$v.sql" -c 1 -T 2 > /dev/null 2>&1
        tail -n +$((before + 1)) "$log" > "$work/$v.$round"
    done
done
python3 - "$work" $variants <<'PY'
import collections, re, sys
work, variants = sys.argv[1], sys.argv[2:]
for v in variants:
    cells = []
    for r in (1, 2, 3):
        per = collections.defaultdict(list)
        for line in open(f"{work}/{v}.{r}"):
            m = re.search(r"duration: ([\d.]+) ms  execute [^:]*: (\S+ ?\S*)", line)
            if m: per[m.group(2)].append(float(m.group(1)) * 1000)
        cells.append(", ".join(f"{k} {sum(x) / len(x):.0f}" for k, x in sorted(per.items()) if len(x) > 10))
    print(f"{v}: " + " | ".join(cells))
PY
