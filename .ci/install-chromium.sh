#!/usr/bin/env bash
# Install Chromium from Debian's packages for the browser tests (tests/serve/test_page.py).
# .ci/run calls this before `make test`; under CI=true the browser tests fail (not skip) without it.
# Playwright (the `playwright` Python package from agentrt[test]) drives /usr/bin/chromium through
# executable_path; `playwright install` is never run (no browser downloads).
set -euo pipefail

if [[ -x /usr/bin/chromium ]]; then
    echo "chromium: $(/usr/bin/chromium --version 2>/dev/null || echo present)"
    exit 0
fi
sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null)"
