//! One namespace in a backend that several share (an adapter's key-value
//! store, a component host's): every key of the namespace is
//! `<namespace>/<key>`, so nothing read, listed or deleted through one
//! namespace can reach another. The bindings move bytes; this decides the
//! keys and what a listing answers.

pub struct Namespace {
    prefix: String,
}

impl Namespace {
    pub fn new(namespace: &str) -> Namespace {
        Namespace { prefix: format!("{namespace}/") }
    }

    /// The backend's key for `key`.
    pub fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// What the backend listed for [`Self::key`]`(prefix)`, as the port
    /// answers it: only this namespace's keys under `prefix` (a backend may
    /// list more than it was asked for), without the namespace, in UTF-8
    /// order (a backend may list in any order).
    pub fn listed(
        &self,
        prefix: &str,
        pairs: impl IntoIterator<Item = (String, String)>,
    ) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = pairs
            .into_iter()
            .filter_map(|(k, v)| {
                let key = k.strip_prefix(&self.prefix)?;
                key.starts_with(prefix).then(|| (key.to_string(), v))
            })
            .collect();
        crate::order::sort_by(&mut out, |a, b| a.0.cmp(&b.0));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_keeps_this_namespace_under_the_prefix_in_key_order() {
        let ns = Namespace::new("user-1");
        assert_eq!(ns.key("lt/a"), "user-1/lt/a");
        let pairs = [
            ("user-1/lt/b", "2"),
            ("user-10/lt/a", "x"),
            ("user-1/lt/a", "1"),
            ("user-1/session/a", "s"),
            ("other", "y"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        assert_eq!(ns.listed("lt/", pairs), vec![("lt/a".into(), "1".into()), ("lt/b".into(), "2".into())]);
    }
}
