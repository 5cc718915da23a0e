#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests of the PostgreSQL response cache (cache.url).
#
# Usage:
#   bash .ci/postgres.sh install      # the server binaries, installed with apt when missing (idempotent)
#   bash .ci/postgres.sh start        # a new server: data in a temporary directory, 127.0.0.1 on a
#                                     # free port, trust auth (loopback only); prints two lines:
#                                     #   export BENCH_TEST_PG_URL=postgresql://bench@127.0.0.1:PORT/postgres
#                                     #   export BENCH_PG_DIR=/tmp/bench-pg.XXXXXX
#   bash .ci/postgres.sh start --watch PID   # the same, and the server is stopped (DIR deleted) once
#                                     # process PID ends, however it ends (a test run that crashed)
#   bash .ci/postgres.sh stop DIR     # stops the server of DIR and deletes DIR
#
# initdb and postgres refuse to run as root: as root the server runs as the `postgres` user
# (created by Debian's package) or else a system user `bench-pg` made here. Tuned for tests
# (fsync off): never point it at data you want to keep. Env: BENCH_PG_BINDIR (where initdb,
# pg_ctl and postgres are), BENCH_PG_TMP (parent of the data directory, default /tmp: the
# server's user must be able to reach it).
set -euo pipefail

die() { echo "postgres.sh: $*" >&2; exit 1; }

bindir() {  # the directory holding initdb, pg_ctl and postgres (the newest major version)
    if [ -n "${BENCH_PG_BINDIR:-}" ]; then
        [ -x "$BENCH_PG_BINDIR/initdb" ] && echo "$BENCH_PG_BINDIR" && return 0
        return 1
    fi
    local found
    if command -v pg_config >/dev/null 2>&1; then
        found=$(pg_config --bindir 2>/dev/null || true)
        [ -n "$found" ] && [ -x "$found/initdb" ] && [ -x "$found/pg_ctl" ] && echo "$found" && return 0
    fi
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found" && return 0
    if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return 0
    fi
    return 1
}

install() {
    bindir >/dev/null && return 0
    command -v apt-get >/dev/null 2>&1 || die "no PostgreSQL server binaries (initdb, pg_ctl) and no apt-get: install PostgreSQL >= 13 and set BENCH_PG_BINDIR"
    [ "$(id -u)" -eq 0 ] || die "no PostgreSQL server binaries: run as root to install them (apt-get install postgresql) or set BENCH_PG_BINDIR"
    export DEBIAN_FRONTEND=noninteractive
    echo "postgres.sh: installing PostgreSQL (apt-get install postgresql)" >&2
    # the package index may be missing on a fresh machine: update only when the install needs it
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends postgresql >/dev/null; } \
        || die "apt-get install postgresql failed"
    bindir >/dev/null || die "apt-get installed postgresql, but no initdb was found under /usr/lib/postgresql"
}

server_user() {  # the user the server runs as (as root: never root)
    if [ "$(id -u)" -ne 0 ]; then
        id -un
    elif id -u postgres >/dev/null 2>&1; then
        echo postgres
    else
        id -u bench-pg >/dev/null 2>&1 \
            || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin bench-pg >/dev/null 2>&1 \
            || id -u bench-pg >/dev/null 2>&1 || die "cannot create the user bench-pg to run the server as"
        echo bench-pg
    fi
}

as_user() {  # run "$@" as the server's user
    local user=$1
    shift
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u "$user" -- "$@"
    else
        "$@"
    fi
}

free_port() {  # one the kernel hands out (else a random high port: start() tries again if it is taken)
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
        || echo $((20000 + RANDOM % 40000))
}

start() {
    local watch=${1:-} bin user dir port attempt
    bin=$(bindir) || die "no PostgreSQL server binaries (initdb, pg_ctl): run \`bash .ci/postgres.sh install\` (root, apt) or set BENCH_PG_BINDIR"
    user=$(server_user)
    dir=$(mktemp -d "${BENCH_PG_TMP:-/tmp}/bench-pg.XXXXXX")
    chmod 700 "$dir"
    [ "$(id -u)" -eq 0 ] && chown "$user" "$dir"
    as_user "$user" "$bin/initdb" -D "$dir/data" -U bench --auth=trust -E UTF8 --no-locale --no-sync \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; rm -rf "$dir"; die "initdb failed"; }
    for attempt in 1 2 3 4 5; do  # a free port may be taken before the server binds it: try another
        port=$(free_port)
        if as_user "$user" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start >/dev/null 2>&1; then
            if [ -n "$watch" ]; then  # detached, its output nowhere: the caller's pipe closes now
                setsid bash "$0" _watch "$watch" "$dir" </dev/null >/dev/null 2>&1 &
            fi
            echo "export BENCH_TEST_PG_URL=postgresql://bench@127.0.0.1:$port/postgres"
            echo "export BENCH_PG_DIR=$dir"
            return 0
        fi
    done
    tail -n 20 "$dir/server.log" >&2 || true
    rm -rf "$dir"
    die "the server did not start (5 attempts)"
}

stop() {
    local dir=${1:-} bin user
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    if [ -f "$dir/data/postmaster.pid" ]; then
        bin=$(bindir) || die "no pg_ctl to stop the server in $dir"
        user=$(stat -c %U "$dir")
        as_user "$user" "$bin/pg_ctl" -D "$dir/data" -m immediate -s stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
}

watch() {  # stop the server of DIR once PID is gone (or DIR was stopped already)
    local pid=$1 dir=$2
    while kill -0 "$pid" 2>/dev/null && [ -d "$dir" ]; do sleep 2; done
    stop "$dir"
}

case "${1:-}" in
    install) install ;;
    start)
        if [ "${2:-}" = "--watch" ]; then
            [[ "${3:-}" =~ ^[0-9]+$ ]] || die "start --watch needs a process id"
            start "$3"
        else
            start
        fi
        ;;
    stop) stop "${2:-}" ;;
    _watch) watch "${2:-}" "${3:-}" ;;
    *) die "usage: bash .ci/postgres.sh install | start [--watch PID] | stop DIR" ;;
esac
