//! The rebuild engine: the one place that turns "the map changed" into "these chunks are
//! re-baked, in these stages, and here is what to draw and what to export". The editor, `pmfc
//! build`/`watch`/`bench` and the invariant tests all drive it.
//!
//! # What it owns
//! - **The dependency spread** ([`crate::deps::dirty_chunks`], swappable with [`Rebuild::with_spread`]):
//!   given the map the last request was made from and the map now, which chunk bakes are stale.
//!   The engine keeps that earlier map itself, so callers only hand it the new one.
//! - **The stages** ([`Plan`]): an interactive viewer gets a draft and a preview of the chunks
//!   that draw an edit, and a full bake of every dirty chunk; a headless build gets full bakes
//!   only. Each result carries its [`Stage`] from the scheduler to [`ChunkSlot::shown`]; nothing
//!   downstream re-infers it from the settings.
//! - **Per-chunk bookkeeping**: one [`ChunkSlot`] per chunk with a [`ChunkState`], the bake to
//!   draw and the full bake to export. The states replace the sets (pending ⊆ finalizing, …) whose
//!   invariants used to live in comments.
//! - **Saved bakes and held bakes**: an engine may start from full bakes made earlier of the
//!   same map ([`Rebuild::with_bakes`], from the bake cache, [`crate::cache`]), and a viewer may
//!   hold full bakes back while a value is dragged ([`Rebuild::hold`], drafts only).
//! - **Recorded reads**: a bake may read chunks far beyond any static rule (a sight line, a sky
//!   ray, a visibility search); it lists them in [`ChunkBake::reads`]. The engine keeps the reverse
//!   index, so a change to such a chunk re-bakes exactly the chunks that read it, and it checks
//!   each full result against the changes made while it was baking: a result that read a chunk
//!   changed after its request is not taken as final, the chunk is queued again. A ray or a search
//!   is decided by the cubes it visits, so "nothing it visited changed" proves the result current.
//!   Rays stop at the top of the highest occupied chunk layer and record nothing above it, so a
//!   change above the top a bake was made with ([`ChunkBake::top_layer`]) is matched by where its
//!   rays can go instead ([`crate::deps::sky_reaches`], [`crate::deps::lights_through`]), both
//!   when the edit is made and when a result from before it arrives.
//! - **Far visibility**: a chunk's far visibility lists depend on the level's chunk *summaries*
//!   only, through the far sets its summary grid computes for every (chunk, component)
//!   ([`crate::vis`]). The engine keeps, per level, the grid every full bake in its slots agrees
//!   with. After an edit it takes the current map's grid (the same one while no summary changed)
//!   and compares the far sets chunk by chunk: the full bakes whose far sets changed get their far
//!   lists written again ([`ChunkBake::refresh_far`]: no meshing, no lighting, no re-bake); a
//!   full result that arrives from an older grid is brought up to the current one the same way.
//!
//! # The invariant
//! After any sequence of [`Rebuild::edited`] / [`Rebuild::reload`] calls, once [`Rebuild::is_final`],
//! [`Rebuild::compile`] gives the same bytes as [`crate::compile::compile_full`] of the current map
//! (docs/spec/PMF-NOTES.md X1), whatever the thread count. `tests/tests/invariant.rs` and
//! `tests/tests/editor_invariant.rs` check it on random edit sequences, the latter through the
//! editor's own commands.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use glam::DVec3;

use pmfedit_core::edit::{ChangeSet, LibRef, ObjRef};
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::level::ChunkChanges;
use pmfedit_core::map::library::Table;
use pmfedit_core::map::library::ids::TableId;

use crate::compile::{
    Assembled, ChunkBake, CompileError, CompileSettings, ExportFrames, assemble, fill_chunks, keep_air_data,
    snapshot_grid,
};
use crate::deps::{
    ChunkKey, GridPart, all_chunks, dirty_chunks, draft_chunks, in_all_chunks, library_users, stored_difference,
};
use crate::scheduler::{BakeEvent, Scheduler, Stage};
use crate::vis::SummaryGrid;

/// Which stages a dirty chunk goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// For a viewer: the chunks that draw an edit (its changed chunks and the face neighbours it
    /// touches, [`draft_chunks`]) get a draft before their full bake, and go first
    /// ([`Scheduler::submit_urgent`]); every other dirty chunk (the rest of an edit's spread, every
    /// chunk of an open the bake cache could not give, the users of a changed library entry) goes
    /// straight to its full bake ([`Scheduler::submit_full`]), nearest the camera first.
    ///
    /// A preview is the full bake less visibility and pathfinding, a few milliseconds of a chunk
    /// whose light takes tens to hundreds: it would show such a chunk no sooner, and for a big map
    /// it doubled the light work, because the full bakes came only after every preview, by when
    /// the light memos (bounded) no longer held the early previews' light. Opening
    /// `terrain(32,4,32)` without its bakes on 2 cores: 406 s with previews, see the README. The
    /// edited chunks' previews, run beside their full bakes, took a core each for as long as the
    /// full bake and arrived after it on 2 cores (README, *An edit on screen one paint sooner*).
    Interactive,
    /// For headless tools: full bakes only ([`Scheduler::submit_full`]).
    FinalOnly,
}

/// Where a chunk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChunkState {
    /// Re-bake requested; nothing of the request has arrived yet. A viewer draws the chunk's
    /// older bake, if any, tinted.
    Queued,
    /// The request's draft (approximate lighting) is drawn; the full bake is on its way.
    Drafted,
    /// The request's preview (the exact mesh and lightmaps) is drawn; the full bake (visibility,
    /// pathfinding) is on its way.
    Previewed,
    /// The full bake of the current map is in: the chunk can be exported.
    Done,
    /// The request failed ([`ChunkSlot::error`]); the next edit that dirties the chunk retries.
    Failed,
}

/// How many chunks are in each [`ChunkState`] ([`Rebuild::census`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    pub queued: usize,
    pub drafted: usize,
    pub previewed: usize,
    pub done: usize,
    pub failed: usize,
}

impl Census {
    /// Chunks in `state`.
    pub fn count(mut self, state: ChunkState) -> usize {
        *self.slot(state)
    }

    /// Chunks with a result on their way (the states [`ChunkState::in_flight`] names).
    pub fn in_flight(self) -> usize {
        ChunkState::ALL.into_iter().filter(|s| s.in_flight()).map(|s| self.count(s)).sum()
    }

    fn slot(&mut self, state: ChunkState) -> &mut usize {
        match state {
            ChunkState::Queued => &mut self.queued,
            ChunkState::Drafted => &mut self.drafted,
            ChunkState::Previewed => &mut self.previewed,
            ChunkState::Done => &mut self.done,
            ChunkState::Failed => &mut self.failed,
        }
    }
}

