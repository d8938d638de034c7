//! Values that hold many records, one per line after a first line of
//! their own: a snapshot's chunks and a batch's record. Record JSON written
//! by this library never holds a newline, so every line after the first is
//! one record.

/// Bytes of records per value: 43 KB once sealed (base64), under Deno KV's
/// and Durable Objects' value limits.
pub const VALUE_BYTES: usize = 32 * 1024;

/// `records` in order, in values of `head` and one record per line, each
/// under [`VALUE_BYTES`] (a larger record gets a value of its own), with
/// how many records each holds; `None` if a record holds a newline.
pub fn pack<S: AsRef<str>>(head: &str, records: impl IntoIterator<Item = S>) -> Option<Vec<(String, usize)>> {
    let mut values = Vec::new();
    let (mut value, mut n) = (String::new(), 0);
    for record in records {
        let record = record.as_ref();
        if record.contains('\n') {
            return None;
        }
        if n > 0 && value.len() + record.len() >= VALUE_BYTES {
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
