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
/// whatever the count; each worker makes its `state` once with `init`. Workers take the next `k`
/// from a shared counter (jobs differ a lot in size: chunks); a worker's panic is passed on.
pub(crate) fn run_jobs<S, T: Send>(
    n: usize,
    threads: usize,
    init: impl Fn() -> S + Sync,
    job: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        let mut state = init();
        return (0..n).map(|k| job(&mut state, k)).collect();
    }
    let next = AtomicUsize::new(0);
    let done: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut state = init();
                    let mut out = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n {
                            break;
                        }
                        out.push((k, job(&mut state, k)));
                    }
                    out
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
    });
    let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
    for (k, r) in done.into_iter().flatten() {
        results[k] = Some(r);
    }
    results.into_iter().map(|r| r.expect("every job ran")).collect()
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
}
