#!/usr/bin/env bash
# CI: the headless Chromium of the distribution that tests/test_matrix_browser.py drives through
# Playwright (its own browser download needs the internet). Idempotent: nothing to do when present.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq chromium
