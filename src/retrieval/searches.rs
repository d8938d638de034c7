//! How often recall is searched, per UTC day and scope. The index's owner
//! counts each search it makes, so that a search itself only reads.

use std::collections::BTreeMap;

use crate::dates::utc_day;

use super::SearchOptions;

/// Searches per UTC day and scope (`"2024-05-01|user"`; `all` for a search
/// that named no scope).
#[derive(Debug, Clone, Default)]
pub struct SearchCounts(BTreeMap<String, u32>);

impl SearchCounts {
    /// Counts a search made with `opts` at `now` (ms; `opts.now` when given,
    /// as the search itself reads it), once per scope it named.
    pub fn record(&mut self, now: i64, opts: &SearchOptions) {
        let day = utc_day(opts.now.unwrap_or(now));
        let mut count =
            |scope: &dyn std::fmt::Display| *self.0.entry(format!("{day}|{scope}")).or_default() += 1;
        match &opts.scopes {
            Some(scopes) => {
                for scope in scopes {
                    count(scope);
                }
            }
            None => count(&"all"),
        }
    }

    pub fn by_day_and_scope(&self) -> &BTreeMap<String, u32> {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Scope;

    #[test]
    fn each_scope_of_a_search_counts_on_its_day() {
        let mut counts = SearchCounts::default();
        counts.record(0, &SearchOptions::default());
        let scoped = SearchOptions { scopes: Some(vec![Scope::User, Scope::Session]), ..Default::default() };
        counts.record(86_400_000, &scoped);
        counts.record(0, &SearchOptions { now: Some(86_400_000), ..scoped });
        let keys: Vec<(&str, u32)> =
            counts.by_day_and_scope().iter().map(|(k, &n)| (k.as_str(), n)).collect();
        assert_eq!(keys, [("1970-01-01|all", 1), ("1970-01-02|session", 2), ("1970-01-02|user", 2)]);
    }
}
