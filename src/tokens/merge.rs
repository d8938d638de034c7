//! Byte-pair merging of one pre-tokenized piece, exactly as tiktoken does it:
//! repeatedly merge the adjacent pair whose merged bytes have the lowest
//! rank, the leftmost on ties, until no pair is a token.
//!
//! Short pieces use tiktoken's own quadratic scan (fastest for a few bytes);
//! long ones (whitespace runs, base64, minified code) use a heap, so a 100 KB
//! piece costs O(n log n) instead of O(n^2). Both make the same merges.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::vocab::Vocabulary;

/// Pieces up to this many bytes use the scan.
const SCAN_LIMIT: usize = 128;

/// Number of tokens `piece` encodes to.
pub fn count_piece(vocab: &Vocabulary, piece: &[u8]) -> usize {
    // tiktoken emits a piece that is itself a token as one token, whatever
    // the merges would do; single bytes are always tokens.
    if piece.len() <= 1 {
        return piece.len();
    }
    if vocab.rank(piece).is_some() {
        return 1;
    }
    if piece.len() <= SCAN_LIMIT {
        count_by_scan(vocab, piece)
    } else {
        count_by_heap(vocab, piece)
    }
}

#[inline(always)]
fn rank_of(vocab: &Vocabulary, bytes: &[u8]) -> u32 {
    vocab.rank(bytes).unwrap_or(u32::MAX)
}

/// tiktoken's `_byte_pair_merge`: `parts[i] = (start, rank of merging part i with i + 1)`.
pub(crate) fn count_by_scan(vocab: &Vocabulary, piece: &[u8]) -> usize {
    let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
    for i in 0..piece.len() - 1 {
        parts.push((i, vocab.pair_rank(piece[i], piece[i + 1])));
    }
    parts.push((piece.len() - 1, u32::MAX));
    parts.push((piece.len(), u32::MAX));
    let rank_at = |parts: &[(usize, u32)], i: usize| {
        if i + 3 < parts.len() {
            rank_of(vocab, &piece[parts[i].0..parts[i + 3].0])
        } else {
            u32::MAX
        }
    };
    loop {
        let (mut min_rank, mut min_i) = (u32::MAX, 0);
        for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
            if r < min_rank {
                min_rank = r;
                min_i = i;
            }
        }
        if min_rank == u32::MAX {
            break;
        }
        if min_i > 0 {
            parts[min_i - 1].1 = rank_at(&parts, min_i - 1);
        }
        parts[min_i].1 = rank_at(&parts, min_i);
        parts.remove(min_i + 1);
    }
    parts.len() - 1
}

/// The same merges with a min-heap of `(rank, start)` and a linked list of
/// parts; entries made stale by a merge are skipped when popped.
pub(crate) fn count_by_heap(vocab: &Vocabulary, piece: &[u8]) -> usize {
    let n = piece.len();
    // Part i starts at byte i while alive; `next[i]` is the start of the next
    // part (n at the end), `prev[i]` the previous part's start.
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut alive = vec![true; n];
    let mut heap = BinaryHeap::with_capacity(n);
    let pair_rank = |next: &[usize], i: usize| -> u32 {
        let j = next[i];
        if j >= n {
            return u32::MAX;
        }
        rank_of(vocab, &piece[i..next[j]])
    };
    for i in 0..n - 1 {
        let r = vocab.pair_rank(piece[i], piece[i + 1]);
        if r != u32::MAX {
            heap.push(Reverse((r, i)));
        }
    }
    let mut parts = n;
    while let Some(Reverse((r, i))) = heap.pop() {
        if !alive[i] || pair_rank(&next, i) != r {
            continue;
        }
        let j = next[i];
        alive[j] = false;
        next[i] = next[j];
        if next[i] < n {
            prev[next[i]] = i;
        }
        parts -= 1;
        let r = pair_rank(&next, i);
        if r != u32::MAX {
            heap.push(Reverse((r, i)));
        }
        if i > 0 {
            let p = prev[i];
            let r = pair_rank(&next, p);
            if r != u32::MAX {
                heap.push(Reverse((r, p)));
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy vocabulary: all bytes of "abc", then merges in rank order.
    fn toy() -> Vocabulary {
        let tokens: Vec<&[u8]> = vec![b"a", b"b", b"c", b"ab", b"bc", b"abc", b"aa", b"aaaa", b"cab"];
        let lengths: Vec<u8> = tokens.iter().map(|t| t.len() as u8).collect();
        Vocabulary::new(&lengths, tokens.concat()).unwrap()
    }

    #[test]
    fn merges_lowest_rank_first() {
        let v = toy();
        // "abc": ab (3) beats bc (4), then ab+c = abc (5): one token.
        assert_eq!(count_piece(&v, b"abc"), 1);
        // "aaaaa": aa, aa, then aaaa, leaving a: 2 tokens.
        assert_eq!(count_by_scan(&v, b"aaaaa"), 2);
        assert_eq!(count_by_heap(&v, b"aaaaa"), 2);
        // "cabc": ab first (3): c|ab|c; cab is rank 8 vs abc 5: c|abc = 2.
        assert_eq!(count_by_scan(&v, b"cabc"), 2);
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn heap_and_scan_agree(s in "[abc]{2,200}") {
            let v = toy();
            proptest::prop_assert_eq!(count_by_scan(&v, s.as_bytes()), count_by_heap(&v, s.as_bytes()));
        }
    }
}
