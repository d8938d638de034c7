//! The fast estimate: the design's formula (CJK characters at 1.5 per token,
//! everything else at 4 per token) with the CJK test corrected.
//!
//! The original test, `c > 0x4E00 && c < 0x9FFF`, drops both ends of the
//! unified ideograph block and misses every other script that tokenizes at
//! about one to two characters per token: extension A and the astral
//! extensions, compatibility ideographs, Hiragana, Katakana, Hangul, Bopomofo,
//! CJK punctuation and the full-width forms. Non-CJK text is counted in UTF-16
//! units, as the design's `String.length()` did, so an emoji weighs two units.

/// Twelfths of a token: a CJK character weighs 8 (1/1.5), a UTF-16 unit of
/// anything else 3 (1/4), so the sum stays an exact integer.
fn weight(c: char) -> usize {
    if crate::script::is_dense(c) {
        8
    } else {
        3 * c.len_utf16()
    }
}

/// Estimated tokens of `text`: `ceil(cjk / 1.5 + other_utf16_units / 4)`.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().map(weight).sum::<usize>().div_ceil(12)
}

/// `Some(estimate)` if it is at most `limit`; stops reading as soon as the
/// text is known not to fit.
pub fn estimate_tokens_up_to(text: &str, limit: usize) -> Option<usize> {
    // Saturating: a limit near usize::MAX (a JS number on wasm32) means "no limit".
    let cap = limit.saturating_mul(12);
    let mut twelfths = 0usize;
    for c in text.chars() {
        twelfths += weight(c);
        if twelfths > cap {
            return None;
        }
    }
    Some(twelfths.div_ceil(12))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_zero() {
        assert_eq!(estimate_tokens(""), 0);
    }

    #[test]
    fn english_is_four_chars_per_token() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("Hello, world! How are you?"), 7); // 26 / 4 = 6.5
    }

    #[test]
    fn chinese_is_one_and_a_half_chars_per_token_including_block_ends() {
        assert_eq!(estimate_tokens("我喜欢用"), 3); // 4 / 1.5 = 2.67
                                                    // U+4E00 (一) and U+9FFF are inside the block; the seed's test excluded them.
        assert_eq!(estimate_tokens("一一一"), 2);
        assert_eq!(estimate_tokens("\u{9FFF}\u{9FFF}\u{9FFF}"), 2);
        // Extension A and an astral extension B ideograph count as one character each.
        assert_eq!(estimate_tokens("\u{3400}\u{20000}\u{3400}"), 2);
    }

    #[test]
    fn japanese_and_korean_count_as_cjk() {
        assert_eq!(estimate_tokens("ひらがな"), 3);
        assert_eq!(estimate_tokens("カタカナ"), 3);
        assert_eq!(estimate_tokens("안녕하세요"), 4); // 5 / 1.5 = 3.33
        assert_eq!(estimate_tokens("ＡＢＣ"), 2); // full-width forms
        assert_eq!(estimate_tokens("。、"), 2);
    }

    #[test]
    fn emoji_weigh_their_utf16_units() {
        assert_eq!(estimate_tokens("😀"), 1); // 2 units / 4
        assert_eq!(estimate_tokens("😀😀😀"), 2); // 6 units / 4 = 1.5
    }

    #[test]
    fn mixed_text_sums_both_parts() {
        // 2 CJK + 4 other: 2/1.5 + 4/4 = 2.33 -> 3
        assert_eq!(estimate_tokens("你好 abc"), 3);
    }
}
