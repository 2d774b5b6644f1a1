#!/usr/bin/env bash
# One device run (staged by stage.sh beside this file; run from the repository root with
# .build-devz/ carried): read scaling (C, binding, documents) and, when the PostgreSQL bundle
# travels, pgbench and Depot side by side on a throwaway PostgreSQL 15. SKIP_READS=1 skips the
# first; PG_SECONDS (default 5) is compare's seconds per point. Results go to $OUT.
set -uo pipefail
Z=.build-devz; B=/tmp/dc; mkdir -p $B
unxz() { xz -dc "$1" 2>/dev/null || python3 -c 'import lzma,sys;sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())' "$1"; }
(nproc; lscpu | grep -E 'Model name|^CPU\(s\)'; ldd --version | head -1) | tee $OUT/machine.txt
if [ "${SKIP_READS:-}" != 1 ]; then
  unxz $Z/depot-compare.xz > $B/depot-compare && chmod +x $B/depot-compare && cp $Z/liblmdb.so.0 $B/
  mkdir -p scratch; date -u
  LD_LIBRARY_PATH=$B timeout 200 $B/depot-compare --read-scaling --threads 1,2,4,8,16 --records 1000000 --seconds 3 \
      --dir $PWD/scratch --json $OUT/read-scaling.json 2>&1 | tee $OUT/read-scaling.txt
  rm -rf scratch
fi
if [ -f $Z/pg15.tar.xz ] && [ -f $Z/depot-postgres-bench.xz ]; then
  date -u
  mkdir -p /tmp/pgx && unxz $Z/pg15.tar.xz | tar -xf - -C /tmp/pgx || exit 4
  mkdir -p /usr/lib/postgresql /usr/share/postgresql
  cp -a /tmp/pgx/root/usr/lib/postgresql/15 /usr/lib/postgresql/ && cp -a /tmp/pgx/root/usr/share/postgresql/15 /usr/share/postgresql/
  [ -e /usr/share/zoneinfo/Etc/UTC ] || { mkdir -p /usr/share/zoneinfo && cp -an /tmp/pgx/zone/usr/share/zoneinfo/. /usr/share/zoneinfo/; }
  chmod 755 /tmp/pgx /tmp/pgx/libs
  unxz $Z/depot-postgres-bench.xz > $B/depot-postgres-bench && chmod +x $B/depot-postgres-bench
  cp $Z/liblmdb.so.0 $B/; export LD_LIBRARY_PATH=/tmp/pgx/libs:$B TZ=UTC
  for t in runuser useradd ps od; do command -v $t >/dev/null || echo "missing $t"; done
  /usr/lib/postgresql/15/bin/postgres --version || exit 5
  timeout ${PG_LIMIT:-300} scripts/with-postgres.sh $B/depot-postgres-bench compare ${PG_SECONDS:-5} 2>&1 | tee $OUT/postgres-compare.txt
  date -u
fi