impl ChunkState {
    /// Every state, in the order of the enum.
    pub const ALL: [ChunkState; 5] =
        [ChunkState::Queued, ChunkState::Drafted, ChunkState::Previewed, ChunkState::Done, ChunkState::Failed];

    /// What the chunk is waiting for, in words ("re-baking", "refining lighting", …).
    pub fn label(self) -> &'static str {
        match self {
            ChunkState::Queued => "re-baking",
            ChunkState::Drafted => "refining lighting",
            ChunkState::Previewed => "finishing visibility",
            ChunkState::Done => "done",
            ChunkState::Failed => "failed",
        }
    }

    /// Whether a result of the current request is still on its way.
    pub fn in_flight(self) -> bool {
        matches!(self, ChunkState::Queued | ChunkState::Drafted | ChunkState::Previewed)
    }
}

/// A bake and the stage that made it.
#[derive(Debug, Clone)]
pub struct Staged {
    pub stage: Stage,
    pub bake: Arc<ChunkBake>,
}

/// Everything the engine knows about one chunk.
#[derive(Debug, Clone)]
pub struct ChunkSlot {
    pub state: ChunkState,
    /// The newest bake delivered, of any stage: what a viewer draws. Older than the map while
    /// the state is [`ChunkState::Queued`].
    pub shown: Option<Staged>,
    /// The newest full bake; it is the current map's exactly when the state is
    /// [`ChunkState::Done`].
    pub full: Option<Arc<ChunkBake>>,
    /// How long the last bake of each stage took ([`Stage::index`] order: draft, preview, full).
    pub times: [Option<Duration>; 3],
    /// Why the current request failed ([`ChunkState::Failed`]).
    pub error: Option<String>,
    /// The engine epoch of the current request (see [`Rebuild::edited`]).
    requested_at: u64,
}

impl ChunkSlot {
    fn queued(epoch: u64) -> Self {
        Self { state: ChunkState::Queued, shown: None, full: None, times: [None; 3], error: None, requested_at: epoch }
    }
}

/// Why [`Rebuild::compile`] produced no file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RebuildError {
    /// Some chunks have no full bake of the current map yet.
    #[error("{0} chunks are still baking")]
    NotFinal(usize),
    /// A chunk's bake failed.
    #[error("level {}, chunk (x {}, y {}, z {}): {error}", key.0, key.1.x, key.1.y, key.1.z)]
    Failed { key: ChunkKey, error: String },
    /// The bakes are in but do not compile (e.g. the grid is too large for PMF).
    #[error(transparent)]
    Compile(#[from] CompileError),
}

/// The dependency spread: the chunks to re-bake after `changes` turned the first map into the
/// second.
pub type SpreadFn = fn(&Map, &Map, &ChangeSet, &CompileSettings) -> BTreeSet<ChunkKey>;

/// What one [`Rebuild::poll`] took in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Polled {
    /// Results that changed a slot.
    pub arrived: usize,
    /// Results that failed or panicked.
    pub failed: usize,
}

/// Chunks around where the next edits are likely whose light memos are warmed up
/// ([`Rebuild::warm_around`]; the editor's view centre, `pmfc watch`'s last edit): a cube of
/// 5 × 5 × 5 chunks, an edit's 3 × 3 × 3 dirty chunks anywhere near the centre.
pub const WARM_RADIUS: i32 = 2;

/// The rebuild engine (see the module documentation).
pub struct Rebuild {
    scheduler: Scheduler,
    plan: Plan,
    spread: SpreadFn,
    /// The map the newest requests were made from.
    map: Arc<Map>,
    slots: BTreeMap<ChunkKey, ChunkSlot>,
    /// Chunks whose [`ChunkSlot::shown`] changed (or that left) since [`Rebuild::take_changed`].
    changed: BTreeSet<ChunkKey>,
    /// Bumped whenever a slot's bakes change.
    revision: u64,
    /// Failures and panics, newest last, as messages naming the chunk and stage.
    errors: Vec<String>,
    /// Bumped by every change handed to the engine.
    epoch: u64,
    /// The epoch at which each chunk's cubes last changed (chunks never changed are absent).
    changed_at: BTreeMap<ChunkKey, u64>,
    /// For each chunk, the chunks whose newest full bake lists it in [`ChunkBake::reads`].
    readers: BTreeMap<ChunkKey, BTreeSet<ChunkKey>>,
    /// Per level: the summary grid whose far sets every full bake in the slots lists.
    far_grids: BTreeMap<usize, Arc<SummaryGrid>>,
    /// Full bakes whose far lists [`Rebuild::edited`] wrote again, and how long that took (the
    /// grid included), for the last edit.
    far_refresh: (usize, Duration),
    /// Settle-then-bake ([`Rebuild::hold`]): requests get drafts only.
    holding: bool,
    /// Chunks requested while holding: their full bakes wait for the release.
    held: BTreeSet<ChunkKey>,
    /// The chunks that draw the last edit ([`Rebuild::urgent`]).
    urgent: BTreeSet<ChunkKey>,
    /// Each chunk's frames from the last export, for the next ([`Rebuild::keep_export_frames`]).
    export_frames: Option<Arc<ExportFrames>>,
    /// How many slots are in each state, kept as states change ([`set_state`]): a viewer asks
    /// every frame, and a walk of a 16 384-chunk map's slots takes a millisecond and more.
    counts: Census,
    /// The tops the full bakes in the slots were made with, kept as they come and go: every edit
    /// asks for each level's lowest ([`above_top_readers`]).
    tops: Tops,
}

/// How many full bakes of each level were made with each top ([`ChunkBake::top_layer`]; none
/// counts as `i32::MIN`, below every layer).
#[derive(Debug, Default, PartialEq, Eq)]
struct Tops(BTreeMap<(usize, i32), usize>);

impl Tops {
    fn key(key: ChunkKey, bake: &ChunkBake) -> (usize, i32) {
        (key.0, bake.top_layer.unwrap_or(i32::MIN))
    }

    fn add(&mut self, key: ChunkKey, bake: &ChunkBake) {
        *self.0.entry(Self::key(key, bake)).or_default() += 1;
    }

    fn remove(&mut self, key: ChunkKey, bake: &ChunkBake) {
        let k = Self::key(key, bake);
        if let Some(n) = self.0.get_mut(&k) {
            *n -= 1;
            if *n == 0 {
                self.0.remove(&k);
            }
        }
    }

    /// A full bake `new` took the place of `old`.
    fn set(&mut self, key: ChunkKey, old: Option<&ChunkBake>, new: &ChunkBake) {
        if let Some(old) = old {
            self.remove(key, old);
        }
        self.add(key, new);
    }

    /// The lowest top a full bake of level `li` was made with (`None`: no full bake).
    fn lowest(&self, li: usize) -> Option<i32> {
        self.0.range((li, i32::MIN)..=(li, i32::MAX)).next().map(|(&(_, top), _)| top)
    }

