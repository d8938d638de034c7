//! Encryption at rest: a `Store` that seals every value before the backend
//! sees it, with AES-GCM under the host's keys (the [`Cipher`] port).
//!
//! Each value is sealed under a fresh random 96-bit nonce, with the
//! namespace and the record's key as associated data: a sealed value moved
//! to another key or namespace does not open, so records cannot be swapped.
//! The stored text is `amenc1.<key id>.<base64 of nonce, ciphertext, tag>`.
//! No JSON text starts with `a`, so a sealed value is never taken for a
//! plain one, and a memory opened without its key reports `DECRYPTION`
//! instead of skipping every record as damaged.
//!
//! A key id is a key check value: the first 8 bytes of the tag of sealing
//! nothing under the all-zero nonce (which a random draw meets with
//! probability 2^-96), in hex. It names a key without revealing it, so
//! keys are passed unnamed (non-extractable `CryptoKey`s) and each value
//! says which key opens it.
//!
//! What cannot be opened:
//! - a namespace sealed under a key that was not given: the wrong key. The
//!   call fails with `DECRYPTION`: never garbage, and nothing skipped as
//!   damaged. One value under an unknown key id (planted, or its id bit-rotted)
//!   among values this instance reads is damaged instead, skipped and
//!   reported: no single record can block the namespace. Which of the two
//!   it is, is decided by the namespace as a whole ([`SealedStore::foreign`]).
//! - a value whose tag fails under its key (altered, or moved from another
//!   record): damaged, skipped and reported like any damaged record.
//! - a plain value in an encrypted namespace: damaged too, unless the
//!   memory was opened to migrate a plain namespace, when it is read and
//!   then sealed by the reseal pass.
//!
//! Rotation: values sealed under an older key (or plain, when migrating)
//! are resealed under the current key in the background
//! ([`SealedStore::stale`], [`SealedStore::reseal`]), each with a
//! compare-and-set on the exact text it read, so a value another instance
//! rewrote meanwhile is left as that instance wrote it. A pass cut short
//! resumes at the next open: every value says which key sealed it.
//!
//! An instance still open under an older key (another tab, a worker) must
//! not go on sealing under it: the rotator leaves word for each older key,
//! `key/moved/<older key id>` holding the new key's id sealed under the
//! older key (so it is authentic to exactly the instances it is meant for,
//! and no one without that key can forge it). Such an instance's writes are
//! conditional on that record's absence, and once it is there its writes
//! and its opening fail with `DECRYPTION` naming the new key. The word is
//! written before the reseal pass lists the namespace, so the pass finds
//! whatever the old instance wrote before it.

use std::cell::Cell;
use std::rc::Rc;

use crate::join::join_all;

use crate::base64::{base64, hex, unbase64, unhex};
use crate::error::{Error, ErrorCode, Result};
use crate::ports::cipher::{NONCE_LEN, TAG_LEN};
use crate::ports::{Cipher, LocalBoxFuture};
use crate::store::layout::{moved_key, MOVED_PREFIX};
use crate::store::{DamageLog, Parts, Store};

const PREFIX: &str = "amenc1.";

/// Associated data of the key check value; never a record's (those start
/// with the namespace and a NUL).
const KEY_CHECK_AAD: &[u8] = b"agent-memory key check";

/// The keys of an encrypted namespace, with their ids.
struct Keys {
    cipher: Rc<dyn Cipher>,
    /// `ids[i]` names key `i`; key 0 seals.
    ids: Vec<String>,
}

/// Encryption progress, for `stats()`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EncryptionStats {
    /// The id of the key new values are sealed under (a key check value, not the key).
    pub key_id: String,
    /// Values resealed under it by this instance (rotation, migration).
    pub resealed: u32,
    /// Values the last pass found under an older key (or plain) and has
    /// not resealed yet.
    pub stale: u32,
}

