//! Whether a new memory is a state or an event, and since when it holds in
//! the world: an event's text names its date ("Went hiking on 3 May 2023"),
//! and that date is when it became true; anything else is a state, true
//! from when it was said until a newer value supersedes it. What the caller
//! (or the model) said is kept.

use crate::entry::{Kind, MemoryEntry, Temporal};
use crate::longterm::dedup::Details;

/// `entry` with its kind of truth and `validFrom` filled in, when a fact
/// and not given.
pub fn classified(mut entry: MemoryEntry) -> MemoryEntry {
    if entry.kind != Kind::Fact || entry.temporal.is_some() {
        return entry;
    }
    match Details::new(&entry.content).occasion() {
        Some(occasion) => {
            entry.temporal = Some(Temporal::Event);
            entry.valid_from = entry.valid_from.or(Some(occasion.ms(entry.timestamp)));
        }
        None => entry.temporal = Some(Temporal::State),
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Scope;
    use crate::longterm::new_memory;

    #[test]
    fn a_dated_fact_is_an_event_from_its_date_and_anything_else_a_state() {
        let said = crate::dates::ms_of(2023, 5, 8);
        let hike = classified(new_memory("Went hiking with Sam on 3 May 2023", Scope::User, said));
        assert_eq!(
            (hike.temporal, hike.valid_from),
            (Some(Temporal::Event), Some(crate::dates::ms_of(2023, 5, 3)))
        );
        let home = classified(new_memory("Lives in Lisbon", Scope::User, said));
        assert_eq!((home.temporal, home.valid_from), (Some(Temporal::State), None));
        let given =
            MemoryEntry { temporal: Some(Temporal::State), ..new_memory("Ran on 3 May", Scope::User, said) };
        assert_eq!(classified(given).temporal, Some(Temporal::State), "what the caller said is kept");
    }
}
