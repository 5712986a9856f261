//! Chunk meshes built off the UI thread: a small pool of worker threads turns a chunk's shown
//! bake into a [`GpuMesh`] ([`build_chunk_mesh_with`], then [`GpuMesh::pack`]); the UI thread
//! only submits jobs (the library lookups, a few per chunk) and hands finished meshes to the
//! renderer.
//!
//! Each job carries a sequence number; a result is taken only while its number is still the
//! newest submitted for its chunk, so a mesh of an older bake that finishes after a newer bake's
//! job was submitted is dropped ([`Mesher::poll`]). [`Mesher::reset`] drops everything in flight
//! (the document was replaced). The workers end when the pool is dropped. A pool made
//! [`Mesher::with_wake`] calls its wake when the workers run out of jobs (the UI thread's next
//! frame then takes the whole batch at once).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use glam::{DVec3, Vec3};

use pmfedit_bake::compile::ChunkBake;
use pmfedit_bake::deps::ChunkKey;

use super::gpu_mesh::GpuMesh;
use super::mesh::{Look, build_chunk_mesh_with};

/// What a worker needs to mesh one chunk.
#[derive(Debug, Clone)]
pub struct Job {
    pub key: ChunkKey,
    pub bake: Arc<ChunkBake>,
    /// Per used material of the chunk: its look, texture reference and texture array layer.
    pub looks: Vec<Look>,
    pub textures: Vec<String>,
    pub layers: Vec<u32>,
    /// The chunk centre's offset from its region's origin, the region origin and the slot
    /// ([`GpuMesh::pack`]).
    pub offset: Vec3,
    pub origin: DVec3,
    pub slot: u32,
}

impl Job {
    /// The chunk's GPU-ready mesh: what a worker makes of the job (the UI thread calls it for
    /// a few chunks, [`super::inline_budget`]).
    pub fn build(&self) -> GpuMesh {
        let mesh = build_chunk_mesh_with(&self.bake, &self.looks, &self.textures);
        GpuMesh::pack(&mesh, &self.layers, self.offset, self.slot, self.origin)
    }
}

/// A finished job.
#[derive(Debug)]
pub struct Built {
    pub key: ChunkKey,
    pub mesh: GpuMesh,
    /// How long the worker took to build it.
    pub took: Duration,
}

/// The worker pool (see the module docs).
pub struct Mesher {
    jobs: Option<Sender<(u64, Job)>>,
    done: Receiver<(u64, Built)>,
    workers: Vec<JoinHandle<()>>,
    /// The newest sequence number submitted per chunk.
    latest: HashMap<ChunkKey, u64>,
    next: u64,
    in_flight: usize,
    /// The workers' time on every result returned so far (superseded ones included).
    busy: Duration,
    /// Jobs submitted that no worker has finished yet.
    unfinished: Arc<AtomicUsize>,
}

/// Called by a worker when it finished the last job it knew of.
pub type Wake = Arc<dyn Fn() + Send + Sync>;

impl Mesher {
    /// A pool of `threads` workers (at least one).
    pub fn new(threads: usize) -> Self {
        Self::with_wake(threads, Arc::new(|| {}))
    }

    /// A pool of `threads` workers (at least one) that calls `wake` whenever the workers have
    /// finished every job submitted so far.
    pub fn with_wake(threads: usize, wake: Wake) -> Self {
        let (jobs, job_rx) = channel::<(u64, Job)>();
        let (done_tx, done) = channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let unfinished = Arc::new(AtomicUsize::new(0));
        let workers = (0..threads.max(1))
            .map(|i| {
                let rx = job_rx.clone();
                let tx = done_tx.clone();
                let (unfinished, wake) = (unfinished.clone(), wake.clone());
                std::thread::Builder::new()
                    .name(format!("pmfedit-mesh-{i}"))
                    .spawn(move || work(&rx, &tx, &unfinished, &*wake))
                    .expect("spawning a mesh worker")
            })
            .collect();
        Self {
            jobs: Some(jobs),
            done,
            workers,
            latest: HashMap::new(),
            next: 0,
            in_flight: 0,
            busy: Duration::ZERO,
            unfinished,
        }
    }

