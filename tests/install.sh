#!/usr/bin/env bash
# Installs what the test suite needs: the package with its test extras, and
# Debian's Chromium (browser tests), nginx and redis-server (deployment and rooms
# tests, which start them as plain processes) when missing (needs root/apt).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # policy-rc.d: the packages must not start nginx or Redis as services; the tests start their own.
  policy=""
  if ! [ -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    $SUDO sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'
  fi
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [ -z "$policy" ] || $SUDO rm -f "$policy"
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
