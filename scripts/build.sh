#!/usr/bin/env bash
# Builds the npm package into pkg/: the wasm (release), its JS glue for the
# web target (browsers, Deno, workerd), the Node entry, TypeScript types and
# the tokenizer packs. The size comes mostly from the build itself: the
# library at opt-level "z", its hot paths (hot/) at 2 (Cargo.toml,
# [profile.release]); then a light wasm-opt pass (below).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

cargo build --release --lib --target wasm32-unknown-unknown
wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir pkg \
  target/wasm32-unknown-unknown/release/agent_memory.wasm

# wasm-opt's -O1 with a few of -O2's passes, inlining only the smallest
# functions (binaryen's default of 2 bytes; none for having one caller), all
# repeated until nothing changes (2026-12-06): 485,568 bytes gzip -9 became
# 475,865 (-9.5 KB; without the inlining, 479,261). -O2, -Os and -Oz come out
# 30 KB larger gzipped though smaller raw (they inline any function with one
# caller: async state machines), and --merge-similar-functions costs 2 KB on
# -O1. bench:scale at 1,000 and 10,000: within run-to-run spread. binaryen
# from npm (package.json), pinned: Debian's binaryen 108 corrupts
# wasm-bindgen's output. WASM_OPT names another binary.
wasm_opt=${WASM_OPT:-node_modules/binaryen/bin/wasm-opt}
[ -x "$wasm_opt" ] || { echo "no $wasm_opt: run npm ci (or set WASM_OPT)" >&2; exit 1; }
"$wasm_opt" --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-simd --enable-reference-types --enable-multivalue \
  --generate-global-effects -O1 --rse --precompute-propagate --dae-optimizing --inlining-optimizing \
  --one-caller-inline-max-function-size=0 --flexible-inline-max-function-size=0 --converge \
  pkg/agent_memory_bg.wasm -o pkg/agent_memory_bg.wasm

# Packs change only with the vocabulary or the pack format.
packs_src=(src/tokens/pack.rs src/tokens/vocab.rs src/bin/build-packs.rs Cargo.lock)
if [ ! -f pkg/packs/o200k.amtk ] || [ -n "$(find "${packs_src[@]}" -newer pkg/packs/o200k.amtk)" ]; then
  cargo run --release --quiet --features pack-builder --bin build-packs -- pkg/packs
fi

# The declarations of every option and result object, generated from the
# core's serde types (src/ts.rs), after wasm-bindgen's (the classes and the
# hand-written part in src/wasm/types.rs). A native debug build: seconds
# once the test build's dependencies are there.
cargo run --quiet --features ts --bin build-types -- target/types.d.ts
cat target/types.d.ts >> pkg/agent_memory.d.ts

cp js/index.js js/node.js js/guard.js js/workerd.js js/deno.js js/index.d.ts js/package.json README.md LICENSE-MIT LICENSE-APACHE CHANGELOG.md pkg/
mkdir -p pkg/adapters && cp js/adapters/* pkg/adapters/
mkdir -p pkg/integrations && cp js/integrations/* pkg/integrations/
mkdir -p pkg/sync && cp js/sync/* pkg/sync/
# `[Symbol.dispose]` needs TypeScript's esnext lib: declared, it breaks every
# project on es2022 (a strict app with DOM types and no @types/node). The
# method stays at run time, where `using` finds it.
sed -i '/\[Symbol.dispose\](): void;/d' pkg/agent_memory.d.ts
echo "built pkg/ ($(wc -c < pkg/agent_memory_bg.wasm) bytes wasm, $(gzip -9c pkg/agent_memory_bg.wasm | wc -c) gzip)"
