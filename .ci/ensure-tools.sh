#!/usr/bin/env bash
# Make the command-line tools the test suite drives available: tmux (tests/e2e/test_tui_tmux.py runs the TUI in
# a detached tmux session). Installed from Debian's packages only when missing; nothing is started here.
set -euo pipefail
missing=()
command -v tmux >/dev/null || missing+=(tmux)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "installing ${missing[*]} from Debian's packages…" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
cat >&2 <<MSG

  ************************************************************************
  *  Missing: ${missing[*]} — and it cannot be installed here (not root,
  *  or no apt-get). The end-to-end TUI test will be SKIPPED (pytest's
  *  summary lists it). Install Debian's \`tmux\` package.
  ************************************************************************

MSG
exit 0  # the rest of the suite runs; the skip is reported
