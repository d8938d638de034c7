//! The `Cipher` port: AES-256-GCM (or 128) under the host's keys, for
//! encryption at rest ([`crate::store::sealed`]). The host does the
//! cryptography (WebCrypto in every JS runtime), so keys can stay
//! non-extractable and no cipher code enters the wasm; the core chooses
//! nonces, binds associated data and decides what a failure means.

use crate::error::Result;
use crate::ports::LocalBoxFuture;

/// AES-GCM's nonce: 96 bits.
pub const NONCE_LEN: usize = 12;

/// AES-GCM's tag: 128 bits, at the end of the sealed bytes.
pub const TAG_LEN: usize = 16;

pub trait Cipher {
    /// How many keys: key 0 seals, every key opens.
    fn key_count(&self) -> usize;

    /// `plaintext` sealed under key `key`: ciphertext followed by the tag.
    fn seal(
        &self,
        key: usize,
        nonce: [u8; NONCE_LEN],
        aad: Vec<u8>,
        plaintext: Vec<u8>,
    ) -> LocalBoxFuture<'_, Result<Vec<u8>>>;

    /// The plaintext, or `None` when the tag does not verify (another key,
    /// other associated data, altered bytes). `Err` is the host failing.
    fn open(
        &self,
        key: usize,
        nonce: [u8; NONCE_LEN],
        aad: Vec<u8>,
        sealed: Vec<u8>,
    ) -> LocalBoxFuture<'_, Result<Option<Vec<u8>>>>;
}