/// The store every `Memory` reads and writes through: with keys it seals;
/// without, it passes plain values and refuses sealed ones.
pub struct SealedStore {
    inner: Rc<dyn Store>,
    keys: Option<Keys>,
    namespace: String,
    damage: Rc<DamageLog>,
    /// Plain values are read (and resealed), not damaged.
    migrate: bool,
    resealed: Cell<u32>,
    stale: Cell<u32>,
    /// Whether the namespace holds values this instance reads: `Some(true)`
    /// once one was seen (a value it cannot read is then a damaged record),
    /// `Some(false)` once a listing found none (the namespace is under
    /// another key), `None` before either.
    readable: Cell<Option<bool>>,
}

fn decryption(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::Decryption, message)
}

impl SealedStore {
    /// A plain namespace: values pass through; sealed ones are damaged
    /// (reported to `damage`), or `DECRYPTION` when all of them are.
    pub fn plain(inner: Rc<dyn Store>, damage: Rc<DamageLog>) -> SealedStore {
        SealedStore {
            inner,
            keys: None,
            namespace: String::new(),
            damage,
            migrate: false,
            resealed: Cell::new(0),
            stale: Cell::new(0),
            readable: Cell::new(None),
        }
    }

    /// An encrypted namespace under `cipher`'s keys (key 0 seals). Computes
    /// the key ids: one seal of nothing per key.
    pub async fn encrypted(
        inner: Rc<dyn Store>,
        cipher: Rc<dyn Cipher>,
        namespace: &str,
        damage: Rc<DamageLog>,
        migrate: bool,
    ) -> Result<SealedStore> {
        if cipher.key_count() == 0 {
            return Err(Error::invalid("encryption needs a key"));
        }
        let mut ids = Vec::with_capacity(cipher.key_count());
        for key in 0..cipher.key_count() {
            let tag = cipher.seal(key, [0; NONCE_LEN], KEY_CHECK_AAD.to_vec(), Vec::new()).await?;
            if tag.len() != TAG_LEN {
                return Err(Error::invalid("the cipher's tag is not 16 bytes: keys must be AES-GCM keys"));
            }
            let id = hex(&tag[..8]);
            if ids.contains(&id) {
                return Err(Error::invalid("the same key was given twice"));
            }
            ids.push(id);
        }
        let store = SealedStore {
            inner,
            keys: Some(Keys { cipher, ids }),
            namespace: namespace.to_string(),
            damage,
            migrate,
            resealed: Cell::new(0),
            stale: Cell::new(0),
            readable: Cell::new(None),
        };
        store.leave_word().await?;
        Ok(store)
    }

    /// At open: fails when the sealing key was rotated away from (unless
    /// this instance holds the key it moved to: a rotation back), and tells
    /// instances on each older key given that the namespace moved to key 0.
    async fn leave_word(&self) -> Result<()> {
        let keys = self.keys.as_ref().expect("encrypted");
        if let Some(to) = self.moved_to().await? {
            if !keys.ids.contains(&to) {
                return Err(moved(&to));
            }
            self.inner.delete_many(vec![moved_key(&keys.ids[0])]).await?;
        }
        let mut word = Vec::new();
        for (index, id) in keys.ids.iter().enumerate().skip(1) {
            let key = moved_key(id);
            if self.inner.get(&key).await?.is_none() {
                word.push((key.clone(), seal_with(keys, index, self.aad(&key), &keys.ids[0]).await?));
            }
        }
        if !word.is_empty() {
            self.inner.put_many(word).await?;
        }
        Ok(())
    }

    /// The key the namespace moved to from this instance's sealing key, when
    /// an authentic word of a rotation says so. Word that does not open
    /// under that key is planted or damaged: reported, and ignored.
    async fn moved_to(&self) -> Result<Option<String>> {
        let Some(keys) = &self.keys else { return Ok(None) };
        let key = moved_key(&keys.ids[0]);
        let Some(stored) = self.inner.get(&key).await? else { return Ok(None) };
        let body =
            stored.strip_prefix(PREFIX).and_then(|r| r.strip_prefix(keys.ids[0].as_str())?.strip_prefix('.'));
        let opened = match body {
            Some(body) => open_body(keys, 0, self.aad(&key), body).await?.ok(),
            None => None,
        };
        match opened {
            Some(to) if to != keys.ids[0] => Ok(Some(to)),
            _ => {
                self.damage.report(&key, "word of a key rotation that does not open under this key");
                Ok(None)
            }
        }
    }

