//! Running independent jobs on scoped threads: the chunk encoding of an export
//! ([`crate::compile::write_file`]) and, through [`Threads`], the jobs `pmfedit-core` hands to
//! its caller (it starts no threads itself: a project's chunk files are decoded by
//! [`Project::open_with`](pmfedit_core::project::Project::open_with)'s [`Jobs`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use pmfedit_core::jobs::Jobs;

/// Runs [`Jobs`] on up to a fixed number of scoped threads (started per call, joined before it
/// returns), taking jobs from a shared counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threads(usize);

impl Threads {
    /// At most `threads` threads (at least one; one runs the jobs on the calling thread).
    pub fn new(threads: usize) -> Threads {
        Threads(threads.max(1))
    }

    /// As many threads as the machine has cores.
    pub fn all() -> Threads {
        Threads::new(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// The most threads a call uses.
    pub fn count(self) -> usize {
        self.0
    }
}

impl Jobs for Threads {
    fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        run_jobs(n, self.0, || (), |(), k| job(k));
    }
}

/// `job(state, k)` for every `k` in `0..n` on `threads` scoped threads, the results in `k` order
/// whatever the count ([`stream_jobs`], collected).
pub(crate) fn run_jobs<S, T: Send>(
    n: usize,
    threads: usize,
    init: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    let mut out = Vec::with_capacity(n);
    let collected: Result<(), std::convert::Infallible> = stream_jobs(n, threads, init, job, |r| {
        out.push(r);
        Ok(())
    });
    let Ok(()) = collected;
    out
}

/// `job(state, k)` for every `k` in `0..n` on `threads` scoped threads, each result handed to
/// `take` on this thread in `k` order as soon as it and those before it are done (an export
/// writes each chunk as it is ready: [`crate::compile::write_file_to`]). Stops at the first
/// error of `take` (workers take no new job after it) and returns it; each worker makes its
/// `state` once with `init`, takes the next `k` from a shared counter (jobs differ a lot in
/// size: chunks), and a worker's panic is passed on.
pub(crate) fn stream_jobs<S, T: Send, E>(
    n: usize,
    threads: usize,
    init: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, usize) -> T + Sync,
    mut take: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        let mut state = init();
        return (0..n).try_for_each(|k| take(job(&mut state, k)));
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (send, done) = std::sync::mpsc::channel();
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let send = send.clone();
                let (next, init, job) = (&next, &init, &job);
                scope.spawn(move || {
                    let mut state = init();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n || send.send((k, job(&mut state, k))).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(send);
        // Results that came before their turn, by `k`.
        let mut early = std::collections::BTreeMap::new();
        let (mut turn, mut result) = (0, Ok(()));
        'results: for (k, r) in &done {
            early.insert(k, r);
            while let Some(r) = early.remove(&turn) {
                turn += 1;
                if let Err(e) = take(r) {
                    // No new jobs; the workers finish the ones they hold and stop.
                    next.store(n, Ordering::Relaxed);
                    result = Err(e);
                    break 'results;
                }
            }
        }
        drop(done);
        for w in workers {
            w.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every job runs exactly once, whatever the thread count, and `jobs::map` puts the results
    /// in job order.
    #[test]
    fn threads_run_every_job_once() {
        for threads in [1, 2, 7] {
            let runs: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
            let out = pmfedit_core::jobs::map(&Threads::new(threads), runs.len(), |k| {
                runs[k].fetch_add(1, Ordering::Relaxed);
                k * 3
            });
            assert_eq!(out, (0..50).map(|k| k * 3).collect::<Vec<_>>(), "{threads} threads");
            assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1), "{threads} threads");
        }
        assert_eq!(Threads::new(0).count(), 1);
    }

    /// Results reach `take` in job order whatever the thread count (some jobs are slow, so
    /// others finish before them), and the first error in that order stops the run.
    #[test]
    fn streamed_jobs_come_in_order_and_stop_at_the_first_error() {
        let job = |_: &mut (), k: usize| {
            if k.is_multiple_of(7) {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            if k == 150 || k == 170 { Err(k) } else { Ok(k) }
        };
        for threads in [1, 2, 5] {
            // The jobs' results as `take` saw them, and how the run ended.
            let run = |n: usize| {
                let mut seen = Vec::new();
                let end = stream_jobs(
                    n,
                    threads,
                    || (),
                    job,
                    |r| {
                        seen.push(r?);
                        Ok::<(), usize>(())
                    },
                );
                (end, seen)
            };
            let (all, seen) = run(140);
            assert_eq!(all, Ok(()), "{threads} threads");
            assert_eq!(seen, (0..140).collect::<Vec<_>>(), "{threads} threads");
            let (failed, seen) = run(200);
            assert_eq!(failed, Err(150), "{threads} threads");
            assert_eq!(seen, (0..150).collect::<Vec<_>>(), "{threads} threads");
        }
    }
}
