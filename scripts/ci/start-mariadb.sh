#!/usr/bin/env bash
# Start a throwaway MariaDB for tests, without systemd (run as root). Idempotent:
# installs Debian's mariadb-server/-client if missing, initialises a datadir once,
# starts mariadbd unless it already answers on our socket, then ensures database
# svc_test and user svc/svc. Progress goes to stderr; the last (only) stdout line
# is the connection URL.
#   MARIADB_PORT (default 3307)   MARIADB_DIR (default /tmp/ci-mariadb)
set -euo pipefail

PORT="${MARIADB_PORT:-3307}"
DIR="${MARIADB_DIR:-/tmp/ci-mariadb}"
DATADIR="$DIR/data"
SOCK="$DIR/mariadbd.sock"
PIDFILE="$DIR/mariadbd.pid"
LOG="$DIR/mariadbd.log"
DB=svc_test
DB_USER=svc
DB_PASS=svc
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

log() { echo "[start-mariadb] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"

# --- install -----------------------------------------------------------------
if ! command -v mariadbd >/dev/null || ! command -v mariadb >/dev/null \
  || ! command -v mariadb-admin >/dev/null || ! command -v mariadb-install-db >/dev/null; then
  log "installing mariadb-server mariadb-client from Debian"
  export DEBIAN_FRONTEND=noninteractive
  # Keep the package's init script from starting a second, default server on 3306.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    added_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update >&2
  apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 \
    mariadb-server mariadb-client >&2
  if [ "$added_policy" -eq 1 ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
fi

admin() { mariadb-admin --no-defaults --user=root --socket="$SOCK" "$@"; }
alive() { admin --connect-timeout=2 ping >/dev/null 2>&1; }

mkdir -p "$DIR"

# --- start (unless already running) -------------------------------------------
# A live (not zombie) mariadbd process with this pid?
is_mariadbd() {
  local pid="$1" stat
  [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = mariadbd ] || return 1
  stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat%% *}" != Z ]
}
# Wait (bounded, ~60 s) until the server answers; fail early if the process goes away.
wait_up() {
  local pid="$1"
  for _ in $(seq 1 60); do
    alive && return 0
    is_mariadbd "$pid" || is_mariadbd "$(cat "$PIDFILE" 2>/dev/null || true)" || return 1
    sleep 1
  done
  alive
}

if alive; then
  log "already running on $SOCK"
else
  pid="$(cat "$PIDFILE" 2>/dev/null || true)"
  if is_mariadbd "$pid" && { log "mariadbd (pid $pid) exists but does not answer yet; waiting"; wait_up "$pid"; }; then
    :
  else
    if [ ! -e "$DIR/.initialised" ]; then
      log "initialising datadir $DATADIR"
      rm -rf "$DATADIR"
      mkdir -p "$DATADIR"
      mariadb-install-db --no-defaults --user=root --datadir="$DATADIR" \
        --auth-root-authentication-method=socket --skip-test-db \
        >"$DIR/install-db.log" 2>&1 \
        || { tail -n 30 "$DIR/install-db.log" >&2; die "mariadb-install-db failed"; }
      touch "$DIR/.initialised"
    fi
    rm -f "$SOCK" "$SOCK.lock" "$PIDFILE"
    log "starting mariadbd on 127.0.0.1:$PORT (socket $SOCK, log $LOG)"
    # Own session, all stdio detached: callers capturing our stdout must not hang.
    setsid mariadbd --no-defaults --user=root --datadir="$DATADIR" --socket="$SOCK" \
      --port="$PORT" --bind-address=127.0.0.1 --skip-name-resolve \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
      --pid-file="$PIDFILE" --log-error="$LOG" </dev/null >>"$LOG" 2>&1 &
    pid=$!
    wait_up "$pid" || {
      tail -n 30 "$LOG" >&2 || true
      die "mariadbd did not come up on 127.0.0.1:$PORT (exited, or no answer within 60 s; see $LOG)"
    }
  fi
  log "mariadbd is up (pid $(cat "$PIDFILE" 2>/dev/null || echo "$pid"))"
fi

# --- database and user (safe to repeat) --------------------------------------
mariadb --no-defaults --user=root --socket="$SOCK" <<SQL
CREATE DATABASE IF NOT EXISTS \`$DB\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
ALTER USER '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL PRIVILEGES ON \`$DB\`.* TO '$DB_USER'@'127.0.0.1';
GRANT ALL PRIVILEGES ON \`$DB\`.* TO '$DB_USER'@'localhost';
SQL
log "database $DB and user $DB_USER ready"

echo "mysql://$DB_USER:$DB_PASS@127.0.0.1:$PORT/$DB"
