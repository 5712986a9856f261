//! Formats 5 and 6: finding which voxel definitions' runs carry a tail byte, by a bounded
//! backtracking search over the definitions the file uses (see the module documentation of
//! [`voxelplay`](super)).
//!
//! The search only *scans*: it checks structure and plausibility without building anything, and
//! can resume from any run, so each guess costs only the bytes parsed after it. The chosen
//! assignment is then read by the ordinary reader.

use std::sync::Arc;

use super::layout::{Header, ITEM_SIZE, RUN_SIZE};
use super::{MAX_CANDIDATES, ReadOptions, Resolution, ResolutionMethod, TailKind, VoxelPlayError};
use crate::format::bin::{ReadError, Reader};

/// The kinds tried for a definition, in order of preference.
const ORDER: [TailKind; 3] = [TailKind::Plain, TailKind::Flags, TailKind::Custom];

/// Where a scan is: enough to resume it at a run.
#[derive(Debug, Clone, Copy)]
struct Checkpoint {
    /// Absolute offset.
    pos: usize,
    /// Chunks not started yet.
    chunks_left: usize,
    /// Runs of the current chunk not read yet (0: between chunks).
    runs_left: usize,
    /// End index of the previous run of the current chunk.
    prev_end: u32,
}

/// Why a scan stopped before the end.
enum Stop {
    /// A run of a definition with no kind yet; resume at the checkpoint once it has one.
    Need(u16, Checkpoint),
    /// The parse failed.
    Fail(ReadError),
    /// The step budget is spent.
    Budget,
}

impl From<ReadError> for Stop {
    fn from(e: ReadError) -> Self {
        Stop::Fail(e)
    }
}

struct Scanner<'a> {
    data: &'a [u8],
    h: &'a Header,
    section: Arc<str>,
    budget: u64,
    steps: u64,
}

impl Scanner<'_> {
    /// Scans from `cp` to the end of the file with the kinds in `assign`. `Ok` means the file was
    /// consumed exactly. `rotations`, if given, records the definitions of runs with angles.
    fn scan(
        &mut self,
        cp: Checkpoint,
        assign: &[Option<TailKind>],
        mut rotations: Option<&mut [bool]>,
    ) -> Result<(), Stop> {
        let mut r = Reader::with_base(&self.data[cp.pos..], cp.pos as u64, self.section.clone());
        let start_steps = self.steps;
        let out = self.scan_inner(&mut r, cp, assign, &mut rotations, start_steps);
        self.steps = start_steps + r.position() as u64;
        out
    }

    fn scan_inner(
        &self,
        r: &mut Reader<'_>,
        cp: Checkpoint,
        assign: &[Option<TailKind>],
        rotations: &mut Option<&mut [bool]>,
        start_steps: u64,
    ) -> Result<(), Stop> {
        let Checkpoint { mut chunks_left, mut runs_left, mut prev_end, .. } = cp;
        let volume = self.h.volume();
        let defs = self.h.voxel_definitions.len();
        loop {
            if start_steps + r.position() as u64 > self.budget {
                return Err(Stop::Budget);
            }
            if runs_left > 0 {
                let at = Checkpoint { pos: r.offset() as usize, chunks_left, runs_left, prev_end };
                let def = r.u16()?;
                if usize::from(def) >= defs {
                    return Err(r.invalid_at(at.pos as u64, "voxel definition index out of range").into());
                }
                let Some(kind) = assign[usize::from(def)] else {
                    return Err(Stop::Need(def, at));
                };
                r.skip(3)?;
                let start = u32::from(r.u16()?);
                let reps = u32::from(r.u16()?);
                if reps == 0 || start < prev_end || start + reps > volume {
                    return Err(r.invalid_at(at.pos as u64, "run out of order or outside the chunk").into());
                }
                prev_end = start + reps;
                match kind {
                    TailKind::Plain => {}
                    TailKind::Flags => r.skip(1)?,
                    TailKind::Custom => {
                        if reps != 1 {
                            return Err(r.invalid_at(at.pos as u64, "custom voxel run longer than 1").into());
                        }
                        match r.u8()? {
                            0 => {}
                            1 => {
                                let angles = r.f32s::<3>()?;
                                finite(r, &angles)?;
                                if let Some(rot) = rotations.as_deref_mut() {
                                    rot[usize::from(def)] = true;
                                }
                            }
                            _ => return Err(r.invalid("custom rotation marker is neither 0 nor 1").into()),
                        }
                    }
                    TailKind::FlagsAndRotation => unreachable!("not a format 5/6 kind"),
                }
                runs_left -= 1;
                if runs_left == 0 {
                    self.chunk_rest(r)?;
                }
            } else if chunks_left > 0 {
                let p = r.f32s::<3>()?;
                if p.iter().any(|v| !v.is_finite() || v.fract() != 0.0) {
                    return Err(r.invalid("chunk position is not integral").into());
                }
                if r.u8()? > 1 {
                    return Err(r.invalid("above-surface byte is neither 0 nor 1").into());
                }
                let n = r.u16()?;
                runs_left = r.count(u64::from(n), RUN_SIZE, "runs")?;
                chunks_left -= 1;
                prev_end = 0;
                if runs_left == 0 {
                    self.chunk_rest(r)?;
                }
            } else {
                r.expect_end()?;
                return Ok(());
            }
        }
    }

    /// Torches and items of a chunk.
    fn chunk_rest(&self, r: &mut Reader<'_>) -> Result<(), Stop> {
        let l = self.h.layout;
        let n = r.u16()?;
        let n = r.count(u64::from(n), l.light_size(), "light sources")?;
        for _ in 0..n {
            if u32::from(r.u16()?) >= self.h.volume() {
                return Err(r.invalid("torch voxel index outside the chunk").into());
            }
            let normal = r.f32s::<3>()?;
            finite(r, &normal)?;
        }
        if l.items {
            let n = r.u16()?;
            let n = r.count(u64::from(n), ITEM_SIZE, "items")?;
            for _ in 0..n {
                let d = r.i16()?;
                if d < 0 || d as usize >= self.h.item_definitions.len() {
                    return Err(r.invalid("item definition index out of range").into());
                }
                let p = r.f32s::<3>()?;
                finite(r, &p)?;
                r.skip(2)?;
            }
        }
        Ok(())
    }
}

