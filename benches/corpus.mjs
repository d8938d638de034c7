// A deterministic mixed corpus for tokenizer parity tests and benchmarks:
// English prose, Chinese, Japanese, Korean, code, emoji (with ZWJ
// sequences), numbers, contractions and long whitespace runs, stitched
// together by a seeded generator so every run sees the same text.

const FRAGMENTS = [
  "The quick brown fox jumps over the lazy dog. ",
  "I'm sure they'll say it's what we'd wanted, but you've got to admit I'M RIGHT. ",
  "我喜欢用 Rust 写代码，也喜欢在周末去爬山。",
  "今天的会议改到下午三点，请大家准时参加。",
  "日本語のテキストを処理するのは難しいですね。カタカナもひらがなも。",
  "안녕하세요, 오늘 날씨가 정말 좋네요! ",
  "fn main() {\n    let v: Vec<u64> = (0..1_000).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}\n",
  "const config = { retries: 3, timeoutMs: 2500, url: \"https://api.example.com/v1/chat\" };\n",
  "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY id DESC LIMIT 50;\n",
  "😀😃😄😁 👨‍👩‍👧‍👦 🏳️‍🌈 ✨🚀 ",
  "Prices: $1,299.99 / €1.099,00 / ¥150000 — 3.14159265358979 and 42. ",
  "    \t  indented\r\n\r\n\n   spaced   out   text    \n",
  "HTTPServer XMLHttpRequest getElementById snake_case_name SCREAMING_CASE ",
  "e\u0301 n\u0303 a\u0308 combining marks; ǅemal ſtraße's ",
  "<div class=\"msg\"><p>Hello &amp; welcome!</p></div>\n",
  "        ",
];

/** Mulberry32: a small seeded PRNG. */
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** About `bytes` UTF-8 bytes of mixed text. */
export function mixedCorpus(bytes, seed = 42) {
  const next = rng(seed);
  const parts = [];
  let size = 0;
  const enc = new TextEncoder();
  while (size < bytes) {
    const f = FRAGMENTS[Math.floor(next() * FRAGMENTS.length)];
    parts.push(f);
    size += enc.encode(f).length;
  }
  return parts.join("");
}

/** Edge cases every tokenizer must count exactly. */
export const EDGE_CASES = [
  "", " ", "\n", "a", "'s", "'S", "'ll", "I'M", "don't", "12345678", "1 2 3",
  " ".repeat(1000), "\n".repeat(500), "\t \t \n \r\n", "a".repeat(3000),
  "😀".repeat(200), "中".repeat(1000), "x\u0301\u0301", "ǅ ǈ Ǆ", "ſ's",
  "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=".repeat(50),
  "trailing   ", "   leading", "mid   dle", "a/b//c\n/", "Hello\u00a0world\u3000!",
];
