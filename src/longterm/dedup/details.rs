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
//! - the occasion: the calendar date an event names ("on 3 May 2023",
//!   "2023-05-03"): two events on different dates are two memories however
//!   alike their words, never an update of one another;
//! - the state: a single-valued fact in one clause, its subject, predicate
//!   and value ("Lives in Lisbon", "User works as a nurse", "My dog is
//!   called Pixel"): a new value for the same subject and predicate is an
//!   update however different the words ("Lives in Porto").
//!
//! Cost: one pass over each text, done once per memory (in its fingerprint).

use std::collections::BTreeSet;

use serde::Serialize;

/// What differs between two similar texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Change {
    Number,
    Date,
    Name,
    /// One says the opposite of the other.
    Polarity,
    /// A new value of the same single-valued state (where the user lives,
    /// what they work as).
    Value,
}

/// Predicates that hold one value at a time, as words, with the predicate
/// they stand for.
const STATE_PREDICATES: &[(&[&str], &str)] = &[
    (&["lives", "in"], "lives in"),
    (&["live", "in"], "lives in"),
    (&["living", "in"], "lives in"),
    (&["resides", "in"], "lives in"),
    (&["moved", "to"], "lives in"),
    (&["works", "as"], "works as"),
    (&["work", "as"], "works as"),
    (&["working", "as"], "works as"),
    (&["works", "at"], "works at"),
    (&["work", "at"], "works at"),
    (&["working", "at"], "works at"),
    (&["works", "for"], "works at"),
    (&["name", "is"], "name is"),
    (&["is", "called"], "name is"),
    (&["is", "named"], "name is"),
    (&["married", "to"], "married to"),
];

/// Subjects that all mean the user (memories are told by or about them).
const THE_USER: &[&str] = &["", "user", "the user", "i", "my", "i am", "i'm"];

/// Words that join a second clause: a text with one holds more than a state.
const CONJUNCTIONS: &[&str] = &["and", "but", "while", "also", "although", "because"];

/// A single-valued state a text sets.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    /// Lowercased, the user's own subjects as "".
    pub subject: String,
    pub predicate: &'static str,
    pub value: String,
}

/// The state `words` (lowercased, in order) set, if they are one clause of
/// a subject, a single-valued predicate and a short value.
fn state_of(words: &[String], text: &str) -> Option<State> {
    if text.contains([',', ';']) || words.iter().any(|w| CONJUNCTIONS.contains(&w.as_str())) {
        return None;
    }
    let (at, len, predicate) = (0..words.len()).find_map(|i| {
        STATE_PREDICATES.iter().find_map(|(p, canonical)| {
            let fits =
                words.len() >= i + p.len() && words[i..i + p.len()].iter().zip(*p).all(|(w, x)| w == x);
            fits.then_some((i, p.len(), *canonical))
        })
    })?;
    let mut subject: Vec<&str> = words[..at].iter().map(String::as_str).collect();
    while subject.last().is_some_and(|w| AUXILIARIES.contains(w)) {
        subject.pop();
    }
    if subject.iter().any(|w| NEGATIONS.contains(w) || w.ends_with("n't")) {
        return None;
    }
    let owner = subject.last().map(|w| w.strip_suffix("'s").unwrap_or(w).to_string());
    let mut subject: Vec<String> = subject.iter().map(|w| w.to_string()).collect();
    if let (Some(last), Some(owner)) = (subject.last_mut(), owner) {
        *last = owner;
    }
    let mut subject = subject.join(" ");
    if THE_USER.contains(&subject.as_str()) {
        subject.clear();
    } else if words[at] == "moved" {
        // Only a person moves house ("the meeting moved to Monday").
        return None;
    }
    let value = &words[at + len..];
    if value.is_empty() || value.len() > 8 {
        return None;
    }
    Some(State { subject, predicate, value: value.join(" ") })
}

/// The calendar date an event's text names, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occasion {
    /// The words of the date ("3 may 2023"): two occasions are one when equal.
    pub text: String,
    pub year: Option<i64>,
    pub month: u32,
    pub day: Option<u32>,
}

impl Occasion {
    /// Midnight UTC of the date; a missing year is the one it was said in,
    /// a missing day the month's first.
    pub fn ms(&self, said_at: i64) -> i64 {
        let year = self.year.unwrap_or_else(|| crate::dates::date_of(said_at).year);
        crate::dates::ms_of(year, self.month, self.day.unwrap_or(1))
    }
}

