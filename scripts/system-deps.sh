#!/usr/bin/env bash
# Debian packages the tests use for real: Chromium (for the browser tests) and
# tmux (a real terminal for the console's test), PostgreSQL's server (the store's tests
# start a throwaway one), bubblewrap (which confines apps' code; its tests try
# to escape it), and Node with npm (the tests' clients from npm: the MCP Inspector,
# the MCP Apps bridge and esbuild, installed into a cache by the tests themselves), and
# SQLite's command line (benchmarks/backup.py measures a backup against its .backup).
# Installs what is missing when run as root; otherwise says what to install
# (and, outside CI, lets the tests run with the tests that need them skipped).
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
command -v tmux >/dev/null || need+=(tmux)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v npm >/dev/null || need+=(nodejs npm)
command -v sqlite3 >/dev/null || need+=(sqlite3)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${need[*]} for the tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
elif [ -n "${CI:-}" ]; then
  echo "the tests need: ${need[*]} — run as root, or install with: apt-get install -y ${need[*]}" >&2
  exit 1
else
  echo "the tests that need them will be skipped without: ${need[*]} — install with: sudo apt-get install -y ${need[*]}" >&2
fi
