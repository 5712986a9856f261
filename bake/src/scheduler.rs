//! The background bake scheduler: the only place in the bake crate with threads.
//!
//! Callers hand it a snapshot (`Arc<Map>`, cheap: chunks are shared copy-on-write) and the chunks
//! to re-bake ([`Scheduler::submit`]); named worker threads bake them nearest-to-camera first and
//! deliver [`BakeEvent`]s through a channel, calling a wake-up callback after each (the editor
//! passes `request_repaint`). Nothing here blocks the caller except [`Scheduler::wait_idle`],
//! meant for command-line tools and tests.
//!
//! Supersession: a newer request for a chunk replaces a pending one; a result computed from an
//! older request than the chunk's latest is dropped (never delivered). A bake that panics is
//! reported as [`BakeEvent::Panicked`] with its chunk, and the worker goes on.

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use glam::{DVec3, IVec3};

use pmfedit_core::map::Map;

use crate::compile::{ChunkBake, CompileSettings, bake_chunk};
use crate::deps::ChunkKey;

/// What a worker reports.
#[derive(Debug)]
pub enum BakeEvent {
    /// A chunk baked from the newest request for it.
    Baked { bake: Box<ChunkBake>, elapsed: Duration },
    /// The bake returned an error.
    Failed { key: ChunkKey, error: String },
    /// The bake panicked; the message and chunk are kept, the worker goes on.
    Panicked { key: ChunkKey, message: String },
}

/// A function a job runs; [`bake_chunk`] unless a test swaps it.
pub type BakeFn = dyn Fn(&Map, usize, pmfedit_core::map::coords::ChunkCoord, &CompileSettings) -> Result<ChunkBake, String>
    + Send
    + Sync;

struct Job {
    snapshot: Arc<Map>,
    epoch: u64,
}

#[derive(Default)]
struct State {
    pending: BTreeMap<ChunkKey, Job>,
    /// The newest request epoch per chunk.
    latest: HashMap<ChunkKey, u64>,
    next_epoch: u64,
    running: usize,
    camera: Option<(usize, DVec3)>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (bakes run unlocked), but stay usable
        // if one ever did.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The worker pool.
pub struct Scheduler {
    shared: Arc<Shared>,
    results: Receiver<BakeEvent>,
    workers: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("threads", &self.workers.len()).field("queued", &self.queued()).finish()
    }
}

impl Scheduler {
    /// A pool of `threads` (at least 1) workers named `pmf-bake-N`. `wake` is called after each
    /// event is sent.
    pub fn new(threads: usize, settings: CompileSettings, wake: Arc<dyn Fn() + Send + Sync>) -> Scheduler {
        let bake: Arc<BakeFn> = Arc::new(|map: &Map, level, chunk, s: &CompileSettings| {
            bake_chunk(map, level, chunk, s).map_err(|e| e.to_string())
        });
        Self::with_bake_fn(threads, settings, wake, bake)
    }

