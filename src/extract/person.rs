//! First person made third: "I love hiking with my dog" becomes "User loves
//! hiking with their dog", "我喜欢乌龙茶" becomes "用户喜欢乌龙茶". A memory is
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

/// The third-person singular of a present-tense verb: "love" -> "loves".
#[inline(never)]
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
        || lower.ends_with("ed")
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

/// Splits "I'm" into (true, "am", the rest), "we've" into (false,
/// "have", ...): whether the subject is "I", its verb, and what follows;
/// typographic apostrophes as ASCII.
fn contraction(word: &str) -> Option<(bool, &'static str, String)> {
    let w = word.replace('\u{2019}', "'");
    let lower = w.to_ascii_lowercase();
    for (full, tail) in [("'m", "am"), ("'re", "are"), ("'ve", "have"), ("'d", "would"), ("'ll", "will")] {
        for (subject, i) in [("i", true), ("we", false)] {
            let n = subject.len() + full.len();
            if lower.starts_with(subject)
                && lower[subject.len()..].starts_with(full)
                && (i || tail != "am")
                && !lower[n..].chars().next().is_some_and(char::is_alphabetic)
            {
                return Some((i, tail, w[n..].to_string()));
            }
        }
    }
    None
}

/// Words that follow a subject "I" without being its verb ("I and my
/// wife", "me too").
const NOT_VERBS: &[&str] =
    &["and", "or", "but", "too", "to", "in", "at", "with", "for", "of", "as", "so", "then"];

/// `sentence` in the third person about `name` (English words; Chinese
/// "我" handled by [`chinese`]). The first "I" or "my" names the person;
/// later ones are "they" and "their", as a person would write it ("User
/// went hiking with their sister").
pub fn english(sentence: &str, name: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    // Whether the person was named yet, and as "I" (true) or "we".
    let mut named: Option<bool> = None;
    // The next verb (past adverbs) agrees with a subject just seen: the
    // name (singular) or "they".
    let mut agree: Option<bool> = None;
    // The sentence's subject "I", for a verb after "and" that shares it.
    let mut subject: Option<bool> = None;
    let mut after_and: Option<bool> = None;
    for w in sentence.split(' ') {
        let core = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}');
        let start = w.find(core).unwrap_or(0);
        let (lead, trail) = (&w[..start], &w[start + core.len()..]);
        let lower = core.to_ascii_lowercase().replace('\u{2019}', "'");
        let verb_of = agree.take();
        let shares = after_and.take();
        // "We" is the person and others: a household, mostly ("we live in
        // Leeds"), as the Chinese "我们" is (see [`chinese`]). The first
        // "I" after it is named still: "... and User started a new job".
        let mut person = |i: bool| match (named.replace(i), i) {
            (None | Some(false), true) => (name.to_string(), true),
            (None, false) => (format!("{name} and their family"), false),
            (Some(before), _) => {
                named = Some(before);
                ("they".to_string(), false)
            }
        };
        let word = if let Some((i, verb, rest)) = contraction(core) {
            let (who, singular) = person(i);
            format!("{who} {}{rest}", agreeing(verb, singular))
        } else if core == "I" || lower == "we" {
            let (who, singular) = person(core == "I");
            // "I," or "I." ends the clause: nothing to agree with.
            agree = trail.is_empty().then_some(singular);
            subject = Some(singular);
            who
        } else if matches!(lower.as_str(), "my" | "mine" | "our" | "ours") {
            match (named.replace(named.unwrap_or(true)).is_some(), lower.len() > 3) {
                (true, false) => "their".to_string(),
                (true, true) => "theirs".to_string(),
                (false, _) => format!("{name}'s"),
            }
        } else if lower == "me" || lower == "us" && core != "US" {
            let (who, _) = person(lower == "me");
            if who == "they" {
                "them".to_string()
            } else {
                who
            }
        } else if lower == "myself" {
            "themself".to_string()
        } else if lower == "ourselves" {
            "themselves".to_string()
        } else if let Some(singular) = verb_of.filter(|_| ADVERBS.contains(&lower.as_str())) {
            agree = trail.is_empty().then_some(singular);
            core.to_string()
        } else if let Some(singular) = verb_of.filter(|_| !NOT_VERBS.contains(&lower.as_str())) {
            agreeing(core, singular)
        } else if let Some(singular) = shares.filter(|_| core == lower && SHARED_VERBS.contains(&core)) {
            agreeing(core, singular)
        } else {
            if matches!(lower.as_str(), "and" | "but" | "or") && trail.is_empty() {
                after_and = subject;
            }
            core.to_string()
        };
        out.push(format!("{lead}{word}{trail}"));
    }
    out.join(" ")
}

