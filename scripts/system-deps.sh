#!/usr/bin/env bash
# System packages the test suite uses beyond PyPI: Debian's Chromium for the browser tests of
# the web UI (Playwright drives it; no browser is ever downloaded) and a Japanese font for its
# screenshots. Installed with apt-get when missing and this user may; otherwise a note, and
# the browser tests skip with the reason.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
  echo "installing Debian's chromium for the browser tests (apt-get)…"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium fonts-ipafont-gothic >/dev/null
elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests (sudo apt-get)…"
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-ipafont-gothic >/dev/null
else
  echo "note: chromium is not installed and cannot be installed here; the browser tests will skip" >&2
fi
