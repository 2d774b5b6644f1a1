#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL 15 server on 127.0.0.1, e.g.
#
#   scripts/with-postgres.sh swift test --scratch-path .build-traits --traits Postgres --filter DepotPostgresTests
#
# - installs postgresql-15 with apt-get when it is missing (needs root);
# - runs initdb as an unprivileged user (`postgres` if it exists, else a created `depotci`;
#   yourself when not root) in a temporary folder, with a random password (scram-sha-256);
# - starts the server on a free 127.0.0.1 port, creates the database `depot_test`, exports
#   DEPOT_POSTGRES_URL (and PG* variables) for the command;
# - turns TLS on in that server (`ssl = on`, for clients that ask: the URLs above say
#   `sslmode=disable`) with a certificate for the host name `localhost` only (no IP address),
#   issued by a throwaway CA, and exports DEPOT_POSTGRES_TLS_ROOT (the CA's PEM file) for the
#   TLS tests (which skip without it: openssl missing); the replica below inherits it;
# - with DEPOT_POSTGRES_REPLICA=1, also clones it with `pg_basebackup -R` into a streaming
#   replica (hot standby) on the next free port and exports DEPOT_POSTGRES_REPLICA_URL;
# - with DEPOT_POSTGRES_FAILOVER=1, also starts a second, separate pair for the failover test
#   (so that it never stops the server other tests use): a primary with synchronous
#   replication to a streaming standby (`synchronous_standby_names = '*'`, set after cloning, so
#   that the promoted standby does not wait for a standby of its own), and exports
#   DEPOT_POSTGRES_FAILOVER_PRIMARY_URL, DEPOT_POSTGRES_FAILOVER_STANDBY_URL and
#   DEPOT_POSTGRES_FAILOVER_CONTROL: a command taking `stop-primary` (`pg_ctl stop -m immediate`,
#   a crash) or `promote-standby` (`pg_ctl promote`, waits until the standby accepts writes);
# - with DEPOT_POSTGRES_FAULTS=1, also starts a dedicated server for the fault tests (so that
#   they never stop the server other tests use) and exports DEPOT_POSTGRES_FAULT_URL and
#   DEPOT_POSTGRES_FAULT_CONTROL: a command taking `kill-postmaster` (SIGKILL of the postmaster;
#   its backends exit on their own), `start` (starts it again, retrying while the old backends
#   still hold its shared memory), `freeze` / `thaw` (SIGSTOP / SIGCONT of the postmaster and
#   every process it started) or `terminate-clients` (`pg_terminate_backend` of every client
#   connection but the control's own; the password comes from the exported PGPASSWORD);
# - stops every server it started by PID (re-read from each data folder, so a server's later
#   state does not matter) and deletes the folder when the command ends (trap).
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