    /// Fails when the namespace moved to another key.
    async fn check_not_moved(&self) -> Result<()> {
        match self.moved_to().await? {
            Some(to) => Err(moved(&to)),
            None => Ok(()),
        }
    }

    /// Progress of encryption; `None` for a plain namespace.
    pub fn stats(&self) -> Option<EncryptionStats> {
        let keys = self.keys.as_ref()?;
        Some(EncryptionStats {
            key_id: keys.ids[0].clone(),
            resealed: self.resealed.get(),
            stale: self.stale.get(),
        })
    }

    /// Whether a reseal pass may find work: an older key, or a migration.
    pub fn may_be_stale(&self) -> bool {
        self.keys.as_ref().is_some_and(|k| k.ids.len() > 1) || (self.keys.is_some() && self.migrate)
    }

    fn aad(&self, key: &str) -> Vec<u8> {
        let mut aad = Vec::with_capacity(self.namespace.len() + 1 + key.len());
        aad.extend_from_slice(self.namespace.as_bytes());
        aad.push(0);
        aad.extend_from_slice(key.as_bytes());
        aad
    }

    async fn seal(&self, keys: &Keys, key: &str, plain: &str) -> Result<String> {
        seal_with(keys, 0, self.aad(key), plain).await
    }

    /// An export document sealed under the current key: readable by any
    /// memory given that key, in any namespace.
    pub async fn seal_export(&self, json: &str) -> Result<SealedExport> {
        let Some(keys) = &self.keys else {
            return Err(Error::invalid("a sealed export needs `encryption`"));
        };
        let sealed = seal_with(keys, 0, EXPORT_AAD.to_vec(), json).await?;
        Ok(SealedExport { format: SEALED_EXPORT_FORMAT.into(), version: SEALED_EXPORT_VERSION, sealed })
    }

    /// The document of a sealed export: `DECRYPTION` without its key, or
    /// when it was altered.
    pub async fn open_export(&self, export: &SealedExport) -> Result<String> {
        if export.format != SEALED_EXPORT_FORMAT || export.version != SEALED_EXPORT_VERSION {
            return Err(Error::invalid(format!(
                "not an agent-memory sealed export of version {SEALED_EXPORT_VERSION} (format {:?}, version {})",
                export.format, export.version
            )));
        }
        let Some(keys) = &self.keys else {
            return Err(decryption("a sealed export needs `encryption` with its key"));
        };
        let rest = export.sealed.strip_prefix(PREFIX).ok_or_else(|| Error::invalid("not a sealed export"))?;
        let (id, body) = rest.split_once('.').ok_or_else(|| Error::invalid("not a sealed export"))?;
        let index = keys.ids.iter().position(|k| k == id).ok_or_else(|| {
            decryption(format!("the export is sealed under a key that was not given (key id {id})"))
        })?;
        let bytes = unbase64(body).filter(|b| b.len() >= NONCE_LEN + TAG_LEN);
        let bytes = bytes.ok_or_else(|| Error::invalid("a sealed export cut short or not base64"))?;
        let nonce: [u8; NONCE_LEN] = bytes[..NONCE_LEN].try_into().expect("length checked");
        let opened = keys.cipher.open(index, nonce, EXPORT_AAD.to_vec(), bytes[NONCE_LEN..].to_vec()).await?;
        let plain =
            opened.ok_or_else(|| decryption("the sealed export fails authentication: it was altered"))?;
        String::from_utf8(plain).map_err(|_| decryption("the sealed export is not text"))
    }

    /// Associated data of a synced item: it opens under its own id, in a
    /// namespace of the same name, and nowhere else.
    fn item_aad(&self, id: &[u8]) -> Vec<u8> {
        let mut aad = ITEM_AAD.to_vec();
        aad.extend_from_slice(self.namespace.as_bytes());
        aad.push(0);
        aad.extend_from_slice(id);
        aad
    }