    /// Counted by a walk of `slots`.
    fn of(slots: &BTreeMap<ChunkKey, ChunkSlot>) -> Self {
        let mut t = Self::default();
        for (&key, full) in slots.iter().filter_map(|(k, s)| Some((k, s.full.as_ref()?))) {
            t.add(key, full);
        }
        t
    }
}

impl fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rebuild")
            .field("plan", &self.plan)
            .field("chunks", &self.slots.len())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

impl Rebuild {
    /// An engine baking on `scheduler`'s workers (with its settings), starting with every chunk of
    /// `map`.
    pub fn new(scheduler: Scheduler, plan: Plan, map: Arc<Map>) -> Self {
        Self::with_bakes(scheduler, plan, map, BTreeMap::new())
    }

    /// [`Rebuild::new`] starting from full bakes made earlier of this very map (the bake cache,
    /// [`crate::cache::load`]): their chunks are [`ChunkState::Done`] and shown at once, only
    /// the others are queued. Bakes for chunks the map does not have are dropped.
    pub fn with_bakes(scheduler: Scheduler, plan: Plan, map: Arc<Map>, bakes: BTreeMap<ChunkKey, ChunkBake>) -> Self {
        let mut engine = Self {
            scheduler,
            plan,
            spread: dirty_chunks,
            map: map.clone(),
            slots: BTreeMap::new(),
            changed: BTreeSet::new(),
            revision: 0,
            errors: Vec::new(),
            epoch: 0,
            changed_at: BTreeMap::new(),
            readers: BTreeMap::new(),
            far_grids: BTreeMap::new(),
            far_refresh: (0, Duration::ZERO),
            holding: false,
            held: BTreeSet::new(),
            urgent: BTreeSet::new(),
            export_frames: None,
            counts: Census::default(),
            tops: Tops::default(),
        };
        engine.replace_with(map, bakes);
        engine
    }

    /// The same engine with another dependency spread. The spread decides correctness, so this
    /// exists for the invariant tests, which swap in a deliberately narrow spread to prove that
    /// they notice.
    pub fn with_spread(mut self, spread: SpreadFn) -> Self {
        self.spread = spread;
        self
    }

    /// The light memos of the engine's bakes ([`Scheduler::light_cache`]).
    pub fn light_cache(&self) -> &Arc<crate::light::LightCache> {
        self.scheduler.light_cache()
    }

    /// The visibility summaries and own lists the engine's bakes share, with what those bakes
    /// did with their air cells ([`crate::vis::VisCache::work`]).
    pub fn vis_cache(&self) -> &Arc<crate::vis::VisCache> {
        self.scheduler.vis_cache()
    }

    /// The settings every full bake uses.
    pub fn settings(&self) -> &CompileSettings {
        self.scheduler.settings()
    }

    /// The map the newest requests were made from.
    pub fn map(&self) -> &Arc<Map> {
        &self.map
    }

    /// Worker threads taking every stage.
    pub fn threads(&self) -> usize {
        self.scheduler.threads()
    }

    /// A new document: forgets every bake (and a [`Rebuild::hold`]) and queues every chunk of
    /// `map`.
    pub fn replace(&mut self, map: Arc<Map>) {
        self.replace_with(map, BTreeMap::new());
    }

    /// [`Rebuild::replace`] with full bakes of `map` made earlier (see [`Rebuild::with_bakes`]).
    pub fn replace_with(&mut self, map: Arc<Map>, bakes: BTreeMap<ChunkKey, ChunkBake>) {
        self.changed.extend(self.slots.keys().copied());
        self.slots.clear();
        self.counts = Census::default();
        self.tops = Tops::default();
        self.readers.clear();
        self.changed_at.clear();
        self.far_grids.clear();
        self.held.clear();
        self.holding = false;
        self.epoch += 1;
        self.map = map;
        // The old document's warm-ups are of no use to this one.
        self.scheduler.warm(self.map.clone(), []);
        let mut keys = every_chunk(&self.map);
        let mut bakes: Vec<(ChunkKey, ChunkBake)> = bakes.into_iter().filter(|(key, _)| keys.remove(key)).collect();
        // A saved bake's far lists are from the summaries of the map it was made in: write them
        // from the current ones (far sets are no part of a cache key).
        let levels: BTreeSet<usize> = bakes.iter().map(|(k, _)| k.0).collect();
        let grids: BTreeMap<usize, Arc<SummaryGrid>> =
            levels.into_iter().filter_map(|li| Some((li, self.far_grid(li)?))).collect();
        refresh_far_all(&mut bakes, &grids, self.scheduler.threads());
        for (key, bake) in bakes {
            // Its own lists and pathfinding records serve the chunk's next bake.
            keep_air_data(self.scheduler.vis_cache(), &self.map, &bake, self.scheduler.settings());
            for &r in &bake.reads {
                self.readers.entry((key.0, r)).or_default().insert(key);
            }
            let bake = Arc::new(bake);
            let mut slot = ChunkSlot::queued(self.epoch);
            slot.state = ChunkState::Done;
            // Keys are distinct and the slots were cleared: every insert is a new slot.
            self.counts.done += 1;
            slot.shown = Some(Staged { stage: Stage::Full, bake: bake.clone() });
            self.tops.add(key, &bake);
            slot.full = Some(bake);
            self.slots.insert(key, slot);
            self.changed.insert(key);
            self.revision += 1;
        }
        self.request(keys, &BTreeSet::new());
        self.check_counts();
        self.check_slots();
    }

