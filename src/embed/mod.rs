//! The embedder's part: every call to the host's embedding model goes
//! through [`Embedding`], which batches texts, caps the calls in flight,
//! abandons a call past its timeout and checks what came back (one finite,
//! non-zero vector per text, all of one dimension). A failure is an error
//! value the caller degrades on (lexical search, embedding later), never a
//! lost write. [`vectors`] is how vectors persist.

pub mod vectors;

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::ports::clock::call_within;
use crate::ports::{Clock, Embedder};
use crate::semaphore::Semaphore;

/// How embedder calls are governed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EmbedOptions {
    /// Texts per call. Default 64 (what hosted embedding APIs take easily).
    pub batch_size: u32,
    /// Calls in flight at once. Default 2.
    pub concurrency: u32,
    /// One call may take this long before it is abandoned. Default 30 s.
    pub timeout_ms: u32,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        EmbedOptions { batch_size: 64, concurrency: 2, timeout_ms: 30_000 }
    }
}

impl EmbedOptions {
    pub fn validate(&self) -> Result<()> {
        if self.batch_size == 0 || self.concurrency == 0 || self.timeout_ms == 0 {
            return Err(Error::invalid("embed batchSize, concurrency and timeoutMs must be positive"));
        }
        Ok(())
    }
}

/// The name an embedder's vectors are stored under (a new name re-embeds
/// everything): the one the host gives (`embedModel`), else its endpoint's
/// `model`. A host function names no model of its own, so it needs one given.
pub fn model_name(given: Option<String>, endpoint_model: Option<String>) -> Result<String> {
    given
        .or(endpoint_model)
        .ok_or_else(|| Error::invalid("embedModel must name the model of the embed function"))
}

/// A model name or embedder options with no embedder mean nothing: refused,
/// not ignored.
pub fn check_unused(model_given: bool, options_given: bool) -> Result<()> {
    if model_given || options_given {
        return Err(Error::invalid("embedModel and embedOptions need `embed`"));
    }
    Ok(())
}

/// Embedder calls so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EmbedStats {
    pub model: String,
    pub calls: u64,
    pub texts: u64,
    pub failures: u64,
    pub timeouts: u64,
    /// Searches that went lexical because the query could not be embedded.
    pub lexical_fallbacks: u64,
    pub last_error: Option<String>,
}

pub struct Embedding {
    embedder: Rc<dyn Embedder>,
    clock: Rc<dyn Clock>,
    options: EmbedOptions,
    permits: Semaphore,
    stats: RefCell<EmbedStats>,
}

impl Embedding {
    pub fn new(embedder: Rc<dyn Embedder>, clock: Rc<dyn Clock>, options: EmbedOptions) -> Result<Embedding> {
        options.validate()?;
        if embedder.model().is_empty() {
            return Err(Error::invalid("the embedder needs a model name (embedModel)"));
        }
        let stats = EmbedStats { model: embedder.model().to_string(), ..Default::default() };
        let permits = Semaphore::new(options.concurrency);
        Ok(Embedding { embedder, clock, options, permits, stats: RefCell::new(stats) })
    }

    /// The model name every stored vector is tagged with.
    pub fn model(&self) -> &str {
        self.embedder.model()
    }

    pub fn stats(&self) -> EmbedStats {
        self.stats.borrow().clone()
    }

    pub fn note_lexical_fallback(&self) {
        self.stats.borrow_mut().lexical_fallbacks += 1;
    }

    /// One vector per text, in order, in batches of `batch_size`.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.options.batch_size as usize) {
            let vectors = self.call(batch).await.inspect_err(|e| {
                let mut s = self.stats.borrow_mut();
                s.failures += 1;
                s.last_error = Some(e.to_string());
            })?;
            out.extend(vectors);
        }
        Ok(out)
    }

    async fn call(&self, batch: &[String]) -> Result<Vec<Vec<f32>>> {
        let call = || self.embedder.embed(batch.to_vec());
        let Some(vectors) =
            call_within(&self.permits, self.clock.as_ref(), self.options.timeout_ms, call).await
        else {
            self.stats.borrow_mut().timeouts += 1;
            return Err(Error::new(
                ErrorCode::Timeout,
                format!("the embedder did not answer within {} ms", self.options.timeout_ms),
            ));
        };
        let vectors = vectors?;
        if vectors.len() != batch.len() {
            return Err(Error::new(
                ErrorCode::Embedder,
                format!("the embedder returned {} vectors for {} texts", vectors.len(), batch.len()),
            ));
        }
        let dim = vectors.first().map_or(0, Vec::len);
        for v in &vectors {
            if v.len() != dim || dim == 0 {
                return Err(Error::new(
                    ErrorCode::Embedder,
                    "the embedder's vectors must all have one non-zero length",
                ));
            }
            if v.iter().any(|x| !x.is_finite()) || v.iter().all(|&x| x == 0.0) {
                return Err(Error::new(
                    ErrorCode::Embedder,
                    "the embedder returned a vector that is not finite and non-zero",
                ));
            }
        }
        let mut s = self.stats.borrow_mut();
        s.calls += 1;
        s.texts += batch.len() as u64;
        Ok(vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::clock::ManualClock;
    use crate::ports::LocalBoxFuture;
    use futures::executor::block_on;
    use std::cell::Cell;

    /// Vectors from a text's length; records the batch sizes it saw.
    struct Lengths {
        batches: RefCell<Vec<usize>>,
        answer: Cell<&'static str>,
    }

    impl Embedder for Lengths {
        fn model(&self) -> &str {
            "len"
        }
        fn embed(&self, texts: Vec<String>) -> LocalBoxFuture<'_, Result<Vec<Vec<f32>>>> {
            self.batches.borrow_mut().push(texts.len());
            let out = match self.answer.get() {
                "ok" => Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect()),
                "short" => Ok(vec![vec![1.0, 1.0]]),
                "nan" => Ok(texts.iter().map(|_| vec![f32::NAN, 1.0]).collect()),
                _ => Err(Error::storage("embedder down")),
            };
            Box::pin(async move { out })
        }
    }

    #[test]
    fn batches_keep_order_and_bad_answers_are_errors() {
        let embedder = Rc::new(Lengths { batches: RefCell::default(), answer: Cell::new("ok") });
        let clock = Rc::new(ManualClock::new(0));
        let options = EmbedOptions { batch_size: 2, ..Default::default() };
        let e = Embedding::new(embedder.clone(), clock, options).unwrap();
        let texts: Vec<String> = ["a", "bb", "ccc", "dddd", "eeeee"].map(String::from).to_vec();
        let v = block_on(e.embed(&texts)).unwrap();
        assert_eq!(v.iter().map(|v| v[0] as usize).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
        assert_eq!(*embedder.batches.borrow(), [2, 2, 1]);
        for bad in ["short", "nan", "down"] {
            embedder.answer.set(bad);
            assert!(block_on(e.embed(&texts)).is_err(), "{bad}");
        }
        let s = e.stats();
        assert_eq!((s.calls, s.texts, s.failures), (3, 5, 3));
        assert!(s.last_error.unwrap().contains("embedder down"));
    }

    #[test]
    fn the_stored_model_is_the_one_given_else_the_endpoints_and_settings_need_an_embedder() {
        assert_eq!(model_name(Some("a".into()), Some("b".into())).unwrap(), "a");
        assert_eq!(model_name(None, Some("b".into())).unwrap(), "b");
        assert_eq!(model_name(None, None).unwrap_err().code, ErrorCode::InvalidInput);
        assert!(check_unused(false, false).is_ok());
        assert!(check_unused(true, false).is_err() && check_unused(false, true).is_err());
    }
}
