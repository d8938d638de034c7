//! First person made third: "I love hiking with my dog" becomes "User loves
//! hiking with User's dog", "我喜欢乌龙茶" becomes "用户喜欢乌龙茶". A memory is
//! read later, in another conversation, by a model that must not take "I"
//! for itself.

/// Words after which the verb that follows a subject "I" keeps its form.
const KEEPS_FORM: &[&str] = &[
    "can",
    "could",
    "will",
    "would",
    "should",
    "shall",
    "might",
    "must",
    "may",
    "did",
    "didn't",
    "can't",
    "cannot",
    "won't",
    "wouldn't",
    "couldn't",
    "shouldn't",
    "was",
    "wasn't",
    "had",
    "hadn't",
    "used",
    // Irregular past tenses.
    "went",
    "got",
    "took",
    "made",
    "found",
    "bought",
    "ran",
    "saw",
    "met",
    "gave",
    "began",
    "wrote",
    "read",
    "felt",
    "thought",
    "said",
    "told",
    "knew",
    "left",
    "lost",
    "won",
    "kept",
    "came",
    "became",
    "sent",
    "spent",
    "built",
    "heard",
    "brought",
    "taught",
    "caught",
    "sat",
    "stood",
    "slept",
    "drove",
    "rode",
    "flew",
    "grew",
    "drew",
    "ate",
    "fell",
    "paid",
    "put",
    "set",
    "cut",
    "let",
    "hit",
    "hurt",
    "quit",
    "chose",
    "wore",
    "sang",
    "swam",
    "forgot",
    "understood",
    "held",
    "led",
    "meant",
    "sold",
    "shot",
];

/// Adverbs that may sit between "I" and its verb ("I really love").
const ADVERBS: &[&str] = &[
    "now",
    "currently",
    "mostly",
    "rarely",
    "probably",
    "generally",
    "mainly",
    "personally",
    "honestly",
    "really",
    "also",
    "just",
    "always",
    "never",
    "still",
    "usually",
    "often",
    "sometimes",
    "actually",
    "definitely",
    "totally",
    "truly",
    "recently",
    "finally",
    "even",
    "only",
    "already",
    "absolutely",
];

/// Present-tense verbs that end like a past tense.
const PRESENT_IN_ED: &[&str] = &["need", "feed", "bleed", "breed", "speed", "succeed", "proceed", "exceed"];

/// The third-person singular of a present-tense verb: "love" -> "loves".
fn third_singular(verb: &str) -> String {
    let lower = verb.to_ascii_lowercase();
    let irregular = match lower.as_str() {
        "am" | "'m" => Some("is"),
        "have" | "'ve" => Some("has"),
        "do" => Some("does"),
        "don't" => Some("doesn't"),
        "go" => Some("goes"),
        _ => None,
    };
    if let Some(w) = irregular {
        return w.to_string();
    }
    if KEEPS_FORM.contains(&lower.as_str())
        || lower.ends_with("ed") && !PRESENT_IN_ED.contains(&lower.as_str())
        || !lower.chars().all(|c| c.is_ascii_alphabetic())
    {
        return verb.to_string();
    }
    let consonant_y = lower.len() > 1
        && lower.ends_with('y')
        && !matches!(lower.as_bytes()[lower.len() - 2], b'a' | b'e' | b'i' | b'o' | b'u');
    if consonant_y {
        format!("{}ies", &verb[..verb.len() - 1])
    } else if ["s", "sh", "ch", "x", "z", "o"].iter().any(|e| lower.ends_with(e)) {
        format!("{verb}es")
    } else {
        format!("{verb}s")
    }
}

/// Splits "I'm" into its verb ("am"), the same contraction after "they"
/// ("they're") and what follows it, with typographic apostrophes as ASCII.
fn contraction(word: &str) -> Option<(&'static str, &'static str, String)> {
    let w = word.replace('\u{2019}', "'");
    let lower = w.to_ascii_lowercase();
    for (full, verb, they) in [
        ("i'm", "am", "they're"),
        ("i've", "have", "they've"),
        ("i'd", "would", "they'd"),
        ("i'll", "will", "they'll"),
    ] {
        if lower == full
            || lower.starts_with(full) && !lower[full.len()..].chars().next().is_some_and(char::is_alphabetic)
        {
            return Some((verb, they, w[full.len()..].to_string()));
        }
    }
    None
}

