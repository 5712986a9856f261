//! What each point's far light read, and the memo of a chunk's far light kept for its next bake.
//!
//! The sun, sky and bounce light of a luxel or an air cell ([`LightScene::far_light`]) is a pure
//! function of its point, its normal, the scene's inputs (sun, sky, materials, static lights,
//! settings: [`super::memo`]) and the cubes of the chunks its rays entered — its own rays and
//! those of every bounce cell it used (docs/spec/PMF-NOTES.md K5, *Determinism*). A bake that
//! keeps a [`LightMemo`] records, per point, its value and the set of chunks those rays entered;
//! the next bake of the chunk takes a point's value from the memo when none of those chunks
//! changed (each chunk is remembered by its `Arc`, so "unchanged" is pointer equality with the
//! chunk of the new snapshot, never a guess) and traces only the others. The result is the same
//! value, bit for bit, as tracing it again.
//!
//! [`LightScene::far_light`]: super::LightScene::far_light

use std::sync::Arc;

use glam::DVec3;
use pmfedit_core::map::Level;
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::map::level::Chunk;

use super::gather::{CellKey, KeyMap};

/// A point and its normal (`None`: an air cell), as the bits of their coordinates.
pub(super) type PointKey = [u64; 6];

/// The key of a point with unit `normal` (or none: NaN bits, which no normal has).
pub(super) fn point_key(point: DVec3, normal: Option<DVec3>) -> PointKey {
    let n = normal.map_or([u64::MAX; 3], |n| n.to_array().map(f64::to_bits));
    let p = point.to_array().map(f64::to_bits);
    [p[0], p[1], p[2], n[0], n[1], n[2]]
}

/// The far light of one chunk bake's points and the chunks each point's rays entered (see the
/// module docs); [`super::LightMemo`] adds the context it was made under.
#[derive(Debug, Clone)]
pub(super) struct PointMemo {
    /// The chunks rays entered, each with the chunk the level stored then (`None`: air).
    chunks: Vec<(ChunkCoord, Option<Arc<Chunk>>)>,
    /// `u64` words per point mask.
    words: usize,
    index: KeyMap<PointKey, u32>,
    values: Vec<DVec3>,
    masks: Vec<u64>,
    reused: usize,
}

impl PointMemo {
    /// How many points the bake that made this memo took from the memo before it.
    pub(super) fn reused(&self) -> usize {
        self.reused
    }

    /// How many points it holds.
    pub(super) fn points(&self) -> usize {
        self.values.len()
    }

    fn mask(&self, i: usize) -> &[u64] {
        &self.masks[i * self.words..(i + 1) * self.words]
    }
}

/// The memo a bake may take values from, and which of its chunks changed since.
#[derive(Debug, Clone)]
struct Prior {
    memo: Arc<PointMemo>,
    changed: Vec<u64>,
}

/// A point recorded by the running bake.
#[derive(Debug, Clone)]
struct Entry {
    key: PointKey,
    value: DVec3,
    mask: Vec<u64>,
}

/// The chunk sets of the points and bounce cells of one bake (off unless the bake keeps a memo).
#[derive(Debug, Clone, Default)]
pub(super) struct Tracker {
    on: bool,
    index: KeyMap<ChunkCoord, u32>,
    chunks: Vec<ChunkCoord>,
    /// The sets being recorded: a point's, then the bounce cells it is computing.
    stack: Vec<Vec<u64>>,
    last: Option<ChunkCoord>,
    /// The chunk set of each bounce cell computed in this bake.
    cells: KeyMap<CellKey, Vec<u64>>,
    prior: Option<Prior>,
    entries: Vec<Entry>,
    reused: usize,
}

fn or_into(dst: &mut Vec<u64>, src: &[u64]) {
    if dst.len() < src.len() {
        dst.resize(src.len(), 0);
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d |= s;
    }
}

/// The indices of the bits set in `mask`.
fn bits(mask: &[u64]) -> impl Iterator<Item = usize> + '_ {
    mask.iter().enumerate().flat_map(|(w, &m)| {
        let mut m = m;
        std::iter::from_fn(move || {
            if m == 0 {
                return None;
            }
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(w * 64 + b)
        })
    })
}