    /// A synced item's bytes as they leave: with keys, sealed under the
    /// current key (its 8-byte key id, the nonce, then ciphertext and
    /// tag), bound to its id; plain without.
    pub async fn seal_item(&self, id: &[u8], plain: Vec<u8>) -> Result<Vec<u8>> {
        let Some(keys) = &self.keys else { return Ok(plain) };
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| Error::storage(format!("no random nonce: {e}")))?;
        let sealed = keys.cipher.seal(0, nonce, self.item_aad(id), plain).await?;
        let mut out = unhex(&keys.ids[0]).unwrap_or_default();
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// A received item's plain bytes, or why it is damaged: without keys
    /// it passes as it came; with keys it must open under one of them
    /// and its own id.
    pub async fn open_item(
        &self,
        id: &[u8],
        bytes: Vec<u8>,
    ) -> Result<std::result::Result<Vec<u8>, &'static str>> {
        let Some(keys) = &self.keys else { return Ok(Ok(bytes)) };
        if bytes.len() < 8 + NONCE_LEN + TAG_LEN {
            return Ok(Err("a synced item that is not sealed, or cut short"));
        }
        let Some(index) = keys.ids.iter().position(|k| *k == hex(&bytes[..8])) else {
            return Ok(Err("a synced item sealed under a key this memory was not given"));
        };
        let nonce: [u8; NONCE_LEN] = bytes[8..8 + NONCE_LEN].try_into().expect("length checked");
        let opened =
            keys.cipher.open(index, nonce, self.item_aad(id), bytes[8 + NONCE_LEN..].to_vec()).await?;
        Ok(opened.ok_or("a synced item that fails authentication (altered, or moved to another id)"))
    }

    /// The plain text of a stored value; `None` when it is damaged (and
    /// reported so).
    async fn open(&self, key: &str, stored: String) -> Result<Option<String>> {
        let Some(rest) = stored.strip_prefix(PREFIX) else {
            if self.keys.is_none() || self.migrate {
                self.readable.set(Some(true));
                return Ok(Some(stored));
            }
            self.damage
                .report(key, "not encrypted, in an encrypted namespace (open with `migrate` to encrypt it)");
            return Ok(None);
        };
        let Some(keys) = &self.keys else {
            self.foreign(key, encrypted_without_key).await?;
            return Ok(None);
        };
        let Some((id, body)) = rest.split_once('.') else {
            self.damage.report(key, "a sealed value without its key id");
            return Ok(None);
        };
        let Some(index) = keys.ids.iter().position(|k| k == id) else {
            let id = id.chars().take(16).collect::<String>();
            self.foreign(key, || {
                decryption(format!(
                    "records are sealed under a key that was not given (key id {id}); pass it as the key or in previousKeys"
                ))
            })
            .await?;
            return Ok(None);
        };
        self.readable.set(Some(true));
        match open_body(keys, index, self.aad(key), body).await? {
            Ok(text) => Ok(Some(text)),
            Err(why) => {
                self.damage.report(key, why);
                Ok(None)
            }
        }
    }

    /// Whether this instance can read `stored`: sealed under one of its
    /// keys, or plain where plain values are read. (A known key id is
    /// enough: whether the tag then verifies is each record's own damage.)
    fn is_ours(&self, stored: &str) -> bool {
        match (stored.strip_prefix(PREFIX), &self.keys) {
            (None, keys) => keys.is_none() || self.migrate,
            (Some(_), None) => false,
            (Some(rest), Some(keys)) => {
                rest.split_once('.').is_some_and(|(id, _)| keys.ids.iter().any(|k| k == id))
            }
        }
    }

    /// A value under a key this instance lacks (or sealed, in a plain
    /// namespace): damaged (reported, `Ok`) when the namespace holds values
    /// this instance reads, else the namespace is another key's and the
    /// error is `wrong_key`.
    async fn foreign(&self, key: &str, wrong_key: impl FnOnce() -> Error) -> Result<()> {
        // Under a key this instance lacks: first, whether it is the key the
        // namespace moved to.
        self.check_not_moved().await?;
        if !self.settle_readable().await? {
            return Err(wrong_key());
        }
        self.damage
            .report(key, "sealed under a key this namespace does not use (planted, or its key id damaged)");
        Ok(())
    }

    /// Whether the namespace holds values this instance reads; the first
    /// time nothing has told, one listing of the namespace does.
    async fn settle_readable(&self) -> Result<bool> {
        if let Some(known) = self.readable.get() {
            return Ok(known);
        }
        let found = self.inner.list("").await?.iter().any(|(_, v)| self.is_ours(v));
        // A value seen meanwhile (a concurrent read) wins over "none".
        let known = found || self.readable.get() == Some(true);
        self.readable.set(Some(known));
        Ok(known)
    }

    /// After a write of this instance's own: the namespace holds values it
    /// reads.
    fn wrote(&self) {
        self.readable.set(Some(true));
    }

    /// Settles whether the namespace is readable before `values` are opened
    /// together: many values under an unknown key then cost one listing,
    /// not one each.
    async fn judge(&self, values: impl Iterator<Item = &str>) -> Result<()> {
        let (mut ours, mut foreign) = (false, false);
        for v in values {
            if self.is_ours(v) {
                ours = true;
            } else if v.starts_with(PREFIX) {
                foreign = true;
            }
        }
        if ours {
            self.readable.set(Some(true));
        } else if foreign {
            self.settle_readable().await?;
        }
        Ok(())
    }

    async fn open_all(&self, stored: Vec<(String, String)>) -> Result<Vec<(String, String)>> {
        self.judge(stored.iter().map(|(_, v)| v.as_str())).await?;
        // Every value's decryption starts at once (WebCrypto runs them off
        // the main thread); order is kept.
        let opened = join_all(stored.into_iter().map(|(k, v)| async move {
            let text = self.open(&k, v).await?;
            Ok::<_, Error>(text.map(|t| (k, t)))
        }))
        .await;
        opened.into_iter().filter_map(Result::transpose).collect()
    }

    async fn seal_all(&self, items: Vec<(String, String)>) -> Result<Vec<(String, String)>> {
        let Some(keys) = &self.keys else { return Ok(items) };
        join_all(items.into_iter().map(|(k, v)| async move {
            let sealed = self.seal(keys, &k, &v).await?;
            Ok((k, sealed))
        }))
        .await
        .into_iter()
        .collect()
    }

    /// Values under an older key (or plain, when migrating), with the exact
    /// text read: the work of a reseal pass.
    pub async fn stale(&self) -> Result<Vec<(String, String)>> {
        let Some(keys) = &self.keys else { return Ok(Vec::new()) };
        let current = format!("{PREFIX}{}.", keys.ids[0]);
        let stale: Vec<(String, String)> = self
            .inner
            .list("")
            .await?
            .into_iter()
            .filter(|(k, v)| self.is_ours(v) && !v.starts_with(&current) && !k.starts_with(MOVED_PREFIX))
            .collect();
        self.stale.set(stale.len() as u32);
        Ok(stale)
    }

    /// Reseals `values` (from [`SealedStore::stale`]) under the current key,
    /// each only if it still holds the text read. Returns how many it did.
    pub async fn reseal(&self, values: &[(String, String)]) -> Result<u32> {
        let Some(keys) = &self.keys else { return Ok(0) };
        let done = join_all(values.iter().map(|(k, stored)| async move {
            let Some(plain) = self.open(k, stored.clone()).await? else { return Ok(false) };
            let sealed = self.seal(keys, k, &plain).await?;
            self.inner.put_many_if(k, Some(stored), vec![(k.clone(), sealed)]).await
        }))
        .await;
        let mut n = 0;
        for d in done {
            n += u32::from(d?);
        }
        self.resealed.set(self.resealed.get() + n);
        self.stale.set(self.stale.get().saturating_sub(values.len() as u32));
        Ok(n)
    }
}

