//! Import and export of the namespace's long-term memory: the plain
//! document, or sealed under the current key. Which of the two a document
//! is, is decided here once ([`ImportDocument::parse`]), for every binding.

use super::Memory;
use crate::error::{Error, Result};
use crate::longterm::records::{ExportDocument, ImportReport};
use crate::redact::Place;
use crate::store::sealed::{SealedExport, SEALED_EXPORT_FORMAT};

/// A document given to import: plain, or sealed.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportDocument {
    Plain(ExportDocument),
    Sealed(SealedExport),
}

impl ImportDocument {
    /// Reads a document's JSON text: sealed when its `format` says so.
    pub fn parse(json: &str) -> Result<ImportDocument> {
        let sealed = serde_json::from_str::<serde_json::Value>(json)
            .is_ok_and(|v| v.get("format").and_then(|f| f.as_str()) == Some(SEALED_EXPORT_FORMAT));
        if sealed {
            return serde_json::from_str(json)
                .map(ImportDocument::Sealed)
                .map_err(|e| Error::invalid(format!("invalid sealed export: {e}")));
        }
        serde_json::from_str(json)
            .map(ImportDocument::Plain)
            .map_err(|e| Error::invalid(format!("invalid export document: {e}")))
    }
}

impl Memory {
    pub async fn import(&self, mut doc: ExportDocument) -> Result<ImportReport> {
        self.check_open()?;
        doc.entries = self.prepare_entries(doc.entries, Place::Import).await;
        self.write(async |r| r.import(doc).await).await
    }

    pub async fn export(&self) -> Result<ExportDocument> {
        self.check_open()?;
        self.read(|r| r.export()).await
    }

    /// The export document sealed under the current key, for storing or
    /// moving it encrypted (any memory with the key imports it).
    pub async fn export_sealed(&self) -> Result<SealedExport> {
        let json = serde_json::to_string(&self.export().await?)
            .map_err(|e| Error::invalid(format!("export: {e}")))?;
        self.inner.sealed.seal_export(&json).await
    }

    /// Imports an export document's JSON text, sealed or not: what a
    /// binding hands over.
    pub async fn import_json(&self, json: &str) -> Result<ImportReport> {
        match ImportDocument::parse(json)? {
            ImportDocument::Plain(doc) => self.import(doc).await,
            ImportDocument::Sealed(export) => self.import_sealed(&export).await,
        }
    }

    /// Imports a sealed export: `DECRYPTION` without its key or when altered.
    pub async fn import_sealed(&self, export: &SealedExport) -> Result<ImportReport> {
        self.check_open()?;
        let json = self.inner.sealed.open_export(export).await?;
        let doc = serde_json::from_str(&json)
            .map_err(|e| Error::invalid(format!("invalid export document: {e}")))?;
        self.import(doc).await
    }
}
