#!/usr/bin/env bash
# Builds pgvector from Debian's source package against the machine's PostgreSQL and installs it.
# Debian bookworm has no pgvector binary package and we may not download binaries, so we take the
# source package of the newer release from the mirror the machine already uses.
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-$(ls /etc/postgresql 2>/dev/null | sort -n | tail -n1)}"
PG_MAJOR="${PG_MAJOR:-15}"
PG_CONFIG="/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config"
[ -x "$PG_CONFIG" ] || PG_CONFIG="$(command -v pg_config)"

if [ -f "$("$PG_CONFIG" --sharedir)/extension/vector.control" ]; then
  echo "pgvector: already installed for PostgreSQL ${PG_MAJOR}"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

sources_file=/etc/apt/sources.list.d/debian.sources
uri="$(awk '/^URIs:/ {print $2; exit}' "$sources_file" 2>/dev/null || true)"
uri="${uri:-http://deb.debian.org/debian}"
signed_by="$(awk '/^Signed-By:/ {print $2; exit}' "$sources_file" 2>/dev/null || true)"
signed_by="${signed_by:-/usr/share/keyrings/debian-archive-keyring.gpg}"

$SUDO tee /etc/apt/sources.list.d/duo-slice-src.sources >/dev/null <<SRC
Types: deb-src
URIs: ${uri}
Suites: trixie
Components: main
Signed-By: ${signed_by}
SRC

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "postgresql-server-dev-${PG_MAJOR}" dpkg-dev make gcc >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
( cd "$work" && apt-get source --download-only pgvector >/dev/null )
tarball="$(ls "$work"/pgvector_*.orig.tar.* | head -n1)"
mkdir "$work/src"
tar -xf "$tarball" -C "$work/src" --strip-components=1
make -s -C "$work/src" PG_CONFIG="$PG_CONFIG" OPTFLAGS=""
$SUDO make -s -C "$work/src" PG_CONFIG="$PG_CONFIG" OPTFLAGS="" install
echo "pgvector: installed $(basename "$tarball") for PostgreSQL ${PG_MAJOR}"