/// What an instance on a key rotated away from fails with.
fn moved(to: &str) -> Error {
    let to = to.chars().take(16).collect::<String>();
    decryption(format!(
        "the namespace moved to another key (key id {to}) by a rotation: reopen with that key, this one in previousKeys until the rotation ends"
    ))
}

/// What reading a sealed value without a key fails with.
fn encrypted_without_key() -> Error {
    decryption("this namespace is encrypted: open it with its key (`encryption`)")
}

/// Associated data of synced items, before the namespace and the item's id.
const ITEM_AAD: &[u8] = b"agent-memory sync item\0";

/// Associated data of sealed exports (no namespace: an export moves).
const EXPORT_AAD: &[u8] = b"agent-memory export";

/// `format` of a sealed export.
pub const SEALED_EXPORT_FORMAT: &str = "agent-memory-sealed";
/// `version` of a sealed export's envelope.
const SEALED_EXPORT_VERSION: u32 = 1;

/// An export document sealed as one value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SealedExport {
    pub format: String,
    pub version: u32,
    /// `amenc1.<key id>.<base64>`, like a sealed record.
    pub sealed: String,
}

/// The text of a sealed value's body (after `amenc1.<key id>.`) under key
/// `index`, or why it is damaged.
async fn open_body(
    keys: &Keys,
    index: usize,
    aad: Vec<u8>,
    body: &str,
) -> Result<std::result::Result<String, &'static str>> {
    let bytes = match unbase64(body) {
        Some(b) if b.len() >= NONCE_LEN + TAG_LEN => b,
        _ => return Ok(Err("a sealed value that is cut short or not base64")),
    };
    let nonce: [u8; NONCE_LEN] = bytes[..NONCE_LEN].try_into().expect("length checked");
    Ok(match keys.cipher.open(index, nonce, aad, bytes[NONCE_LEN..].to_vec()).await?.map(String::from_utf8) {
        Some(Ok(text)) => Ok(text),
        Some(Err(_)) => Err("a sealed value that is not UTF-8 text"),
        None => Err("a sealed value that fails authentication (altered, or moved from another record)"),
    })
}

