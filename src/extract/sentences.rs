//! Sentences of a chat message, in English, Chinese or both mixed: a
//! sentence ends at `.`, `!`, `?` (and runs of them) followed by a space or
//! the end, at `。！？；` anywhere, and at a newline. A period inside a word
//! or number ("3.5", "e.g.") does not end one.

/// The sentences of `text`, trimmed, in order; empty ones dropped.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let next = chars.get(k + 1).map(|&(_, n)| n);
        let ends = match c {
            '。' | '！' | '？' | '；' | '\n' => !matches!(next, Some('。' | '！' | '？' | '”' | '」')),
            '.' | '!' | '?' => match next {
                None => true,
                Some(n) => n.is_whitespace() && !abbreviation(&text[start..i]),
            },
            _ => false,
        };
        if ends {
            let end = i + c.len_utf8();
            out.push(text[start..end].trim());
            start = end;
        }
    }
    out.push(text[start..].trim());
    out.into_iter().filter(|s| s.chars().any(char::is_alphanumeric)).collect()
}

/// "Mr." and "e.g." do not end a sentence.
fn abbreviation(before: &str) -> bool {
    let word = before.rsplit(|c: char| c.is_whitespace()).next().unwrap_or("").to_ascii_lowercase();
    matches!(word.as_str(), "mr" | "mrs" | "ms" | "dr" | "st" | "vs" | "e.g" | "i.e" | "etc" | "jr" | "sr")
}

/// A question: it ends with a question mark, or in Chinese with a question
/// particle.
pub fn is_question(sentence: &str) -> bool {
    let s = sentence.trim_end_matches(['"', '”', ')', '）', ' ']);
    s.ends_with('?') || s.ends_with('？') || s.ends_with('吗') || s.ends_with('呢')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_chinese_and_mixed() {
        assert_eq!(
            sentences("Hey! I went to Dr. Lee's at 3.5 km away. Was it fun? Yes!!"),
            ["Hey!", "I went to Dr. Lee's at 3.5 km away.", "Was it fun?", "Yes!!"]
        );
        assert_eq!(
            sentences("我喜欢 Rust。你呢？好的！！\n第二行"),
            ["我喜欢 Rust。", "你呢？", "好的！！", "第二行"]
        );
        assert_eq!(sentences("  ...  "), Vec::<&str>::new());
        assert!(is_question("你喜欢什么语言吗") && is_question("Really?\"") && !is_question("I know."));
    }
}