/// Words that follow a subject "I" without being its verb ("I and my
/// wife", "me too").
const NOT_VERBS: &[&str] =
    &["and", "or", "but", "too", "to", "in", "at", "with", "for", "of", "as", "so", "then"];

/// Verbs a second clause of the same subject opens with ("I live in Berlin
/// and need a car"). A list, not a guess: after "and" most words are nouns
/// ("I like tea and coffee"), and these are verbs only.
const VERBS: &[&str] = &[
    "want", "need", "enjoy", "prefer", "hate", "adore", "have", "go", "do", "get", "make", "take", "keep",
    "try", "spend", "bake", "teach", "write", "sing", "drive", "ride", "eat", "think", "know", "speak",
    "build", "collect", "attend", "visit", "own", "belong", "miss",
];

/// Verbs that are nouns as often ("I love music and dance"): one joined by
/// "and" is taken for a verb only before a word of [`AFTER_VERB`] ("and
/// work as a nurse", not "and work").
const VERBS_OR_NOUNS: &[&str] = &[
    "work",
    "live",
    "love",
    "like",
    "play",
    "study",
    "run",
    "walk",
    "cook",
    "plan",
    "hope",
    "paint",
    "draw",
    "dance",
    "swim",
    "help",
    "watch",
    "listen",
    "practice",
    "practise",
    "train",
    "care",
    "look",
    "use",
    "drink",
    "travel",
    "hike",
    "coach",
    "volunteer",
];

/// Words that follow a verb and rarely a noun.
const AFTER_VERB: &[&str] = &[
    "a", "an", "the", "my", "your", "his", "her", "our", "their", "its", "it", "them", "him", "me", "us",
    "this", "that", "these", "those", "as", "at", "in", "on", "for", "with", "to", "from", "about", "into",
    "out", "up", "around", "by", "over", "every", "each", "some", "all", "lots", "there", "here", "twice",
    "often", "hard", "together", "part", "most", "more",
];

/// Words that open another clause, whose verbs are not the user's ("I love
/// the dog that lives next door"). Not "you" or "it", as often objects as
/// subjects: "I love you and miss you" is one subject.
const NEW_SUBJECT: &[&str] =
    &["i", "he", "she", "we", "they", "that", "who", "which", "because", "when", "if", "while"];

/// Who a verb agrees with: the user's name ("User lives"), or "they", as a
/// later mention of the user reads ("and they are allergic").
#[derive(Clone, Copy, PartialEq)]
enum Subject {
    Name,
    They,
}

/// The form of a present- or past-tense verb after "they": "am" and "was"
/// are the only ones "I" and "they" do not share.
fn plural(verb: &str) -> String {
    match verb.to_ascii_lowercase().as_str() {
        "am" => "are".to_string(),
        "was" => "were".to_string(),
        "wasn't" => "weren't".to_string(),
        _ => verb.to_string(),
    }
}

fn agreeing(verb: &str, subject: Subject) -> String {
    match subject {
        Subject::Name => third_singular(verb),
        Subject::They => plural(verb),
    }
}

/// A word split into its leading punctuation, its core (letters, digits,
/// apostrophes) and its trailing punctuation.
fn parts(word: &str) -> (&str, &str, &str) {
    let core = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}');
    let start = word.find(core).unwrap_or(0);
    (&word[..start], core, &word[start + core.len()..])
}

/// The core of a word, lowercase, with typographic apostrophes as ASCII.
pub(super) fn lower_core(word: &str) -> String {
    parts(word).1.to_ascii_lowercase().replace('\u{2019}', "'")
}

/// "I", typed as chat users often do ("i went"): the word is nothing else.
fn is_pronoun_i(core: &str) -> bool {
    core == "I" || core == "i"
}

/// Whether `word` is the subject "I", alone or contracted ("I'm").
pub(super) fn is_i(word: &str) -> bool {
    let core = parts(word).1;
    is_pronoun_i(core) || contraction(core).is_some()
}

