#!/usr/bin/env bash
# Debian packages the tests use for real: PostgreSQL 15 and Chromium.
# Installs what is missing when run as root; otherwise says what to install.
set -euo pipefail
need=()
[ -x /usr/lib/postgresql/15/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing ${need[*]} for the tests"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}" >/dev/null
else
  echo "the tests need: ${need[*]} — install with: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