/// A present-tense verb as its subject takes it: the name's third person
/// singular, or "they"'s plural ("am" -> "are", "was" -> "were").
fn agreeing(verb: &str, singular: bool) -> String {
    if singular {
        return third_singular(verb);
    }
    match verb {
        "am" | "'m" | "is" => "are",
        "isn't" => "aren't",
        "was" => "were",
        "wasn't" => "weren't",
        _ => verb,
    }
    .to_string()
}

/// Verbs a sentence goes on with after "and", its subject "I" left out
/// ("I live in Berlin and work as a nurse").
const SHARED_VERBS: &[&str] = &[
    "work",
    "live",
    "have",
    "love",
    "like",
    "enjoy",
    "play",
    "study",
    "teach",
    "run",
    "go",
    "own",
    "speak",
    "prefer",
    "hate",
    "need",
    "want",
    "use",
    "cook",
    "volunteer",
    "write",
    "read",
    "help",
    "drive",
    "train",
    "practice",
    "walk",
    "spend",
    "make",
    "take",
    "do",
];

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
        assert_eq!(u("I'm a nurse and I have two kids"), "User is a nurse and they have two kids");
        assert_eq!(u("I live in Berlin and work as a nurse"), "User lives in Berlin and works as a nurse");
        assert_eq!(
            u("My name is Ada and I'm allergic to peanuts"),
            "User's name is Ada and they are allergic to peanuts"
        );
        assert_eq!(u("I went hiking with my sister"), "User went hiking with their sister");
        assert_eq!(u("I live in Paris and Lyon"), "User lives in Paris and Lyon");
        assert_eq!(u("I really enjoy pottery"), "User really enjoys pottery");
        assert_eq!(u("I now live in Porto"), "User now lives in Porto");
        assert_eq!(u("I went to a LGBTQ support group"), "User went to a LGBTQ support group");
        assert_eq!(u("I’ve been painting, it helps me relax"), "User has been painting, it helps them relax");
        assert_eq!(u("I can't wait and I study every day"), "User can't wait and they study every day");
        assert_eq!(u("I'll go, I do yoga, I watch films"), "User will go, they do yoga, they watch films");
        assert_eq!(u("Images of Iris"), "Images of Iris");
        assert_eq!(english("I adopted a cat", "Caroline"), "Caroline adopted a cat");
        assert_eq!(u("I and my wife, me too"), "User and their wife, them too");
        // "We" is the person and their household, in the plural.
        assert_eq!(
            u("We live in a flat above a bakery in Leeds."),
            "User and their family live in a flat above a bakery in Leeds."
        );
        assert_eq!(u("Our tabby Mochi sleeps on my laptop"), "User's tabby Mochi sleeps on their laptop");
        assert_eq!(
            u("We've got a dog and we're moving"),
            "User and their family have got a dog and they are moving"
        );
        assert_eq!(
            u("Come with us, we'll cook for ourselves"),
            "Come with User and their family, they will cook for themselves"
        );
        assert_eq!(u("Weren't we wearing ours?"), "Weren't User and their family wearing theirs?");
        assert_eq!(
            u("We moved to Leeds and I started a new job"),
            "User and their family moved to Leeds and User started a new job"
        );
        assert_eq!(u("I moved to the US, we is happy"), "User moved to the US, they are happy");
    }

    #[test]
    fn chinese_first_person() {
        assert_eq!(chinese("我喜欢喝乌龙茶，我的猫叫橘子", "用户"), "用户喜欢喝乌龙茶，用户的猫叫橘子");
    }
}