/// `sentence` in the third person about `name` (English words; Chinese
/// "我" handled by [`chinese`]). The first mention of the user is the name,
/// later ones are pronouns ("User went hiking with their sister"), as a
/// person would write it; a subject "I" after "and" before any other
/// subject stays the name ("User's sister and User went hiking").
pub fn english(sentence: &str, name: &str) -> String {
    let words: Vec<&str> = sentence.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    // The user already mentioned, and already as a subject.
    let (mut named, mut subject_named) = (false, false);
    // A sentence that speaks of others as "they" keeps the name: "User has
    // two kids and they love them" would read as the kids.
    let others = words
        .iter()
        .any(|w| ["they", "them", "their", "theirs", "they're", "they've"].contains(&lower_core(w).as_str()));
    // After a subject: the next verb (past adverbs) agrees with it.
    let mut agree: Option<Subject> = None;
    // After a present verb of the name's: a verb joined by "and" agrees too.
    let mut coordinated = false;
    for (k, w) in words.iter().enumerate() {
        let (lead, core, trail) = parts(w);
        let lower = lower_core(w);
        let pending = agree.take();
        let compound = compound_subject(&words[..k], subject_named);
        let subject = if named && !others && !compound { Subject::They } else { Subject::Name };
        let word = if let Some((verb, they, rest)) = contraction(core) {
            let word = match subject {
                Subject::Name => format!("{name} {}{rest}", third_singular(verb)),
                Subject::They => format!("{they}{rest}"),
            };
            coordinated = subject == Subject::Name && verb != "would" && verb != "will";
            (named, subject_named) = (true, true);
            word
        } else if is_pronoun_i(core) {
            // "I," or "I." ends the clause, and "My sister and I" take a
            // plural verb: nothing to agree with.
            agree = (trail.is_empty() && !compound).then_some(subject);
            (named, subject_named) = (true, true);
            if subject == Subject::Name {
                name.to_string()
            } else {
                "they".to_string()
            }
        } else if lower == "my" || lower == "mine" {
            let word = match (named && !others, lower.as_str()) {
                (false, _) => format!("{name}'s"),
                (true, "my") => "their".to_string(),
                _ => "theirs".to_string(),
            };
            named = true;
            word
        } else if lower == "me" {
            let word = if named && !others { "them".to_string() } else { name.to_string() };
            named = true;
            word
        } else if lower == "myself" {
            "themself".to_string()
        } else if let Some(s) = pending.filter(|_| ADVERBS.contains(&lower.as_str())) {
            agree = trail.is_empty().then_some(s);
            core.to_string()
        } else if let Some(s) = pending.filter(|_| !NOT_VERBS.contains(&lower.as_str())) {
            let verb = agreeing(core, s);
            coordinated = s == Subject::Name && verb != core;
            verb
        } else {
            if coordinated && ["and", "but", "or"].contains(&lower.as_str()) && joins_verb(&words[k + 1..]) {
                agree = Some(Subject::Name);
            }
            if NEW_SUBJECT.contains(&lower.as_str()) || trail.contains(['.', ';', ':', '!', '?']) {
                coordinated = false;
            }
            core.to_string()
        };
        out.push(format!("{lead}{word}{trail}"));
    }
    out.join(" ")
}

/// Whether an "I" after `before` shares a subject with it ("My sister and
/// I went"): it follows "and" or "or" after a few words with no verb among
/// them ("My name is Ada and I", "My sister lives in Rome and I" join two
/// clauses).
fn compound_subject(before: &[&str], subject_named: bool) -> bool {
    let joined = before.last().is_some_and(|w| ["and", "or"].contains(&lower_core(w).as_str()));
    joined
        && before.len() <= 4
        && !subject_named
        && !before.iter().any(|w| super::clauses::COPULAS.contains(&lower_core(w).as_str()))
}

