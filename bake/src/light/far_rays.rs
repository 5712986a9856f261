//! The sun, sky, bounce and emission rays of a [`LightScene`] (see [`super::gather`] for the
//! model): the scene's methods that walk the level, kept apart from both the scene
//! ([`super::eval`]) and the gatherer's data so that neither imports the other.

use glam::{DVec2, DVec3, IVec3};
use pmfedit_core::map::coords::{ChunkCoord, LATTICE_PER_UNIT};
use pmfedit_core::map::octree::raycast::Ray;

use super::BakedMode;
use super::eval::LightScene;
use super::gather::*;

impl<'a> LightScene<'a> {
    /// The first solid face along a ray from `origin` (level lattice space) in unit direction
    /// `dir` within `max` lattice units, stopping at the top of the level; records the chunks
    /// entered. A cube with pushed corners containing the start is stepped out of first (see
    /// [`LightScene::visible`]). Returns the hit, or `None` and whether the ray was cut by the
    /// top of the level (it then reaches open sky).
    ///
    /// `start` carries what earlier rays from the same origin learnt: when the origin lies
    /// strictly inside a cube with pushed corners (a luxel on a slope), every ray's first cast
    /// ends in that cube at distance 0 in its own chunk, whatever the direction (the chunk walk
    /// and the chunk's grid both start in the cell holding the origin, and no other leaf's box
    /// holds it), so the cast is replaced by the one chunk visit it makes.
    pub(super) fn trace(&self, origin: DVec3, dir: DVec3, max: f64, start: &mut Start) -> (Option<FarHit>, bool) {
        let mut max = max;
        let mut topped = false;
        if dir.y > 0.0 {
            let to_top = (self.far.top - origin.y) / dir.y;
            if to_top <= max {
                max = to_top;
                topped = true;
            }
        }
        if max <= 0.0 {
            return (None, topped);
        }
        let first = origin;
        let mut origin = origin;
        let mut remaining = max;
        let mut reads = self.far.reads.borrow_mut();
        let mut grids = self.grids.borrow_mut();
        let mut track = self.track.borrow_mut();
        let chunk_log2 = i32::from(self.frame.chunk_lattice_log2());
        let mut last = None;
        for i in 0..3 {
            let (lo, hi) = match start {
                // The cast would fail on such a direction (`Ray::new`), visiting nothing. The
                // cast it stands for ends at distance 0 in `chunk`: the memo records the blocks
                // there that the ray touches up to 0, as the cast's hook would.
                &mut Start::Inside { origin: o, chunk, lo, hi } if i == 0 && o == first && is_direction(dir) => {
                    reads.visit(chunk);
                    track.visit(chunk, (chunk.as_ivec3() << chunk_log2).as_dvec3(), first, dir, 0.0);
                    (lo, hi)
                }
                _ => {
                    let from = origin;
                    let enter = |c: ChunkCoord, ray: &Ray, max: f64| {
                        reads.visit(c);
                        let hit = grids.cast(c, ray, max);
                        // The memo's hook: the blocks of `c` the ray passed up to its hit there.
                        let end = hit.as_ref().map_or(max, |h| h.distance);
                        track.visit(c, (c.as_ivec3() << chunk_log2).as_dvec3(), from, dir, end);
                        hit
                    };
                    let Some(hit) = self.level.ray_cast_chunks(origin, dir, remaining, enter) else {
                        return (None, topped);
                    };
                    let pushed = hit.cube.has_pushed_corners();
                    let lo = hit.level_addr.min.as_dvec3();
                    let hi = hit.level_addr.max().as_dvec3();
                    if i == 0 && !matches!(*start, Start::Inside { origin: o, .. } | Start::Outside(o) if o == first) {
                        *start = if pushed && hit.distance == 0.0 && lo.cmplt(first).all() && first.cmplt(hi).all() {
                            Start::Inside { origin: first, chunk: hit.chunk, lo, hi }
                        } else {
                            Start::Outside(first)
                        };
                    }
                    if hit.distance > 1e-9 || !pushed {
                        return (Some(FarHit::of(&hit)), false);
                    }
                    last = Some(hit);
                    (lo, hi)
                }
            };
            // Leave the box of the cube the ray starts in.
            let mut t_exit = f64::INFINITY;
            for a in 0..3 {
                if dir[a] > 0.0 {
                    t_exit = t_exit.min((hi[a] - origin[a]) / dir[a]);
                } else if dir[a] < 0.0 {
                    t_exit = t_exit.min((lo[a] - origin[a]) / dir[a]);
                }
            }
            let step = t_exit.max(0.0) + 1e-6;
            if step >= remaining {
                return (None, topped);
            }
            origin += dir * step;
            remaining -= step;
        }
        // Still inside pushed-corner cubes after three steps: blocked by the last of them.
        (last.map(|h| FarHit::of(&h)), false)
    }

