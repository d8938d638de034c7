//! Levenshtein similarity of two short texts, bit-parallel.
//!
//! Dedup compares texts of at most `short_text_chars` characters (100 by
//! default) this way, and only pairs the cheaper bounds could not rule out.
//! Myers' algorithm in Hyyrö's form keeps a column of the edit-distance
//! table as two bit vectors, so a text of up to 128 characters is one
//! `u128` per vector and each character of the other text costs a dozen
//! word operations and a lookup (a table for ASCII text). It stops once
//! the distance must exceed the most the cutoff allows. It replaces a
//! general library (rapidfuzz) whose kernels for every length took 28 KB
//! of the wasm, at the same speed where dedup leans on it (short texts of
//! one small alphabet, which the cheaper bounds cannot tell apart;
//! bench:edge). A longer text, possible only when a host raises
//! `short_text_chars`, takes the plain two-row table.

/// `1 - distance / longer length`, when it is at least `cutoff`.
pub fn normalized_similarity(a: &str, b: &str, cutoff: f64) -> Option<f64> {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return Some(1.0);
    }
    let similarity = |d: usize| 1.0 - d as f64 / longest as f64;
    // The most edits a pair at the cutoff may have: the computation stops
    // once the distance must exceed it.
    let mut most = ((1.0 - cutoff).max(0.0) * longest as f64).floor() as usize;
    while most > 0 && similarity(most) < cutoff {
        most -= 1;
    }
    while most < longest && similarity(most + 1) >= cutoff {
        most += 1;
    }
    if similarity(most) < cutoff {
        return None;
    }
    let d = if a.is_ascii() && b.is_ascii() {
        bounded(a.as_bytes(), b.as_bytes(), most)
    } else {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        bounded(&a, &b, most)
    }?;
    Some(similarity(d))
}

/// The distance, or `None` once it must exceed `most`.
fn bounded<T: Symbol>(a: &[T], b: &[T], most: usize) -> Option<usize> {
    let (pattern, text) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if text.len() - pattern.len() > most {
        return None;
    }
    let d = match pattern.len() {
        0 => text.len(),
        1..=128 => bit_parallel(pattern, text, most)?,
        _ => two_rows(pattern, text),
    };
    (d <= most).then_some(d)
}

/// A character of either kind of text: bytes of ASCII text (a table
/// lookup) or chars.
trait Symbol: Copy + Ord {
    fn ascii(self) -> Option<u8>;
}

impl Symbol for u8 {
    fn ascii(self) -> Option<u8> {
        Some(self)
    }
}

impl Symbol for char {
    fn ascii(self) -> Option<u8> {
        None
    }
}

/// Where each symbol of the pattern occurs, as bits.
struct Positions<T> {
    bytes: [u128; 256],
    others: Vec<(T, u128)>,
}

impl<T: Symbol> Positions<T> {
    fn new(pattern: &[T]) -> Positions<T> {
        let mut p: Positions<T> = Positions { bytes: [0; 256], others: Vec::new() };
        for (i, &c) in pattern.iter().enumerate() {
            match c.ascii() {
                Some(b) => p.bytes[b as usize] |= 1 << i,
                None => match p.others.binary_search_by(|(k, _)| k.cmp(&c)) {
                    Ok(at) => p.others[at].1 |= 1 << i,
                    Err(at) => p.others.insert(at, (c, 1 << i)),
                },
            }
        }
        p
    }

    #[inline(always)]
    fn of(&self, c: T) -> u128 {
        match c.ascii() {
            Some(b) => self.bytes[b as usize],
            None => self.others.binary_search_by(|(k, _)| k.cmp(&c)).map_or(0, |at| self.others[at].1),
        }
    }
}

/// Myers / Hyyrö: `vp` and `vn` mark where the table's current column
/// rises or falls by one going down; `score` follows its last row, which
/// falls by at most one per character left: past `most` plus those, the
/// distance is out of reach.
fn bit_parallel<T: Symbol>(pattern: &[T], text: &[T], most: usize) -> Option<usize> {
    let peq = Positions::new(pattern);
    let last = 1u128 << (pattern.len() - 1);
    let (mut vp, mut vn, mut score) = (u128::MAX, 0u128, pattern.len());
    for (j, &c) in text.iter().enumerate() {
        let eq = peq.of(c);
        let xv = eq | vn;
        let xh = ((eq & vp).wrapping_add(vp) ^ vp) | eq;
        let hp = vn | !(xh | vp);
        let hn = vp & xh;
        if hp & last != 0 {
            score += 1;
        } else if hn & last != 0 {
            score -= 1;
        }
        if score > most.saturating_add(text.len() - j - 1) {
            return None;
        }
        // The table's first row counts the text's characters: a 1 enters.
        let hp = (hp << 1) | 1;
        vp = (hn << 1) | !(xv | hp);
        vn = hp & xv;
    }
    Some(score)
}

/// The textbook table, two rows at a time.
fn two_rows<T: Symbol>(pattern: &[T], text: &[T]) -> usize {
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

    /// The Levenshtein distance of `a` and `b` (unit costs).
    fn distance<T: Symbol>(a: &[T], b: &[T]) -> usize {
        bounded(a, b, usize::MAX).expect("no bound")
    }

    #[test]
    fn agrees_with_strsim_on_short_long_and_unicode_texts_at_every_cutoff() {
        let mut pick = crate::seeded::picker(0x1e7e_a5e1);
        let alphabets: [Vec<char>; 2] = ["abcde fg".chars().collect(), "abcde fgé喜欢😀".chars().collect()];
        let mut text = |alphabet: &[char], near: Option<&str>| -> String {
            match near {
                // A neighbour: a few characters changed, so cutoffs bite.
                Some(t) => {
                    t.chars().map(|c| if pick(8) == 0 { alphabet[pick(alphabet.len())] } else { c }).collect()
                }
                // Up to 200 characters now and then: both paths, and patterns across 128.
                None => {
                    let max = if pick(4) == 0 { 200 } else { 40 };
                    (0..pick(max)).map(|_| alphabet[pick(alphabet.len())]).collect()
                }
            }
        };
        for round in 0..4000 {
            let alphabet = &alphabets[round % 2];
            let a = text(alphabet, None);
            let b = if round % 3 == 0 { text(alphabet, None) } else { text(alphabet, Some(&a)) };
            let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
            assert_eq!(distance(&ca, &cb), strsim::levenshtein(&a, &b), "{a:?} vs {b:?}");
            let expected = strsim::normalized_levenshtein(&a, &b);
            for cutoff in [0.0, 0.5, 0.8, 0.95] {
                let want = (expected >= cutoff).then_some(expected);
                assert_eq!(normalized_similarity(&a, &b, cutoff), want, "{a:?} vs {b:?} at {cutoff}");
            }
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
