//! How likely a sentence of the user's states something worth keeping: a
//! weighted sum of simple signals of the sentence, its message and the
//! messages around it. The weights were fitted (logistic regression) on the
//! dev split of LoCoMo's observations, whose gold facts cite the turns they
//! come from, and rounded; `npm run bench:extract` measures them. What they
//! say: long messages and answers to a question carry facts; dates and
//! numbers are facts; talk about "you", small talk, exclamations and
//! praise are not; a message the other side greets with "wow" or
//! "congrats" was news.

use super::sentences::{is_question, sentences};
use crate::retrieval::concepts;

/// The sentence, and where it sits.
pub struct Context<'a> {
    pub sentence: &'a str,
    /// Its index among its message's sentences.
    pub index: usize,
    pub message: &'a str,
    /// The message before it (the other side's, usually), and after it.
    pub previous: &'a str,
    pub next: &'a str,
}

const TIME_WORDS: &[&str] = &[
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "last",
    "next",
    "ago",
    "recently",
    "weekend",
    "week",
    "month",
    "year",
    "summer",
    "winter",
    "spring",
];
const TIME_ZH: &[&str] = &[
    "昨天",
    "今天",
    "明天",
    "前天",
    "后天",
    "上周",
    "下周",
    "周末",
    "上个月",
    "下个月",
    "去年",
    "明年",
    "今年",
    "最近",
    "月",
    "年",
];
const SMALL_TALK: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "thanks",
    "thank",
    "wow",
    "aw",
    "aww",
    "awww",
    "haha",
    "lol",
    "cool",
    "great",
    "nice",
    "congrats",
    "congratulations",
    "that's",
    "sounds",
    "glad",
    "yeah",
    "yes",
    "totally",
    "absolutely",
    "omg",
    "oh",
    "sure",
    "ok",
    "okay",
    "yep",
    "yup",
    "hmm",
    "well",
];
const SMALL_TALK_ZH: &[&str] =
    &["哈哈", "嗯", "好的", "好啊", "谢谢", "哇", "太好了", "恭喜", "是啊", "对啊", "没问题"];
const PRAISE: &[&str] = &[
    "awesome",
    "amazing",
    "great",
    "cool",
    "wonderful",
    "beautiful",
    "inspiring",
    "incredible",
    "fantastic",
    "special",
    "proud",
    "glad",
    "happy",
    "sweet",
    "lovely",
];
const PRAISE_ZH: &[&str] = &["太棒", "厉害", "可爱", "真好", "好棒", "开心", "羡慕"];
const REACTIONS: &[&str] =
    &["wow", "whoa", "congrat", "omg", "oh", "that's great", "that's awesome", "that's amazing"];
const REACTIONS_ZH: &[&str] = &["哇", "恭喜", "太好了", "厉害", "真的吗", "真棒"];
const FIRST_PERSON: &[&str] = &["i", "i'm", "i've", "i'd", "my", "me"];
const YOU: &[&str] = &["you", "your", "you're", "you've", "you'd", "yours", "u"];
const EXPLICIT: &[&str] =
    &["remember that", "please remember", "don't forget", "note that", "记住", "别忘了"];
/// Statements of identity and preference, in the words chat users use
/// ("I prefer", "my name is", "我喜欢"): short, but what an assistant must keep.
const STATED: &[&str] = &[
    "my name is",
    "call me ",
    "i work as",
    "i work at",
    "i work for",
    "i live in",
    "i'm from",
    "i am from",
    "i'm allergic",
    "i am allergic",
    "my favorite",
    "my favourite",
    "i prefer",
    "i like ",
    "i love ",
    "i enjoy",
    "i hate",
    "i dislike",
    "i don't like",
    "i always",
    "i never",
    "i usually",
    "i'm a ",
    "i am a ",
    // What they have, what it is called, what they are working toward,
    // where they went.
    "i have a ",
    "i have an ",
    "i have two ",
    "i have three ",
    "i own ",
    // The household: "we" owns and lives, as "I" does.
    "we live in",
    "we have a ",
    "we own ",
    "we adopted",
    "we moved to",
    "we've got a ",
    "my dog",
    "my cat",
    "my pet",
    "name is",
    "is called",
    "is named",
    "i'm training",
    "i am training",
    "i'm learning",
    "i am learning",
    "i'm studying",
    "i am studying",
    "i went",
    "我叫",
    "我的名字",
    "我住在",
    "我来自",
    "我是",
    "我喜欢",
    "我更喜欢",
    "我不喜欢",
    "我最喜欢",
    "我讨厌",
    "我习惯",
    "我过敏",
    "我对",
    "我偏好",
    "我一般",
    "我通常",
    "我总是",
    "我从不",
    "我养",
    "我有",
    "我的狗",
    "我的猫",
    "名字叫",
    "我在准备",
    "我在学",
    "我打算",
];

