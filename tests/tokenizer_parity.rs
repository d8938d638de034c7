//! Exact counts: our pack tokenizers against `bpe-openai` (itself checked
//! against tiktoken upstream) on a corpus of hard cases and on random text.
//! The Node tests check the same packs against npm `tiktoken`.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::sync::LazyLock;

use agent_memory::tokens::{pack, truncate_to_tokens, BpeTokenizer, Tokenizer, TokenizerId};
use proptest::prelude::*;

fn build(id: TokenizerId, reference: &bpe_openai::Tokenizer) -> BpeTokenizer {
    let bpe = &reference.bpe;
    let tokens: Vec<&[u8]> = (0..bpe.num_tokens() as u32).map(|t| bpe.token_bytes(t)).collect();
    BpeTokenizer::from_pack(&pack::encode(id, &tokens).unwrap()).unwrap()
}

static CL100K: LazyLock<BpeTokenizer> =
    LazyLock::new(|| build(TokenizerId::Cl100k, bpe_openai::cl100k_base()));
static O200K: LazyLock<BpeTokenizer> = LazyLock::new(|| build(TokenizerId::O200k, bpe_openai::o200k_base()));

fn pairs() -> [(&'static BpeTokenizer, &'static bpe_openai::Tokenizer); 2] {
    [(&CL100K, bpe_openai::cl100k_base()), (&O200K, bpe_openai::o200k_base())]
}

const CORPUS: &[&str] = &[
    "",
    " ",
    "Hello, world!",
    "I'm sure it's what they've said: we'll go, you'd agree, I'M SURE IT'S.",
    "我喜欢用 Rust 写代码，也喜欢喝茶。你觉得呢？",
    "日本語のテキストとカタカナ、ひらがな。",
    "안녕하세요, 반갑습니다!",
    "😀😃😄 👨‍👩‍👧‍👦 🏳️‍🌈 emoji ✨",
    "fn main() {\n    let x: Vec<u32> = (0..10).map(|i| i * 2).collect();\n    println!(\"{x:?}\");\n}\n",
    "                                                                  spaces",
    "tabs\t\t\tand\r\nwindows\r\n\r\nline  breaks \n\n\n  ",
    "trailing whitespace   ",
    "1234567890 3.14159 1,000,000 0x1F 12ab34",
    "HTTPServer XMLHttpRequest camelCase snake_case SCREAMING_CASE McDonald's",
    "https://example.com/path/to/file.html?query=1&b=2#frag // comment /* block */",
    "ǅemalj ǈ Ǆ — titlecase, ſtraße's, K‘elvin",
    "e\u{301} a\u{308}\u{308} combining marks \u{301}alone",
    "Ⅻ ² ½ ٣ numbers of every kind",
    "\u{a0}non\u{a0}breaking\u{2003}em space\u{3000}ideographic space",
    "'s 't 're 've 'm 'll 'd 'S 'LL 'x",
];

#[test]
fn corpus_counts_match_bpe_openai() {
    for (ours, reference) in pairs() {
        for text in CORPUS {
            assert_eq!(ours.count(text), reference.count(*text), "{:?} on {text:?}", ours.id());
        }
    }
}

#[test]
fn long_pieces_match() {
    let texts = [
        " ".repeat(5_000),
        "\n".repeat(3_000),
        "a".repeat(4_000),
        "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=".repeat(300),
        "😀".repeat(1_000),
        "中".repeat(2_000),
    ];
    for (ours, reference) in pairs() {
        for text in &texts {
            assert_eq!(ours.count(text), reference.count(text.as_str()), "{:?}", ours.id());
        }
    }
}

#[test]
fn count_up_to_agrees_with_count() {
    let text = CORPUS.join("\n");
    for (ours, _) in pairs() {
        let n = ours.count(&text);
        assert_eq!(ours.count_up_to(&text, n), Some(n));
        assert_eq!(ours.count_up_to(&text, n - 1), None);
        let cut = truncate_to_tokens(ours, &text, n / 2);
        assert!(ours.count(cut) <= n / 2);
        assert!(ours.count(cut) >= n / 2 - 4, "truncation should stay close to the limit");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(common::cases(400)))]

    /// Any Unicode at all (controls, noncharacters, lone combining marks):
    /// counts match, and truncation gives a prefix within the limit.
    #[test]
    fn any_text_matches_and_truncates(s in any::<String>(), limit in 0usize..40) {
        for (ours, reference) in pairs() {
            prop_assert_eq!(ours.count(&s), reference.count(s.as_str()));
            let cut = truncate_to_tokens(ours, &s, limit);
            prop_assert!(s.starts_with(cut));
            prop_assert!(ours.count(cut) <= limit);
            prop_assert_eq!(ours.count_up_to(&s, limit).is_some(), ours.count(&s) <= limit);
        }
    }

    #[test]
    fn random_text_matches(s in "(\\PC|[ \\t\\r\\n'0-9]){0,80}") {
        for (ours, reference) in pairs() {
            prop_assert_eq!(ours.count(&s), reference.count(s.as_str()));
        }
    }

    #[test]
    fn random_mixed_words_match(words in prop::collection::vec(
        prop::sample::select(vec!["Hello", " world", "'s", "'LL", "  ", "\n", "\r\n", "中文", "テスト",
            "😀", "123", "4567", "!!", " ?", "/", "//", "\t", "HTTP", "Server", "é", "\u{301}", "ǅ", "ſ"]), 0..40)) {
        let s = words.concat();
        for (ours, reference) in pairs() {
            prop_assert_eq!(ours.count(&s), reference.count(s.as_str()), "{:?}", s);
        }
    }
}
