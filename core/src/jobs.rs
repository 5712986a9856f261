//! Independent jobs that the caller may run in parallel.
//!
//! `core` starts no threads (`ARCHITECTURE.md`): an operation made of independent parts (opening
//! a project decodes each chunk file on its own, [`Project::open_with`]) takes a [`Jobs`] from its
//! caller instead. The editor and `pmfc` pass one that runs on scoped threads
//! (`pmfedit_bake::jobs::Threads`); tests and simple callers pass [`Sequential`]. Results never
//! depend on which one: [`map`] returns them in job order.
//!
//! [`Project::open_with`]: crate::project::Project::open_with

use std::sync::{Mutex, PoisonError};

/// A way to run independent jobs.
pub trait Jobs: Sync {
    /// Calls `job(k)` exactly once for every `k` in `0..n`, in any order, possibly several at
    /// once on other threads; returns once every call has returned. A job's panic is passed on.
    fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync));
}

/// Runs every job on the calling thread, in order.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sequential;

impl Jobs for Sequential {
    fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
        (0..n).for_each(job);
    }
}

/// `f(k)` for every `k` in `0..n`, run by `jobs`; the results in `k` order whatever ran them.
///
/// # Panics
/// If `jobs` breaks its contract and returns before running every job.
pub fn map<T: Send>(jobs: &dyn Jobs, n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    // One slot per job: jobs never wait for each other's results.
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    jobs.run(n, &|k| {
        let r = f(k);
        *slots[k].lock().unwrap_or_else(PoisonError::into_inner) = Some(r);
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner).expect("Jobs::run ran every job"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the jobs backwards, to show that [`map`] orders results by job, not by completion.
    struct Backwards;

    impl Jobs for Backwards {
        fn run(&self, n: usize, job: &(dyn Fn(usize) + Sync)) {
            (0..n).rev().for_each(job);
        }
    }

    #[test]
    fn map_returns_results_in_job_order() {
        let want: Vec<usize> = (0..10).map(|k| k * k).collect();
        assert_eq!(map(&Sequential, 10, |k| k * k), want);
        assert_eq!(map(&Backwards, 10, |k| k * k), want);
        assert!(map(&Backwards, 0, |k| k).is_empty());
    }
}
