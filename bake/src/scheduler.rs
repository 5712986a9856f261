//! The background bake scheduler: the only place in the bake crate with threads.
//!
//! Callers hand it a snapshot (`Arc<Map>`, cheap: chunks are shared copy-on-write) and the chunks
//! to re-bake ([`Scheduler::submit`]); named worker threads bake them nearest first (to the
//! focus, [`Scheduler::set_focus`], else the camera) and deliver [`BakeEvent`]s through a
//! channel, calling a wake-up callback after each (the editor passes `request_repaint`). Nothing
//! here blocks the caller except [`Scheduler::wait_idle`], meant for command-line tools and tests.
//!
//! Stages: [`Scheduler::submit`] queues each chunk twice — a [`Stage::Preview`] job (mesh and
//! lightmaps only, [`CompileSettings::preview`]: what a viewport draws) and a [`Stage::Full`] job
//! (the normal bake, visibility and pathfinding included: what an export compiles).
//! [`Scheduler::submit_urgent`] (the chunks an edit changed) queues a [`Stage::Draft`] (the
//! preview with cheap lighting, [`CompileSettings::draft`]) and the full bake, no preview: the
//! edited geometry is on screen within a few milliseconds even where soft shadows make the exact
//! lightmaps slow, and the exact lightmaps come with the full bake (a preview is the full bake
//! less visibility and pathfinding, a few milliseconds of it: run beside the full bake it took a
//! core for as long, and delivered no sooner). No draft is queued when it would equal the
//! preview ([`CompileSettings::draft_differs`]). Every pending draft runs before any preview, and
//! every preview before any full job, and no full job starts while a draft runs (a draft alone
//! takes milliseconds; beside full bakes on a machine with few cores, many times that); within a
//! stage, urgent chunks first, then nearest first.
//! [`Scheduler::submit_full`] queues full jobs only (headless tools need no preview).
//!
//! *Warm-up* ([`Scheduler::warm`]: the editor's chunks around where the view looks, `pmfc
//! watch`'s around its last change): once the pool has been idle for [`WARM_AFTER`], one general
//! worker at a time bakes a preview of the next listed chunk that has no light memo and drops the
//! result, so that the memo is there when an edit comes ([`crate::light::LightMemo`]: an edit's
//! re-bake then traces only the luxels whose rays passed it). Cached bakes come with no memo: the
//! first edit after an open traced every luxel of its ~27 chunks (5 s on `terrain(32,4,32)`, 2
//! cores), the next ones 0.75 s. Warm-ups deliver nothing, never start while a job waits or runs,
//! and do not count as running; the snapshot is the newest one submitted (a memo of any snapshot
//! is safe to start from).
//!
//! Supersession is per chunk: a newer request for a chunk replaces all of its pending jobs; a
//! result computed from an older request than the chunk's latest is dropped (never delivered,
//! not even when it was already in the channel when the newer request came: once `submit`
//! returns, [`Scheduler::drain`] and [`Scheduler::try_recv`] return no older result for its chunks),
//! and so is a result of an earlier stage that finishes after a later stage of its own request was
//! delivered (a draft after its preview, a preview after its full bake). A bake that panics is
//! reported as [`BakeEvent::Panicked`] with its chunk, and the worker goes on. A draft or preview
//! that fails or panics ends its request: the later stages would fail the same way (they run the
//! same geometry and lighting code first), so they are cancelled, and dropped if they already run.

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use glam::DVec3;

use pmfedit_core::map::Map;

use crate::compile::{ChunkBake, CompileError, CompileSettings, bake_chunk_cached};
use crate::deps::ChunkKey;
use crate::light::LightCache;
use crate::vis::VisCache;

/// Which bake of a chunk a job makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// A preview with cheap lighting ([`CompileSettings::draft`]): the same mesh and lightmap
    /// layout as the preview, approximate luxels. Only for chunks an edit changed.
    Draft,
    /// Mesh and lightmaps only ([`CompileSettings::preview`]): the same mesh and lightmaps as the
    /// full bake, without visibility and pathfinding. For drawing, never for export.
    Preview,
    /// The normal bake with the scheduler's settings.
    Full,
}

impl Stage {
    /// Every stage, in the order they run.
    pub const ALL: [Stage; 3] = [Stage::Draft, Stage::Preview, Stage::Full];

    /// Position in [`Stage::ALL`] (for per-stage arrays).
    pub fn index(self) -> usize {
        match self {
            Stage::Draft => 0,
            Stage::Preview => 1,
            Stage::Full => 2,
        }
    }

