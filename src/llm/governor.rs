//! Every model call goes through the governor: a timeout, retries with
//! exponential backoff on 429 / 5xx / network errors, a cap on concurrent
//! calls, and a per-session token cap (a cost governor). Background work
//! that hammers a rate-limited provider, or a compression loop that burns
//! tokens without end, is what users of memory layers complain about most.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::ports::clock::{call_within, Clock};
use crate::ports::{Llm, LlmRequest, LlmResponse};
use crate::semaphore::Semaphore;
use crate::tokens::Tokenizer;

/// How model calls are governed. Defaults suit a hosted chat model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(rename = "LlmGovernorOptions"))]
pub struct LlmOptions {
    /// One attempt may take this long before it is abandoned. Default 60 s.
    pub timeout_ms: u32,
    /// Attempts after the first on a retryable failure. Default 3.
    pub max_retries: u32,
    /// The first backoff; each retry doubles it, up to 30 s. Default 500 ms.
    pub backoff_ms: u32,
    /// Calls in flight at once. Default 2 (map-reduce chunks run this wide).
    pub concurrency: u32,
    /// Tokens (prompt + completion) this session may spend; no cap by default.
    pub max_session_tokens: Option<u64>,
    /// `max_tokens` of each request. Default 1024.
    pub max_output_tokens: u32,
}

impl Default for LlmOptions {
    fn default() -> Self {
        LlmOptions {
            timeout_ms: 60_000,
            max_retries: 3,
            backoff_ms: 500,
            concurrency: 2,
            max_session_tokens: None,
            max_output_tokens: 1_024,
        }
    }
}

impl LlmOptions {
    pub fn validate(&self) -> Result<()> {
        if self.timeout_ms == 0 || self.concurrency == 0 || self.max_output_tokens == 0 {
            return Err(Error::invalid("timeoutMs, concurrency and maxOutputTokens must be positive"));
        }
        Ok(())
    }
}

/// What a call was for; stats are kept per purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Purpose {
    /// Map step of compression: one chunk of old messages.
    CompressChunk,
    /// Reduce step of compression: chunk summaries into one.
    CompressReduce,
    /// Session end: which new messages hold memories.
    Judge,
    /// Session end: new candidates against similar stored memories.
    Resolve,
    /// Session end: the session summary.
    Summary,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::CompressChunk => "compressChunk",
            Purpose::CompressReduce => "compressReduce",
            Purpose::Judge => "judge",
            Purpose::Resolve => "resolve",
            Purpose::Summary => "summary",
        }
    }
}

/// Calls and tokens of one purpose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PurposeStats {
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Everything the governor saw, for `stats()` and the benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LlmStats {
    /// Successful calls.
    pub calls: u64,
    /// Attempts that failed (each retry's failure counts).
    pub failures: u64,
    pub retries: u64,
    pub timeouts: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Calls whose provider reported no usage, counted with the tokenizer.
    pub counted_locally: u64,
    pub by_purpose: BTreeMap<&'static str, PurposeStats>,
    /// The last failure's message, for the host's logs.
    pub last_error: Option<String>,
}

/// The governor of one session's model calls.
pub struct Governor {
    llm: Rc<dyn Llm>,
    clock: Rc<dyn Clock>,
    options: LlmOptions,
    permits: Semaphore,
    stats: RefCell<LlmStats>,
}

impl Governor {
    pub fn new(llm: Rc<dyn Llm>, clock: Rc<dyn Clock>, options: LlmOptions) -> Result<Governor> {
        options.validate()?;
        let permits = Semaphore::new(options.concurrency);
        Ok(Governor { llm, clock, options, permits, stats: RefCell::default() })
    }

    pub fn stats(&self) -> LlmStats {
        self.stats.borrow().clone()
    }

    /// Calls and tokens since `before` (an earlier [`Governor::stats`]), for
    /// the session's usage record.
    pub fn usage_since(&self, before: &LlmStats) -> crate::budget::Usage {
        let s = self.stats.borrow();
        crate::budget::Usage {
            calls: s.calls - before.calls,
            input_tokens: s.input_tokens - before.input_tokens,
            output_tokens: s.output_tokens - before.output_tokens,
        }
    }

    /// Records a failure met outside a call (a store write in background
    /// work), so `stats().lastError` shows it.
    pub fn note_error(&self, error: &Error) {
        self.stats.borrow_mut().last_error = Some(error.to_string());
    }

    /// Tokens spent so far.
    pub fn spent_tokens(&self) -> u64 {
        let s = self.stats.borrow();
        s.input_tokens + s.output_tokens
    }

