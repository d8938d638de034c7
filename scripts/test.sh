#!/usr/bin/env bash
# Every test, from a fresh machine: installs what is missing, then lint,
# native tests, the npm package and the WebAssembly component builds, the wasm tests in real headless
# Chromium (page and dedicated worker), and Node tests of the built package.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash scripts/bootstrap.sh

echo "== lint"
cargo fmt --all --check
cargo clippy --all-targets --quiet -- -D warnings
cargo clippy --features ts --lib --bin build-types --quiet -- -D warnings
cargo clippy --target wasm32-unknown-unknown --all-targets --quiet -- -D warnings
cargo clippy -p agent-memory-component --target wasm32-wasip2 --quiet -- -D warnings

echo "== native tests"
cargo test --quiet

echo "== npm package"
bash scripts/build.sh

echo "== WebAssembly component (run by tests/node/component.test.mjs in wasmtime and jco)"
cargo build -p agent-memory-component --target wasm32-wasip2 --release --quiet

echo "== wasm tests in headless Chromium"
wasm-pack test --headless --chrome

echo "== Node tests of the built package"
node --test tests/node/