fn finite(r: &Reader<'_>, v: &[f32; 3]) -> Result<(), Stop> {
    if v.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(r.invalid("non-finite number").into()) }
}

/// Decides the tail kind of every used definition of a format 5/6 file; returns the kinds (by
/// definition index, `None` for unused ones) and how they were found.
pub(super) fn search(
    data: &[u8],
    h: &Header,
    options: &ReadOptions,
) -> Result<(Vec<Option<TailKind>>, Resolution), VoxelPlayError> {
    let version = h.layout.version;
    let budget = options.search_budget.unwrap_or((data.len() as u64).saturating_mul(32).saturating_add(1 << 20));
    let mut sc = Scanner { data, h, section: Arc::from("format 5/6 run search"), budget, steps: 0 };
    let start = Checkpoint { pos: h.body_start, chunks_left: h.chunk_count, runs_left: 0, prev_end: 0 };

    let defs = h.voxel_definitions.len();
    let mut assign: Vec<Option<TailKind>> = vec![None; defs];
    // (definition, index into ORDER, where its first run starts)
    let mut stack: Vec<(u16, usize, Checkpoint)> = Vec::new();
    let mut solutions: Vec<Vec<Option<TailKind>>> = Vec::new();
    let mut furthest: Option<ReadError> = None;
    let mut exhaustive = true;
    let mut out_of_budget = false;
    let mut cur = start;
    loop {
        match sc.scan(cur, &assign, None) {
            Ok(()) => {
                // Canonical form: a custom definition none of whose runs has angles parses
                // exactly like a flags one (the same bytes); count it once, as flags.
                let mut rot = vec![false; defs];
                let mut canon = assign.clone();
                if canon.contains(&Some(TailKind::Custom)) {
                    match sc.scan(start, &assign, Some(&mut rot)) {
                        Ok(()) => {}
                        Err(Stop::Budget) => {
                            exhaustive = false;
                            out_of_budget = true;
                            break;
                        }
                        // Cannot happen: the same assignment just parsed.
                        Err(_) => {}
                    }
                    for (k, used) in canon.iter_mut().zip(&rot) {
                        if *k == Some(TailKind::Custom) && !used {
                            *k = Some(TailKind::Flags);
                        }
                    }
                }
                if !solutions.contains(&canon) {
                    solutions.push(canon);
                    if solutions.len() >= MAX_CANDIDATES {
                        exhaustive = false;
                        break;
                    }
                }
            }
            Err(Stop::Need(def, at)) => {
                stack.push((def, 0, at));
                assign[usize::from(def)] = Some(ORDER[0]);
                cur = at;
                continue;
            }
            Err(Stop::Fail(e)) => {
                if furthest.as_ref().is_none_or(|f| e.offset > f.offset) {
                    furthest = Some(e);
                }
            }
            Err(Stop::Budget) => {
                exhaustive = false;
                out_of_budget = true;
                break;
            }
        }
        // Backtrack: the next kind of the latest decision that has one left.
        let mut resumed = false;
        while let Some(top) = stack.last_mut() {
            top.1 += 1;
            if top.1 < ORDER.len() {
                assign[usize::from(top.0)] = Some(ORDER[top.1]);
                cur = top.2;
                resumed = true;
                break;
            }
            assign[usize::from(top.0)] = None;
            stack.pop();
        }
        if !resumed {
            break;
        }
    }

    let name = |i: usize| h.voxel_definitions[i].clone();
    let with_byte = |s: &[Option<TailKind>]| s.iter().filter(|k| matches!(k, Some(k) if *k != TailKind::Plain)).count();
    let customs = |s: &[Option<TailKind>]| s.iter().filter(|k| **k == Some(TailKind::Custom)).count();
    let Some(best) = solutions.iter().enumerate().min_by_key(|(i, s)| (with_byte(s), customs(s), *i)).map(|(_, s)| s)
    else {
        let reason = if out_of_budget {
            format!("the search budget of {budget} bytes ran out before any exact parse was found")
        } else {
            "no assignment parses the file exactly".to_owned()
        };
        return Err(VoxelPlayError::Unresolved { version, reason, furthest });
    };
    if options.reject_ambiguous && solutions.len() > 1 {
        let candidates = solutions
            .iter()
            .map(|s| s.iter().enumerate().filter_map(|(i, k)| k.map(|k| (name(i), k))).collect())
            .collect();
        return Err(VoxelPlayError::Ambiguous { version, count: solutions.len(), candidates });
    }
    let resolution = Resolution {
        method: ResolutionMethod::Search,
        kinds: best.clone(),
        candidates: solutions.len(),
        exhaustive,
        steps: sc.steps,
    };
    Ok((best.clone(), resolution))
}