/// `plain` sealed under key `index` with `aad`, as stored text.
async fn seal_with(keys: &Keys, index: usize, aad: Vec<u8>, plain: &str) -> Result<String> {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|e| Error::storage(format!("no random nonce: {e}")))?;
    let sealed = keys.cipher.seal(index, nonce, aad, plain.as_bytes().to_vec()).await?;
    let mut bytes = nonce.to_vec();
    bytes.extend_from_slice(&sealed);
    Ok(format!("{PREFIX}{}.{}", keys.ids[index], base64(&bytes)))
}

impl Store for SealedStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        Box::pin(async move {
            match self.inner.get(key).await? {
                Some(v) => self.open(key, v).await,
                None => Ok(None),
            }
        })
    }

    fn get_many<'a>(&'a self, keys: &'a [String]) -> LocalBoxFuture<'a, Result<Vec<Option<String>>>> {
        Box::pin(async move {
            let stored = self.inner.get_many(keys).await?;
            self.judge(stored.iter().flatten().map(String::as_str)).await?;
            join_all(keys.iter().zip(stored).map(|(k, v)| async move {
                match v {
                    Some(v) => self.open(k, v).await,
                    None => Ok(None),
                }
            }))
            .await
            .into_iter()
            .collect()
        })
    }

    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let Some(keys) = &self.keys else {
                self.inner.put_many(items).await?;
                self.wrote();
                return Ok(());
            };
            let sealed = self.seal_all(items).await?;
            // Only while the namespace has not moved away from this key (one
            // transaction where the backend checks and writes in one).
            if !self.inner.put_many_if(&moved_key(&keys.ids[0]), None, sealed.clone()).await? {
                self.check_not_moved().await?;
                self.inner.put_many(sealed).await?;
            }
            self.wrote();
            Ok(())
        })
    }

    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        self.inner.delete_many(keys)
    }

    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        Box::pin(async move {
            let mut stored = self.inner.list(prefix).await?;
            stored.retain(|(k, _)| !k.starts_with(MOVED_PREFIX));
            if self.keys.is_none() && !stored.iter().any(|(_, v)| v.starts_with(PREFIX)) {
                if !stored.is_empty() {
                    self.readable.set(Some(true));
                }
                return Ok(stored);
            }
            self.open_all(stored).await
        })
    }

    /// A plain namespace's parts go through as they are read; sealed values
    /// are opened together (WebCrypto is asynchronous), so an encrypted one
    /// is listed whole, then handed over as one part.
    fn scan<'a>(&'a self, prefix: &'a str, page: Parts<'a>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(async move {
            if self.keys.is_some() {
                page(self.list(prefix).await?);
                return Ok(());
            }
            // Sealed values are held back until the namespace is known to
            // be plain (a plain value seen), then reported as damaged.
            let mut sealed = Vec::new();
            let mut plain = |part: Vec<(String, String)>| {
                let (foreign, part): (Vec<_>, Vec<_>) =
                    part.into_iter().partition(|(_, v)| v.starts_with(PREFIX));
                sealed.extend(foreign.into_iter().map(|(k, _)| k));
                if !part.is_empty() {
                    self.readable.set(Some(true));
                    page(part);
                }
            };
            self.inner.scan(prefix, &mut plain).await?;
            for key in sealed {
                self.foreign(&key, encrypted_without_key).await?;
            }
            Ok(())
        })
    }

    fn put_many_if<'a>(
        &'a self,
        check: &'a str,
        expected: Option<&'a str>,
        items: Vec<(String, String)>,
    ) -> LocalBoxFuture<'a, Result<bool>> {
        if self.keys.is_none() {
            return Box::pin(async move {
                let done = self.inner.put_many_if(check, expected, items).await?;
                if done {
                    self.wrote();
                }
                Ok(done)
            });
        }
        // Sealing is randomized, so the check compares plain texts: read
        // the sealed one, open it, and make the write conditional on the
        // exact text read.
        Box::pin(async move {
            let stored = self.inner.get(check).await?;
            let plain = match &stored {
                Some(v) => self.open(check, v.clone()).await?,
                None => None,
            };
            if plain.as_deref() != expected {
                return Ok(false);
            }
            self.check_not_moved().await?;
            let sealed = self.seal_all(items).await?;
            let done = self.inner.put_many_if(check, stored.as_deref(), sealed).await?;
            if done {
                self.wrote();
            }
            Ok(done)
        })
    }
}