    /// The map became `map` through `changes` (an edit, undo, redo or history jump): queues the
    /// chunks the spread says are stale, plus chunks that entered the level grids; forgets chunks
    /// that left them. Returns how many chunks were queued.
    pub fn edited(&mut self, map: Arc<Map>, changes: &ChangeSet) -> usize {
        if changes.is_empty() {
            self.map = map;
            return 0;
        }
        let before = std::mem::replace(&mut self.map, map);
        if changes.level_list {
            // Level indices may now name other levels: nothing drawn can be trusted.
            self.replace(self.map.clone());
            return self.slots.len();
        }
        self.epoch += 1;
        let mut dirty = (self.spread)(&before, &self.map, changes, self.settings());
        // Chunks whose cubes use a changed library record read as changed ones (deps.rs).
        let users = library_users(&before, &self.map, changes);
        let touched = changes.levels.iter().flat_map(|(&li, lc)| lc.chunks.iter().map(move |(c, _)| (li, c)));
        let touched: Vec<ChunkKey> = touched.chain(users).collect();
        for &key in &touched {
            self.changed_at.insert(key, self.epoch);
            // Bakes whose rays or searches went through the chunk.
            dirty.extend(self.readers.get(&key).into_iter().flatten().copied());
        }
        // Bakes whose rays stopped below a changed chunk and may have passed it.
        dirty.extend(above_top_readers(&before, &self.map, self.settings(), &self.slots, &self.tops, &touched));
        // Chunks that entered or left the level grids: the engine keeps a slot for each chunk of
        // `all_chunks`, found per chunk ([`in_all_chunks`]) rather than listed per edit.
        let parts: Vec<GridPart> = self.map.levels.iter().map(GridPart::of).collect();
        let (entered, gone) = self.grid_moves(&before, &parts);
        dirty.extend(entered);
        dirty.retain(|k| self.map.levels.get(k.0).is_some_and(|l| in_all_chunks(l, &parts[k.0], k.1)));
        for k in gone {
            if let Some(slot) = self.slots.remove(&k) {
                *self.counts.slot(slot.state) -= 1;
                if let Some(full) = &slot.full {
                    self.tops.remove(k, full);
                }
                self.forget_reads(k, slot.full.as_deref());
            }
            self.changed.insert(k);
            self.revision += 1;
        }
        // Far visibility: the full bakes not re-baked whose far sets changed.
        let t = std::time::Instant::now();
        let refreshed = self.refresh_far(&dirty);
        self.far_refresh = (refreshed, t.elapsed());
        // The chunks that draw the edit come first, with a draft ([`draft_chunks`]); the other
        // dirty chunks keep their older light until their exact bakes arrive.
        let mut urgent = draft_chunks(&self.map, changes);
        urgent.retain(|k| dirty.contains(k));
        let n = dirty.len();
        self.request(dirty, &urgent);
        self.urgent = urgent;
        self.check_counts();
        self.check_slots();
        n
    }

    /// The chunks that entered the level grids (no slot yet) and those that left them (a slot
    /// still) when the map went from `before` to the current one; `parts`: the current levels'
    /// [`GridPart`]s. Where a level's grid part stayed the same, only a chunk that became or
    /// stopped being stored can have entered or left: the two maps' stored chunks are walked
    /// side by side ([`stored_difference`]), no set of every chunk is built. On
    /// `terrain(32,4,32)` building that set and comparing it with the slots took 0.85 ms of the
    /// 1.3 ms an edit spent here.
    fn grid_moves(&self, before: &Map, parts: &[GridPart]) -> (Vec<ChunkKey>, Vec<ChunkKey>) {
        let (mut entered, mut gone) = (Vec::new(), Vec::new());
        let mut check = |key: ChunkKey, member: bool| match (member, self.slots.contains_key(&key)) {
            (true, false) => entered.push(key),
            (false, true) => gone.push(key),
            _ => {}
        };
        for (li, level) in self.map.levels.iter().enumerate() {
            let part = &parts[li];
            match before.levels.get(li).filter(|old| GridPart::of(old) == *part) {
                Some(old) => {
                    for c in stored_difference(old, level) {
                        check((li, c), in_all_chunks(level, part, c));
                    }
                }
                None => {
                    let now = all_chunks(level);
                    for &c in &now {
                        check((li, c), true);
                    }
                    for &(_, c) in self.slots.range(level_keys(li)).map(|(k, _)| k) {
                        if !now.contains(&c) {
                            check((li, c), false);
                        }
                    }
                }
            }
        }
        // Slots of levels that are no more.
        for &key in
            self.slots.range((self.map.levels.len(), ChunkCoord::new(i32::MIN, i32::MIN, i32::MIN))..).map(|(k, _)| k)
        {
            check(key, false);
        }
        (entered, gone)
    }

    /// In tests and debug builds: the engine has a slot for every chunk of every level's
    /// [`all_chunks`] and for nothing else.
    fn check_slots(&self) {
        if cfg!(debug_assertions) {
            let every = every_chunk(&self.map);
            debug_assert!(self.slots.keys().eq(every.iter()), "slots kept against every chunk of the map");
        }
    }

    /// How many full bakes the last [`Self::edited`] brought up to the changed far sets without
    /// a re-bake, and how long that took (the summary grid of the new map included).
    pub fn last_far_refresh(&self) -> (usize, Duration) {
        self.far_refresh
    }

    /// The summary grid of level `li` of the current map, when bakes list far chunks from one.
    fn current_grid(&self, li: usize) -> Option<Arc<SummaryGrid>> {
        self.settings().visibility.as_ref()?;
        snapshot_grid(self.scheduler.vis_cache(), &self.map, li)
    }

    /// The grid the full bakes of level `li` agree with ([`Self::refresh_far`]), taken from the
    /// current map when no edit has set it yet.
    fn far_grid(&mut self, li: usize) -> Option<Arc<SummaryGrid>> {
        if let Some(g) = self.far_grids.get(&li) {
            return Some(g.clone());
        }
        let g = self.current_grid(li)?;
        self.far_grids.insert(li, g.clone());
        Some(g)
    }

    /// Makes every full bake (but those in `skip`, which are re-baked) list the far sets of the
    /// current map's summary grids. Against the grid the bakes agreed with, with the same box and
    /// the chunk's summary unchanged, only chunks whose far sets differ are written again;
    /// otherwise every bake not from the current grid is. Returns how many bakes changed.
    fn refresh_far(&mut self, skip: &BTreeSet<ChunkKey>) -> usize {
        let mut n = 0;
        for li in 0..self.map.levels.len() {
            let Some(grid) = self.current_grid(li) else {
                self.far_grids.remove(&li);
                continue;
            };
            let old = self.far_grids.insert(li, grid.clone());
            if old.as_ref().is_some_and(|o| Arc::ptr_eq(o, &grid)) {
                continue;
            }
            let comparable = old.filter(|o| o.same_box(&grid));
            for (key, slot) in self.slots.iter_mut().filter(|(k, _)| k.0 == li) {
                // Cheapest test first: after most edits every chunk's far lists stay the same.
                if slot.full.is_none() || comparable.as_ref().is_some_and(|o| grid.same_far_as(o, key.1)) {
                    continue;
                }
                if skip.contains(key) {
                    continue;
                }
                if update_full(slot, |b| b.refresh_far(&grid)) {
                    n += 1;
                    self.revision += 1;
                }
            }
        }
        n
    }

    /// The map became `map` by some change the caller cannot describe (a project reloaded from
    /// disk): works out the change set ([`diff`]) and goes on as [`Rebuild::edited`].
    pub fn reload(&mut self, map: Arc<Map>) -> usize {
        let changes = diff(&self.map, &map);
        self.edited(map, &changes)
    }