    /// Whether a ray from `origin` (lattice) along `dir` reaches the sky: the top of the level, or
    /// a skybox face.
    fn reaches_sky(&self, origin: DVec3, dir: DVec3, start: &mut Start) -> bool {
        match self.trace(origin, dir, f64::INFINITY, start) {
            (None, _) => true,
            (Some(hit), _) => self.far.surface(&hit).sky,
        }
    }

    /// Whether a ray straight up from `origin` (lattice) is known to reach the top of the level
    /// without meeting a cube, from the column tops of the chunks' grids alone; if so, records
    /// the chunks its walk enters, as [`Self::reaches_sky`] would. `false`: it cannot tell (ask
    /// `reaches_sky`). A quarter of a terrain bake's rays are these, and most start in open air
    /// above every cube of their column.
    ///
    /// The walk is [`Level::ray_cast_chunks`]'s for the direction +Y (and the distance
    /// [`Self::trace`] gives it): the same start chunk, boundaries and end. A chunk's cast of such
    /// a ray gives `None` without a step when the chunk is not stored, or when the column top is
    /// at or below the ray's start in the chunk (its own chunk), or 0 (chunks above).
    ///
    /// [`Level::ray_cast_chunks`]: pmfedit_core::map::Level::ray_cast_chunks
    pub(super) fn clear_straight_up(&self, origin: DVec3) -> bool {
        let frame = self.frame;
        let log2 = i32::from(frame.chunk_lattice_log2());
        let edge = f64::from(frame.chunk_edge());
        let grid = frame.grid_box().max;
        // Outside the grid, or cut before any cast: the general path (nothing to gain there).
        if !(origin.cmpge(DVec3::ZERO).all() && origin.cmplt(grid.as_dvec3()).all()) {
            return false;
        }
        // `trace`'s distance to the top (over `dir.y` = 1), then the walk's end.
        let to_top = self.far.top - origin.y;
        if to_top <= 0.0 || to_top.is_nan() {
            return false;
        }
        let t_end = (f64::from(grid.y) - origin.y).min(to_top);
        let first = (origin / edge).as_ivec3();
        let chunks_y = grid.y >> log2;
        let walk = || {
            let mut next = Some(first.y);
            let mut t_next = f64::from(first.y + 1) * edge - origin.y;
            std::iter::from_fn(move || {
                let y = next?;
                next = if t_next > t_end || y + 1 >= chunks_y { None } else { Some(y + 1) };
                t_next += edge;
                Some(ChunkCoord::new(first.x, y, first.z))
            })
        };
        {
            let mut grids = self.grids.borrow_mut();
            for c in walk() {
                let local = origin - (c.as_ivec3() << log2).as_dvec3();
                match grids.column_top(c, local.x, local.z) {
                    Some(top) if f64::from(top) <= local.y.max(0.0) => {}
                    _ => return false,
                }
            }
        }
        let mut reads = self.far.reads.borrow_mut();
        let mut track = self.track.borrow_mut();
        for c in walk() {
            reads.visit(c);
            // What each chunk's cast would record: no hit, so the blocks up to `trace`'s limit.
            track.visit(c, (c.as_ivec3() << log2).as_dvec3(), origin, DVec3::Y, to_top);
        }
        true
    }