    /// One governed call. Usage the provider did not report is counted with
    /// `tokenizer`, so the token cap holds for every hook.
    pub async fn call(
        &self,
        purpose: Purpose,
        mut request: LlmRequest,
        tokenizer: &dyn Tokenizer,
    ) -> Result<LlmResponse> {
        request.max_tokens.get_or_insert(self.options.max_output_tokens);
        let mut attempt = 0u32;
        loop {
            if let Some(cap) = self.options.max_session_tokens {
                if self.spent_tokens() >= cap {
                    return Err(Error::new(
                        ErrorCode::LimitExceeded,
                        format!("the session's LLM token cap ({cap}) is spent"),
                    ));
                }
            }
            let call = || self.llm.complete(request.clone());
            // `None` in the error: the call timed out.
            let outcome =
                match call_within(&self.permits, self.clock.as_ref(), self.options.timeout_ms, call).await {
                    Some(result) => result.map_err(Some),
                    None => Err(None),
                };
            let failure = match outcome {
                Ok(response) => {
                    self.record_success(purpose, &request, &response, tokenizer);
                    return Ok(response);
                }
                Err(failure) => failure,
            };
            let (error, retryable, retry_after) = match failure {
                Some(f) => (f.error, f.retryable, f.retry_after_ms),
                None => {
                    self.stats.borrow_mut().timeouts += 1;
                    let e = Error::new(
                        ErrorCode::Timeout,
                        format!("the LLM did not answer within {} ms", self.options.timeout_ms),
                    );
                    (e, true, None)
                }
            };
            {
                let mut s = self.stats.borrow_mut();
                s.failures += 1;
                s.last_error = Some(error.to_string());
            }
            if !retryable || attempt >= self.options.max_retries {
                return Err(error);
            }
            attempt += 1;
            self.stats.borrow_mut().retries += 1;
            let backoff = self.options.backoff_ms.saturating_mul(1 << (attempt - 1).min(16)).min(30_000);
            self.clock.sleep(retry_after.unwrap_or(0).max(backoff)).await;
        }
    }

    fn record_success(
        &self,
        purpose: Purpose,
        request: &LlmRequest,
        response: &LlmResponse,
        tokenizer: &dyn Tokenizer,
    ) {
        let (input, output, local) = match response.usage {
            Some(u) => (u.input_tokens, u.output_tokens, false),
            None => {
                let prompt: u64 = request
                    .messages
                    .iter()
                    .map(|m| {
                        tokenizer.count(&m.content) as u64 + crate::working::message::MESSAGE_OVERHEAD as u64
                    })
                    .sum::<u64>()
                    + crate::working::message::REPLY_PRIMING as u64;
                (prompt, tokenizer.count(&response.content) as u64, true)
            }
        };
        let mut s = self.stats.borrow_mut();
        s.calls += 1;
        s.input_tokens += input;
        s.output_tokens += output;
        s.counted_locally += local as u64;
        let p = s.by_purpose.entry(purpose.as_str()).or_default();
        p.calls += 1;
        p.input_tokens += input;
        p.output_tokens += output;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::testing::{Reply, ScriptedLlm};
    use crate::ports::clock::ManualClock;
    use crate::ports::LlmMessage;
    use crate::tokens::Estimate;
    use futures::executor::block_on;

    fn request() -> LlmRequest {
        LlmRequest {
            messages: vec![LlmMessage { role: "user".into(), content: "hello there".into() }],
            json: false,
            max_tokens: None,
        }
    }

    fn governor(llm: Rc<ScriptedLlm>, clock: Rc<ManualClock>, options: LlmOptions) -> Governor {
        Governor::new(llm, clock, options).unwrap()
    }

    #[test]
    fn retries_rate_limits_with_doubling_backoff() {
        let llm = Rc::new(ScriptedLlm::new([Reply::RateLimited, Reply::ServerError, Reply::text("ok")]));
        let clock = Rc::new(ManualClock::new(0));
        let g = governor(llm.clone(), clock.clone(), LlmOptions::default());
        let out = block_on(g.call(Purpose::Judge, request(), &Estimate)).unwrap();
        assert_eq!(out.content, "ok");
        assert_eq!(clock.now_ms(), 500 + 1_000, "backoff 500 ms then 1000 ms");
        let s = g.stats();
        assert_eq!((s.calls, s.failures, s.retries), (1, 2, 2));
        assert_eq!(llm.requests()[0].max_tokens, Some(1_024));
    }

    #[test]
    fn a_fatal_failure_is_not_retried() {
        let llm = Rc::new(ScriptedLlm::new([Reply::BadRequest, Reply::text("never asked")]));
        let g = governor(llm.clone(), Rc::new(ManualClock::new(0)), LlmOptions::default());
        let e = block_on(g.call(Purpose::Judge, request(), &Estimate)).unwrap_err();
        assert_eq!(e.code, ErrorCode::Llm);
        assert_eq!(llm.requests().len(), 1);
    }

    #[test]
    fn a_hanging_call_times_out_and_gives_up_after_the_retries() {
        let llm = Rc::new(ScriptedLlm::new([Reply::Hang, Reply::Hang]));
        let clock = Rc::new(ManualClock::new(0));
        let options = LlmOptions { timeout_ms: 1_000, max_retries: 1, ..LlmOptions::default() };
        let g = governor(llm, clock.clone(), options);
        let e = block_on(g.call(Purpose::Summary, request(), &Estimate)).unwrap_err();
        assert_eq!(e.code, ErrorCode::Timeout);
        assert_eq!(clock.now_ms(), 1_000 + 500 + 1_000);
        assert_eq!(g.stats().timeouts, 2);
    }

    #[test]
    fn the_token_cap_stops_calls_once_spent() {
        let llm = Rc::new(ScriptedLlm::new([Reply::with_usage("a", 90, 20), Reply::text("b")]));
        let options = LlmOptions { max_session_tokens: Some(100), ..LlmOptions::default() };
        let g = governor(llm.clone(), Rc::new(ManualClock::new(0)), options);
        block_on(g.call(Purpose::Judge, request(), &Estimate)).unwrap();
        let e = block_on(g.call(Purpose::Judge, request(), &Estimate)).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded);
        assert_eq!(llm.requests().len(), 1);
        assert_eq!(g.spent_tokens(), 110);
    }

