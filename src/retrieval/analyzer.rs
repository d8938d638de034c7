//! Text analysis for the lexical index, without a dictionary:
//! - Latin-script (and other alphabetic) words: lowercased, punctuation
//!   stripped, English stop words dropped, Snowball (Porter2) stemmed;
//!   numbers kept as they are;
//! - CJK (Han, kana, Hangul): overlapping character bigrams, plus each
//!   character as a unigram term, so a one-character query still matches.
//!   Bigrams are what makes "我喜欢用什么语言" find "我喜欢用 Rust" without
//!   word segmentation.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use crate::script::is_cjk_letter;

/// NLTK's English stop words (179). Apostrophe fragments are there because
/// words split at apostrophes ("don't" -> "don", "t").
const STOP_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "you're",
    "you've",
    "you'll",
    "you'd",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "she's",
    "her",
    "hers",
    "herself",
    "it",
    "it's",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "that'll",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "don't",
    "should",
    "should've",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "aren't",
    "couldn",
    "couldn't",
    "didn",
    "didn't",
    "doesn",
    "doesn't",
    "hadn",
    "hadn't",
    "hasn",
    "hasn't",
    "haven",
    "haven't",
    "isn",
    "isn't",
    "ma",
    "mightn",
    "mightn't",
    "mustn",
    "mustn't",
    "needn",
    "needn't",
    "shan",
    "shan't",
    "shouldn",
    "shouldn't",
    "wasn",
    "wasn't",
    "weren",
    "weren't",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
];

/// The stop words the analyzer drops, for giving another engine the same.
pub fn stop_words() -> &'static [&'static str] {
    STOP_WORDS
}

fn is_stop_word(w: &str) -> bool {
    static SET: OnceLock<rustc_hash::FxHashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| STOP_WORDS.iter().copied().collect()).contains(w)
}

/// The term of a lowercase ASCII word: its stem, or `None` for a stop
/// word. It depends on the word alone, so callers cache it by the word.
pub fn ascii_term(word: &str) -> Option<String> {
    (!is_stop_word(word)).then(|| stemmer().stem(word).into_owned())
}

/// Hands `f` the term of a lowercase ASCII word, if it has one. Word
/// frequencies are Zipfian, so a small cache answers most words with one
/// lookup and no allocation (the stem is lent from the cache); it is
/// dropped when it grows past a bound rather than kept exactly.
fn with_ascii_term(word: &str, f: &mut dyn FnMut(&str)) {
    thread_local! {
        static CACHE: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Option<Box<str>>>> = Default::default();
    }
    CACHE.with(|cache| {
        if let Some(term) = cache.borrow().get(word) {
            if let Some(stem) = term {
                f(stem);
            }
            return;
        }
        let term: Option<Box<str>> = ascii_term(word).map(String::into_boxed_str);
        if let Some(stem) = &term {
            f(stem);
        }
        let mut cache = cache.borrow_mut();
        if cache.len() >= 50_000 {
            cache.clear();
        }
        cache.insert(word.into(), term);
    })
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Marks CJK unigram terms apart from bigrams and words.
pub const UNIGRAM: char = '\u{1}';

/// A piece of text as the analyzer cuts it.
pub enum Token<'a> {
    /// A lowercase ASCII word, before stemming and stop words: its term
    /// ([`ascii_term`]) can be cached by it.
    AsciiWord(&'a str),
    /// A term as it is: another word (stop words dropped), a CJK bigram or
    /// unigram.
    Term(&'a str),
}

/// Hands `f` the tokens of `text`, in order. ASCII, most of what is
/// indexed, takes a path of its own (runs of letters and digits, not
/// characters one by one); a word's letters go into one buffer kept
/// across words.
pub fn each_token(text: &str, f: &mut dyn FnMut(Token)) {
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let mut term = String::new();
    let flush_word = |word: &mut String, f: &mut dyn FnMut(Token)| {
        if word.bytes().all(|b| b.is_ascii_alphabetic()) {
            if !word.is_empty() {
                f(Token::AsciiWord(word));
            }
        } else if !is_stop_word(word) {
            f(Token::Term(word));
        }
        word.clear();
    };
    let mut flush_cjk = |cjk: &mut Vec<char>, f: &mut dyn FnMut(Token)| {
        for (i, &c) in cjk.iter().enumerate() {
            term.clear();
            term.push(UNIGRAM);
            term.push(c);
            f(Token::Term(&term));
            if let Some(&next) = cjk.get(i + 1) {
                term.clear();
                term.push(c);
                term.push(next);
                f(Token::Term(&term));
            }
        }
        cjk.clear();
    };
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        // A run of ASCII letters and digits joins the word at once.
        let run = rest.bytes().position(|b| !b.is_ascii_alphanumeric()).unwrap_or(rest.len());
        if run > 0 {
            flush_cjk(&mut cjk, f);
            word.push_str(&rest[..run]);
            word.make_ascii_lowercase();
            rest = &rest[run..];
            continue;
        }
        rest = &rest[c.len_utf8()..];
        if c.is_ascii() {
            flush_word(&mut word, f);
            flush_cjk(&mut cjk, f);
        } else if is_cjk_letter(c) {
            flush_word(&mut word, f);
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, f);
            word.extend(c.to_lowercase());
        } else {
            flush_word(&mut word, f);
            flush_cjk(&mut cjk, f);
        }
    }
    flush_word(&mut word, f);
    flush_cjk(&mut cjk, f);
}