    /// Sunlight at a surface point with unit `normal` (Lambert cosine, rays start
    /// [`LightSettings::normal_offset`](super::LightSettings::normal_offset) off the surface), or
    /// at a point in the air (`None`: no cosine). `soft`: rays to every disc sample (else its
    /// centre only, as bounce points do). `from`: see [`Self::trace`].
    pub(super) fn sun_at(&self, point: DVec3, normal: Option<DVec3>, soft: bool, from: &mut Start) -> DVec3 {
        let Some((dir, light)) = self.far.sun else { return DVec3::ZERO };
        let cos = normal.map_or(1.0, |n| n.dot(dir));
        if cos <= 0.0 {
            return DVec3::ZERO;
        }
        let start = normal.map_or(point, |n| point + n * self.settings.normal_offset);
        let origin = self.frame.lattice_from_world_f(start);
        let disc: &[DVec2] = if soft { &self.far.sun_disc } else { &[DVec2::ZERO] };
        let (t, b) = dir.any_orthonormal_pair();
        let angle = if disc.len() > 1 { spin(point).sin_cos() } else { (0.0, 1.0) };
        let mut open = 0usize;
        for o in disc {
            let d = oriented(DVec3::new(o.x, o.y, 1.0), angle, t, b, dir).normalize();
            // Disc samples below the horizon or behind the surface are blocked.
            if d.y > 0.0 && normal.is_none_or(|n| n.dot(d) > 0.0) && self.reaches_sky(origin, d, from) {
                open += 1;
            }
        }
        light * (cos * open as f64 / disc.len() as f64)
    }

    /// Where a gather ray from `origin` (lattice) along unit `dir` ends (see the module docs).
    fn gather_ray(&self, origin: DVec3, dir: DVec3, start: &mut Start) -> RayEnd {
        let reach = self.far.distance * f64::from(LATTICE_PER_UNIT);
        match self.trace(origin, dir, reach, start) {
            (Some(hit), _) if self.far.surface(&hit).sky => RayEnd::Sky,
            (Some(hit), _) => RayEnd::Surface(hit),
            (None, true) => RayEnd::Sky,
            (None, false) => {
                // Nothing within reach: open sky only if the end sees straight up.
                let end = origin + dir * reach;
                if self.clear_straight_up(end) || self.reaches_sky(end, DVec3::Y, &mut Start::Unknown) {
                    RayEnd::Sky
                } else {
                    RayEnd::Roofed
                }
            }
        }
    }

    /// The light a gather ray brings back at bounce level `level` (0 for luxels and cells).
    fn ray_light(&self, origin: DVec3, dir: DVec3, level: u8, start: &mut Start) -> DVec3 {
        match self.gather_ray(origin, dir, start) {
            RayEnd::Sky => self.far.sky,
            RayEnd::Roofed => DVec3::ZERO,
            RayEnd::Surface(hit) => {
                let s = self.far.surface(&hit);
                if level < self.far.bounces && s.reflect != DVec3::ZERO {
                    s.emit + s.reflect * self.received(&hit, level + 1)
                } else {
                    s.emit
                }
            }
        }
    }

    /// Gathered light (sky, emission, bounce) at a surface point with unit `normal` over `dirs`
    /// (cosine-weighted around +Z), or at a point in the air over the sphere (`None`). `from`:
    /// see [`Self::trace`].
    fn gather(&self, point: DVec3, normal: Option<DVec3>, level: u8, dirs: &[DVec3], from: &mut Start) -> DVec3 {
        let (start, (t, b, n), scale) = match normal {
            Some(n) => {
                let (t, b) = n.any_orthonormal_pair();
                (point + n * self.settings.normal_offset, (t, b, n), 1.0)
            }
            // About the vertical, doubled: a cell in the open gets the sky of an open floor.
            None => (point, (DVec3::X, DVec3::Z, DVec3::Y), 2.0),
        };
        let origin = self.frame.lattice_from_world_f(start);
        let angle = spin(point).sin_cos();
        let mut sum = DVec3::ZERO;
        for &local in dirs {
            let d = oriented(local, angle, t, b, n);
            sum += self.ray_light(origin, d, level, from);
        }
        sum * (scale / dirs.len() as f64)
    }

