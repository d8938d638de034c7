//! Waiting on many futures at once through one compiled instance.
//!
//! `futures::future::join_all` is compiled anew for each future type: its
//! `MaybeDone` slots, and past 30 futures a `FuturesOrdered` with its task
//! queue and wakers, about 2-4 KB of wasm per call site. [`join_all`] boxes
//! each future as one that writes its output to a slot, so every caller
//! shares the one instance over one boxed task type; the price, a box
//! per future, is nothing beside the I/O or model call each one waits on.

use std::future::Future;
use std::pin::Pin;

/// A boxed task that fills its slot (the type `ports` names
/// `LocalBoxFuture`, written out: a base helper uses no port).
type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Polls every future of `futures` at once and resolves to their outputs,
/// in order (as `futures::future::join_all`).
pub async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let futures: Vec<F> = futures.into_iter().collect();
    let mut slots: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let tasks: Vec<Task<'_>> = futures
        .into_iter()
        .zip(slots.iter_mut())
        .map(|(f, slot)| Box::pin(Fill { f: Box::pin(f), slot }) as Task<'_>)
        .collect();
    futures::future::join_all(tasks).await;
    // Every slot is filled once its task is done.
    slots.into_iter().flatten().collect()
}

/// A task of [`join_all`]: `f`, its output written to `slot`. A plain
/// `poll`, not an async block's state machine, in each instance (one per
/// future type); `f` is boxed to be polled without a pin projection.
struct Fill<'a, F: Future> {
    f: Pin<Box<F>>,
    slot: &'a mut Option<F::Output>,
}

impl<F: Future> Future for Fill<'_, F> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        let out = std::task::ready!(self.f.as_mut().poll(cx));
        *self.slot = Some(out);
        std::task::Poll::Ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::LocalBoxFuture;

    #[test]
    fn outputs_in_order_whatever_the_completion_order() {
        use std::cell::RefCell;
        let log = RefCell::new(Vec::new());
        let (tx, rx) = futures::channel::oneshot::channel::<u32>();
        let slow = async {
            let n = rx.await.unwrap();
            log.borrow_mut().push("slow");
            n
        };
        let fast = async {
            log.borrow_mut().push("fast");
            tx.send(1).unwrap();
            2
        };
        let boxed: Vec<LocalBoxFuture<'_, u32>> = vec![Box::pin(slow), Box::pin(fast)];
        let out = futures::executor::block_on(join_all(boxed));
        assert_eq!(out, [1, 2]);
        assert_eq!(*log.borrow(), ["fast", "slow"]);
    }

    #[test]
    fn many_futures_and_none() {
        let out = futures::executor::block_on(join_all((0..100u32).map(|n| async move { n * 2 })));
        assert_eq!(out, (0..100).map(|n| n * 2).collect::<Vec<_>>());
        let none: Vec<u32> =
            futures::executor::block_on(join_all(std::iter::empty::<std::future::Ready<u32>>()));
        assert!(none.is_empty());
    }
}