    /// Settle-then-bake, for a value still being dragged (a form's slider, a dragged light):
    /// while `hold` is set, chunks the engine queues get drafts only ([`Scheduler::submit_drafts`])
    /// and stay in flight; releasing it queues the full bake of every chunk queued meanwhile,
    /// from the map as it is then. Only under [`Plan::Interactive`] (a headless engine draws
    /// nothing to hurry).
    pub fn hold(&mut self, hold: bool) {
        let hold = hold && self.plan == Plan::Interactive;
        if self.holding == hold {
            return;
        }
        self.holding = hold;
        if !hold {
            let mut keys = Vec::new();
            for k in std::mem::take(&mut self.held) {
                let Some(slot) = self.slots.get_mut(&k) else { continue }; // left the grid
                // A drawn draft stays `Drafted`; a failed draft is retried with the rest.
                if slot.state == ChunkState::Failed {
                    set_state(&mut self.counts, slot, ChunkState::Queued);
                    slot.error = None;
                }
                keys.push(k);
            }
            // Newer requests supersede the drafts still on their way; the drafts are drawn until
            // the full bakes arrive (see [`Plan::Interactive`]).
            self.scheduler.submit_full(self.map.clone(), keys);
        }
    }

    /// The chunks that draw the last edit (its changed chunks and the face neighbours it touches,
    /// among those it re-baked): they went first, and a viewer meshes them first too.
    pub fn urgent(&self) -> &BTreeSet<ChunkKey> {
        &self.urgent
    }

    /// Keep each chunk's compressed frames from one export ([`Self::assemble`]) for the next, so
    /// that an export after an edit encodes only the chunks re-baked since ([`ExportFrames`]):
    /// for an engine that lives on (the editor, `pmfc watch`). Costs the frames' memory, about
    /// the exported file's size.
    pub fn keep_export_frames(&mut self, keep: bool) {
        if keep != self.export_frames.is_some() {
            self.export_frames = keep.then(Arc::default);
        }
    }

    /// The frames kept for the next export ([`Self::keep_export_frames`]).
    pub fn export_frames(&self) -> Option<&ExportFrames> {
        self.export_frames.as_deref()
    }

    /// Whether full bakes are held back ([`Rebuild::hold`]).
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// Queues `keys`; those in `urgent` go first (and get a draft under [`Plan::Interactive`]).
    fn request(&mut self, keys: BTreeSet<ChunkKey>, urgent: &BTreeSet<ChunkKey>) {
        if keys.is_empty() {
            return;
        }
        for k in &keys {
            let slot = self.slots.entry(*k).or_insert_with(|| {
                self.counts.queued += 1;
                ChunkSlot::queued(self.epoch)
            });
            set_state(&mut self.counts, slot, ChunkState::Queued);
            slot.error = None;
            slot.requested_at = self.epoch;
        }
        if self.holding {
            self.scheduler.submit_drafts(self.map.clone(), keys.iter().copied());
            self.held.extend(keys);
            return;
        }
        let (first, rest): (Vec<ChunkKey>, Vec<ChunkKey>) = keys.into_iter().partition(|k| urgent.contains(k));
        match self.plan {
            Plan::Interactive => {
                // Urgent first: an idle worker woken by the first submit takes the edited
                // chunk's draft, not a neighbour's bake. The rest need no preview (see
                // [`Plan::Interactive`]).
                self.scheduler.submit_urgent(self.map.clone(), first);
                self.scheduler.submit_full(self.map.clone(), rest);
            }
            Plan::FinalOnly => self.scheduler.submit_full(self.map.clone(), first.into_iter().chain(rest)),
        }
    }

    /// Unless a focus was set ([`Self::set_focus`]): bakes near this point of level `level` (world
    /// space) go first and the light memos nearest it are kept ([`Scheduler::set_camera`]).
    pub fn set_camera(&self, level: usize, position: DVec3) {
        self.scheduler.set_camera(level, position);
    }

    /// The point of level `level` (world space) where the next edits are likely, from now on
    /// whatever the camera: bakes nearest it go first and the light memos nearest it are the ones
    /// kept ([`Scheduler::set_focus`]).
    pub fn set_focus(&self, level: usize, position: DVec3) {
        self.scheduler.set_focus(level, position);
    }

    /// Warms up the light memos of the chunks of level `level` within `radius` chunks (a cube)
    /// of world point `point` while the workers are idle, nearest first ([`Scheduler::warm`]):
    /// the first edit there then re-traces only the luxels it reaches, as later ones do, instead
    /// of every luxel of its chunks (bakes from the cache come with no memo). Chunks without
    /// geometry, or with a memo already, are left out; the list replaces the last one.
    pub fn warm_around(&self, level: usize, point: DVec3, radius: i32) {
        let Some(l) = self.map.levels.get(level) else { return };
        let frame = l.frame();
        let centre = frame.chunk_from_world(point);
        let light = self.scheduler.light_cache();
        let mut keys: Vec<(f64, ChunkKey)> = Vec::new();
        for dx in -radius..=radius {
            for dy in -radius..=radius {
                for dz in -radius..=radius {
                    let c = ChunkCoord { x: centre.x + dx, y: centre.y + dy, z: centre.z + dz };
                    let key = (level, c);
                    let lit = self
                        .slots
                        .get(&key)
                        .and_then(|s| s.full.as_ref())
                        .is_some_and(|b| !b.pmf.client.vertices.is_empty());
                    if lit && light.get(level, c).is_none() {
                        keys.push((frame.chunk_center_world(c).distance_squared(point), key));
                    }
                }
            }
        }
        keys.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.scheduler.warm(self.map.clone(), keys.into_iter().map(|(_, k)| k));
    }

    /// Where the last edit was, for an engine without a view (`pmfc watch`): makes the centre of
    /// the chunks that draw it ([`Self::urgent`]; of the first level among them) the focus
    /// ([`Self::set_focus`]) and warms up the memos within [`WARM_RADIUS`] of it
    /// ([`Self::warm_around`]), so that the next edit near the last re-traces only what it
    /// reaches. Returns that centre; `None` (and nothing done) when the last edit re-baked no
    /// chunk.
    pub fn focus_on_last_edit(&self) -> Option<(usize, DVec3)> {
        let level = self.urgent.first()?.0;
        let frame = self.map.levels.get(level)?.frame();
        let (sum, n) = self
            .urgent
            .iter()
            .filter(|k| k.0 == level)
            .fold((DVec3::ZERO, 0.0), |(sum, n), &(_, c)| (sum + frame.chunk_center_world(c), n + 1.0));
        let centre = sum / n;
        self.set_focus(level, centre);
        self.warm_around(level, centre, WARM_RADIUS);
        Some((level, centre))
    }

    /// The scheduler's warm-ups so far ([`Self::warm_around`]): done, still listed, and whether
    /// one runs now.
    pub fn warm_ups(&self) -> (usize, usize, bool) {
        let (left, running) = self.scheduler.warming();
        (self.scheduler.warmed(), left, running)
    }