    /// The light received at the bounce point of `hit` at bounce level `level` (cached per cell,
    /// see the module docs): static lights, the sun (disc centre), gathered sky and emission, and
    /// the next bounce while `level` is below the level's bounce count.
    fn received(&self, hit: &FarHit, level: u8) -> DVec3 {
        let face = hit.face;
        let axis = face.axis();
        let cell = self.far.bounce_cell * f64::from(LATTICE_PER_UNIT);
        let mut key = IVec3::ZERO;
        let mut q = DVec3::ZERO;
        for a in 0..3 {
            if a == axis {
                key[a] = hit.point[a].round() as i32;
                q[a] = f64::from(key[a]);
            } else {
                // Level lattice coordinates are not negative: truncation is `floor` there, without
                // the library call.
                let f = hit.point[a] / cell;
                key[a] = if f >= 0.0 { f as i32 } else { f.floor() as i32 };
                q[a] = (f64::from(key[a]) + 0.5) * cell;
            }
        }
        let key = (level, face as u8, key);
        if let Some(&e) = self.far.received.borrow().get(&key) {
            self.track.borrow_mut().use_cell(&key);
            return e;
        }
        self.track.borrow_mut().push();
        let e = self.receive_at(self.frame.world_from_lattice_f(q), face_normal(face), level);
        self.track.borrow_mut().end_cell(key);
        self.far.received.borrow_mut().insert(key, e);
        e
    }

    fn receive_at(&self, point: DVec3, normal: DVec3, level: u8) -> DVec3 {
        let mut e = DVec3::ZERO;
        for l in &self.lights {
            if l.mode == BakedMode::Static && l.light.position.as_dvec3().distance(point) < l.reach {
                e += self.irradiance(point, Some(normal), l);
            }
        }
        // The sun's and the gather's rays start at the same point.
        let mut start = Start::Unknown;
        e += self.sun_at(point, Some(normal), false, &mut start);
        e + self.gather(point, Some(normal), level, &self.far.bounce_hemi, &mut start)
    }

    /// Sun, sky, emitted and bounced light at a luxel (`normal`: the face's unit normal) or an
    /// air cell centre (`None`), luxel units.
    pub fn far_light(&self, point: DVec3, normal: Option<DVec3>) -> DVec3 {
        let mut start = Start::Unknown;
        let mut v = self.sun_at(point, normal, true, &mut start);
        if self.far.gathers() {
            let dirs = if normal.is_some() { &self.far.hemi } else { &self.far.sphere };
            v += self.gather(point, normal, 0, dirs, &mut start);
        }
        v
    }

    /// Starts recording the chunks rays enter, for a bake of `chunk`.
    pub(super) fn begin_reads(&self, chunk: ChunkCoord) {
        *self.far.reads.borrow_mut() = ReadSet { home: Some(chunk.as_ivec3()), ..ReadSet::default() };
        // A cached bounce point would skip its rays, and so their reads.
        self.far.received.borrow_mut().clear();
    }

    /// The chunks rays entered since [`Self::begin_reads`], beyond its chunk's neighbourhood,
    /// sorted.
    pub(super) fn take_reads(&self) -> Vec<ChunkCoord> {
        let mut reads = self.far.reads.borrow_mut();
        reads.seen = Default::default();
        std::mem::take(&mut reads.far).into_iter().collect()
    }
}

/// Whether `Ray::new` accepts `d` as a direction: a finite, non-zero length.
fn is_direction(d: DVec3) -> bool {
    let len = d.length();
    len > 0.0 && len.is_finite()
}
