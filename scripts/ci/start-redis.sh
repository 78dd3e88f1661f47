#!/usr/bin/env bash
# Start a throwaway redis-server for tests (no persistence, 127.0.0.1 only).
# Idempotent: installs Debian's redis-server if missing, starts it unless something
# already answers PONG on the port. Progress goes to stderr; the last (only) stdout
# line is the URL.   REDIS_PORT (default 6380)
set -euo pipefail

PORT="${REDIS_PORT:-6380}"
LOG="/tmp/ci-redis-$PORT.log"
PIDFILE="/tmp/ci-redis-$PORT.pid"
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

log() { echo "[start-redis] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  [ "$(id -u)" -eq 0 ] || die "redis-server is missing and we are not root to install it"
  log "installing redis-server from Debian"
  export DEBIAN_FRONTEND=noninteractive
  # Keep the package's init script from starting a default server on 6379.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    added_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update >&2
  apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=300 redis-server >&2
  if [ "$added_policy" -eq 1 ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
fi

pong() { [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = "PONG" ]; }

if pong; then
  log "already running on 127.0.0.1:$PORT"
else
  log "starting redis-server on 127.0.0.1:$PORT (log $LOG)"
  # --daemonize yes forks and detaches stdio, so callers capturing our stdout don't hang.
  redis-server --port "$PORT" --save '' --appendonly no --daemonize yes --bind 127.0.0.1 \
    --dir /tmp --logfile "$LOG" --pidfile "$PIDFILE" </dev/null >&2
  for _ in $(seq 1 60); do
    pong && break
    sleep 0.5
  done
  pong || { tail -n 20 "$LOG" >&2 || true; die "redis-server did not answer PONG within 30 s"; }
  log "redis-server is up (pid $(cat "$PIDFILE" 2>/dev/null || echo '?'))"
fi

echo "redis://127.0.0.1:$PORT"