    /// Queues a job; it supersedes any earlier one of the same chunk.
    pub fn submit(&mut self, job: Job) {
        self.next += 1;
        self.latest.insert(job.key, self.next);
        self.unfinished.fetch_add(1, Ordering::AcqRel);
        if let Some(tx) = &self.jobs
            && tx.send((self.next, job)).is_ok()
        {
            self.in_flight += 1;
        } else {
            self.unfinished.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Holds the wake while jobs are handed out one by one ([`Mesher::release`] ends it): a
    /// worker that runs dry between two submissions of one batch does not wake the UI thread.
    pub fn hold(&mut self) {
        self.unfinished.fetch_add(1, Ordering::AcqRel);
    }

    /// Ends a [`Mesher::hold`]. No wake from here: the caller is the thread the wake is for.
    pub fn release(&mut self) {
        self.unfinished.fetch_sub(1, Ordering::AcqRel);
    }

    /// Whether the workers still have jobs to finish (results finished and not yet taken by
    /// [`Mesher::poll`] do not count).
    pub fn working(&self) -> bool {
        self.unfinished.load(Ordering::Acquire) > 0
    }

    /// Drops the results of every job of `key` still in flight (the chunk left).
    pub fn cancel(&mut self, key: ChunkKey) {
        self.latest.remove(&key);
    }

    /// Drops the results of every job in flight.
    pub fn reset(&mut self) {
        self.latest.clear();
    }

    /// Whether a job of `key` is in flight whose result [`Mesher::poll`] will return.
    pub fn is_meshing(&self, key: ChunkKey) -> bool {
        self.latest.contains_key(&key)
    }

    /// Jobs submitted and not yet returned by [`Mesher::poll`].
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The workers' time on every job returned so far (the open's meshing cost, for
    /// `--bench-frames`).
    pub fn busy(&self) -> Duration {
        self.busy
    }

    /// The results finished since the last call, without the superseded ones.
    pub fn poll(&mut self) -> Vec<Built> {
        let mut out = Vec::new();
        while let Ok((seq, built)) = self.done.try_recv() {
            self.in_flight -= 1;
            self.busy += built.took;
            if self.latest.get(&built.key) == Some(&seq) {
                self.latest.remove(&built.key);
                out.push(built);
            }
        }
        out
    }
}

impl Drop for Mesher {
    fn drop(&mut self) {
        // Closing the job channel ends each worker's loop.
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

/// A worker's loop: until the job channel closes.
fn work(jobs: &Mutex<Receiver<(u64, Job)>>, done: &Sender<(u64, Built)>, unfinished: &AtomicUsize, wake: &dyn Fn()) {
    loop {
        let next = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((seq, job)) = next else { return };
        let started = Instant::now();
        let built = Built { key: job.key, mesh: job.build(), took: started.elapsed() };
        if done.send((seq, built)).is_err() {
            return;
        }
        if unfinished.fetch_sub(1, Ordering::AcqRel) == 1 {
            wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewport::mesh::{build_chunk_mesh, material_looks, material_textures};
    use pmfedit_bake::compile::{CompileSettings, bake_chunk};
    use pmfedit_core::sample;

    fn job(map: &pmfedit_core::map::Map, key: ChunkKey, bake: Arc<ChunkBake>) -> Job {
        let used = &bake.pmf.common.used_materials;
        Job {
            key,
            looks: material_looks(&map.library, used),
            textures: material_textures(&map.library, used),
            layers: vec![0; used.len()],
            bake,
            offset: Vec3::ZERO,
            origin: DVec3::ZERO,
            slot: 0,
        }
    }

    /// Polls until nothing is in flight.
    fn drain(m: &mut Mesher) -> Vec<Built> {
        let mut out = Vec::new();
        let until = Instant::now() + Duration::from_secs(60);
        while m.in_flight() > 0 && Instant::now() < until {
            out.extend(m.poll());
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(m.in_flight(), 0, "the workers finish");
        out
    }

    #[test]
    fn workers_mesh_chunks_and_drop_superseded_results() {
        let map = sample::demo();
        let level = &map.levels[0];
        let chunks: Vec<_> = level.chunks().map(|(c, _)| *c).take(4).collect();
        let bakes: Vec<Arc<ChunkBake>> = chunks
            .iter()
            .map(|c| Arc::new(bake_chunk(&map, 0, *c, &CompileSettings::default()).expect("bakes")))
            .collect();
        let mut m = Mesher::new(2);
        for (c, b) in chunks.iter().zip(&bakes) {
            m.submit(job(&map, (0, *c), b.clone()));
        }
        let mut built = drain(&mut m);
        built.sort_by_key(|b| b.key);
        assert_eq!(built.iter().map(|b| b.key.1).collect::<Vec<_>>(), {
            let mut c = chunks.clone();
            c.sort();
            c
        });
        // Each result is what the UI thread would have built.
        for b in &built {
            let i = chunks.iter().position(|c| *c == b.key.1).unwrap();
            let expected = GpuMesh::pack(&build_chunk_mesh(&bakes[i], &map.library), &[], Vec3::ZERO, 0, DVec3::ZERO);
            assert_eq!(b.mesh, expected);
            // The UI thread's build of the same job (an edit's first chunks) is the same mesh.
            assert_eq!(job(&map, b.key, bakes[i].clone()).build(), expected);
        }
        // Two jobs of one chunk: only the newer one's result is taken, whichever finishes first.
        let key = (0, chunks[0]);
        let mut older = job(&map, key, bakes[0].clone());
        older.slot = 1;
        m.submit(older);
        let mut newer = job(&map, key, bakes[0].clone());
        newer.slot = 2;
        m.submit(newer);
        let built = drain(&mut m);
        assert_eq!(built.len(), 1);
        assert_eq!(built[0].mesh.slot, 2);
        // A cancelled or reset job's result is dropped.
        m.submit(job(&map, key, bakes[0].clone()));
        assert!(m.is_meshing(key));
        m.cancel(key);
        assert!(!m.is_meshing(key), "a cancelled job's result still counts as on its way");
        m.submit(job(&map, (0, chunks[1]), bakes[1].clone()));
        m.reset();
        assert!(drain(&mut m).is_empty());
    }

    /// The wake comes when the workers have finished every job submitted, once per batch.
    #[test]
    fn the_wake_comes_when_the_workers_run_out_of_jobs() {
        let map = sample::demo();
        let level = &map.levels[0];
        let chunks: Vec<_> = level.chunks().map(|(c, _)| *c).take(6).collect();
        let wakes = Arc::new(AtomicUsize::new(0));
        let counted = wakes.clone();
        let mut m = Mesher::with_wake(
            2,
            Arc::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            }),
        );
        assert!(!m.working());
        for c in &chunks {
            let bake = Arc::new(bake_chunk(&map, 0, *c, &CompileSettings::default()).expect("bakes"));
            m.submit(job(&map, (0, *c), bake));
        }
        let built = drain(&mut m);
        assert_eq!(built.len(), chunks.len());
        // A worker sends its result before it counts the job finished and wakes.
        let settle = |m: &Mesher| {
            let until = Instant::now() + Duration::from_secs(10);
            while m.working() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        settle(&m);
        assert!(!m.working(), "every job finished");
        // The last job to finish woke the UI; earlier ones may have too, when the other worker
        // had run dry before the next job was queued.
        let after_one_batch = wakes.load(Ordering::SeqCst);
        assert!((1..=chunks.len()).contains(&after_one_batch), "{after_one_batch} wakes");
        // Held while the batch is handed out: the workers, done long before the release, never
        // wake (the releasing thread is the one the wake is for; it takes the results itself).
        m.hold();
        for c in &chunks {
            let bake = Arc::new(bake_chunk(&map, 0, *c, &CompileSettings::default()).expect("bakes"));
            m.submit(job(&map, (0, *c), bake));
        }
        assert_eq!(drain(&mut m).len(), chunks.len());
        // Every job counted finished (the hold keeps `working`): then the release.
        std::thread::sleep(Duration::from_millis(50));
        assert!(m.working(), "held");
        m.release();
        settle(&m);
        assert!(!m.working());
        assert_eq!(wakes.load(Ordering::SeqCst), after_one_batch, "no wake while held");
        let bake = Arc::new(bake_chunk(&map, 0, chunks[0], &CompileSettings::default()).expect("bakes"));
        m.submit(job(&map, (0, chunks[0]), bake));
        drain(&mut m);
        settle(&m);
        assert_eq!(wakes.load(Ordering::SeqCst), after_one_batch + 1, "one job, one wake");
    }
}
