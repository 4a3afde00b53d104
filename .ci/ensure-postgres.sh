#!/usr/bin/env bash
# Make PostgreSQL server binaries available (Debian's `postgresql` package). The tests start their own
# throwaway cluster on 127.0.0.1 as the `postgres` user; nothing here starts a server.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ -n "${SOCIALPUB_PG_BINDIR:-}" ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "installing PostgreSQL from Debian's packages…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  exit 0
fi
cat >&2 <<'MSG'

  ************************************************************************
  *  PostgreSQL server binaries are NOT available and cannot be installed *
  *  here (not root, or no apt-get). The PostgreSQL suite will NOT run.   *
  *  Install Debian's `postgresql` package, or set SOCIALPUB_PG_BINDIR.   *
  ************************************************************************

MSG
exit 3