    /// Takes the results that arrived. Call once per frame (a viewer) or after [`Self::wait`].
    pub fn poll(&mut self) -> Polled {
        let mut polled = Polled::default();
        let mut stale = BTreeSet::new();
        for mut event in self.scheduler.drain() {
            let key = event.key();
            let Some(requested_at) = self.slots.get(&key).map(|s| s.requested_at) else { continue }; // left the grid
            let mut is_stale = false;
            if let BakeEvent::Baked { bake, stage: Stage::Full, .. } = &mut event {
                // Far lists as the current map's summaries give them (the bake may come from an
                // older map's).
                if let Some(grid) = self.far_grid(key.0) {
                    bake.refresh_far(&grid);
                }
                // It read a chunk that changed after it was asked for, or its rays stopped below
                // one that may be in their way.
                is_stale =
                    bake.reads.iter().any(|&r| self.changed_at.get(&(key.0, r)).is_some_and(|&t| t > requested_at))
                        || self.changed_above(key, bake, requested_at);
                let old = self.slots.get(&key).and_then(|s| s.full.clone());
                self.forget_reads(key, old.as_deref());
                for &r in &bake.reads {
                    self.readers.entry((key.0, r)).or_default().insert(key);
                }
            }
            let slot = self.slots.get_mut(&key).expect("looked up above");
            match event {
                BakeEvent::Baked { bake, elapsed, stage } => {
                    let bake = Arc::new(*bake);
                    slot.times[stage.index()] = Some(elapsed);
                    // A full bake after its own preview draws the same mesh and lightmaps: no
                    // upload. Otherwise what is drawn changed.
                    let same_picture = stage == Stage::Full && slot.state == ChunkState::Previewed;
                    let state = match stage {
                        Stage::Draft => ChunkState::Drafted,
                        Stage::Preview => ChunkState::Previewed,
                        // It read a chunk that changed after it was asked for: draw it, but bake
                        // the chunk again from the current map.
                        Stage::Full if is_stale => {
                            stale.insert(key);
                            self.tops.set(key, slot.full.replace(bake.clone()).as_deref(), &bake);
                            ChunkState::Queued
                        }
                        Stage::Full => {
                            self.tops.set(key, slot.full.replace(bake.clone()).as_deref(), &bake);
                            ChunkState::Done
                        }
                    };
                    set_state(&mut self.counts, slot, state);
                    slot.shown = Some(Staged { stage, bake });
                    if !same_picture {
                        self.changed.insert(key);
                    }
                    self.revision += 1;
                    polled.arrived += 1;
                }
                BakeEvent::Failed { stage, error, .. } => {
                    let message = error.to_string();
                    self.errors.push(format!("{} bake: {message}", stage.label()));
                    set_state(&mut self.counts, slot, ChunkState::Failed);
                    slot.error = Some(message);
                    polled.failed += 1;
                }
                BakeEvent::Panicked { stage, message, .. } => {
                    let message = format!("{} bake panicked: {message}", stage.label());
                    self.errors.push(format!("level {}, chunk {:?}: {message}", key.0, key.1));
                    set_state(&mut self.counts, slot, ChunkState::Failed);
                    slot.error = Some(message);
                    polled.failed += 1;
                }
            }
        }
        self.request(stale, &BTreeSet::new());
        self.check_counts();
        polled
    }

    /// In debug builds (the tests), that the kept counts are a walk's.
    fn check_counts(&self) {
        if cfg!(debug_assertions) {
            let mut c = Census::default();
            for s in self.slots.values() {
                *c.slot(s.state) += 1;
            }
            debug_assert_eq!(c, self.counts, "state counts kept against a walk of the slots");
            debug_assert!(Tops::of(&self.slots) == self.tops, "bake tops kept against a walk of the slots");
        }
    }

    /// Whether a chunk changed after `requested_at` above the top `bake` (of `key`) was made
    /// with, where its rays may have passed ([`crate::deps::sky_reaches`],
    /// [`crate::deps::lights_through`]).
    fn changed_above(&self, key: ChunkKey, bake: &ChunkBake, requested_at: u64) -> bool {
        let Some(level) = self.map.levels.get(key.0) else { return false };
        // Chunks order by `y` first: the range holds only the changed chunks above the top.
        let above = bake.top_layer.map_or(i32::MIN, |top| top.saturating_add(1));
        let lo = (key.0, ChunkCoord::new(i32::MIN, above, i32::MIN));
        let hi = (key.0, ChunkCoord::new(i32::MAX, i32::MAX, i32::MAX));
        self.changed_at.range(lo..=hi).any(|(&(_, c), &t)| {
            t > requested_at
                && (crate::deps::sky_reaches(level, self.settings(), key.1, c)
                    || crate::deps::lights_through(level, self.settings(), c).contains(&key.1))
        })
    }

    /// Drops `key`'s entries from the reverse index of reads (its full bake `old` is replaced).
    fn forget_reads(&mut self, key: ChunkKey, old: Option<&ChunkBake>) {
        for &r in old.map_or(&[][..], |b| &b.reads[..]) {
            if let Some(set) = self.readers.get_mut(&(key.0, r)) {
                set.remove(&key);
                if set.is_empty() {
                    self.readers.remove(&(key.0, r));
                }
            }
        }
    }

    /// Blocks until every queued bake is done, then takes the results. For tools and tests, not
    /// for a UI thread.
    pub fn wait(&mut self) -> Polled {
        self.scheduler.wait_idle();
        self.poll()
    }

    /// Every chunk has the full bake of the current map.
    pub fn is_final(&self) -> bool {
        self.counts.done == self.slots.len()
    }

    /// No result is on its way (every chunk is done or failed).
    pub fn is_settled(&self) -> bool {
        self.counts.in_flight() == 0
    }

    /// Chunks with a result on its way.
    pub fn in_flight(&self) -> usize {
        self.counts.in_flight()
    }

    /// How many chunks are in each state (kept as states change, not counted: a viewer asks
    /// every frame).
    pub fn census(&self) -> Census {
        self.counts
    }

    /// Chunks in `state`.
    pub fn count(&self, state: ChunkState) -> usize {
        self.counts.count(state)
    }

    /// Where a chunk stands (`None` for a chunk the engine does not know).
    pub fn state(&self, key: ChunkKey) -> Option<ChunkState> {
        Some(self.slots.get(&key)?.state)
    }