/// Whether `rest`, after "and", opens with a verb (past adverbs): one of
/// [`VERBS`] before any word, or of [`VERBS_OR_NOUNS`] before a word of
/// [`AFTER_VERB`].
fn joins_verb(rest: &[&str]) -> bool {
    let mut rest = rest.iter().map(|w| lower_core(w)).skip_while(|w| ADVERBS.contains(&w.as_str()));
    match (rest.next(), rest.next()) {
        (Some(verb), Some(next)) => {
            VERBS.contains(&verb.as_str())
                || VERBS_OR_NOUNS.contains(&verb.as_str()) && AFTER_VERB.contains(&next.as_str())
        }
        _ => false,
    }
}

/// `sentence` with the Chinese first person made `name` ("用户").
pub fn chinese(sentence: &str, name: &str) -> String {
    sentence.replace("我们", &format!("{name}和家人朋友")).replace('我', name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_subjects_objects_and_agreement() {
        let u = |s| english(s, "User");
        assert_eq!(u("I love hiking with my dog."), "User loves hiking with their dog.");
        assert_eq!(u("My dog loves me"), "User's dog loves them");
        assert_eq!(u("I really enjoy pottery"), "User really enjoys pottery");
        assert_eq!(u("I now live in Porto"), "User now lives in Porto");
        assert_eq!(u("I need a car, I succeed, I moved"), "User needs a car, they succeed, they moved");
        assert_eq!(u("I went to a LGBTQ support group"), "User went to a LGBTQ support group");
        assert_eq!(u("i love my job"), "User loves their job");
        assert_eq!(u("I’ve been painting, it helps me relax"), "User has been painting, it helps them relax");
        assert_eq!(u("Images of Iris"), "Images of Iris");
        assert_eq!(english("I adopted a cat", "Caroline"), "Caroline adopted a cat");
        assert_eq!(u("Remember that my flight is on May 3rd"), "Remember that User's flight is on May 3rd");
    }

    #[test]
    fn later_mentions_are_pronouns() {
        let u = |s| english(s, "User");
        assert_eq!(u("I went hiking with my sister"), "User went hiking with their sister");
        assert_eq!(u("I'm a nurse and I have two kids"), "User is a nurse and they have two kids");
        assert_eq!(u("My name is Ada and I am allergic"), "User's name is Ada and they are allergic");
        assert_eq!(u("I was sick so I was home"), "User was sick so they were home");
        assert_eq!(u("I'll go, I'm sure I've won"), "User will go, they're sure they've won");
        assert_eq!(u("The cake is mine, I made it"), "The cake is User's, they made it");
        assert_eq!(u("My mom told me I should rest"), "User's mom told them they should rest");
        // A shared subject: "they" would read as the sister and the user.
        assert_eq!(u("My sister and I went hiking"), "User's sister and User went hiking");
        assert_eq!(u("My husband and I are moving"), "User's husband and User are moving");
        assert_eq!(
            u("My sister lives in Rome and I visit her"),
            "User's sister lives in Rome and they visit her"
        );
        // Others spoken of as "they": the user keeps the name.
        assert_eq!(u("I have two kids and I love them"), "User has two kids and User loves them");
        assert_eq!(u("I and my wife, me too"), "User and their wife, them too");
    }

    #[test]
    fn verbs_joined_by_and_agree_too() {
        let u = |s| english(s, "User");
        assert_eq!(u("I live in Berlin and work as a nurse"), "User lives in Berlin and works as a nurse");
        assert_eq!(
            u("I play tennis but also coach on Sundays"),
            "User plays tennis but also coaches on Sundays"
        );
        // Nouns after "and", and verbs of a past or another subject, keep their form.
        assert_eq!(u("I like tea and coffee in the morning"), "User likes tea and coffee in the morning");
        assert_eq!(u("I love music and dance"), "User loves music and dance");
        assert_eq!(u("I love music and dance classes"), "User loves music and dance classes");
        assert_eq!(u("I love cooking and bake bread"), "User loves cooking and bakes bread");
        assert_eq!(u("I moved to Rome and work as a chef"), "User moved to Rome and work as a chef");
        assert_eq!(
            u("I love the dog that lives here and play with it"),
            "User loves the dog that lives here and play with it"
        );
    }

    #[test]
    fn chinese_first_person() {
        assert_eq!(chinese("我喜欢喝乌龙茶，我的猫叫橘子", "用户"), "用户喜欢喝乌龙茶，用户的猫叫橘子");
    }
}
