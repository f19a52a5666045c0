#!/usr/bin/env bash
# Makes sure what the tests talk to is there and running: PostgreSQL with pgvector, Redis, and
# chromium for the chat page's browser test.
# Installs what is missing from Debian's packages (pgvector from its source package) and starts
# what is not running. Safe to run again: it does nothing that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then $SUDO apt-get update -qq; apt_updated=1; fi
  $SUDO apt-get install -y -qq "$@" >/dev/null
}

PG_HOST="${PGHOST_FOR_TESTS:-127.0.0.1}"
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "test-services: installing PostgreSQL"
  apt_install postgresql
fi
if ! pg_isready -q -h "$PG_HOST" -p 5432; then
  echo "test-services: starting PostgreSQL"
  for version in $(ls /etc/postgresql); do
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
  for _ in $(seq 1 30); do pg_isready -q -h "$PG_HOST" -p 5432 && break; sleep 1; done
fi
bash scripts/install-pgvector.sh

if ! command -v redis-server >/dev/null 2>&1; then
  echo "test-services: installing Redis"
  apt_install redis-server
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "test-services: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /tmp
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi

# The chat page's browser test drives Debian's chromium (through playwright-core, no download).
if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  echo "test-services: installing chromium"
  apt_install --no-install-recommends chromium
fi
echo "test-services: PostgreSQL (with pgvector), Redis and chromium are ready"