    /// The chunks in `state`, in key order. The walk of the slots stops at the last of them (the
    /// census counts them), so it costs nothing when no chunk is in `state`: a viewer asks for
    /// the queued ones every frame.
    pub fn keys(&self, state: ChunkState) -> impl Iterator<Item = ChunkKey> + '_ {
        self.slots.iter().filter(move |(_, s)| s.state == state).map(|(k, _)| *k).take(self.counts.count(state))
    }

    /// The chunks with a result on its way, in key order (the walk stops at the last, as
    /// [`Self::keys`]'s).
    pub fn keys_in_flight(&self) -> impl Iterator<Item = ChunkKey> + '_ {
        self.slots.iter().filter(|(_, s)| s.state.in_flight()).map(|(k, _)| *k).take(self.counts.in_flight())
    }

    /// Every chunk's slot, in key order.
    pub fn slots(&self) -> &BTreeMap<ChunkKey, ChunkSlot> {
        &self.slots
    }

    /// One chunk's slot.
    pub fn slot(&self, key: ChunkKey) -> Option<&ChunkSlot> {
        self.slots.get(&key)
    }

    /// The bake to draw for a chunk.
    pub fn shown(&self, key: ChunkKey) -> Option<&Staged> {
        self.slots.get(&key)?.shown.as_ref()
    }

    /// The full bake of the current map for a chunk (`None` while it is being re-baked).
    pub fn full(&self, key: ChunkKey) -> Option<&Arc<ChunkBake>> {
        let slot = self.slots.get(&key)?;
        if slot.state == ChunkState::Done { slot.full.as_ref() } else { None }
    }

    /// Chunks whose drawn bake changed (or that left the map) since the last call.
    pub fn take_changed(&mut self) -> BTreeSet<ChunkKey> {
        std::mem::take(&mut self.changed)
    }

    /// Bumped whenever any chunk's bakes change.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Failures and panics so far, newest last.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Adds a message to [`Self::errors`] (for failures around the bakes, e.g. an autosave).
    pub fn report(&mut self, message: String) {
        self.errors.push(message);
    }

    /// Compiles the current map from the full bakes, with `timestamp` in the header (the
    /// settings' own when `None`). Only when [`Self::is_final`]: previews and stale bakes are
    /// never exported.
    pub fn compile(&self, timestamp: Option<u64>) -> Result<pmf::File, RebuildError> {
        Ok(self.assemble(timestamp)?.into_file())
    }

    /// [`Self::compile`] consuming the engine: each chunk record moves from its bake into the
    /// file instead of being copied, so the file and the bakes are never in memory twice (on
    /// terrain(32,4,32), 750 MiB less at the peak of `pmfc build`).
    pub fn into_file(mut self, timestamp: Option<u64>) -> Result<pmf::File, RebuildError> {
        let file = self.assemble(timestamp)?.file;
        // Without the drawn bakes, the full bakes are the only holders of their records.
        let mut bakes: BTreeMap<ChunkKey, Arc<ChunkBake>> =
            std::mem::take(&mut self.slots).into_iter().filter_map(|(k, s)| Some((k, s.full?))).collect();
        Ok(fill_chunks(file, &self.map, |k| bakes.remove(&k))?)
    }

    /// [`Self::compile`] without copying the bakes: write the result with [`Assembled::write`]
    /// (chunks encoded in parallel, straight from the bakes).
    pub fn assemble(&self, timestamp: Option<u64>) -> Result<Assembled<'_>, RebuildError> {
        let settings = self.export_settings(timestamp)?;
        assemble_bakes(&self.map, &settings, |k| self.slots.get(&k)?.full.as_ref(), self.export_frames.as_deref())
    }

    /// What [`Self::assemble`] reads, owned: the map, the full bakes (their `Arc`s, not copies),
    /// the settings and the kept frames, to export on another thread while the engine goes on
    /// (the editor's Export). Edits made meanwhile are not in it: it exports the map as it was.
    pub fn export_source(&self, timestamp: Option<u64>) -> Result<ExportSource, RebuildError> {
        let settings = self.export_settings(timestamp)?;
        let bakes = self.slots.iter().filter_map(|(k, s)| Some((*k, s.full.clone()?))).collect();
        Ok(ExportSource { map: self.map.clone(), settings, bakes, frames: self.export_frames.clone() })
    }

    /// The settings an export compiles with (`timestamp` in the header, else the settings'
    /// own), once every chunk has its full bake of the current map.
    fn export_settings(&self, timestamp: Option<u64>) -> Result<CompileSettings, RebuildError> {
        if let Some((key, slot)) = self.slots.iter().find(|(_, s)| s.state == ChunkState::Failed) {
            return Err(RebuildError::Failed { key: *key, error: slot.error.clone().unwrap_or_default() });
        }
        let waiting = self.in_flight();
        if waiting > 0 {
            return Err(RebuildError::NotFinal(waiting));
        }
        let mut settings = self.settings().clone();
        if let Some(t) = timestamp {
            settings.timestamp = t;
        }
        Ok(settings)
    }
}

/// An export's inputs taken from a [`Rebuild`] ([`Rebuild::export_source`]), owned so that it
/// can be written on another thread: [`Self::assemble`] gives the same [`Assembled`] (the same
/// bytes) as [`Rebuild::assemble`] gave when it was taken, and keeps frames for the engine's
/// next export the same way.
#[derive(Debug, Clone)]
pub struct ExportSource {
    map: Arc<Map>,
    settings: CompileSettings,
    bakes: BTreeMap<ChunkKey, Arc<ChunkBake>>,
    frames: Option<Arc<ExportFrames>>,
}

impl ExportSource {
    /// The file to write ([`Rebuild::assemble`] as it was when this was taken).
    pub fn assemble(&self) -> Result<Assembled<'_>, RebuildError> {
        assemble_bakes(&self.map, &self.settings, |k| self.bakes.get(&k), self.frames.as_deref())
    }

    /// How many chunks the export writes (every level's grid).
    pub fn chunks(&self) -> usize {
        self.bakes.len()
    }
}

/// [`assemble`] of `map` from the full bakes `arc_of` gives, taking and keeping frames in
/// `frames` when the engine keeps them.
fn assemble_bakes<'a>(
    map: &Map,
    settings: &CompileSettings,
    arc_of: impl Fn(ChunkKey) -> Option<&'a Arc<ChunkBake>> + Copy,
    frames: Option<&'a ExportFrames>,
) -> Result<Assembled<'a>, RebuildError> {
    let assembled = assemble(map, |k| arc_of(k).map(|a| &**a), settings)?;
    Ok(match frames {
        Some(kept) => assembled.with_frames(kept, arc_of).expect("the bakes just assembled are these"),
        None => assembled,
    })
}

/// [`ChunkBake::refresh_far`] of every bake with a grid for its level in `grids`, on `threads`
/// threads (each bake's lists are a function of the bake and its grid alone: the split does
/// not change them). Opening a saved `terrain(32,4,32)` writes 4 096 chunks' far lists.
fn refresh_far_all(bakes: &mut [(ChunkKey, ChunkBake)], grids: &BTreeMap<usize, Arc<SummaryGrid>>, threads: usize) {
    let refresh = |part: &mut [(ChunkKey, ChunkBake)]| {
        for (key, bake) in part {
            if let Some(grid) = grids.get(&key.0) {
                bake.refresh_far(grid);
            }
        }
    };
    let threads = threads.clamp(1, bakes.len().max(1));
    if threads == 1 {
        refresh(bakes);
        return;
    }
    let per = bakes.len().div_ceil(threads);
    std::thread::scope(|s| {
        for part in bakes.chunks_mut(per) {
            s.spawn(move || refresh(part));
        }
    });
}

