// The fuzz targets (proptest, natively): each run alone with `cases` cases,
// timed. A failing target is a finding: proptest prints its minimal input
// and keeps its seed in tests/<file>.proptest-regressions.
import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** What each target parses or slices, its test file and its property tests. */
export const TARGETS = [
  { target: "pre-tokenizer and counter (o200k, cl100k vs bpe-openai)", file: "tokenizer_parity",
    tests: ["any_text_matches_and_truncates", "random_text_matches", "random_mixed_words_match"] },
  { target: "analyzer and index", file: "fuzz", tests: ["fuzz_analyzer"] },
  { target: "window assembly", file: "window_props", tests: ["window_contract"] },
  { target: "request assembly (window, summary, long-term block)", file: "context_props", tests: ["requests_are_valid_and_within_budget"] },
  { target: "budget split of the long-term block", file: "fuzz", tests: ["fuzz_budget_split"] },
  { target: "LLM output repair (judge, resolver)", file: "fuzz", tests: ["fuzz_llm_output"] },
  { target: "import document parsing", file: "fuzz", tests: ["fuzz_import_document"] },
  { target: "stored-record decoding at open", file: "fuzz", tests: ["fuzz_stored_records"] },
  { target: "redaction", file: "fuzz", tests: ["fuzz_redact"] },
  { target: "prompt fences", file: "fuzz", tests: ["fuzz_fences"] },
  { target: "tokenizer packs", file: "fuzz", tests: ["fuzz_pack"] },
];

export function fuzz({ cases }) {
  const env = { ...process.env, PATH: `${process.env.HOME}/.cargo/bin:${process.env.PATH}`, FUZZ_CASES: String(cases) };
  const files = [...new Set(TARGETS.map((t) => t.file))].flatMap((f) => ["--test", f]);
  execFileSync("cargo", ["test", "--release", "--no-run", ...files], { cwd: ROOT, env, stdio: ["ignore", "ignore", "inherit"] });
  return TARGETS.map((t) => {
    const started = performance.now();
    const findings = [];
    for (const name of t.tests) {
      const r = spawnSync("cargo", ["test", "--release", "--test", t.file, "--", "--exact", name], { cwd: ROOT, env, encoding: "utf8" });
      const ran = /test result: ok\. 1 passed/.test(r.stdout);
      if (!ran) findings.push({ test: name, output: `${r.stdout}\n${r.stderr}`.split("\n").filter((l) => /minimal failing|panicked|assert/.test(l)).slice(0, 5).join("\n") });
    }
    return { ...t, executions: cases * t.tests.length, seconds: (performance.now() - started) / 1000, findings };
  });
}
