#!/usr/bin/env bash
# Builds the package and serves the demo page (www/) on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/build.sh
rm -rf www/pkg && cp -r pkg www/pkg
exec node scripts/serve.mjs www "${PORT:-8080}"