    /// "draft", "preview" or "full".
    pub fn label(self) -> &'static str {
        match self {
            Stage::Draft => "draft",
            Stage::Preview => "preview",
            Stage::Full => "full",
        }
    }
}

/// What a worker reports.
#[derive(Debug)]
pub enum BakeEvent {
    /// A chunk baked from the newest request for it.
    Baked { bake: Box<ChunkBake>, elapsed: Duration, stage: Stage },
    /// The bake returned an error.
    Failed { key: ChunkKey, stage: Stage, error: CompileError },
    /// The bake panicked; the message and chunk are kept, the worker goes on.
    Panicked { key: ChunkKey, stage: Stage, message: String },
}

impl BakeEvent {
    /// The stage of the job this event reports.
    pub fn stage(&self) -> Stage {
        match self {
            BakeEvent::Baked { stage, .. } | BakeEvent::Failed { stage, .. } | BakeEvent::Panicked { stage, .. } => {
                *stage
            }
        }
    }

    /// The chunk this event is about.
    pub fn key(&self) -> ChunkKey {
        match self {
            BakeEvent::Baked { bake, .. } => (bake.level, bake.chunk),
            BakeEvent::Failed { key, .. } | BakeEvent::Panicked { key, .. } => *key,
        }
    }
}

/// A function a job runs: bake `key` of the snapshot for `stage` with the settings of that stage.
/// [`bake_chunk_cached`] (with the scheduler's caches) unless a test swaps it (to hold a stage back, or to inject a panic).
pub type BakeFn = dyn Fn(&Map, ChunkKey, Stage, &CompileSettings) -> Result<ChunkBake, CompileError> + Send + Sync;

struct Job {
    snapshot: Arc<Map>,
    epoch: u64,
    /// Goes before the stage's other jobs ([`Scheduler::submit_urgent`]).
    urgent: bool,
}

/// The newest request for a chunk, while a result of it may still be delivered.
#[derive(Clone, Copy)]
struct Request {
    epoch: u64,
    /// The latest stage of it delivered so far (earlier stages finishing later are dropped).
    delivered: Option<Stage>,
}

#[derive(Default)]
struct State {
    /// Waiting jobs, per stage ([`Stage::index`]).
    pending: [BTreeMap<ChunkKey, Job>; 3],
    /// The newest request per chunk, while a result of it may still be delivered.
    latest: HashMap<ChunkKey, Request>,
    /// The newest request epoch per chunk, kept: results already sent from older requests are
    /// dropped on receipt.
    requested: HashMap<ChunkKey, u64>,
    next_epoch: u64,
    running: usize,
    /// Draft jobs running: no full job starts while one does (see `worker`).
    drafting: usize,
    shutdown: bool,
    /// Chunks to warm up, next first ([`Scheduler::warm`]).
    warm: std::collections::VecDeque<ChunkKey>,
    /// The newest snapshot submitted: warm-ups bake from it.
    newest: Option<Arc<Map>>,
    /// A warm-up is running (one at a time).
    warming: bool,
    /// Warm-ups done since the scheduler started.
    warmed: usize,
    /// When the pool last became idle (`None`: it never ran a job).
    idle_since: Option<Instant>,
    /// A focus was set apart from the camera ([`Scheduler::set_focus`]). The point itself is the
    /// light cache's ([`LightCache::focus`]): the one point both the bake order and the memos
    /// kept follow.
    focus_set: bool,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    idle: Condvar,
}

impl State {
    fn pending_len(&self) -> usize {
        self.pending.iter().map(BTreeMap::len).sum()
    }
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
    /// Events with the request epoch they answer.
    results: Receiver<(u64, BakeEvent)>,
    workers: Vec<JoinHandle<()>>,
    /// Workers taking every stage (`workers` has one more, for drafts and previews only).
    general: usize,
    /// Whether urgent chunks get a draft ([`CompileSettings::draft_differs`]).
    draft_differs: bool,
    /// The settings of full bakes (drafts and previews derive theirs from them).
    settings: Arc<CompileSettings>,
    /// Visibility summaries shared by the bakes (and by the rebuild engine).
    vis: Arc<VisCache>,
    /// Light memos of the default bakes ([`Scheduler::light_cache`]).
    light: Arc<LightCache>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("threads", &self.general).field("queued", &self.queued()).finish()
    }
}