impl Tracker {
    /// Starts recording for a bake of a chunk of `level`; `prior` (the chunk's last memo, made
    /// under the same context) serves the points whose chunks did not change.
    pub(super) fn begin(&mut self, level: &Level, prior: Option<Arc<PointMemo>>) {
        *self = Tracker { on: true, ..Tracker::default() };
        let Some(memo) = prior else { return };
        let mut changed = vec![0u64; memo.words];
        for (i, (c, old)) in memo.chunks.iter().enumerate() {
            let same = match (old, level.chunk(*c)) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            };
            if !same {
                changed[i / 64] |= 1 << (i % 64);
            }
            // The same indices as the memo's, so its masks hold in this bake's table.
            self.index.insert(*c, i as u32);
            self.chunks.push(*c);
        }
        self.prior = Some(Prior { memo, changed });
    }

    /// Whether this bake records (keeps a memo).
    pub(super) fn on(&self) -> bool {
        self.on
    }

    /// A ray entered chunk `c`.
    pub(super) fn visit(&mut self, c: ChunkCoord) {
        if self.stack.is_empty() || self.last == Some(c) {
            return;
        }
        self.last = Some(c);
        let next = self.chunks.len() as u32;
        let i = *self.index.entry(c).or_insert(next) as usize;
        if i == self.chunks.len() {
            self.chunks.push(c);
        }
        let top = self.stack.last_mut().expect("not empty");
        if top.len() <= i / 64 {
            top.resize(i / 64 + 1, 0);
        }
        top[i / 64] |= 1 << (i % 64);
    }

    /// Starts the set of a point or a bounce cell.
    pub(super) fn push(&mut self) {
        if self.on {
            self.stack.push(Vec::new());
            self.last = None;
        }
    }

    /// Ends the set begun by the last [`Self::push`], adds it to the set below (what a bounce
    /// cell read, the point that asked for it read too) and returns it.
    fn pop(&mut self) -> Vec<u64> {
        let set = self.stack.pop().unwrap_or_default();
        if let Some(below) = self.stack.last_mut() {
            or_into(below, &set);
        }
        self.last = None;
        set
    }

    /// Ends the set of bounce cell `key` (see [`Self::pop`]) and keeps it for the cell's later
    /// uses in this bake.
    pub(super) fn end_cell(&mut self, key: CellKey) {
        if self.on {
            let set = self.pop();
            self.cells.insert(key, set);
        }
    }

    /// A cached bounce cell was used: what it read is read again.
    pub(super) fn use_cell(&mut self, key: &CellKey) {
        if let (Some(top), Some(set)) = (self.stack.last_mut(), self.cells.get(key)) {
            or_into(top, set);
        }
    }

    /// The prior memo's value of point `key`, if none of the chunks its rays entered changed,
    /// with the chunks they entered (for the bake's reads). Records the point.
    pub(super) fn reuse(&mut self, key: &PointKey) -> Option<(DVec3, Vec<ChunkCoord>)> {
        let prior = self.prior.as_ref()?;
        let i = *prior.memo.index.get(key)? as usize;
        let mask = prior.memo.mask(i);
        if mask.iter().zip(&prior.changed).any(|(m, c)| m & c != 0) {
            return None;
        }
        let value = prior.memo.values[i];
        let chunks = bits(mask).map(|b| prior.memo.chunks[b].0).collect();
        self.entries.push(Entry { key: *key, value, mask: mask.to_vec() });
        self.reused += 1;
        Some((value, chunks))
    }

    /// Ends the set of a traced point (begun by [`Self::push`]) and records the point.
    pub(super) fn end_point(&mut self, key: PointKey, value: DVec3) {
        if self.on {
            let mask = self.pop();
            self.entries.push(Entry { key, value, mask });
        }
    }

    /// Stops recording; the memo of the bake's points, their chunks as `level` stores them now.
    pub(super) fn finish(&mut self, level: &Level) -> PointMemo {
        let t = std::mem::take(self);
        let words = t.chunks.len().div_ceil(64);
        let mut index = KeyMap::default();
        let mut values = Vec::with_capacity(t.entries.len());
        let mut masks = vec![0u64; words * t.entries.len()];
        for (i, e) in t.entries.into_iter().enumerate() {
            index.insert(e.key, i as u32);
            values.push(e.value);
            masks[i * words..i * words + e.mask.len()].copy_from_slice(&e.mask);
        }
        let chunks = t.chunks.into_iter().map(|c| (c, level.chunk(c).cloned())).collect();
        PointMemo { chunks, words, index, values, masks, reused: t.reused }
    }
}