    /// Like [`Scheduler::new`] with another bake function (tests use it to inject panics).
    pub fn with_bake_fn(
        threads: usize,
        settings: CompileSettings,
        wake: Arc<dyn Fn() + Send + Sync>,
        bake: Arc<BakeFn>,
    ) -> Scheduler {
        let shared =
            Arc::new(Shared { state: Mutex::new(State::default()), work: Condvar::new(), idle: Condvar::new() });
        let (tx, results) = channel();
        let settings = Arc::new(settings);
        let workers = (0..threads.max(1))
            .map(|i| {
                let (shared, tx, settings, wake, bake) =
                    (shared.clone(), tx.clone(), settings.clone(), wake.clone(), bake.clone());
                std::thread::Builder::new()
                    .name(format!("pmf-bake-{i}"))
                    .spawn(move || worker(&shared, &tx, &settings, &*wake, &*bake))
                    .expect("spawn a bake worker thread")
            })
            .collect();
        Scheduler { shared, results, workers }
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Queues `chunks` to be baked from `snapshot`, replacing older pending requests for them.
    pub fn submit(&self, snapshot: Arc<Map>, chunks: impl IntoIterator<Item = ChunkKey>) {
        let mut st = self.shared.lock();
        st.next_epoch += 1;
        let epoch = st.next_epoch;
        for key in chunks {
            st.latest.insert(key, epoch);
            st.pending.insert(key, Job { snapshot: snapshot.clone(), epoch });
        }
        drop(st);
        self.shared.work.notify_all();
    }

    /// Bakes near this point of level `level` (world space) go first.
    pub fn set_camera(&self, level: usize, position: DVec3) {
        self.shared.lock().camera = Some((level, position));
    }

    /// Jobs waiting or running.
    pub fn queued(&self) -> usize {
        let st = self.shared.lock();
        st.pending.len() + st.running
    }

    /// The next event, if one is ready.
    pub fn try_recv(&self) -> Option<BakeEvent> {
        self.results.try_recv().ok()
    }

    /// Every event ready now.
    pub fn drain(&self) -> Vec<BakeEvent> {
        self.results.try_iter().collect()
    }

    /// Blocks until no job is waiting or running. For tools and tests, not for a UI thread.
    pub fn wait_idle(&self) {
        let mut st = self.shared.lock();
        while !st.pending.is_empty() || st.running > 0 {
            st = self.shared.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// Distance from the camera to the chunk's center, for ordering (chunks of other levels last).
fn distance(job: &Job, key: ChunkKey, camera: Option<(usize, DVec3)>) -> f64 {
    let Some((level, pos)) = camera else { return 0.0 };
    let Some(l) = job.snapshot.levels.get(key.0) else { return f64::INFINITY };
    if key.0 != level {
        return f64::INFINITY;
    }
    let frame = l.frame();
    let center = frame.world_from_lattice(frame.chunk_min_lattice(key.1) + IVec3::splat(frame.chunk_edge() / 2));
    center.distance_squared(pos)
}

fn worker(
    shared: &Shared,
    tx: &Sender<BakeEvent>,
    settings: &CompileSettings,
    wake: &(dyn Fn() + Send + Sync),
    bake: &BakeFn,
) {
    loop {
        let (key, job) = {
            let mut st = shared.lock();
            loop {
                if st.shutdown {
                    return;
                }
                if !st.pending.is_empty() {
                    break;
                }
                st = shared.work.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            let camera = st.camera;
            // Nearest first; ties in key order, so the order is deterministic.
            let key = *st
                .pending
                .iter()
                .min_by(|a, b| distance(a.1, *a.0, camera).total_cmp(&distance(b.1, *b.0, camera)).then(a.0.cmp(b.0)))
                .map(|(k, _)| k)
                .expect("pending is not empty");
            let job = st.pending.remove(&key).expect("key is pending");
            st.running += 1;
            (key, job)
        };
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| bake(&job.snapshot, key.0, key.1, settings)));
        let elapsed = start.elapsed();
        let sent = {
            let mut st = shared.lock();
            let fresh = st.latest.get(&key) == Some(&job.epoch);
            if fresh && !st.pending.contains_key(&key) {
                st.latest.remove(&key);
            }
            let event = fresh.then(|| match result {
                Ok(Ok(bake)) => BakeEvent::Baked { bake: Box::new(bake), elapsed },
                Ok(Err(error)) => BakeEvent::Failed { key, error },
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".to_owned());
                    BakeEvent::Panicked { key, message }
                }
            });
            // Sent before the job stops counting as running, so `wait_idle` returning means every
            // event is in the channel.
            let sent = event.map(|e| tx.send(e).is_ok());
            st.running -= 1;
            if st.pending.is_empty() && st.running == 0 {
                shared.idle.notify_all();
            }
            sent
        };
        match sent {
            Some(true) => wake(),
            Some(false) => return, // the scheduler is gone
            None => {}
        }
    }
}