WORK="$(mktemp -d /tmp/depot-postgres.XXXXXX)"
chmod 700 "$WORK"
SERVER_PIDS=()
stop_server() {
    local pid="$1"
    # Only a server of ours: its command line names our folder (a stale PID is left alone).
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$WORK"; then
        # A server a fault test left frozen must run again to shut down.
        kill -CONT "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null) 2>/dev/null || true
        kill -INT "$pid" 2>/dev/null || true     # fast shutdown
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
}
cleanup() {
    local dir pid
    for dir in "$WORK"/*/; do
        [ -f "$dir/postmaster.pid" ] && SERVER_PIDS+=("$(head -n 1 "$dir/postmaster.pid")")
    done
    for pid in "${SERVER_PIDS[@]}"; do stop_server "$pid"; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

PASSWORD="$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$PASSWORD" > "$WORK/pwfile"
chown -R "$RUN_AS" "$WORK"
# A free port: the first of a range nobody answers on (above $1).
free_port() {
    for candidate in $(seq "$1" 54429); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then echo "$candidate"; return; fi
    done
}

# start_server NAME PORT: starts the cluster in $WORK/NAME on PORT, or on the next free port when
# another program took PORT in the meantime (the check and the bind are not atomic: parallel runs
# race); sets STARTED_PID and STARTED_PORT.
start_server() {
    local name="$1" port="$2" attempt
    mkdir "$WORK/$name-socket"
    chown "$RUN_AS" "$WORK/$name-socket"
    for attempt in 1 2 3 4 5 6 7 8; do
        if as_user "$BIN/pg_ctl" -D "$WORK/$name" -l "$WORK/$name.log" -w -t 60 start \
            -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$WORK/$name-socket -c max_connections=200" \
            >/dev/null; then
            STARTED_PID="$(head -n 1 "$WORK/$name/postmaster.pid")"
            STARTED_PORT="$port"
            SERVER_PIDS+=("$STARTED_PID")
            return
        fi
        grep -q "already in use" "$WORK/$name.log" 2>/dev/null || break
        port="$(free_port $((port + 1)))"
        [ -n "$port" ] || break
    done
    cat "$WORK/$name.log" >&2
    exit 1
}

# new_primary NAME PORT: initdb, start, create the database depot_test.
new_primary() {
    local name="$1" port="$2"
    as_user "$BIN/initdb" -D "$WORK/$name" -U depot --pwfile="$WORK/pwfile" --auth=scram-sha-256 \
        -E UTF8 --locale=C >"$WORK/$name-initdb.log" 2>&1 || { cat "$WORK/$name-initdb.log" >&2; exit 1; }
    start_server "$name" "$port"
    "$BIN/psql" -q -p "$STARTED_PORT" -d postgres -c "CREATE DATABASE depot_test" >/dev/null
}

# new_standby NAME PRIMARY_PORT PORT: clones the primary with pg_basebackup -R and starts it. The
# password reaches pg_basebackup through the exported PGPASSWORD, never argv.
new_standby() {
    local name="$1" primary_port="$2" port="$3"
    as_user "$BIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U depot \
        -D "$WORK/$name" -R -X stream --checkpoint=fast >"$WORK/$name-basebackup.log" 2>&1 || { cat "$WORK/$name-basebackup.log" >&2; exit 1; }
    start_server "$name" "$port"
}

url() { echo "postgres://depot:$PASSWORD@127.0.0.1:$1/depot_test?sslmode=disable"; }

# enable_tls NAME PORT: a throwaway CA and a server certificate naming `localhost` (DNS only, so
# that verify-full by IP address must fail), installed in the cluster NAME; TLS on (a reload).
enable_tls() {
    local name="$1" port="$2" tls="$WORK/tls"
    mkdir -p "$tls"
    {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -subj "/CN=Depot throwaway test CA" -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$tls/ca.key" -out "$tls/ca.crt"
        openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr"
        printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$tls/server.ext"
        openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
            -days 2 -extfile "$tls/server.ext" -out "$tls/server.crt"
    } >"$WORK/$name-tls.log" 2>&1 || { cat "$WORK/$name-tls.log" >&2; exit 1; }
    install -m 600 "$tls/server.crt" "$WORK/$name/server.crt"
    install -m 600 "$tls/server.key" "$WORK/$name/server.key"
    chown "$RUN_AS" "$WORK/$name/server.crt" "$WORK/$name/server.key"
    rm -f "$tls/ca.key" "$tls/server.key" "$tls/server.csr"
    chmod 755 "$tls"
    chmod 644 "$tls/ca.crt"
    "$BIN/psql" -q -p "$port" -d postgres -c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" >/dev/null
}

PORT="$(free_port 54329)"
[ -n "$PORT" ] || { echo "with-postgres: no free port in 54329-54429" >&2; exit 1; }
export PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=depot PGPASSWORD="$PASSWORD" PGDATABASE=depot_test PGSSLMODE=disable
new_primary data "$PORT"
PORT="$STARTED_PORT"
export PGPORT="$PORT"
export DEPOT_POSTGRES_URL="$(url "$PORT")"
if command -v openssl >/dev/null 2>&1; then
    enable_tls data "$PORT"
    export DEPOT_POSTGRES_TLS_ROOT="$WORK/tls/ca.crt"
    echo "with-postgres: PostgreSQL $PG_MAJOR on 127.0.0.1:$PORT (pid $STARTED_PID, data in $WORK, TLS for localhost)" >&2
else
    echo "with-postgres: PostgreSQL $PG_MAJOR on 127.0.0.1:$PORT (pid $STARTED_PID, data in $WORK; no TLS: openssl is not installed)" >&2
fi

if [ "${DEPOT_POSTGRES_REPLICA:-}" = "1" ]; then
    REPLICA_PORT="$(free_port $((PORT + 1)))"
    [ -n "$REPLICA_PORT" ] || { echo "with-postgres: no free port for the replica" >&2; exit 1; }
    new_standby replica "$PORT" "$REPLICA_PORT"
    REPLICA_PORT="$STARTED_PORT"
    export DEPOT_POSTGRES_REPLICA_URL="$(url "$REPLICA_PORT")"
    echo "with-postgres: streaming replica on 127.0.0.1:$REPLICA_PORT (pid $STARTED_PID)" >&2
fi

if [ "${DEPOT_POSTGRES_FAILOVER:-}" = "1" ]; then
    FAILOVER_PORT="$(free_port $((PORT + 2)))"
    [ -n "$FAILOVER_PORT" ] || { echo "with-postgres: no free port for the failover primary" >&2; exit 1; }
    new_primary failover "$FAILOVER_PORT"
    FAILOVER_PORT="$STARTED_PORT"
    STANDBY_PORT="$(free_port $((FAILOVER_PORT + 1)))"
    [ -n "$STANDBY_PORT" ] || { echo "with-postgres: no free port for the failover standby" >&2; exit 1; }
    new_standby failover-standby "$FAILOVER_PORT" "$STANDBY_PORT"
    STANDBY_PORT="$STARTED_PORT"
    # Synchronous from now on: a commit returns once the standby has flushed its WAL. Set on
    # the primary only (after cloning), so the promoted standby commits without a standby.
    "$BIN/psql" -q -p "$FAILOVER_PORT" -d postgres -c "ALTER SYSTEM SET synchronous_standby_names = '*'" \
        -c "SELECT pg_reload_conf()" >/dev/null
    cat >"$WORK/control" <<CONTROL
#!/usr/bin/env bash
# Failover control for the tests: stop-primary | promote-standby.
set -euo pipefail
as_user() { if [ "\$(id -u)" -eq 0 ] && [ "$RUN_AS" != root ]; then runuser -u "$RUN_AS" -- "\$@"; else "\$@"; fi; }
case "\${1:-}" in
    stop-primary) as_user "$BIN/pg_ctl" -D "$WORK/failover" -m immediate -w -t 60 stop >/dev/null ;;
    promote-standby) as_user "$BIN/pg_ctl" -D "$WORK/failover-standby" -w -t 60 promote >/dev/null ;;
    *) echo "usage: \$0 stop-primary|promote-standby" >&2; exit 2 ;;
esac
CONTROL
    chmod 700 "$WORK/control"
    export DEPOT_POSTGRES_FAILOVER_PRIMARY_URL="$(url "$FAILOVER_PORT")"
    export DEPOT_POSTGRES_FAILOVER_STANDBY_URL="$(url "$STANDBY_PORT")"
    export DEPOT_POSTGRES_FAILOVER_CONTROL="$WORK/control"
    echo "with-postgres: failover pair on 127.0.0.1:$FAILOVER_PORT (synchronous) and :$STANDBY_PORT" >&2
fi
if [ "${DEPOT_POSTGRES_FAULTS:-}" = "1" ]; then
    FAULT_PORT="$(free_port $((PORT + 4)))"
    [ -n "$FAULT_PORT" ] || { echo "with-postgres: no free port for the fault server" >&2; exit 1; }
    new_primary faults "$FAULT_PORT"
    FAULT_PORT="$STARTED_PORT"
    cat >"$WORK/fault-control" <<CONTROL
#!/usr/bin/env bash
# Fault control for the tests, on the dedicated server in $WORK/faults only:
# kill-postmaster | start | freeze | thaw | terminate-clients.
set -euo pipefail
as_user() { if [ "\$(id -u)" -eq 0 ] && [ "$RUN_AS" != root ]; then runuser -u "$RUN_AS" -- "\$@"; else "\$@"; fi; }
postmaster() { head -n 1 "$WORK/faults/postmaster.pid"; }
family() { local pm; pm="\$(postmaster)"; echo "\$pm" \$(ps -o pid= --ppid "\$pm" 2>/dev/null || true); }
case "\${1:-}" in
    kill-postmaster)
        # Its backends exit on their own once they notice; kept to be killed by start if they linger.
        family >"$WORK/faults-killed.pids"
        kill -KILL "\$(postmaster)" ;;
    start)
        for attempt in \$(seq 1 60); do
            # Backends of a killed postmaster still holding its shared memory after ~10 s (a
            # loaded host): end them, as the restart of a crashed server would need.
            if [ "\$attempt" -eq 15 ] && [ -f "$WORK/faults-killed.pids" ]; then
                kill -KILL \$(cat "$WORK/faults-killed.pids") 2>/dev/null || true
            fi
            if as_user "$BIN/pg_ctl" -D "$WORK/faults" -l "$WORK/faults.log" -w -t 60 start \\
                -o "-c listen_addresses=127.0.0.1 -c port=$FAULT_PORT -c unix_socket_directories=$WORK/faults-socket -c max_connections=200" >/dev/null 2>&1; then
                exit 0
            fi
            sleep 0.5
        done
        echo "fault-control: the server did not start" >&2; exit 1 ;;
    freeze) kill -STOP \$(family) ;;
    thaw) kill -CONT \$(family) ;;
    terminate-clients)
        "$BIN/psql" -q -X -h 127.0.0.1 -p "$FAULT_PORT" -U depot -d depot_test -c \\
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" >/dev/null ;;
    *) echo "usage: \$0 kill-postmaster|start|freeze|thaw|terminate-clients" >&2; exit 2 ;;
esac
CONTROL
    chmod 700 "$WORK/fault-control"
    export DEPOT_POSTGRES_FAULT_URL="$(url "$FAULT_PORT")"
    export DEPOT_POSTGRES_FAULT_CONTROL="$WORK/fault-control"
    echo "with-postgres: fault server on 127.0.0.1:$FAULT_PORT" >&2
fi
rm -f "$WORK/pwfile"

set +e
"$@"
STATUS=$?
set -e
exit $STATUS
