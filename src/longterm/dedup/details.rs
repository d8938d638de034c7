//! The details that make two similar texts different facts.
//!
//! Character similarity cannot tell "Has 2 kids" from "Has 3 kids", or
//! "Meeting moved to Monday 10:00" from "... Tuesday 10:00": one character
//! or one word apart, far above the Jaccard and Levenshtein thresholds, yet
//! the newer text is an update, and dropping it as a duplicate loses it.
//! Nor does it see that "Does not like spicy food" contradicts "Likes spicy
//! food" (well below the thresholds). So after a similarity match, and for
//! polarity also without one, the texts' details are compared:
//!
//! - numbers: digit runs (`2`, `10:00`, `455`), English number words and
//!   runs of Chinese numerals;
//! - dates: weekday and month names;
//! - names: words capitalized in either text (past its first word), looked
//!   up case-insensitively in both, so "Java" and "java" are one name;
//! - polarity: negation words (`not`, `never`, `n't`, `不`, `没`, ...),
//!   by parity, so "never without" reads as positive.
//!
//! Cost: one pass over each text, done once per memory (in its fingerprint).

use std::collections::BTreeSet;

use serde::Serialize;

/// What differs between two similar texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Change {
    Number,
    Date,
    Name,
    /// One says the opposite of the other.
    Polarity,
}

const NUMBER_WORDS: &[&str] = &[
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
    "thirty",
    "forty",
    "fifty",
    "sixty",
    "seventy",
    "eighty",
    "ninety",
    "hundred",
    "thousand",
    "million",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "once",
    "twice",
    "both",
    "none",
    "single",
    "dozen",
];

const DATE_WORDS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sun",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "today",
    "tomorrow",
    "yesterday",
    "weekend",
    "morning",
    "evening",
    "tonight",
    "noon",
    "midnight",
];

const NEGATIONS: &[&str] =
    &["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot", "nowhere"];

/// Chinese negation characters.
const CJK_NEGATIONS: &[char] = &['不', '没', '沒', '无', '無', '别', '別', '未', '非', '勿'];

const CJK_NUMERALS: &str = "零〇一二两兩三四五六七八九十百千万萬亿億半";

/// Words a negation attaches to, dropped when comparing what two texts say
/// apart from their polarity ("does not like" vs "likes").
const AUXILIARIES: &[&str] = &[
    "do", "does", "did", "is", "are", "was", "were", "am", "be", "will", "would", "can", "could", "should",
    "has", "have", "had", "any", "longer", "anymore",
];

/// A text's details, computed once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    numbers: Vec<String>,
    dates: BTreeSet<String>,
    /// Words capitalized past the first, lowercased.
    capitalized: BTreeSet<String>,
    /// Every word, lowercased (for looking names up).
    words: BTreeSet<String>,
    negative: bool,
    /// The words with negations and auxiliaries dropped, crudely stemmed:
    /// what the text says apart from its polarity.
    core: Vec<String>,
}

fn stem(word: &str) -> &str {
    let w = word.strip_suffix("'s").unwrap_or(word);
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        &w[..w.len() - 1]
    } else {
        w
    }
}

