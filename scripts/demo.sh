#!/usr/bin/env bash
# Builds the package and serves the demo chat app (www/) on 127.0.0.1. On a
# fresh machine it installs only what the demo needs (no browser, no test
# tools).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh --demo
bash scripts/build.sh
rm -rf www/pkg && cp -r pkg www/pkg
exec node scripts/serve.mjs www "${PORT:-8080}"