/// Index terms of `text`, in order (repeats kept: they are term frequency).
pub fn analyze(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, &mut |token| match token {
        Token::AsciiWord(w) => with_ascii_term(w, &mut |t| out.push(t.to_string())),
        Token::Term(t) => out.push(t.to_string()),
    });
    out
}

/// Query terms: the index terms, unique. CJK unigrams stay in: measured
/// on our Chinese conversation set (benches/data/zh), a query of bigrams
/// only ranks below plain uni+bigram BM25 (R@5 0.815 vs 0.826), with its
/// unigrams above it (0.902); a bigram match still outweighs a unigram one,
/// having the rarer term.
///
/// A question's Chinese function characters (pronouns, particles, question
/// words: 我 的 是 什么 哪) are left out when alone or paired with one
/// another, as English stop words are: in "我是做什么工作的" they would match
/// every Chinese statement and outweigh 工作, the one word that tells.
pub fn analyze_query(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for t in analyze(text) {
        if !terms.contains(&t) && !is_cjk_function_term(&t) {
            terms.push(t);
        }
    }
    terms
}

/// Chinese characters that say how, not what: pronouns, particles,
/// question words. Never a whole answer, always in a question.
const CJK_FUNCTION: &str = "我你他她它们的地得了着过吗呢吧啊是什么哪谁个这那些怎样";

