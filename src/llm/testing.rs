//! A scripted model for the pipeline's unit tests: it answers from a queue
//! of replies (or a responder once the queue is empty) and records every
//! request it was sent.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::Poll;

use crate::budget::Usage;
use crate::error::{Error, ErrorCode};
use crate::ports::{LlmFailure, LlmRequest, LlmResponse, LocalBoxFuture};

pub enum Reply {
    Answer(LlmResponse),
    RateLimited,
    ServerError,
    BadRequest,
    /// Never answers (the governor's timeout must end it).
    Hang,
}

impl Reply {
    pub fn text(s: &str) -> Reply {
        Reply::Answer(LlmResponse { content: s.to_string(), usage: None })
    }

    pub fn with_usage(s: &str, input: u64, output: u64) -> Reply {
        let usage = Usage { calls: 1, input_tokens: input, output_tokens: output };
        Reply::Answer(LlmResponse { content: s.to_string(), usage: Some(usage) })
    }
}

type Responder = Box<dyn Fn(&LlmRequest) -> Reply>;

#[derive(Default)]
pub struct ScriptedLlm {
    replies: RefCell<VecDeque<Reply>>,
    responder: RefCell<Option<Responder>>,
    requests: RefCell<Vec<LlmRequest>>,
    yield_first: Cell<bool>,
    in_flight: Cell<u32>,
    max_in_flight: Cell<u32>,
    gate: RefCell<Option<futures::future::Shared<futures::channel::oneshot::Receiver<()>>>>,
}

impl ScriptedLlm {
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedLlm { replies: RefCell::new(replies.into_iter().collect()), ..ScriptedLlm::default() }
    }

    /// Answers computed from the request, once the scripted replies ran out.
    pub fn responding(f: impl Fn(&LlmRequest) -> Reply + 'static) -> Self {
        let llm = ScriptedLlm::default();
        *llm.responder.borrow_mut() = Some(Box::new(f));
        llm
    }

    pub fn push(&self, reply: Reply) {
        self.replies.borrow_mut().push_back(reply);
    }

    /// Makes each call return `Pending` once, so calls overlap.
    pub fn yield_before_answer(&self, on: bool) {
        self.yield_first.set(on);
    }

    /// Holds every answer until the returned sender fires (or is dropped):
    /// a slow model, for tests of what waits on it and what must not.
    pub fn hold(&self) -> futures::channel::oneshot::Sender<()> {
        let (tx, rx) = futures::channel::oneshot::channel();
        *self.gate.borrow_mut() = Some(futures::FutureExt::shared(rx));
        tx
    }

    pub fn requests(&self) -> Vec<LlmRequest> {
        self.requests.borrow().clone()
    }

    pub fn max_in_flight(&self) -> u32 {
        self.max_in_flight.get()
    }
}

impl crate::ports::Llm for ScriptedLlm {
    fn complete(&self, request: LlmRequest) -> LocalBoxFuture<'_, Result<LlmResponse, LlmFailure>> {
        let reply =
            self.replies.borrow_mut().pop_front().unwrap_or_else(|| match &*self.responder.borrow() {
                Some(f) => f(&request),
                None => Reply::BadRequest,
            });
        self.requests.borrow_mut().push(request);
        self.in_flight.set(self.in_flight.get() + 1);
        self.max_in_flight.set(self.max_in_flight.get().max(self.in_flight.get()));
        let mut yielded = !self.yield_first.get();
        let gate = self.gate.borrow().clone();
        Box::pin(async move {
            if let Some(gate) = gate {
                let _ = gate.await;
            }
            poll_fn(|cx| {
                if yielded {
                    Poll::Ready(())
                } else {
                    yielded = true;
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
            })
            .await;
            let out = match reply {
                Reply::Answer(r) => Ok(r),
                Reply::RateLimited => Err(LlmFailure::retryable(Error::new(ErrorCode::Llm, "HTTP 429"))),
                Reply::ServerError => Err(LlmFailure::retryable(Error::new(ErrorCode::Llm, "HTTP 503"))),
                Reply::BadRequest => Err(LlmFailure::fatal(Error::new(ErrorCode::Llm, "HTTP 400"))),
                Reply::Hang => std::future::pending().await,
            };
            self.in_flight.set(self.in_flight.get() - 1);
            out
        })
    }
}
