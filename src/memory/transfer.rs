//! Import and export of the namespace's long-term memory: the plain
//! document, or sealed under the current key.

use super::Memory;
use crate::error::{Error, Result};
use crate::longterm::records::{ExportDocument, ImportReport};
use crate::redact::Place;
use crate::store::sealed::SealedExport;

impl Memory {
    pub async fn import(&self, mut doc: ExportDocument) -> Result<ImportReport> {
        doc.entries = self.prepare_entries(doc.entries, Place::Import).await;
        self.write(async |r| r.import(doc).await).await
    }

    pub async fn export(&self) -> Result<ExportDocument> {
        self.read(|r| r.export()).await
    }

    /// The export document sealed under the current key, for storing or
    /// moving it encrypted (any memory with the key imports it).
    pub async fn export_sealed(&self) -> Result<SealedExport> {
        let json = serde_json::to_string(&self.export().await?)
            .map_err(|e| Error::invalid(format!("export: {e}")))?;
        self.inner.sealed.seal_export(&json).await
    }

    /// Imports a sealed export: `DECRYPTION` without its key or when altered.
    pub async fn import_sealed(&self, export: &SealedExport) -> Result<ImportReport> {
        let json = self.inner.sealed.open_export(export).await?;
        let doc = serde_json::from_str(&json)
            .map_err(|e| Error::invalid(format!("invalid export document: {e}")))?;
        self.import(doc).await
    }
}
