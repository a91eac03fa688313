#!/usr/bin/env bash
# The dashboard's browser tests (test/dashboard) drive Debian's chromium with playwright-core; screenshots
# land in out/ci/screenshots. Installed once per machine (~1-2 min); without it those tests skip, saying so.
set -uo pipefail
cd "$(dirname "$0")/../.."
. .ci/lib.sh
[ -x /usr/bin/chromium ] && { say "chromium already installed"; exit 0; }
apt_install chromium || { say "chromium: INSTALL FAILED; test/dashboard/browser.test.ts will skip"; exit 1; }
say "chromium installed"
