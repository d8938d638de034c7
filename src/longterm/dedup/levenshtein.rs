//! Levenshtein similarity of two short texts, bit-parallel.
//!
//! Dedup compares texts of at most `short_text_chars` characters (100 by
//! default) this way, and only pairs the cheaper bounds could not rule out.
//! Myers' algorithm in Hyyrö's form keeps a column of the edit-distance
//! table as two bit vectors, so a text of up to 128 characters is one
//! `u128` per vector and each character of the other text costs a dozen
//! word operations and a lookup. It replaces a general library (rapidfuzz)
//! whose bit-parallel kernels for every length took 28 KB of the wasm
//! (11.7 KB gzipped); dedup reaches it only for the rare pair the bounds
//! keep. A longer text, possible only when a host raises
//! `short_text_chars`, takes the plain two-row table.

/// `1 - distance / longer length`, when it is at least `cutoff`.
pub fn normalized_similarity(a: &str, b: &str, cutoff: f64) -> Option<f64> {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    if longest == 0 {
        return Some(1.0);
    }
    let similarity = 1.0 - distance(&a, &b) as f64 / longest as f64;
    (similarity >= cutoff).then_some(similarity)
}

/// The Levenshtein distance of `a` and `b` (unit costs).
pub fn distance(a: &[char], b: &[char]) -> usize {
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    match pattern.len() {
        0 => text.len(),
        1..=128 => bit_parallel(pattern, text),
        _ => two_rows(pattern, text),
    }
}

/// Myers / Hyyrö: `vp` and `vn` mark where the table's current column
/// rises or falls by one going down; `score` follows its last row.
fn bit_parallel(pattern: &[char], text: &[char]) -> usize {
    // Each character of the pattern with the positions it holds.
    let mut peq: Vec<(char, u128)> = Vec::with_capacity(pattern.len());
    for (i, &c) in pattern.iter().enumerate() {
        match peq.binary_search_by(|(k, _)| k.cmp(&c)) {
            Ok(at) => peq[at].1 |= 1 << i,
            Err(at) => peq.insert(at, (c, 1 << i)),
        }
    }
    let last = 1u128 << (pattern.len() - 1);
    let (mut vp, mut vn, mut score) = (u128::MAX, 0u128, pattern.len());
    for c in text {
        let eq = peq.binary_search_by(|(k, _)| k.cmp(c)).map_or(0, |at| peq[at].1);
        let xv = eq | vn;
        let xh = ((eq & vp).wrapping_add(vp) ^ vp) | eq;
        let hp = vn | !(xh | vp);
        let hn = vp & xh;
        if hp & last != 0 {
            score += 1;
        } else if hn & last != 0 {
            score -= 1;
        }
        // The table's first row counts the text's characters: a 1 enters.
        let hp = (hp << 1) | 1;
        vp = (hn << 1) | !(xv | hp);
        vn = hp & xv;
    }
    score
}

/// The textbook table, two rows at a time.
fn two_rows(pattern: &[char], text: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=pattern.len()).collect();
    for (j, t) in text.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = j + 1;
        for (i, p) in pattern.iter().enumerate() {
            let above = row[i + 1];
            row[i + 1] = (diagonal + usize::from(p != t)).min(above + 1).min(row[i] + 1);
            diagonal = above;
        }
    }
    row[pattern.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_strsim_on_short_long_and_unicode_texts() {
        let mut pick = crate::seeded::picker(0x1e7e_a5e1);
        let alphabet: Vec<char> = "abcde fgé喜欢😀".chars().collect();
        let mut text = || -> String {
            // Up to 200 characters now and then: both paths, and patterns across 128.
            let max = if pick(4) == 0 { 200 } else { 40 };
            (0..pick(max)).map(|_| alphabet[pick(alphabet.len())]).collect()
        };
        for _ in 0..3000 {
            let (a, b) = (text(), text());
            let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            assert_eq!(distance(&ca, &cb), strsim::levenshtein(&a, &b), "{a:?} vs {b:?}");
            let expected = strsim::normalized_levenshtein(&a, &b);
            assert_eq!(normalized_similarity(&a, &b, 0.0), Some(expected), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn the_cutoff_keeps_a_pair_at_it_and_drops_one_below() {
        // "kitten" / "sitting": 3 edits over 7 characters.
        let at = 1.0 - 3.0 / 7.0;
        assert_eq!(normalized_similarity("kitten", "sitting", at), Some(at));
        assert_eq!(normalized_similarity("kitten", "sitting", at + 1e-9), None);
        assert_eq!(normalized_similarity("", "", 1.0), Some(1.0));
        assert_eq!(distance(&[], &['a', 'b']), 2);
        let long: Vec<char> = "x".repeat(128).chars().collect();
        let longer: Vec<char> = "x".repeat(129).chars().collect();
        assert_eq!(distance(&long, &longer), 1);
    }
}
