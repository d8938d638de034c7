//! Values that hold many records, one per line after a first line of
//! their own: a snapshot's chunks and a batch's record. Record JSON written
//! by this library never holds a newline, so every line after the first is
//! one record.

pub use crate::store::layout::VALUE_BYTES;

/// `records` in order, in values of `head` and one record per line, each
/// of [`VALUE_BYTES`] at most (a larger record gets a value of its own), with
/// how many records each holds; `None` if a record holds a newline.
pub fn pack<S: AsRef<str>>(head: &str, records: impl IntoIterator<Item = S>) -> Option<Vec<(String, usize)>> {
    let mut values = Vec::new();
    let (mut value, mut n) = (String::new(), 0);
    for record in records {
        let record = record.as_ref();
        if record.contains('\n') {
            return None;
        }
        if n > 0 && value.len() + 1 + record.len() > VALUE_BYTES {
            values.push((std::mem::take(&mut value), std::mem::replace(&mut n, 0)));
        }
        if n == 0 {
            value.push_str(head);
        }
        value.push('\n');
        value.push_str(record);
        n += 1;
    }
    if n > 0 {
        values.push((value, n));
    }
    Some(values)
}

/// The first line of a value [`pack`] made.
pub fn head(value: &str) -> &str {
    value.split('\n').next().unwrap_or_default()
}

/// The records of a value [`pack`] made.
pub fn records(value: &str) -> impl Iterator<Item = &str> {
    value.split('\n').skip(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_within_their_bytes_at_every_boundary() {
        // Room for V8's two bytes per unit and its header in Deno KV.
        const { assert!(2 * VALUE_BYTES + 1024 <= 64 * 1024) };
        // Mostly ASCII with one character beyond Latin-1 (the worst case as
        // UTF-16), at lengths that land a value on its limit, one byte short
        // of it and one byte past it.
        for len in [VALUE_BYTES / 4 - 2, VALUE_BYTES / 4 - 1, VALUE_BYTES / 4, VALUE_BYTES / 2 - 1] {
            let records: Vec<String> = (0..9).map(|i| "x".repeat(len - 3 - i % 2) + "\u{2014}").collect();
            let values = pack("7", &records).unwrap();
            let back: Vec<&str> = values.iter().flat_map(|(v, _)| super::records(v)).collect();
            assert_eq!(back, records);
            assert_eq!(values.iter().map(|(_, n)| n).sum::<usize>(), records.len());
            assert!(values.iter().all(|(value, _)| value.len() <= VALUE_BYTES));
        }
        let big = "y".repeat(VALUE_BYTES + 10);
        let values = pack("7", ["a", big.as_str(), "b"]).unwrap();
        assert_eq!(values.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [1, 1, 1], "a larger record alone");
    }
}
