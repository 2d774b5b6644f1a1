#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL 15 server on 127.0.0.1, e.g.
#
#   Postgres/scripts/with-postgres.sh swift test --package-path Postgres
#
# - installs postgresql-15 with apt-get when it is missing (needs root);
# - runs initdb as an unprivileged user (`postgres` if it exists, else a created `depotci`;
#   yourself when not root) in a temporary folder, with a random password (scram-sha-256);
# - starts the server on a free 127.0.0.1 port, creates the database `depot_test`, exports
#   DEPOT_POSTGRES_URL (and PG* variables) for the command;
# - with DEPOT_POSTGRES_REPLICA=1, also clones it with `pg_basebackup -R` into a streaming
#   replica (hot standby) on the next free port and exports DEPOT_POSTGRES_REPLICA_URL;
# - stops the server(s) by PID and deletes the folder when the command ends (trap).
# The command's exit status is the script's.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 2
fi

PG_MAJOR=15
BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
if [ ! -x "$BIN/postgres" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "with-postgres: postgresql-$PG_MAJOR is not installed and this is not root" >&2
        exit 1
    fi
    echo "with-postgres: installing postgresql-$PG_MAJOR" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-$PG_MAJOR" >/dev/null
fi

# The server refuses to run as root: pick an unprivileged user.
if [ "$(id -u)" -eq 0 ]; then
    if id postgres >/dev/null 2>&1; then
        RUN_AS=postgres
    else
        id depotci >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin depotci
        RUN_AS=depotci
    fi
    as_user() { runuser -u "$RUN_AS" -- "$@"; }
else
    RUN_AS="$(id -un)"
    as_user() { "$@"; }
fi

WORK="$(mktemp -d /tmp/depot-pg.XXXXXX)"
chmod 700 "$WORK"
SERVER_PID=""
REPLICA_PID=""
stop_server() {
    local pid="$1"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -INT "$pid" 2>/dev/null || true     # fast shutdown
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
}
cleanup() {
    stop_server "$REPLICA_PID"
    stop_server "$SERVER_PID"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PASSWORD="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$PASSWORD" > "$WORK/pwfile"
mkdir "$WORK/data" "$WORK/socket"
chown -R "$RUN_AS" "$WORK"
as_user "$BIN/initdb" -D "$WORK/data" -U depot --pwfile="$WORK/pwfile" --auth=scram-sha-256 \
    -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 || { cat "$WORK/initdb.log" >&2; exit 1; }
rm -f "$WORK/pwfile"

# A free port: the first of a range nobody answers on (above $1).
free_port() {
    for candidate in $(seq "$1" 54429); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then echo "$candidate"; return; fi
    done
}
PORT="$(free_port 54329)"
[ -n "$PORT" ] || { echo "with-postgres: no free port in 54329-54429" >&2; exit 1; }

as_user "$BIN/pg_ctl" -D "$WORK/data" -l "$WORK/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -c port=$PORT -c unix_socket_directories=$WORK/socket -c max_connections=200" \
    >/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
SERVER_PID="$(head -n 1 "$WORK/data/postmaster.pid")"

export PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=depot PGPASSWORD="$PASSWORD" PGDATABASE=depot_test PGSSLMODE=disable
"$BIN/psql" -q -d postgres -c "CREATE DATABASE depot_test" >/dev/null
export DEPOT_POSTGRES_URL="postgres://depot:$PASSWORD@127.0.0.1:$PORT/depot_test?sslmode=disable"
echo "with-postgres: PostgreSQL $PG_MAJOR on 127.0.0.1:$PORT (pid $SERVER_PID, data in $WORK)" >&2

if [ "${DEPOT_POSTGRES_REPLICA:-}" = "1" ]; then
    REPLICA_PORT="$(free_port $((PORT + 1)))"
    [ -n "$REPLICA_PORT" ] || { echo "with-postgres: no free port for the replica" >&2; exit 1; }
    mkdir "$WORK/replica-socket"
    chown "$RUN_AS" "$WORK/replica-socket"
    # The password reaches pg_basebackup through the exported PGPASSWORD, never argv.
    as_user "$BIN/pg_basebackup" -h 127.0.0.1 -p "$PORT" -U depot \
        -D "$WORK/replica" -R -X stream >"$WORK/basebackup.log" 2>&1 || { cat "$WORK/basebackup.log" >&2; exit 1; }
    as_user "$BIN/pg_ctl" -D "$WORK/replica" -l "$WORK/replica.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -c port=$REPLICA_PORT -c unix_socket_directories=$WORK/replica-socket -c max_connections=200" \
        >/dev/null || { cat "$WORK/replica.log" >&2; exit 1; }
    REPLICA_PID="$(head -n 1 "$WORK/replica/postmaster.pid")"
    export DEPOT_POSTGRES_REPLICA_URL="postgres://depot:$PASSWORD@127.0.0.1:$REPLICA_PORT/depot_test?sslmode=disable"
    echo "with-postgres: streaming replica on 127.0.0.1:$REPLICA_PORT (pid $REPLICA_PID)" >&2
fi

set +e
"$@"
STATUS=$?
set -e
exit $STATUS
