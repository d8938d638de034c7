#!/usr/bin/env bash
# Every test, from a fresh machine: installs what is missing, then lint,
# native tests, the npm package build, the wasm tests in real headless
# Chromium (page and dedicated worker), and Node tests of the built package.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash scripts/bootstrap.sh

echo "== lint"
cargo fmt --check
cargo clippy --all-targets --quiet -- -D warnings
cargo clippy --target wasm32-unknown-unknown --all-targets --quiet -- -D warnings

echo "== native tests"
cargo test --quiet

echo "== npm package"
bash scripts/build.sh

echo "== wasm tests in headless Chromium"
wasm-pack test --headless --chrome

echo "== Node tests of the built package"
node --test tests/node/
