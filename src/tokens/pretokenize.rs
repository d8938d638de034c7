//! Pre-tokenization of cl100k and o200k, hand-written instead of a regex.
//!
//! tiktoken splits text with a regular expression before byte-pair encoding.
//! A regex engine with Unicode classes would add ~150 KB of tables and code to
//! the wasm and run a few times slower than these matchers, which follow the
//! exact leftmost-first, greedy-with-backtracking semantics of the two
//! patterns, alternative by alternative:
//!
//! cl100k: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//!          ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//!
//! o200k:  `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|…)?|
//!          [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|…)?|
//!          \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
//!
//! Parity with tiktoken is checked by the native tests against `bpe-openai`
//! and by the Node tests against npm `tiktoken`.

include!(concat!(env!("OUT_DIR"), "/char_classes.rs"));

/// Which pre-tokenization pattern to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Cl100k,
    O200k,
}

// Character classes as bits, so each character is classified once.
const UPPER: u8 = 1; // Lu, Lt
const LOWER: u8 = 2; // Ll
const OTHER_LETTER: u8 = 4; // Lm, Lo
const MARK: u8 = 8; // Mn, Mc, Me
const NUMBER: u8 = 16; // Nd, Nl, No
const SPACE: u8 = 32; // White_Space
const NEWLINE: u8 = 64; // \r, \n

const LETTER: u8 = UPPER | LOWER | OTHER_LETTER;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const CASED_HEAD: u8 = UPPER | OTHER_LETTER | MARK;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const CASED_TAIL: u8 = LOWER | OTHER_LETTER | MARK;

const fn ascii_class(b: u8) -> u8 {
    match b {
        b'A'..=b'Z' => UPPER,
        b'a'..=b'z' => LOWER,
        b'0'..=b'9' => NUMBER,
        b'\r' | b'\n' => SPACE | NEWLINE,
        b' ' | b'\t' | 0x0B | 0x0C => SPACE,
        _ => 0,
    }
}

static ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        t[i] = ascii_class(i as u8);
        i += 1;
    }
    t
};

/// The six classes the generated table distinguishes, as bits.
const RUN_CLASSES: [u8; 6] = [0, UPPER, LOWER, OTHER_LETTER, MARK, NUMBER];

fn class(c: char) -> u8 {
    if c.is_ascii() {
        return ASCII[c as usize];
    }
    // The scripts that dominate non-English chat are all `Lo`: answer them
    // without the search.
    if matches!(c as u32, 0x3041..=0x3096 | 0x30A1..=0x30FA | 0x4E00..=0x9FFF | 0xAC00..=0xD7A3) {
        return OTHER_LETTER;
    }
    if c.is_whitespace() {
        return SPACE;
    }
    let runs = class_runs();
    let key = (c as u32) << 3 | 7;
    let run = runs.partition_point(|&r| r <= key) - 1;
    RUN_CLASSES[(runs[run] & 7) as usize]
}

/// The generated table expanded to `start << 3 | class`, once.
fn class_runs() -> &'static [u32] {
    static RUNS: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| {
        let mut at = 0x80u32;
        CLASS_RUN_GAPS
            .iter()
            .zip(CLASS_RUN_CLASSES.iter())
            .map(|(&gap, &k)| {
                at += gap as u32;
                at << 3 | k as u32
            })
            .collect()
    })
}

/// `[^\r\n\p{L}\p{N}]`: may stand before a word.
#[inline(always)]
fn is_prefix(cls: u8) -> bool {
    cls & (NEWLINE | LETTER | NUMBER) == 0
}

/// `[^\s\p{L}\p{N}]`: punctuation and symbols (marks count here too).
#[inline(always)]
fn is_punct(cls: u8) -> bool {
    cls & (SPACE | LETTER | NUMBER) == 0
}

/// A cursor over the text: the class and width of the character at a byte
/// offset, or `None` at the end.
#[inline(always)]
fn at(text: &str, i: usize) -> Option<(u8, usize)> {
    let b = *text.as_bytes().get(i)?;
    if b < 128 {
        return Some((ASCII[b as usize], 1));
    }
    let c = text[i..].chars().next()?;
    Some((class(c), c.len_utf8()))
}

