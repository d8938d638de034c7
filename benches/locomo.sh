#!/usr/bin/env bash
# Scores the LoCoMo ranker on the dev split, lexical then hybrid, as
# documented in docs/benchmarks.md. The data stays in ../shared/data/locomo
# (CC BY-NC: never copied into this repository).
set -euo pipefail
cd "$(dirname "$0")/.."
data="${LOCOMO_DATA:-../shared/data/locomo}"
[ -f pkg/node.js ] || bash scripts/build.sh >/dev/null
python3 -c "import numpy" 2>/dev/null || python3 -m pip install --quiet numpy
echo "== lexical"
python3 "$data/bench.py" eval --data "$data" --ranker ext --cmd "node benches/locomo-ranker.mjs"
echo "== hybrid (shipped MiniLM vectors)"
python3 "$data/bench.py" eval --data "$data" --ranker ext --ext-embeddings --cmd "node benches/locomo-ranker.mjs --hybrid"
echo "== lexical, through Memory (episodic recall, public API only)"
python3 "$data/bench.py" eval --data "$data" --ranker ext --cmd "node benches/locomo-memory.mjs"
echo "== hybrid, through Memory (the dataset's vectors through the embed hook)"
python3 "$data/bench.py" eval --data "$data" --ranker ext --ext-embeddings --cmd "node benches/locomo-memory.mjs --hybrid"
echo "== our Chinese set: through Memory, then plain character uni+bigram BM25"
python3 "$data/bench.py" eval --data benches/data/zh --ranker ext --cmd "node benches/locomo-memory.mjs"
python3 "$data/bench.py" eval --data benches/data/zh --ranker ext --cmd "node benches/cjk-bm25-ranker.mjs"
echo "== our second Chinese set (written apart from the first), dev split: through Memory, then character uni+bigram BM25"
python3 "$data/bench.py" eval --data benches/data/zh2/dev --ranker ext --cmd "node benches/locomo-memory.mjs"
python3 "$data/bench.py" eval --data benches/data/zh2/dev --ranker ext --cmd "node benches/cjk-bm25-ranker.mjs"