/// The month (1-12) of a month name or abbreviation.
fn month_number(word: &str) -> Option<u32> {
    const ABBREVIATIONS: [(&str, u32); 12] = [
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("sept", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ];
    match MONTHS.iter().position(|m| *m == word) {
        Some(at) if at < 12 => Some(at as u32 + 1),
        _ => ABBREVIATIONS.iter().find(|(a, _)| *a == word).map(|(_, m)| *m),
    }
}

/// The calendar date `words` name: a month with a day or a year beside it
/// ("3 may 2023", "may 3 2023", "july 20", "may 2023"), or an ISO date in
/// `text`.
fn occasion_of(words: &[String], text: &str) -> Option<Occasion> {
    let number = |w: Option<&String>| {
        w.and_then(|w| w.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().ok())
    };
    let day = |w: Option<&String>| number(w).filter(|n| (1..=31).contains(n));
    let year = |w: Option<&String>| number(w).filter(|n| (1900..=2100).contains(n)).map(i64::from);
    for (i, w) in words.iter().enumerate() {
        let Some(month) = month_number(w) else { continue };
        let previous = i.checked_sub(1).and_then(|j| words.get(j));
        let (from, d, rest) = match (day(previous), day(words.get(i + 1))) {
            (Some(d), _) => (i - 1, Some(d), i + 1),
            (None, Some(d)) => (i, Some(d), i + 2),
            (None, None) => (i, None, i + 1),
        };
        let y = year(words.get(rest));
        if d.is_none() && y.is_none() {
            continue;
        }
        let to = rest + usize::from(y.is_some());
        return Some(Occasion { text: words[from..to].join(" "), year: y, month, day: d });
    }
    let bytes = text.as_bytes();
    (0..bytes.len().saturating_sub(9)).find_map(|i| {
        let shape =
            (0..10)
                .all(|k| if k == 4 || k == 7 { bytes[i + k] == b'-' } else { bytes[i + k].is_ascii_digit() });
        let part = |a: usize, b: usize| text.get(i + a..i + b)?.parse::<u32>().ok();
        let (y, m, d) = (part(0, 4)?, part(5, 7)?, part(8, 10)?);
        (shape && (1..=12).contains(&m) && (1..=31).contains(&d)).then(|| Occasion {
            text: text[i..i + 10].to_string(),
            year: Some(y.into()),
            month: m,
            day: Some(d),
        })
    })
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

/// Month names and their abbreviations: date words, and what an occasion
/// is read around.
const MONTHS: &[&str] = &[
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
    /// The date of the event the text tells, if it names one.
    occasion: Option<Occasion>,
    /// The single-valued state the text sets, if it is one.
    state: Option<State>,
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
        let mut ordered: Vec<String> = Vec::new();
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
            if DATE_WORDS.contains(&lower.as_str()) || MONTHS.contains(&lower.as_str()) {
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
            ordered.push(lower.clone());
            d.words.insert(lower);
        }
        d.occasion = occasion_of(&ordered, text);
        d.state = state_of(&ordered, text);
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

    /// The event's date, when the text tells one.
    pub fn occasion(&self) -> Option<&Occasion> {
        self.occasion.as_ref()
    }

    /// The single-valued state the text sets, when it is one.
    pub fn state(&self) -> Option<&State> {
        self.state.as_ref()
    }

    /// What the text holds a value of, if it is a single-valued state or
    /// a short count: the subject and predicate of a state ("lives in" of
    /// the user), or the few words around a text's one number ("has _
    /// kids"). Two memories in force of one slot and scope are two values
    /// of one thing. (Longer texts with numbers are left to dedup, which
    /// compares them in full.)
    pub fn slot(&self) -> Option<u64> {
        let mut h = crate::hash::Fnv64::default();
        if let Some(state) = &self.state {
            h.feed(b"s\0").feed(state.subject.as_bytes()).feed(&[0]).feed(state.predicate.as_bytes());
            return Some(h.finish());
        }
        let words: Vec<&String> = self.core.iter().filter(|w| !self.numbers.contains(w)).collect();
        if self.numbers.len() != 1 || self.occasion.is_some() || words.is_empty() || words.len() > 4 {
            return None;
        }
        h.feed(if self.negative { b"n-" } else { b"n+" });
        for word in words {
            h.feed(&[0]).feed(word.as_bytes());
        }
        Some(h.finish())
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
    fn occasions_and_states_are_read() {
        let d = Details::new("Went hiking with Sam on 3 May 2023");
        let text = |t: &str| Details::new(t).occasion().map(|o| o.text.clone());
        assert_eq!(d.occasion().map(|o| (o.text.as_str(), o.ms(0))), Some(("3 may 2023", 1_683_072_000_000)));
        assert_eq!(text("Attended a support group on July 20").as_deref(), Some("july 20"));
        assert_eq!(text("Visited Rome on May 3, 2023").as_deref(), Some("may 3 2023"));
        assert_eq!(text("Flew to Oslo, 2023-05-03").as_deref(), Some("2023-05-03"));
        assert_eq!(text("I may go hiking"), None, "a modal verb is no month");
        assert_eq!(text("Meeting moved to Tuesday 10:00"), None);
        assert_eq!(text("Started a pottery class in March"), None, "a month alone is no date");
        let said = crate::dates::ms_of(2024, 1, 9);
        let ms = Details::new("Ran a race on 12 March").occasion().map(|o| o.ms(said));
        assert_eq!(ms, Some(crate::dates::ms_of(2024, 3, 12)), "the year it was said in");
        let state =
            |t: &str| Details::new(t).state().map(|s| (s.subject.clone(), s.predicate, s.value.clone()));
        assert_eq!(state("Lives in Lisbon"), Some(("".into(), "lives in", "lisbon".into())));
        assert_eq!(state("User lives in Porto"), Some(("".into(), "lives in", "porto".into())));
        assert_eq!(state("I moved to Berlin"), Some(("".into(), "lives in", "berlin".into())));
        assert_eq!(state("User's name is Ada"), Some(("".into(), "name is", "ada".into())));
        assert_eq!(state("My dog is called Pixel"), Some(("my dog".into(), "name is", "pixel".into())));
        assert_eq!(
            state("Works as a nurse at St. Mary's"),
            Some(("".into(), "works as", "a nurse at st mary's".into()))
        );
        assert_eq!(state("Lives in Berlin and works as a nurse"), None, "two clauses");
        assert_eq!(state("Does not live in Lisbon"), None);
        assert_eq!(state("Meeting moved to Tuesday 10:00"), None);
        assert_eq!(state("Likes tea"), None);
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
