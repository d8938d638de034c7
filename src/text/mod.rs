//! Text helpers shared by modules of every layer.

/// Cuts to `max` characters at a character boundary, trimmed.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].trim_end().to_string(),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_at_character_boundaries() {
        assert_eq!(truncate_chars("我喜欢用Rust写代码", 3), "我喜欢");
        assert_eq!(truncate_chars(" ab ", 10), "ab");
    }
}
