#!/usr/bin/env bash
# Builds the npm package into pkg/: the wasm (release), its JS glue for the
# web target (browsers, Deno, workerd), the Node entry, TypeScript types and
# the tokenizer packs. wasm-opt comes from the npm `binaryen` package, never
# from PATH: Debian's binaryen 108 corrupts wasm-bindgen's externref table.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

cargo build --release --lib --target wasm32-unknown-unknown
wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir pkg \
  target/wasm32-unknown-unknown/release/agent_memory.wasm
node_modules/.bin/wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-reference-types --enable-mutable-globals --enable-multivalue \
  pkg/agent_memory_bg.wasm -o pkg/agent_memory_bg.wasm

# Packs change only with the vocabulary or the pack format.
packs_src=(src/tokens/pack.rs src/tokens/vocab.rs src/bin/build-packs.rs Cargo.lock)
if [ ! -f pkg/packs/o200k.amtk ] || [ -n "$(find "${packs_src[@]}" -newer pkg/packs/o200k.amtk)" ]; then
  cargo run --release --quiet --features pack-builder --bin build-packs -- pkg/packs
fi

cp js/index.js js/node.js js/guard.js js/workerd.js js/deno.js js/index.d.ts js/package.json README.md LICENSE-MIT LICENSE-APACHE CHANGELOG.md pkg/
mkdir -p pkg/adapters && cp js/adapters/* pkg/adapters/
mkdir -p pkg/integrations && cp js/integrations/* pkg/integrations/
# `[Symbol.dispose]` needs TypeScript's esnext lib: declared, it breaks every
# project on es2022 (a strict app with DOM types and no @types/node). The
# method stays at run time, where `using` finds it.
sed -i '/\[Symbol.dispose\](): void;/d' pkg/agent_memory.d.ts
echo "built pkg/ ($(wc -c < pkg/agent_memory_bg.wasm) bytes wasm, $(gzip -9c pkg/agent_memory_bg.wasm | wc -c) gzip)"