/// A native AES-GCM `Cipher` for tests.
#[cfg(test)]
pub(crate) mod testing {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    use aes_gcm::{Aes256Gcm, Nonce};

    use super::*;

    pub struct TestCipher(pub Vec<Aes256Gcm>);

    impl TestCipher {
        /// Keys from seeds: key 0 seals.
        pub fn new(seeds: &[u8]) -> Rc<TestCipher> {
            Rc::new(TestCipher(seeds.iter().map(|&s| Aes256Gcm::new(&[s; 32].into())).collect()))
        }
    }

    impl Cipher for TestCipher {
        fn key_count(&self) -> usize {
            self.0.len()
        }

        fn seal(
            &self,
            key: usize,
            nonce: [u8; NONCE_LEN],
            aad: Vec<u8>,
            plaintext: Vec<u8>,
        ) -> LocalBoxFuture<'_, Result<Vec<u8>>> {
            let out = self.0[key].encrypt(Nonce::from_slice(&nonce), Payload { msg: &plaintext, aad: &aad });
            Box::pin(async move { out.map_err(|_| Error::storage("seal failed")) })
        }

        fn open(
            &self,
            key: usize,
            nonce: [u8; NONCE_LEN],
            aad: Vec<u8>,
            sealed: Vec<u8>,
        ) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>>> {
            let out = self.0[key].decrypt(Nonce::from_slice(&nonce), Payload { msg: &sealed, aad: &aad });
            Box::pin(async move { Ok(out.ok()) })
        }
    }
}

#[cfg(test)]
mod tests;
