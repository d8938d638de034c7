//! Memories written together, kept together: the new memories of one
//! write (a `rememberMany`, a consolidation, an import) are stored as a
//! few records of up to 30 KiB, one memory per line, instead of one record
//! per memory.
//!
//! Why: in IndexedDB every record is a row the browser serializes, writes
//! and indexes on the page's thread, and for a batch of 100 memory-sized
//! texts those rows cost more than all the rest of the write (bench:store's
//! raw rows). A single `remember` still writes the memory's own record.
//!
//! - A batch's record is `lt/entry/~batch/<generation>-<n>`; its value is
//!   the line `~batch`, then one memory's JSON per line. What a record is
//!   is told by its value, never by its key: a memory's own record is one
//!   JSON object.
//! - Every memory lives in one record, its own or a batch's. A memory of a
//!   batch that is rewritten (expired, restored, imported anew) moves to
//!   its own record, and its batch is rewritten without it in the same
//!   transaction; a deletion rewrites the batch without it. So a forgotten
//!   or redacted text leaves its batch with it.
//! - Found in both (only a writer without the namespace's lock could leave
//!   that), the memory's own record wins, and the batch is rewritten
//!   without its copy at the next deletion.
//! - A snapshot's chunks say where each memory lives: a line `@<batch>`
//!   before the memories of that batch, `@` before memories with their
//!   own records.

use crate::longterm::lines;

const HEAD: &str = "~batch";
/// The key suffix of batches' records.
const NAME_PREFIX: &str = "~batch/";

/// The name of the `n`th batch of the write of `generation`: new to every
/// instance, since generations are.
pub fn name(generation: u64, n: usize) -> String {
    format!("{NAME_PREFIX}{generation:x}-{n}")
}

pub fn is_batch(value: &str) -> bool {
    lines::head(value) == HEAD
}

/// The values of batches holding `jsons` in order, with how many each holds.
pub fn pack<S: AsRef<str>>(jsons: impl IntoIterator<Item = S>) -> Option<Vec<(String, usize)>> {
    lines::pack(HEAD, jsons)
}

/// One batch's value holding `jsons` (a rewrite: fewer than it held).
pub fn value<S: AsRef<str>>(jsons: impl IntoIterator<Item = S>) -> String {
    let mut value = HEAD.to_string();
    for json in jsons {
        value.push('\n');
        value.push_str(json.as_ref());
    }
    value
}

/// The length of a batch's value whose lines have these lengths.
pub fn bytes(lines: impl IntoIterator<Item = usize>) -> u64 {
    lines.into_iter().fold(HEAD.len() as u64, |sum, n| sum + 1 + n as u64)
}

/// A snapshot's line saying the memories after it live in `batch`
/// (`None`: in their own records).
pub fn home_line(batch: Option<&str>) -> String {
    format!("@{}", batch.unwrap_or_default())
}

/// What a snapshot's line says, if it says where memories live.
pub fn home_of(line: &str) -> Option<Option<&str>> {
    line.strip_prefix('@').map(|b| (!b.is_empty()).then_some(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_told_by_its_value_and_says_its_size() {
        let packed = pack(["{\"a\":1}", "{\"b\":2}"]).unwrap();
        assert_eq!(packed.len(), 1);
        let (value, n) = &packed[0];
        assert_eq!(*n, 2);
        assert!(is_batch(value) && !is_batch("{\"a\":1}") && !is_batch("~batches\n{}"));
        assert_eq!(bytes([7, 7]), value.len() as u64);
        assert_eq!(value, &super::value(["{\"a\":1}", "{\"b\":2}"]));
        assert!(is_batch(&super::value(Vec::<String>::new())));
        assert_eq!(home_of(&home_line(Some("~batch/1-0"))), Some(Some("~batch/1-0")));
        assert_eq!(home_of(&home_line(None)), Some(None));
        assert_eq!(home_of("{\"id\":\"x\"}"), None);
        assert_ne!(name(1, 0), name(1, 1));
    }
}
