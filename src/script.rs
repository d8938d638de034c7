//! Which writing system a character belongs to, in one place: the token
//! estimate, the analyzer and the prompt language each ask a different
//! question of the same Unicode blocks, so each predicate below is built from
//! the one before it.

/// Han ideographs: what decides that a text is Chinese.
pub fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF       // CJK extension A
        | 0x4E00..=0x9FFF     // CJK unified ideographs
        | 0xF900..=0xFAFF     // CJK compatibility ideographs
        | 0x20000..=0x2FA1F   // CJK extensions B to F, compatibility supplement
        | 0x30000..=0x323AF   // CJK extensions G and H
    )
}

/// Han, kana and Hangul syllables: letters of scripts written without
/// spaces, which the analyzer cuts into characters and bigrams.
pub fn is_cjk_letter(c: char) -> bool {
    is_han(c)
        || matches!(c as u32,
            0x3040..=0x30FF       // Hiragana, Katakana
            | 0x31F0..=0x31FF     // Katakana phonetic extensions
            | 0xAC00..=0xD7AF     // Hangul syllables
        )
}

/// Characters that tokenizers split at roughly one to two per token: the
/// letters above, with their radicals, jamo, punctuation and full-width forms.
pub fn is_dense(c: char) -> bool {
    is_cjk_letter(c)
        || matches!(c as u32,
            0x1100..=0x11FF       // Hangul Jamo
            | 0x2E80..=0x2FDF     // CJK radicals, Kangxi radicals
            | 0x3000..=0x303F     // CJK symbols and punctuation
            | 0x3100..=0x312F     // Bopomofo
            | 0x3130..=0x318F     // Hangul compatibility Jamo
            | 0x31A0..=0x31BF     // Bopomofo extended
            | 0xA960..=0xA97F     // Hangul Jamo extended A
            | 0xD7B0..=0xD7FF     // Hangul Jamo extended B
            | 0xFF00..=0xFFEF     // half-width and full-width forms
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_predicate_holds_the_one_before_it() {
        for c in ['中', '𠀀', '豈', 'の', 'カ', '한', '。', 'ｱ', 'ㄅ', 'a', 'é', '😀'] {
            assert!(!is_han(c) || is_cjk_letter(c), "{c}");
            assert!(!is_cjk_letter(c) || is_dense(c), "{c}");
        }
        assert!(is_han('中') && !is_han('の') && !is_han('한'));
        assert!(is_cjk_letter('の') && is_cjk_letter('한') && !is_cjk_letter('。'));
        assert!(is_dense('。') && is_dense('ｱ') && !is_dense('a') && !is_dense('😀'));
    }
}
