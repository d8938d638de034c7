#!/usr/bin/env bash
# Installs what the build and the tests need, idempotently: each step checks
# first and is skipped (in well under a second) when its tool is present.
#   - the wasm32 Rust target, and wasm32-wasip2 with the `wasmtime` Python package for the component
#   - wasm-bindgen-cli at exactly Cargo.lock's wasm-bindgen version
#   - wasm-pack (for `wasm-pack test --headless --chrome`)
#   - Debian chromium + chromium-driver (headless browser tests), fonts-noto-cjk (Chinese in screenshots)
#   - the npm packages of package-lock.json
# `--demo` installs only what the demo needs to build and serve (the first
# three and the npm packages, with no browser and no wasm-pack).
set -euo pipefail
demo=false
[ "${1:-}" = "--demo" ] && demo=true
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

step() { printf '[bootstrap] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  step "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The CLI must equal the crate version in Cargo.lock, or wasm-bindgen refuses
# the module. No --locked: the CLI's own lockfile pins a yanked crate.
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
  step "installing wasm-bindgen-cli $want (found: ${have:-none})"
  cargo install wasm-bindgen-cli --version "$want" --force
fi

# The WebAssembly component (component/, WASI 0.2) and its wasmtime host:
# the `wasmtime` Python package in a virtual environment under target/.
if ! $demo && ! rustup target list --installed | grep -qx wasm32-wasip2; then
  step "adding the wasm32-wasip2 target"
  rustup target add wasm32-wasip2
fi
venv=target/component-venv
if ! $demo && ! cmp -s tests/component/requirements.txt "$venv/requirements.txt"; then
  step "installing the component's Python host packages"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/component/requirements.txt
  cp tests/component/requirements.txt "$venv/requirements.txt"
fi

if ! $demo && ! command -v wasm-pack >/dev/null 2>&1; then
  step "installing wasm-pack"
  cargo install wasm-pack --locked
fi

# The demo's screenshots show Chinese: Chromium needs a CJK font for it.
if ! $demo && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1 \
  || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK"; }; then
  step "installing chromium, chromium-driver and a CJK font"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-noto-cjk >/dev/null
fi

# npm ci only when package-lock.json changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "installing npm packages"
  npm ci --no-audit --no-fund --loglevel=error
fi
step "ready"
