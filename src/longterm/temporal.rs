//! Whether a new memory is a state or an event, and since when it holds in
//! the world: an event's text names its date ("Went hiking on 3 May 2023"),
//! and that date is when it became true; anything else is a state, true
//! from when it was said until a newer value supersedes it. What the caller
//! (or the model) said is kept.

use crate::entry::{Kind, MemoryEntry, Temporal};
use crate::longterm::dedup::Details;

/// `entry` with its kind of truth and `validFrom` filled in, when a fact
/// and not given. An event the caller (or the model) named without a
/// `validFrom` takes its text's date, if it names one.
pub fn classified(mut entry: MemoryEntry) -> MemoryEntry {
    let settled = match entry.temporal {
        Some(Temporal::State) => true,
        Some(Temporal::Event) => entry.valid_from.is_some(),
        None => false,
    };
    if entry.kind != Kind::Fact || settled {
        return entry;
    }
    match Details::new(&entry.content).occasion() {
        Some(occasion) => {
            entry.temporal = Some(Temporal::Event);
            entry.valid_from = entry.valid_from.or(Some(occasion.ms(entry.timestamp)));
        }
        None => entry.temporal = entry.temporal.or(Some(Temporal::State)),
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
        // An event the model named takes its text's date; without one, the
        // time it was said.
        let named = |text: &str| {
            classified(MemoryEntry { temporal: Some(Temporal::Event), ..new_memory(text, Scope::User, said) })
        };
        assert_eq!(named("Ran a 10k on 3 May 2023").valid_from, Some(crate::dates::ms_of(2023, 5, 3)));
        let undated = named("Ran a 10k");
        assert_eq!((undated.temporal, undated.valid_from), (Some(Temporal::Event), None));
    }
}
