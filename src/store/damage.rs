//! Damaged records: a stored value that no longer parses (a bug in an older
//! version, a hand-edited adapter row, a half-written record of a backend
//! without transactions). One such record must not make a namespace
//! unusable, so readers skip it, and the log says which keys were skipped
//! and why: `stats().damaged` lists them and the host's hook hears of each
//! once. The record itself is left in place for the host to inspect; a
//! write of the same key (or `deleteNamespace`) replaces it.

use std::cell::RefCell;
use std::collections::BTreeMap;

use serde::Serialize;

/// A record that was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Damaged {
    pub key: String,
    /// Why it could not be read.
    pub error: String,
}

/// Hears of each damaged record once (the host's `onDamaged`).
pub type DamageHook = Box<dyn Fn(&Damaged)>;

/// The damaged records an instance has met, shared by its readers.
#[derive(Default)]
pub struct DamageLog {
    /// Each key met, with why: a map of strings, the type the wasm holds
    /// already (one of `Damaged` cost it a B-tree instance of its own).
    seen: RefCell<BTreeMap<String, String>>,
    hook: Option<DamageHook>,
}

impl DamageLog {
    /// A log that tells `hook` of each damaged record the first time it is met.
    pub fn with_hook(hook: DamageHook) -> DamageLog {
        DamageLog { seen: RefCell::default(), hook: Some(hook) }
    }

    /// Records a skipped record; the hook runs once per key.
    pub fn report(&self, key: &str, error: impl std::fmt::Display) {
        let damaged = Damaged { key: key.to_string(), error: error.to_string() };
        let first = self.seen.borrow_mut().insert(key.to_string(), damaged.error.clone()).is_none();
        if first {
            if let Some(hook) = &self.hook {
                hook(&damaged);
            }
        }
    }

    /// The record at `key` was rewritten or deleted: it is no longer damaged.
    pub fn repaired(&self, key: &str) {
        self.seen.borrow_mut().remove(key);
    }

    /// Every damaged record met so far, by key.
    pub fn list(&self) -> Vec<Damaged> {
        self.seen
            .borrow()
            .iter()
            .map(|(key, error)| Damaged { key: key.clone(), error: error.clone() })
            .collect()
    }
}

/// Parses a stored JSON value, or reports it damaged and gives `None`.
pub fn parse<T: serde::de::DeserializeOwned>(log: &DamageLog, key: &str, json: &str) -> Option<T> {
    match serde_json::from_str(json) {
        Ok(v) => Some(v),
        Err(e) => {
            log.report(key, e);
            None
        }
    }
}