impl Details {
    pub fn new(text: &str) -> Details {
        let mut d = Details::default();
        let (mut negations, mut cjk_negations) = (0u32, 0u32);
        let mut digits = String::new();
        let mut numerals = String::new();
        let flush = |run: &mut String, out: &mut Vec<String>| {
            if !run.is_empty() {
                out.push(std::mem::take(run));
            }
        };
        for c in text.chars() {
            // Digit runs keep their inner separators: 10:00, 3.5, 1,000.
            if c.is_ascii_digit() || (!digits.is_empty() && matches!(c, ':' | '.' | ',')) {
                digits.push(c);
            } else {
                let trimmed = digits.trim_end_matches([':', '.', ',']).to_string();
                digits.clear();
                if !trimmed.is_empty() {
                    d.numbers.push(trimmed);
                }
            }
            // ASCII is neither a CJK numeral nor a negation character: most
            // text skips both lookups.
            if !c.is_ascii() && CJK_NUMERALS.contains(c) {
                numerals.push(c);
            } else {
                flush(&mut numerals, &mut d.numbers);
            }
            if !c.is_ascii() && CJK_NEGATIONS.contains(&c) {
                cjk_negations += 1;
            }
        }
        let trimmed = digits.trim_end_matches([':', '.', ',']).to_string();
        if !trimmed.is_empty() {
            d.numbers.push(trimmed);
        }
        flush(&mut numerals, &mut d.numbers);
        for (i, raw) in
            text.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).enumerate()
        {
            let lower = raw.to_lowercase();
            if NUMBER_WORDS.contains(&lower.as_str()) {
                d.numbers.push(lower.clone());
            }
            if DATE_WORDS.contains(&lower.as_str()) {
                d.dates.insert(lower.clone());
            }
            let negation = NEGATIONS.contains(&lower.as_str()) || lower.ends_with("n't");
            if negation {
                negations += 1;
            }
            let capital = raw.chars().next().is_some_and(char::is_uppercase);
            if i > 0 && capital && raw != "I" {
                d.capitalized.insert(lower.clone());
            }
            if !negation && !AUXILIARIES.contains(&lower.as_str()) {
                d.core.push(stem(&lower).to_string());
            }
            d.words.insert(lower);
        }
        // Polarity of CJK text: its negation characters, out of the core too.
        if cjk_negations > 0 {
            let cjk_core: String = text.chars().filter(|c| !CJK_NEGATIONS.contains(c)).collect();
            d.core = vec![crate::longterm::dedup::normalize(&cjk_core)];
        }
        crate::order::sort(&mut d.numbers);
        d.negative = (negations + cjk_negations) % 2 == 1;
        d
    }

    /// The first detail in which `self` (new) and `other` (stored) differ.
    pub fn change_from(&self, other: &Details) -> Option<Change> {
        if self.numbers != other.numbers {
            return Some(Change::Number);
        }
        if self.dates != other.dates {
            return Some(Change::Date);
        }
        let names_differ = self
            .capitalized
            .iter()
            .chain(&other.capitalized)
            .any(|name| self.words.contains(name) != other.words.contains(name));
        if names_differ {
            return Some(Change::Name);
        }
        if self.negative != other.negative {
            return Some(Change::Polarity);
        }
        None
    }

    /// Whether the text is negative, and what it says apart from its
    /// polarity (what [`Details::contradicts`] compares).
    pub fn polarity(&self) -> (bool, &[String]) {
        (self.negative, &self.core)
    }

    /// True when the two say the same thing with opposite polarity
    /// ("Likes spicy food" / "Does not like spicy food").
    pub fn contradicts(&self, other: &Details) -> bool {
        self.negative != other.negative && !self.core.is_empty() && self.core == other.core
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(new: &str, old: &str) -> Option<Change> {
        Details::new(new).change_from(&Details::new(old))
    }

    #[test]
    fn numbers_dates_names_and_polarity_are_changes() {
        assert_eq!(change("Has 3 kids", "Has 2 kids"), Some(Change::Number));
        assert_eq!(change("Has three kids", "Has two kids"), Some(Change::Number));
        assert_eq!(change("有三个孩子", "有两个孩子"), Some(Change::Number));
        assert_eq!(change("Flight LH 455 on 3 May", "Flight LH 454 on 3 May"), Some(Change::Number));
        assert_eq!(
            change("Meeting moved to Tuesday 10:00", "Meeting moved to Monday 10:00"),
            Some(Change::Date)
        );
        assert_eq!(change("Works with Alice on the API", "Works with Bob on the API"), Some(Change::Name));
        assert_eq!(change("Does not drink coffee", "Does drink coffee"), Some(Change::Polarity));
    }

    #[test]
    fn case_punctuation_and_rewording_are_not_changes() {
        assert_eq!(change("User likes Java.", "user likes java"), None);
        assert_eq!(change("Meeting at 10:00.", "Meeting at 10:00"), None);
        assert_eq!(
            change("The user prefers dark mode in every editor", "The user prefers dark mode in all editors"),
            None
        );
        assert_eq!(change("Is never without coffee", "Is with coffee"), None, "two negations cancel");
    }

    #[test]
    fn contradictions_are_found_without_a_similarity_match() {
        assert!(Details::new("Does not like spicy food").contradicts(&Details::new("Likes spicy food")));
        assert!(Details::new("Doesn't like spicy food").contradicts(&Details::new("likes spicy food")));
        assert!(Details::new("不喜欢吃辣").contradicts(&Details::new("喜欢吃辣")));
        assert!(!Details::new("Does not like tea").contradicts(&Details::new("Likes spicy food")));
        assert!(!Details::new("Likes tea").contradicts(&Details::new("Likes tea")));
    }
}