impl Scheduler {
    /// A pool of `threads` (at least 1) workers named `pmf-bake-N`. `wake` is called after each
    /// event is sent.
    pub fn new(threads: usize, settings: CompileSettings, wake: Arc<dyn Fn() + Send + Sync>) -> Scheduler {
        let (vis, light) = caches(&settings);
        Self::build(threads, settings, wake, default_bake_fn(vis.clone(), light.clone()), false, (vis, light))
    }

    /// [`Scheduler::new`] for an interactive viewer: plus one worker (`pmf-bake-preview`) that
    /// takes previews only, so an edit's preview starts at once even while every other worker is
    /// deep in a long full bake (visibility). It sleeps while no preview waits.
    pub fn interactive(threads: usize, settings: CompileSettings, wake: Arc<dyn Fn() + Send + Sync>) -> Scheduler {
        let (vis, light) = caches(&settings);
        Self::build(threads, settings, wake, default_bake_fn(vis.clone(), light.clone()), true, (vis, light))
    }

    /// Like [`Scheduler::new`] with another bake function (tests use it to inject panics).
    pub fn with_bake_fn(
        threads: usize,
        settings: CompileSettings,
        wake: Arc<dyn Fn() + Send + Sync>,
        bake: Arc<BakeFn>,
    ) -> Scheduler {
        Self::with_options(threads, settings, wake, bake, false)
    }

    /// The general constructor: `threads` workers for both stages, plus a previews-only worker
    /// when `preview_worker` (see [`Scheduler::interactive`]).
    pub fn with_options(
        threads: usize,
        settings: CompileSettings,
        wake: Arc<dyn Fn() + Send + Sync>,
        bake: Arc<BakeFn>,
        preview_worker: bool,
    ) -> Scheduler {
        let caches = caches(&settings);
        Self::build(threads, settings, wake, bake, preview_worker, caches)
    }

    fn build(
        threads: usize,
        settings: CompileSettings,
        wake: Arc<dyn Fn() + Send + Sync>,
        bake: Arc<BakeFn>,
        preview_worker: bool,
        (vis, light): (Arc<VisCache>, Arc<LightCache>),
    ) -> Scheduler {
        let shared =
            Arc::new(Shared { state: Mutex::new(State::default()), work: Condvar::new(), idle: Condvar::new() });
        let (tx, results) = channel();
        let draft_differs = settings.draft_differs();
        let settings = Arc::new(settings);
        // `threads` workers take both stages (previews first); the optional extra one takes
        // previews only.
        let general = threads.max(1);
        let workers = (0..general + usize::from(preview_worker))
            .map(|i| {
                let (shared, tx, settings, wake, bake, light) =
                    (shared.clone(), tx.clone(), settings.clone(), wake.clone(), bake.clone(), light.clone());
                let (name, stages): (String, &'static [Stage]) = if i < general {
                    (format!("pmf-bake-{i}"), &Stage::ALL)
                } else {
                    ("pmf-bake-preview".to_owned(), &[Stage::Draft, Stage::Preview])
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker(&shared, &tx, &settings, &*wake, &*bake, stages, &light))
                    .expect("spawn a bake worker thread")
            })
            .collect();
        Scheduler { shared, results, workers, general, draft_differs, settings, vis, light }
    }

    /// The visibility summaries the default bakes share.
    pub fn vis_cache(&self) -> &Arc<VisCache> {
        &self.vis
    }

    /// The light memos the default bakes keep and start from (on by default: an edit then
    /// re-traces only the luxels whose rays passed a changed chunk, [`crate::light::LightMemo`]);
    /// a one-shot build turns them off ([`LightCache::set_on`]) to save their memory.
    pub fn light_cache(&self) -> &Arc<LightCache> {
        &self.light
    }

    /// The settings of full bakes ([`CompileSettings::preview`] and [`CompileSettings::draft`] of
    /// them for the other stages).
    pub fn settings(&self) -> &CompileSettings {
        &self.settings
    }

    /// Number of worker threads taking both stages (an interactive scheduler has one more, for
    /// previews only).
    pub fn threads(&self) -> usize {
        self.general
    }

    /// Queues a preview and a full bake of each of `chunks` from `snapshot`, replacing older
    /// pending requests for them (every stage).
    pub fn submit(&self, snapshot: Arc<Map>, chunks: impl IntoIterator<Item = ChunkKey>) {
        self.submit_stages(snapshot, chunks, &[Stage::Preview, Stage::Full], false);
    }