/// The chunks whose full bakes in `slots` stopped their rays below one of the `changed` chunks
/// ([`ChunkBake::top_layer`]) and may have passed it ([`crate::deps::sky_reaches`] in `after`),
/// and, where some bake's top is below a changed chunk, the chunks whose rays to a light may have
/// crossed it, with the lights of `before` and of `after` ([`crate::deps::lights_through`]).
/// Usually no bake's top is below any changed chunk, which one pass over the slots finds.
fn above_top_readers(
    before: &Map,
    after: &Map,
    settings: &CompileSettings,
    slots: &BTreeMap<ChunkKey, ChunkSlot>,
    tops: &Tops,
    changed: &[ChunkKey],
) -> BTreeSet<ChunkKey> {
    let mut out = BTreeSet::new();
    for &(li, c) in changed {
        // The lowest top a full bake of the level was made with (kept, not walked for).
        if tops.lowest(li).is_none_or(|top| c.y <= top) {
            continue;
        }
        let Some(level) = after.levels.get(li) else { continue };
        for (&key, slot) in slots.range((li, ChunkCoord::new(i32::MIN, i32::MIN, i32::MIN))..) {
            if key.0 != li {
                break;
            }
            let Some(full) = &slot.full else { continue };
            if full.top_layer.is_none_or(|top| c.y > top) && crate::deps::sky_reaches(level, settings, key.1, c) {
                out.insert(key);
            }
        }
        for level in [before, after].into_iter().filter_map(|m| m.levels.get(li)) {
            out.extend(crate::deps::lights_through(level, settings, c).into_iter().map(|x| (li, x)));
        }
    }
    out
}

/// Moves `slot` to `state`, keeping `counts` ([`Rebuild::census`]) right.
fn set_state(counts: &mut Census, slot: &mut ChunkSlot, state: ChunkState) {
    *counts.slot(slot.state) -= 1;
    *counts.slot(state) += 1;
    slot.state = state;
}

/// Applies `f` to a slot's full bake in place (copying it only where someone else holds it
/// too); the drawn bake stays the same one when it was the full bake. Returns what `f` returns.
fn update_full(slot: &mut ChunkSlot, f: impl FnOnce(&mut ChunkBake) -> bool) -> bool {
    let Some(mut full) = slot.full.take() else { return false };
    let shown_stage = match &slot.shown {
        Some(s) if Arc::ptr_eq(&s.bake, &full) => slot.shown.take().map(|s| s.stage),
        _ => None,
    };
    let changed = f(Arc::make_mut(&mut full));
    if let Some(stage) = shown_stage {
        slot.shown = Some(Staged { stage, bake: full.clone() });
    }
    slot.full = Some(full);
    changed
}

/// The slot keys of level `li`, for [`BTreeMap::range`].
fn level_keys(li: usize) -> std::ops::RangeInclusive<ChunkKey> {
    (li, ChunkCoord::new(i32::MIN, i32::MIN, i32::MIN))..=(li, ChunkCoord::new(i32::MAX, i32::MAX, i32::MAX))
}

/// Every chunk of every level the engine keeps a slot for: each level's exported grid plus every
/// stored chunk ([`all_chunks`]).
fn every_chunk(map: &Map) -> BTreeSet<ChunkKey> {
    map.levels.iter().enumerate().flat_map(|(li, l)| all_chunks(l).into_iter().map(move |c| (li, c))).collect()
}

/// What differs between two versions of a map, as a change set for the dependency spread (for
/// callers that only have the two maps, e.g. a project reloaded from disk).
pub fn diff(old: &Map, new: &Map) -> ChangeSet {
    let mut cs = ChangeSet::new();
    if old.levels.len() != new.levels.len() {
        cs.level_list = true;
        return cs;
    }
    if !old.library.content_eq(&new.library) {
        let (a, b) = (&old.library, &new.library);
        let same_environments = a.sound_environments().iter().eq(b.sound_environments().iter())
            && a.weather_environments().iter().eq(b.weather_environments().iter())
            && a.sky_environments().iter().eq(b.sky_environments().iter())
            && a.gravity_environments().iter().eq(b.gravity_environments().iter());
        if !same_environments {
            // Environment ids are not told apart here: everything is re-baked.
            cs.level_list = true;
            return cs;
        }
        // Materials reach a bake only through the cubes painted with them: the spread
        // re-bakes their users (deps::library_users).
        diff_table(a.materials(), b.materials(), LibRef::Material, &mut cs.library);
        diff_table(a.physics_materials(), b.physics_materials(), LibRef::Physics, &mut cs.library);
        diff_table(a.sound_materials(), b.sound_materials(), LibRef::Sound, &mut cs.library);
    }
    cs.meta = old.meta != new.meta;
    cs.path_sets = old.path_sets != new.path_sets;
    for (li, (a, b)) in old.levels.iter().zip(&new.levels).enumerate() {
        let mut changed = ChunkChanges::new();
        let coords: BTreeSet<_> = a.chunks().map(|(c, _)| *c).chain(b.chunks().map(|(c, _)| *c)).collect();
        for c in coords {
            let same = match (a.chunk(c), b.chunk(c)) {
                (Some(x), Some(y)) => Arc::ptr_eq(x, y) || x.octree().content_hash() == y.octree().content_hash(),
                (None, None) => true,
                _ => false,
            };
            if !same {
                changed.insert(c, b.frame().chunk_addr(c).lattice_box().translated(-b.frame().chunk_min_lattice(c)));
            }
        }
        cs.add_chunks(li, &changed);
        if a.frame() != b.frame()
            || a.flags != b.flags
            || a.environments != b.environments
            || a.air_physics_material != b.air_physics_material
            || a.lighting != b.lighting
        {
            cs.level_mut(li).settings = true;
        }
        let (x, y) = (&a.objects, &b.objects);
        let mut objects = BTreeSet::new();
        diff_table(x.lights(), y.lights(), ObjRef::Light, &mut objects);
        diff_table(x.entities(), y.entities(), ObjRef::Entity, &mut objects);
        diff_table(x.regions(), y.regions(), ObjRef::Region, &mut objects);
        diff_table(x.load_regions(), y.load_regions(), ObjRef::LoadRegion, &mut objects);
        if !objects.is_empty() {
            cs.level_mut(li).objects = objects;
        }
    }
    cs
}

/// Adds to `out` every id whose record differs between two tables (added, removed or changed).
fn diff_table<I: TableId, T: PartialEq, R: Ord>(
    a: &Table<I, T>,
    b: &Table<I, T>,
    to_ref: fn(I) -> R,
    out: &mut BTreeSet<R>,
) {
    let ids: BTreeSet<I> = a.ids().chain(b.ids()).collect();
    out.extend(ids.into_iter().filter(|&i| a.get(i) != b.get(i)).map(to_ref));
}