/// Extends from `i` while characters are in `set`; returns the end offset.
#[inline(always)]
fn run(text: &str, mut i: usize, set: u8) -> usize {
    while let Some((cls, w)) = at(text, i) {
        if cls & set == 0 {
            break;
        }
        i += w;
    }
    i
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i`; returns the end offset. Case-insensitive
/// matching follows Unicode simple folding, under which `s` also matches
/// U+017F LATIN SMALL LETTER LONG S.
fn contraction(text: &str, i: usize) -> Option<usize> {
    let rest = text.get(i..)?.strip_prefix('\'')?;
    let mut chars = rest.chars();
    let first = chars.next()?.to_ascii_lowercase();
    let one = |n: usize| Some(i + 1 + n);
    match first {
        's' | 't' | 'm' | 'd' => one(1),
        '\u{17F}' => one(2),
        'r' | 'v' => match chars.next() {
            Some('e' | 'E') => one(2),
            _ => None,
        },
        'l' => match chars.next() {
            Some('l' | 'L') => one(2),
            _ => None,
        },
        _ => None,
    }
}

/// `\p{N}{1,3}`.
fn digits(text: &str, mut i: usize) -> usize {
    for _ in 0..3 {
        match at(text, i) {
            Some((cls, w)) if cls & NUMBER != 0 => i += w,
            _ => break,
        }
    }
    i
}

/// `[^\s\p{L}\p{N}]+` then `[\r\n]*` (cl100k) or `[\r\n/]*` (o200k), from a
/// position known to hold punctuation.
fn punct_tail(text: &str, i: usize, pattern: Pattern) -> usize {
    let mut i = i;
    while let Some((cls, w)) = at(text, i) {
        if !is_punct(cls) {
            break;
        }
        i += w;
    }
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(i) {
        if b == b'\r' || b == b'\n' || (pattern == Pattern::O200k && b == b'/') {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The three whitespace alternatives, at a position known to hold whitespace:
/// `\s*[\r\n]+` (up to the last line break of the run), `\s+(?!\S)` (the run
/// less its last character when a non-space follows), `\s+`.
fn whitespace(text: &str, i: usize) -> usize {
    let mut end = i;
    let mut last_newline_end = None;
    let mut last_char_start = i;
    while let Some((cls, w)) = at(text, end) {
        if cls & SPACE == 0 {
            break;
        }
        last_char_start = end;
        end += w;
        if cls & NEWLINE != 0 {
            last_newline_end = Some(end);
        }
    }
    if let Some(e) = last_newline_end {
        return e;
    }
    if end == text.len() || last_char_start == i {
        return end;
    }
    last_char_start
}

fn next_cl100k(text: &str, i: usize) -> usize {
    let (cls, w) = at(text, i).expect("called inside the text");
    if text.as_bytes()[i] == b'\'' {
        if let Some(e) = contraction(text, i) {
            return e;
        }
    }
    if cls & LETTER != 0 {
        return run(text, i, LETTER);
    }
    if is_prefix(cls) {
        if let Some((next, _)) = at(text, i + w) {
            if next & LETTER != 0 {
                return run(text, i + w, LETTER);
            }
        }
    }
    if cls & NUMBER != 0 {
        return digits(text, i);
    }
    if let Some(e) = space_then_punct(text, i, cls, Pattern::Cl100k) {
        return e;
    }
    whitespace(text, i)
}

/// ` ?[^\s\p{L}\p{N}]+…`: an optional single space, then punctuation.
fn space_then_punct(text: &str, i: usize, cls: u8, pattern: Pattern) -> Option<usize> {
    if text.as_bytes()[i] == b' ' {
        if let Some((next, _)) = at(text, i + 1) {
            if is_punct(next) {
                return Some(punct_tail(text, i + 1, pattern));
            }
        }
    }
    if is_punct(cls) {
        return Some(punct_tail(text, i, pattern));
    }
    None
}

/// o200k's first alternative without its prefix, from `p`:
/// `[HEAD]*[TAIL]+` then an optional contraction.
fn lower_word(text: &str, p: usize) -> Option<usize> {
    let head_end = run(text, p, CASED_HEAD);
    let end = match at(text, head_end) {
        Some((cls, _)) if cls & CASED_TAIL != 0 => run(text, head_end, CASED_TAIL),
        _ => {
            // `[HEAD]*` took every letter; it gives back characters until one
            // that `[TAIL]+` accepts (Lm, Lo or M) ends the match.
            let mut last_tail_end = None;
            let mut j = p;
            while j < head_end {
                let (cls, w) = at(text, j)?;
                j += w;
                if cls & CASED_TAIL != 0 {
                    last_tail_end = Some(j);
                }
            }
            last_tail_end?
        }
    };
    Some(contraction(text, end).unwrap_or(end))
}

/// o200k's second alternative without its prefix: `[HEAD]+[TAIL]*` then an
/// optional contraction.
fn upper_word(text: &str, p: usize) -> Option<usize> {
    let head_end = run(text, p, CASED_HEAD);
    if head_end == p {
        return None;
    }
    let end = run(text, head_end, CASED_TAIL);
    Some(contraction(text, end).unwrap_or(end))
}

fn next_o200k(text: &str, i: usize) -> usize {
    let (cls, w) = at(text, i).expect("called inside the text");
    let prefix = is_prefix(cls);
    for word in [lower_word, upper_word] {
        if prefix {
            if let Some(e) = word(text, i + w) {
                return e;
            }
        }
        if let Some(e) = word(text, i) {
            return e;
        }
    }
    if cls & NUMBER != 0 {
        return digits(text, i);
    }
    if let Some(e) = space_then_punct(text, i, cls, Pattern::O200k) {
        return e;
    }
    whitespace(text, i)
}

/// The pieces of `text`, in order; their concatenation is `text`.
pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    pattern: Pattern,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.text.len() {
            return None;
        }
        let end = match self.pattern {
            Pattern::Cl100k => next_cl100k(self.text, self.pos),
            Pattern::O200k => next_o200k(self.text, self.pos),
        };
        debug_assert!(end > self.pos, "every position matches some alternative");
        let piece = &self.text[self.pos..end];
        self.pos = end;
        Some(piece)
    }
}

pub fn pieces(text: &str, pattern: Pattern) -> Pieces<'_> {
    Pieces { text, pos: 0, pattern }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str, p: Pattern) -> Vec<&str> {
        pieces(text, p).collect()
    }

    #[test]
    fn cl100k_words_contractions_numbers() {
        assert_eq!(split("Hello world", Pattern::Cl100k), ["Hello", " world"]);
        assert_eq!(
            split("I'm here, it's 12345!", Pattern::Cl100k),
            ["I", "'m", " here", ",", " it", "'s", " ", "123", "45", "!"]
        );
        assert_eq!(split("(hello)", Pattern::Cl100k), ["(hello", ")"]);
    }

    #[test]
    fn cl100k_whitespace_lookahead() {
        assert_eq!(split("a   b", Pattern::Cl100k), ["a", "  ", " b"]);
        assert_eq!(split("a   ", Pattern::Cl100k), ["a", "   "]);
        assert_eq!(split("a \n\n b", Pattern::Cl100k), ["a", " \n\n", " b"]);
        assert_eq!(split("x\t\ty", Pattern::Cl100k), ["x", "\t", "\ty"]);
    }

    #[test]
    fn o200k_splits_case_runs() {
        assert_eq!(split("HelloWorld", Pattern::O200k), ["Hello", "World"]);
        assert_eq!(split("HTTPServer", Pattern::O200k), ["HTTPServer"]);
        assert_eq!(split("don't", Pattern::O200k), ["don't"]);
        assert_eq!(split("a/b//\n", Pattern::O200k), ["a", "/b", "//\n"]);
    }

    #[test]
    fn class_table_matches_the_general_category() {
        use unicode_general_category::{get_general_category, GeneralCategory as G};
        for c in (0u32..=0x10FFFF).filter_map(char::from_u32) {
            let expected = if c.is_ascii() {
                ASCII[c as usize]
            } else if c.is_whitespace() {
                SPACE
            } else {
                match get_general_category(c) {
                    G::UppercaseLetter | G::TitlecaseLetter => UPPER,
                    G::LowercaseLetter => LOWER,
                    G::ModifierLetter | G::OtherLetter => OTHER_LETTER,
                    G::NonspacingMark | G::SpacingMark | G::EnclosingMark => MARK,
                    G::DecimalNumber | G::LetterNumber | G::OtherNumber => NUMBER,
                    _ => 0,
                }
            };
            assert_eq!(class(c), expected, "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn pieces_cover_the_text() {
        let text = "日本語のテキスト 😀 mixed\r\n  code: fn main() { let x = 1_000; }  \u{301}é";
        for p in [Pattern::Cl100k, Pattern::O200k] {
            assert_eq!(split(text, p).concat(), text);
        }
    }
}