    /// Queues a draft and a full bake of each of `chunks` (the full bake only where the draft
    /// would equal the preview), before the other chunks within each stage: the chunks an edit
    /// changed, so that their meshes are on screen first (see the module docs: no preview).
    pub fn submit_urgent(&self, snapshot: Arc<Map>, chunks: impl IntoIterator<Item = ChunkKey>) {
        let stages: &[Stage] = if self.draft_differs { &[Stage::Draft, Stage::Full] } else { &[Stage::Full] };
        self.submit_stages(snapshot, chunks, stages, true);
    }

    /// Queues only a draft of each of `chunks` (a preview where the draft would equal it), ahead
    /// of the other chunks, replacing older pending requests for them (every stage): for values
    /// still being dragged, whose full bakes would be stale before they finish.
    pub fn submit_drafts(&self, snapshot: Arc<Map>, chunks: impl IntoIterator<Item = ChunkKey>) {
        let stage = if self.draft_differs { Stage::Draft } else { Stage::Preview };
        self.submit_stages(snapshot, chunks, &[stage], true);
    }

    /// Queues only a full bake of each of `chunks` (for tools that draw nothing), replacing older
    /// pending requests for them (every stage).
    pub fn submit_full(&self, snapshot: Arc<Map>, chunks: impl IntoIterator<Item = ChunkKey>) {
        self.submit_stages(snapshot, chunks, &[Stage::Full], false);
    }

    fn submit_stages(
        &self,
        snapshot: Arc<Map>,
        chunks: impl IntoIterator<Item = ChunkKey>,
        stages: &[Stage],
        urgent: bool,
    ) {
        let mut st = self.shared.lock();
        st.next_epoch += 1;
        let epoch = st.next_epoch;
        st.newest = Some(snapshot.clone());
        for key in chunks {
            st.latest.insert(key, Request { epoch, delivered: None });
            st.requested.insert(key, epoch);
            for stage in Stage::ALL {
                if stages.contains(&stage) {
                    st.pending[stage.index()].insert(key, Job { snapshot: snapshot.clone(), epoch, urgent });
                } else {
                    st.pending[stage.index()].remove(&key);
                }
            }
        }
        drop(st);
        self.shared.work.notify_all();
    }

    /// Replaces the chunks to warm up while the pool is idle (see the module docs), next first,
    /// from `snapshot` (until a newer one is submitted). Chunks that have a light memo when their
    /// turn comes are skipped.
    pub fn warm(&self, snapshot: Arc<Map>, chunks: impl IntoIterator<Item = ChunkKey>) {
        let mut st = self.shared.lock();
        st.warm = chunks.into_iter().collect();
        st.newest = Some(snapshot);
        drop(st);
        self.shared.work.notify_all();
    }

    /// Chunks still to warm up, and whether one is being warmed up now.
    pub fn warming(&self) -> (usize, bool) {
        let st = self.shared.lock();
        (st.warm.len(), st.warming)
    }

    /// Warm-ups done so far.
    pub fn warmed(&self) -> usize {
        self.shared.lock().warmed
    }

    /// Unless a focus was set ([`Self::set_focus`]): bakes near this point of level `level`
    /// (world space) go first, and the light memos of the chunks nearest it are the ones kept
    /// ([`LightCache::set_focus`]).
    pub fn set_camera(&self, level: usize, position: DVec3) {
        let st = self.shared.lock();
        if !st.focus_set {
            self.light.set_focus(level, position);
        }
    }

    /// Where the next edits are likely (the editor: the point under the view's centre), from now
    /// on whatever the camera: bakes nearest it go first and the light memos of the chunks
    /// nearest it are the ones kept. Both follow the same point so that the memos recorded are
    /// those kept: a bake order that starts far from where memos are kept (the camera's eye, out
    /// beyond a corner of a terrain it looks at) records memos for every chunk between the two,
    /// each dropped again by a nearer one (a fifth more on a cold open of `terrain(32,4,32)`).
    pub fn set_focus(&self, level: usize, position: DVec3) {
        let mut st = self.shared.lock();
        st.focus_set = true;
        self.light.set_focus(level, position);
    }

    /// Jobs waiting or running, every stage.
    pub fn queued(&self) -> usize {
        let st = self.shared.lock();
        st.pending_len() + st.running
    }

    /// Jobs of `stage` waiting (not counting running ones).
    pub fn waiting(&self, stage: Stage) -> usize {
        self.shared.lock().pending[stage.index()].len()
    }

