//! Incremental builds: keep every chunk's bake, re-bake only what an edit dirtied, and compile.
//! The central invariant (docs/spec/PMF-NOTES.md X1): the file compiled from an incremental build equals the
//! file compiled from scratch, byte for byte; `tests/tests/invariant.rs` checks it on random edit
//! sequences.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use pmfedit_core::edit::ChangeSet;
use pmfedit_core::format::pmf;
use pmfedit_core::map::Map;

use crate::compile::{ChunkBake, CompileError, CompileSettings, bake_chunk, compile, level_chunks};
use crate::deps::{ChunkKey, dirty_chunks};
use crate::scheduler::{BakeEvent, Scheduler, Stage};

/// The bakes of a map, kept across edits.
#[derive(Debug, Clone, Default)]
pub struct IncrementalBuild {
    pub settings: CompileSettings,
    bakes: BTreeMap<ChunkKey, ChunkBake>,
}

impl IncrementalBuild {
    /// No bakes yet.
    pub fn new(settings: CompileSettings) -> Self {
        Self { settings, bakes: BTreeMap::new() }
    }

    /// The bakes so far.
    pub fn bakes(&self) -> &BTreeMap<ChunkKey, ChunkBake> {
        &self.bakes
    }

    /// Stores a bake (replacing the chunk's previous one).
    pub fn insert(&mut self, bake: ChunkBake) {
        self.bakes.insert((bake.level, bake.chunk), bake);
    }

    /// Forgets every bake (a level was added or removed, say).
    pub fn clear(&mut self) {
        self.bakes.clear();
    }

    /// Chunks a compile of `map` needs that have no bake.
    pub fn missing(&self, map: &Map) -> Vec<ChunkKey> {
        map.levels
            .iter()
            .enumerate()
            .flat_map(|(li, l)| level_chunks(l).into_iter().map(move |c| (li, c)))
            .filter(|k| !self.bakes.contains_key(k))
            .collect()
    }

    /// The chunks to re-bake after `changes` turned `before` into `after`: the dependency spread
    /// ([`dirty_chunks`]) plus chunks that have no bake yet. Drops bakes of levels that no
    /// longer exist.
    pub fn invalidate(&mut self, before: &Map, after: &Map, changes: &ChangeSet) -> BTreeSet<ChunkKey> {
        if changes.level_list {
            self.bakes.retain(|k, _| k.0 < after.levels.len());
        }
        let radius = self.settings.visibility.as_ref().map_or(0, |v| v.radius_chunks as i32);
        let mut dirty = dirty_chunks(before, after, changes, radius);
        dirty.extend(self.missing(after));
        dirty
    }

    /// Bakes `chunks` of `map` on this thread.
    pub fn rebake(&mut self, map: &Map, chunks: impl IntoIterator<Item = ChunkKey>) -> Result<usize, CompileError> {
        let mut n = 0;
        for (li, c) in chunks {
            if li < map.levels.len() {
                self.insert(bake_chunk(map, li, c, &self.settings)?);
                n += 1;
            }
        }
        Ok(n)
    }

    /// Bakes `chunks` of `map` on a scheduler's threads (full bakes only, no previews), waiting
    /// for them.
    pub fn rebake_parallel(
        &mut self,
        scheduler: &Scheduler,
        map: Arc<Map>,
        chunks: impl IntoIterator<Item = ChunkKey>,
    ) -> Result<usize, String> {
        scheduler.submit_full(map, chunks);
        scheduler.wait_idle();
        let mut n = 0;
        for event in scheduler.drain() {
            match event {
                BakeEvent::Baked { bake, stage: Stage::Full, .. } => {
                    self.insert(*bake);
                    n += 1;
                }
                // Never submitted here; a draft or preview must never stand in for a full bake.
                BakeEvent::Baked { stage: Stage::Draft | Stage::Preview, .. } => {}
                BakeEvent::Failed { key, error, .. } => return Err(format!("level {}, {:?}: {error}", key.0, key.1)),
                BakeEvent::Panicked { key, message, .. } => {
                    return Err(format!("level {}, {:?}: bake panicked: {message}", key.0, key.1));
                }
            }
        }
        Ok(n)
    }

    /// Bakes what is missing, then compiles.
    pub fn compile(&mut self, map: &Map) -> Result<pmf::File, CompileError> {
        let missing = self.missing(map);
        self.rebake(map, missing)?;
        compile(map, &self.bakes, &self.settings)
    }
}