/// Whether the sentence names a part of the speaker's own life that the
/// everyday lexicon knows, owned: "my wife", "our tabby", "my go-to
/// breakfast", "我的血型", "我岳父", "我们家的狗". Short as such a sentence
/// is, it is what a person is asked about later ("What's my blood type?").
fn owns_known(lower: &str) -> bool {
    let known = |w: &str| concepts::concept_of_word(w).is_some();
    let first = |t: &str, n: usize| t.chars().take(n).collect::<String>();
    // Within a clause: "Oh my god, the dog ran off" owns no dog.
    let english = lower.split(',').any(|clause| {
        let w = words(clause);
        w.iter().enumerate().any(|(i, x)| {
            matches!(x.as_str(), "my" | "our") && w[i + 1..].iter().take(3).any(|next| known(next))
        })
    });
    english
        || lower.split('我').skip(1).any(|rest| {
            let rest = rest.trim_start_matches('们');
            // A word of two characters right after it ("我外公", "我家乡"),
            // or one owned with 的 or 家 ("我的狗", "我们家的猫"): a single
            // character alone is as often a verb ("我吃过了").
            let owned = ["家的", "的", "家"].iter().find_map(|p| rest.strip_prefix(p));
            known(&first(rest, 2)) || owned.is_some_and(|o| known(&first(o, 2)) || known(&first(o, 1)))
        })
}

/// Lowercase words (letters, digits, apostrophes).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '\u{2019}'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('\u{2019}', "'"))
        .collect()
}

fn is_cjk(text: &str) -> bool {
    text.chars().any(crate::script::is_cjk_letter)
}

/// Chinese has no spaces: about 1.7 characters make a word's worth.
fn length_in_words(text: &str) -> f64 {
    let cjk = text.chars().filter(|&c| crate::script::is_cjk_letter(c)).count() as f64;
    words(text).iter().filter(|w| !is_cjk(w)).count() as f64 + cjk / 1.7
}

fn count(words: &[String], set: &[&str]) -> f64 {
    words.iter().filter(|w| set.contains(&w.as_str())).count().min(3) as f64
}

fn count_zh(text: &str, set: &[&str]) -> f64 {
    set.iter().map(|w| text.matches(w).count()).sum::<usize>().min(3) as f64
}

/// A request to remember that opens the sentence ("Remember that ",
/// "Please remember: ", "记住，"): the memory is what follows it.
pub fn request_prefix(sentence: &str) -> usize {
    for p in REQUESTS {
        let n = p.len();
        if sentence.len() >= n && sentence.as_bytes()[..n].eq_ignore_ascii_case(p.as_bytes()) {
            let rest = sentence[n..].trim_start_matches([' ', ',', ':', '，', '：']);
            return sentence.len() - rest.len();
        }
    }
    0
}

/// Requests to remember, longest first.
const REQUESTS: &[&str] = &[
    "please remember that",
    "please remember",
    "remember that",
    "don't forget that",
    "note that",
    "记住",
    "别忘了",
];

/// Small talk that opens the sentence ("Wow, ", "Yeah! ", "哈哈，").
pub fn small_talk_prefix(sentence: &str) -> usize {
    let mut end = 0;
    loop {
        let rest = &sentence[end..];
        let trimmed = rest.trim_start_matches([' ', ',', '!', '.', '，', '！', '。', '~', '-']);
        let skipped = rest.len() - trimmed.len();
        let word: String = trimmed.chars().take_while(|c| c.is_alphanumeric() || *c == '\'').collect();
        let lower = word.to_lowercase();
        let zh = SMALL_TALK_ZH.iter().find(|w| trimmed.starts_with(**w));
        let len = if !lower.is_empty() && !is_cjk(&lower) && SMALL_TALK.contains(&lower.as_str()) {
            word.len()
        } else if let Some(w) = zh {
            w.len()
        } else {
            return if end == 0 { 0 } else { end + skipped };
        };
        end += skipped + len;
    }
}