    #[test]
    fn usage_missing_from_the_provider_is_counted_locally() {
        let llm = Rc::new(ScriptedLlm::new([Reply::text("four words right here")]));
        let g = governor(llm, Rc::new(ManualClock::new(0)), LlmOptions::default());
        block_on(g.call(Purpose::Resolve, request(), &Estimate)).unwrap();
        let s = g.stats();
        assert_eq!(s.counted_locally, 1);
        assert!(s.input_tokens > 4 && s.output_tokens > 0);
        assert_eq!(s.by_purpose["resolve"].calls, 1);
    }

    #[test]
    fn concurrency_is_capped() {
        let llm = Rc::new(ScriptedLlm::new((0..6).map(|i| Reply::text(&format!("r{i}")))));
        llm.yield_before_answer(true);
        let options = LlmOptions { concurrency: 2, ..LlmOptions::default() };
        let g = governor(llm.clone(), Rc::new(ManualClock::new(0)), options);
        let calls = (0..6).map(|_| g.call(Purpose::CompressChunk, request(), &Estimate));
        let out = block_on(futures::future::join_all(calls));
        assert!(out.iter().all(|r| r.is_ok()));
        assert_eq!(llm.max_in_flight(), 2);
    }

    #[test]
    fn an_abandoned_waiter_does_not_swallow_the_next_permit() {
        use futures::task::LocalSpawnExt;
        let mut pool = futures::executor::LocalPool::new();
        let llm = Rc::new(ScriptedLlm::responding(|_| Reply::text("ok")));
        let clock = Rc::new(crate::ports::clock::SteppedClock::new(0));
        let options = LlmOptions { concurrency: 1, ..LlmOptions::default() };
        let g = Rc::new(Governor::new(llm.clone(), clock, options).unwrap());
        let call = |g: Rc<Governor>| async move {
            let request = LlmRequest {
                messages: vec![LlmMessage { role: "user".into(), content: "hi".into() }],
                json: false,
                max_tokens: None,
            };
            g.call(Purpose::Summary, request, &Estimate).await.map(|r| r.content)
        };
        let release = llm.hold();
        let first = pool.spawner().spawn_local_with_handle(call(g.clone())).unwrap();
        let abandoned = pool.spawner().spawn_local_with_handle(call(g.clone())).unwrap();
        let third = pool.spawner().spawn_local_with_handle(call(g.clone())).unwrap();
        pool.run_until_stalled();
        assert_eq!(llm.requests().len(), 1, "one permit: the others wait");
        drop(abandoned);
        release.send(()).unwrap();
        pool.run_until_stalled();
        use futures::FutureExt;
        assert_eq!(first.now_or_never().unwrap().unwrap(), "ok");
        let third = third.now_or_never().expect("the permit reached the third call");
        assert_eq!(third.unwrap(), "ok");
    }
}
