//! The core's ports on the world's imports. A WASI 0.2 call is synchronous:
//! each exported call runs its future, and the background work it started,
//! on one local executor before it returns; the host's store, locks, model
//! and embedder answer at once, so their futures are ready when made.

use std::cell::RefCell;
use std::future::{ready, Future};

use engine::budget::Usage;
use engine::error::{Error, ErrorCode, Result};
use engine::llm::openai;
use engine::ports::{
    Clock, Embedder, Llm, LlmFailure, LlmRequest, LlmResponse, LocalBoxFuture, Lock, LockGuard, Spawn,
};
use engine::store::namespace::Namespace;
use engine::store::Store;
use futures::executor::{LocalPool, LocalSpawner};
use futures::task::LocalSpawnExt;

use crate::agent_memory::core::{embedder, llm, locks, store};

struct Executor {
    pool: RefCell<LocalPool>,
    spawner: LocalSpawner,
}

thread_local! {
    static EXECUTOR: Executor = {
        let pool = LocalPool::new();
        let spawner = pool.spawner();
        Executor { pool: RefCell::new(pool), spawner }
    };
}

/// Runs an exported call's future, then the background work it started
/// (compression, vectors) until nothing more can run.
pub fn run<T>(future: impl Future<Output = T>) -> T {
    EXECUTOR.with(|e| {
        let mut pool = e.pool.borrow_mut();
        let out = pool.run_until(future);
        pool.run_until_stalled();
        out
    })
}

/// Background work on the executor `run` drives.
pub struct PoolSpawn;

impl Spawn for PoolSpawn {
    fn spawn(&self, task: LocalBoxFuture<'static, ()>) {
        // The executor outlives every memory, so the spawn cannot fail.
        let _ = EXECUTOR.with(|e| e.spawner.spawn_local(task));
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// `wasi:clocks` time. A sleep yields once before it blocks: whatever it
/// races (a host call, ready when made) wins first, so a timeout costs
/// nothing unless it fires, and a backoff blocks for its time.
pub struct HostClock;

impl Clock for HostClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }

    fn sleep(&self, ms: u32) -> LocalBoxFuture<'_, ()> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(ms as u64);
        let mut yielded = false;
        Box::pin(std::future::poll_fn(move |cx| {
            if !yielded {
                yielded = true;
                cx.waker().wake_by_ref();
                return std::task::Poll::Pending;
            }
            std::thread::sleep(deadline.saturating_duration_since(std::time::Instant::now()));
            std::task::Poll::Ready(())
        }))
    }
}

/// The host's named locks (held across instances). Its `acquire` may block
/// this thread, so it is asked through the core's queue
/// (`LingeringLocks::queued`, in lib.rs): one future of this instance at a
/// time, the others waiting on the queue.
pub struct HostLocks;

/// Releases the host's lock when the core drops its guard.
struct HostRelease(String);

impl Drop for HostRelease {
    fn drop(&mut self) {
        locks::release(&self.0);
    }
}

impl Lock for HostLocks {
    fn acquire<'a>(&'a self, name: &'a str) -> LocalBoxFuture<'a, Result<LockGuard>> {
        let held = locks::acquire(name)
            .map(|()| LockGuard::new(HostRelease(name.to_string())))
            .map_err(|m| Error::storage(format!("the host's lock {name} failed: {m}")));
        Box::pin(ready(held))
    }
}

/// The host's key-value store, with this namespace's keys under `<namespace>/`.
pub struct HostStore {
    namespace: Namespace,
}

impl HostStore {
    pub fn new(namespace: &str) -> HostStore {
        HostStore { namespace: Namespace::new(namespace) }
    }

    fn key(&self, key: &str) -> String {
        self.namespace.key(key)
    }
}

fn failed(op: &str, message: String) -> Error {
    Error::storage(format!("host store {op} failed: {message}"))
}

impl Store for HostStore {
    fn get<'a>(&'a self, key: &'a str) -> LocalBoxFuture<'a, Result<Option<String>>> {
        Box::pin(ready(store::get(&self.key(key)).map_err(|m| failed("get", m))))
    }

    fn put_many(&self, items: Vec<(String, String)>) -> LocalBoxFuture<'_, Result<()>> {
        let items: Vec<(String, String)> = items.into_iter().map(|(k, v)| (self.key(&k), v)).collect();
        Box::pin(ready(store::put_many(&items).map_err(|m| failed("put-many", m))))
    }

    fn delete_many(&self, keys: Vec<String>) -> LocalBoxFuture<'_, Result<()>> {
        let keys: Vec<String> = keys.iter().map(|k| self.key(k)).collect();
        Box::pin(ready(store::delete_many(&keys).map_err(|m| failed("delete-many", m))))
    }

    fn list<'a>(&'a self, prefix: &'a str) -> LocalBoxFuture<'a, Result<Vec<(String, String)>>> {
        let listed = store::list_prefix(&self.key(prefix))
            .map_err(|m| failed("list", m))
            .map(|pairs| self.namespace.listed(prefix, pairs));
        Box::pin(ready(listed))
    }
}

/// The host's model.
pub struct HostLlm;

impl Llm for HostLlm {
    fn complete(
        &self,
        request: LlmRequest,
    ) -> LocalBoxFuture<'_, std::result::Result<LlmResponse, LlmFailure>> {
        let request = llm::Request {
            messages: request
                .messages
                .into_iter()
                .map(|m| llm::Message { role: m.role, content: m.content })
                .collect(),
            json: request.json,
            max_tokens: request.max_tokens,
        };
        let answer = llm::complete(&request)
            .map(|r| LlmResponse {
                content: r.content,
                usage: r.usage.map(|u| Usage {
                    calls: 1,
                    input_tokens: u.prompt_tokens as u64,
                    output_tokens: u.completion_tokens as u64,
                }),
            })
            .map_err(|f| openai::thrown(f.status, f.retry_after_ms, &f.message));
        Box::pin(ready(answer))
    }
}

/// The host's embedding model, named by the open options.
pub struct HostEmbedder {
    pub model: String,
}

impl Embedder for HostEmbedder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, texts: Vec<String>) -> LocalBoxFuture<'_, Result<Vec<Vec<f32>>>> {
        let vectors = embedder::embed(&texts)
            .map_err(|m| Error::new(ErrorCode::Embedder, format!("the host's embedder failed: {m}")));
        Box::pin(ready(vectors))
    }
}
