#!/usr/bin/env bash
# Installs what the test suite needs: the package with its test extras, and
# Debian's Chromium for the browser tests when it is missing (needs root/apt).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! [ -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