/// The sentence's score; at or above [`super::THRESHOLD`] it is kept.
pub fn score(c: &Context) -> f64 {
    let s = c.sentence;
    let lower = s.to_lowercase();
    let w = words(s);
    let body = &s[small_talk_prefix(s)..];
    let body_words = words(body);
    let zh = is_cjk(s);
    let first_words: Vec<&str> = body_words.iter().take(3).map(String::as_str).collect();
    // Chinese drops the subject it means ("跑完了！" is "I finished"): a
    // statement about no one else is about the speaker.
    let about_self_zh = |t: &str| t.contains('我') || !["你", "他", "她", "它"].iter().any(|p| t.contains(p));
    let subject = if zh {
        about_self_zh(body)
    } else {
        first_words
            .iter()
            .any(|w| ["i", "i'm", "i've", "i'd", "i was", "my", "we", "our", "we're", "we've"].contains(w))
    };
    let statements = sentences(c.message)
        .iter()
        .filter(|t| !is_question(t))
        .filter(|t| {
            let tw = words(t);
            (is_cjk(t) && about_self_zh(t)) || tw.iter().any(|w| FIRST_PERSON.contains(&w.as_str()))
        })
        .count()
        .min(5) as f64;
    let asks = |t: &str| t.contains('?') || t.contains('？') || t.contains('吗');
    let reacts = {
        let n = c.next.trim_start().to_lowercase();
        REACTIONS.iter().any(|r| n.starts_with(r)) || REACTIONS_ZH.iter().any(|r| n.starts_with(r))
    };
    let time = if zh {
        TIME_ZH.iter().any(|t| s.contains(t))
    } else {
        w.iter().any(|x| TIME_WORDS.contains(&x.as_str()) || super::dates::WEEKDAYS.contains(&x.as_str()))
    };
    let explicit = EXPLICIT.iter().any(|e| lower.contains(e));
    let padded = format!(" {}", lower.replace('\u{2019}', "'"));
    let stated =
        STATED
            .iter()
            .any(|p| if p.is_ascii() { padded.contains(&format!(" {p}")) } else { lower.contains(p) });
    -2.08 - 0.26 * (count(&w, YOU) + count_zh(s, &["你"])) + 0.71 * time as u8 as f64
        - 0.2 * (small_talk_prefix(s) > 0) as u8 as f64
        + 0.21 * subject as u8 as f64
        + 0.22 * s.chars().any(|ch| ch.is_ascii_digit()) as u8 as f64
        + 0.15 * (c.index == 0) as u8 as f64
        - 0.16 * (s.ends_with('!') || s.ends_with('！')) as u8 as f64
        + 1.04 * length_in_words(c.message).min(80.0) / 20.0
        - 0.27 * asks(c.message) as u8 as f64
        - 0.14 * (count(&w, PRAISE) + count_zh(s, PRAISE_ZH))
        + 0.81 * statements / 2.0
        + 0.65 * asks(c.previous) as u8 as f64
        + 0.26 * reacts as u8 as f64
        + 0.06 * w.iter().filter(|x| x.len() > 3 && x.ends_with("ed")).count().min(3) as f64
        + if explicit { 3.0 } else { 0.0 }
        // An owned part of a life counts as a statement in a short message
        // only: a long one has the length signal (and on LoCoMo's long
        // turns it kept more than the gold facts: precision 0.700 -> 0.695).
        + if stated || length_in_words(c.message) < 12.0 && owns_known(&lower) { 1.5 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(sentence: &'static str, message: &'static str, previous: &'static str) -> f64 {
        score(&Context { sentence, index: 0, message, previous, next: "" })
    }

    #[test]
    fn facts_outscore_small_talk_and_talk_about_you() {
        let fact = "I went to a LGBTQ support group yesterday and it was so powerful.";
        let chat = "Wow, that's so cool, you are amazing!";
        assert!(at(fact, fact, "What's up with you?") > at(chat, chat, "I got a new job."));
        assert!(
            at("我昨天去了图书馆做志愿者。", "我昨天去了图书馆做志愿者。", "你最近忙什么？")
                > at("哈哈，你太厉害了！", "哈哈，你太厉害了！", "")
        );
        assert!(
            at("Remember that my flight is on May 3rd", "Remember that my flight is on May 3rd", "") > 1.0
        );
        assert_eq!(small_talk_prefix("Wow, yeah! I adopted a cat"), "Wow, yeah! ".len());
        assert_eq!(small_talk_prefix("哈哈，我养了猫"), "哈哈，".len());
        assert_eq!(small_talk_prefix("I adopted a cat"), 0);
    }
}