/// Whether a CJK query term is a function character, or a bigram of two.
fn is_cjk_function_term(term: &str) -> bool {
    let mut chars = term.strip_prefix(UNIGRAM).unwrap_or(term).chars();
    let first = chars.next();
    let (second, rest) = (chars.next(), chars.next());
    let function = |c: char| CJK_FUNCTION.contains(c);
    match (first, second, rest) {
        (Some(a), None, _) if term.starts_with(UNIGRAM) => function(a),
        (Some(a), Some(b), None) if !term.starts_with(UNIGRAM) => {
            is_cjk_letter(a) && function(a) && function(b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_is_lowercased_stemmed_and_stopped() {
        assert_eq!(analyze("The Cats were running, quickly!"), ["cat", "run", "quick"]);
        assert_eq!(analyze("I'm going to the LGBTQ support group."), ["go", "lgbtq", "support", "group"]);
        assert_eq!(analyze("Room 101, 2023-05-08"), ["room", "101", "2023", "05", "08"]);
    }

    #[test]
    fn chinese_becomes_bigrams_and_unigrams() {
        assert_eq!(analyze("喜欢"), ["\u{1}喜", "喜欢", "\u{1}欢"]);
        let q = analyze_query("我喜欢用什么语言写代码?");
        assert!(q.contains(&"喜欢".to_string()) && q.contains(&"代码".to_string()));
        assert!(q.contains(&"\u{1}码".to_string()), "unigrams too: {q:?}");
        assert_eq!(analyze_query("猫"), ["\u{1}猫"]);
    }

    #[test]
    fn mixed_and_japanese_text() {
        let t = analyze("我喜欢用Rust写代码");
        assert!(t.contains(&"rust".to_string()) && t.contains(&"代码".to_string()));
        let j = analyze_query("東京に住んでいます");
        assert!(j.contains(&"東京".to_string()) && j.contains(&"住ん".to_string()));
        assert_eq!(analyze("안녕하세요").iter().filter(|t| !t.starts_with(UNIGRAM)).count(), 4);
    }

    /// The analyzer before its ASCII path and shared buffers, as it was.
    fn reference(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let (mut word, mut cjk) = (String::new(), Vec::<char>::new());
        let flush_word = |word: &mut String, out: &mut Vec<String>| {
            let w = std::mem::take(word);
            if !w.is_empty() && !is_stop_word(&w) {
                let ascii = w.chars().all(|c| c.is_ascii_alphabetic());
                out.push(if ascii { stemmer().stem(&w).into_owned() } else { w });
            }
        };
        let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
            for (i, &c) in cjk.iter().enumerate() {
                out.push(format!("{UNIGRAM}{c}"));
                if let Some(&next) = cjk.get(i + 1) {
                    out.push([c, next].iter().collect());
                }
            }
            cjk.clear();
        };
        for c in text.chars() {
            if is_cjk_letter(c) {
                flush_word(&mut word, &mut out);
                cjk.push(c);
            } else if c.is_alphanumeric() {
                flush_cjk(&mut cjk, &mut out);
                word.extend(c.to_lowercase());
            } else {
                flush_word(&mut word, &mut out);
                flush_cjk(&mut cjk, &mut out);
            }
        }
        flush_word(&mut word, &mut out);
        flush_cjk(&mut cjk, &mut out);
        out
    }

    #[test]
    fn every_text_gets_the_terms_the_reference_analyzer_gives() {
        // Seeded texts mixing ASCII words, stop words, digits, accented and
        // Cyrillic letters (lowercased through Unicode), CJK and emoji.
        let pieces = [
            "The",
            "running",
            "cats",
            "don't",
            "Café",
            "ÉCOLE",
            "Straße",
            "Привет",
            "東京",
            "喜欢",
            "에요",
            "😀",
            "42",
            "x9",
            " ",
            " ",
            ", ",
            "-",
            "'",
            "İstanbul",
            "ǅemal",
            "naïve",
            "I",
            "was",
            "studies",
        ];
        let mut next = crate::seeded::picker(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            let text: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
            assert_eq!(analyze(&text), reference(&text), "{text:?}");
        }
    }

    #[test]
    fn a_questions_chinese_function_characters_are_left_out() {
        let terms = analyze_query("我是做什么工作的？");
        assert!(terms.contains(&"工作".to_string()) && terms.contains(&format!("{UNIGRAM}做")), "{terms:?}");
        for gone in [format!("{UNIGRAM}我"), format!("{UNIGRAM}什"), "什么".into(), "的".into()] {
            assert!(!terms.contains(&gone), "{gone}: {terms:?}");
        }
        // A bigram with one content character stays ("做什"), and the
        // index still holds every character of a statement.
        assert!(terms.contains(&"做什".to_string()));
        assert!(analyze("我的").contains(&"我的".to_string()));
    }

    #[test]
    fn query_terms_are_unique() {
        assert_eq!(analyze_query("rust Rust RUST rusting"), ["rust"]);
    }
}