    /// Whether an event sent for request `epoch` still answers the chunk's newest request.
    fn current(&self, epoch: u64, event: &BakeEvent) -> bool {
        self.shared.lock().requested.get(&event.key()).is_none_or(|&newest| newest <= epoch)
    }

    /// The next event, if one is ready.
    pub fn try_recv(&self) -> Option<BakeEvent> {
        loop {
            let (epoch, event) = self.results.try_recv().ok()?;
            if self.current(epoch, &event) {
                return Some(event);
            }
        }
    }

    /// Every event ready now.
    pub fn drain(&self) -> Vec<BakeEvent> {
        let events: Vec<(u64, BakeEvent)> = self.results.try_iter().collect();
        let st = self.shared.lock();
        events
            .into_iter()
            .filter(|(epoch, e)| st.requested.get(&e.key()).is_none_or(|&newest| newest <= *epoch))
            .map(|(_, e)| e)
            .collect()
    }

    /// Blocks until no job of any stage is waiting or running. For tools and tests, not for a
    /// UI thread.
    pub fn wait_idle(&self) {
        let mut st = self.shared.lock();
        while st.pending_len() > 0 || st.running > 0 {
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

/// Distance from `from` (the focus, else the camera) to the chunk's center, for ordering (chunks
/// of other levels last).
fn distance(job: &Job, key: ChunkKey, from: Option<(usize, DVec3)>) -> f64 {
    let Some((level, pos)) = from else { return 0.0 };
    let Some(l) = job.snapshot.levels.get(key.0) else { return f64::INFINITY };
    if key.0 != level {
        return f64::INFINITY;
    }
    l.frame().chunk_center_world(key.1).distance_squared(pos)
}

/// How long the pool must have been idle before a warm-up starts ([`Scheduler::warm`]): an
/// edit's jobs come in bursts, and a user who edits again at once needs every core.
pub const WARM_AFTER: Duration = Duration::from_millis(500);

/// One warm-up ([`Scheduler::warm`]): a preview of `key` from `snapshot` for the light memo
/// its bake leaves, unless the chunk has one (or memos are off); the bake itself is dropped, and
/// so is a failure or panic (the chunk's own jobs report those).
fn warm_up(
    shared: &Shared,
    bake: &BakeFn,
    snapshot: &Map,
    key: ChunkKey,
    preview: &CompileSettings,
    light: &LightCache,
) {
    let baked = light.serves(&preview.light) && light.get(key.0, key.1).is_none();
    if baked {
        let _ = catch_unwind(AssertUnwindSafe(|| bake(snapshot, key, Stage::Preview, preview)));
    }
    let mut st = shared.lock();
    st.warming = false;
    st.warmed += usize::from(baked);
}

/// What a worker does next.
enum Next {
    /// The next job of this stage.
    Job(Stage),
    /// A warm-up of this chunk from this snapshot.
    Warm(ChunkKey, Arc<Map>),
}

/// A visibility cache and a light memo cache (on) for bakes with `settings`.
fn caches(settings: &CompileSettings) -> (Arc<VisCache>, Arc<LightCache>) {
    let vis = Arc::new(VisCache::new(settings.visibility.unwrap_or_default()));
    (vis, Arc::new(LightCache::new(settings.light.clone(), true)))
}

/// [`bake_chunk_cached`] sharing `vis` (drafts and previews bake no visibility and leave it be)
/// and `light` (previews and full bakes share memos; drafts, with other light settings, keep none
/// but take the exact light of the points an edit did not reach from them).
fn default_bake_fn(vis: Arc<VisCache>, light: Arc<LightCache>) -> Arc<BakeFn> {
    Arc::new(move |map: &Map, (level, chunk): ChunkKey, _stage, s: &CompileSettings| {
        bake_chunk_cached(map, level, chunk, s, &vis, Some(&light)).map(|(b, _)| b)
    })
}

fn worker(
    shared: &Shared,
    tx: &Sender<(u64, BakeEvent)>,
    settings: &CompileSettings,
    wake: &(dyn Fn() + Send + Sync),
    bake: &BakeFn,
    stages: &[Stage],
    light: &LightCache,
) {
    let (draft, preview) = (settings.draft(), settings.preview());
    loop {
        let (stage, key, job) = {
            let mut st = shared.lock();
            let next = loop {
                if st.shutdown {
                    return;
                }
                // Every draft before any preview, every preview before any full job; and no full
                // job starts while a draft runs: a draft is what puts an edit on screen, a few
                // milliseconds alone, many times that beside full bakes on a machine with few
                // cores. (A full job already running goes on.)
                if let Some(stage) = stages.iter().copied().find(|s| !st.pending[s.index()].is_empty())
                    && (stage != Stage::Full || st.drafting == 0)
                {
                    break Next::Job(stage);
                }
                // Warm-ups: general workers, one at a time, once the pool has been idle a while.
                if stages.contains(&Stage::Full)
                    && !st.warming
                    && st.pending_len() == 0
                    && st.running == 0
                    && let Some(snapshot) = st.newest.clone().filter(|_| !st.warm.is_empty())
                {
                    let idle = st.idle_since.map_or(WARM_AFTER, |t| t.elapsed());
                    if idle >= WARM_AFTER {
                        let key = st.warm.pop_front().expect("checked above");
                        st.warming = true;
                        break Next::Warm(key, snapshot);
                    }
                    st = shared.work.wait_timeout(st, WARM_AFTER - idle).unwrap_or_else(|e| e.into_inner()).0;
                    continue;
                }
                st = shared.work.wait(st).unwrap_or_else(|e| e.into_inner());
            };
            let stage = match next {
                Next::Job(stage) => stage,
                Next::Warm(key, snapshot) => {
                    drop(st);
                    warm_up(shared, bake, &snapshot, key, &preview, light);
                    continue;
                }
            };
            let from = light.focus();
            let pending = &mut st.pending[stage.index()];
            // Urgent first, then nearest; ties in key order, so the order is deterministic.
            let key = *pending
                .iter()
                .min_by(|a, b| {
                    b.1.urgent
                        .cmp(&a.1.urgent)
                        .then(distance(a.1, *a.0, from).total_cmp(&distance(b.1, *b.0, from)))
                        .then(a.0.cmp(b.0))
                })
                .map(|(k, _)| k)
                .expect("the stage has pending jobs");
            let job = pending.remove(&key).expect("key is pending");
            st.running += 1;
            st.drafting += usize::from(stage == Stage::Draft);
            (stage, key, job)
        };
        let job_settings = match stage {
            Stage::Draft => &draft,
            Stage::Preview => &preview,
            Stage::Full => settings,
        };
        let start = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| bake(&job.snapshot, key, stage, job_settings)));
        let elapsed = start.elapsed();
        let sent = {
            let mut st = shared.lock();
            // From the newest request, and no later stage of it delivered yet.
            let fresh =
                st.latest.get(&key).is_some_and(|r| r.epoch == job.epoch && r.delivered.is_none_or(|d| d < stage));
            let failed = !matches!(result, Ok(Ok(_)));
            if fresh {
                if stage == Stage::Full || failed {
                    // The request is over: a full bake was delivered (an earlier stage of the
                    // same request still running is now redundant and gets dropped), or a draft
                    // or preview failed (the later stages would fail too, so they are cancelled,
                    // or dropped if they already run). A newer request would have replaced the
                    // epoch, so nothing newer is pending.
                    st.latest.remove(&key);
                    for pending in &mut st.pending {
                        pending.remove(&key);
                    }
                } else if let Some(r) = st.latest.get_mut(&key) {
                    r.delivered = Some(stage);
                }
            }
            let event = fresh.then(|| match result {
                Ok(Ok(bake)) => BakeEvent::Baked { bake: Box::new(bake), elapsed, stage },
                Ok(Err(error)) => BakeEvent::Failed { key, stage, error },
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".to_owned());
                    BakeEvent::Panicked { key, stage, message }
                }
            });
            // Sent (and the wake-up called, below) before the job stops counting as running, so
            // `wait_idle` returning means every event is in the channel and announced.
            event.map(|e| tx.send((job.epoch, e)).is_ok())
        };
        if sent == Some(true) {
            wake();
        }
        let mut st = shared.lock();
        st.running -= 1;
        if stage == Stage::Draft {
            st.drafting -= 1;
            if st.drafting == 0 && !st.pending[Stage::Full.index()].is_empty() {
                // Full jobs waited for the drafts.
                shared.work.notify_all();
            }
        }
        if st.pending_len() == 0 && st.running == 0 {
            st.idle_since = Some(Instant::now());
            shared.idle.notify_all();
            if !st.warm.is_empty() {
                // Warm-ups wait for the pool to stay idle.
                shared.work.notify_one();
            }
        }
        drop(st);
        if sent == Some(false) {
            return; // the scheduler is gone
        }
    }
}
