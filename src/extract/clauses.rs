//! A sentence that joins two statements about the user, "My name is Ada and
//! I am allergic to peanuts", is two facts: each is recalled, superseded
//! and forgotten on its own (a new allergy must not rewrite the name), and
//! each reads as a sentence of its own in the third person.
//!
//! It splits only where "and" opens a clause with the subject "I" and both
//! halves stand alone: the first is about the user, the second long enough
//! to mean something alone and with nothing that points back ("I went
//! hiking and I loved it" stays one fact, "it" being the hike).

use super::person::{is_i, lower_core};

/// Words that point back into the first clause: the second needs it.
const POINTS_BACK: &[&str] = &[
    "it", "it's", "its", "that", "this", "these", "those", "there", "them", "they", "he", "she", "him",
    "her", "then", "too", "also", "either", "one",
];

/// Verbs a clause about "my" something has ("My name is Ada"): without one,
/// "My sister and I went" is one subject, not two clauses.
pub(super) const COPULAS: &[&str] = &["is", "are", "was", "were", "has", "have", "had", "will", "can"];

/// Words that open a clause inside the first ("My favorite was when we
/// were down 10 and I hit the shot"): an "and" after one may join within it.
const SUBORDINATES: &[&str] = &[
    "when", "because", "if", "while", "since", "after", "before", "until", "though", "although", "whether",
    "where", "that", "which", "who",
];

/// A clause about the user: it opens with "I", or with "my" and has a verb,
/// and nothing in it may be what "and" continues.
fn about_user(clause: &str) -> bool {
    if clause.split_whitespace().any(|w| SUBORDINATES.contains(&lower_core(w).as_str())) {
        return false;
    }
    let mut words = clause.split_whitespace();
    match words.next() {
        Some(first) if is_i(first) => true,
        Some(first) if lower_core(first) == "my" => words.any(|w| COPULAS.contains(&lower_core(w).as_str())),
        _ => false,
    }
}

/// Five words at least: a shorter clause leans on the first ("I have been
/// learning Spanish and I practice every day").
fn stands_alone(clause: &str) -> bool {
    clause.split_whitespace().count() >= 5
        && !clause.split_whitespace().any(|w| POINTS_BACK.contains(&lower_core(w).as_str()))
}

/// The statements of `sentence`, in order: itself, or its clauses.
pub fn statements(sentence: &str) -> Vec<&str> {
    // Where each " and I" is: the end of a clause, and the start of the next.
    let mut joints = Vec::new();
    let mut from = 0;
    while let Some(at) = sentence[from..].find(" and ").map(|p| p + from) {
        let next = at + " and ".len();
        if sentence[next..].split_whitespace().next().is_some_and(is_i) {
            joints.push((at, next));
        }
        from = next;
    }
    let mut out = Vec::new();
    let mut start = 0;
    for (k, &(end, next)) in joints.iter().enumerate() {
        let first = sentence[start..end].trim_end_matches([',', ' ']);
        let second_end = joints.get(k + 1).map_or(sentence.len(), |j| j.0);
        let second = &sentence[next..second_end];
        if about_user(first) && !super::too_short(first) && stands_alone(second) {
            out.push(first);
            start = next;
        }
    }
    out.push(&sentence[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_statements_about_the_user_are_two() {
        assert_eq!(
            statements("My name is Ada and I am allergic to peanuts"),
            ["My name is Ada", "I am allergic to peanuts"]
        );
        assert_eq!(
            statements("I live in Lyon, and I'm a nurse at the clinic and I have two kids at home"),
            ["I live in Lyon", "I'm a nurse at the clinic", "I have two kids at home"]
        );
    }

    #[test]
    fn clauses_that_need_each_other_stay_one() {
        for one in [
            "I went hiking yesterday and I loved it",
            "My sister and I went hiking in the Alps",
            "It was such a welcoming place and I felt accepted there",
            "I can't wait and I study every day",
            "My dog is sick and I am sad",
            "I like tea and coffee",
            "I have been learning Spanish and I practice every day",
            "My favorite was when we were down 10 and I hit the shot",
        ] {
            assert_eq!(statements(one), [one]);
        }
    }
}
