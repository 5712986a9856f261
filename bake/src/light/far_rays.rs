//! The sun, sky, bounce and emission rays of a [`LightScene`] (see [`super::gather`] for the
//! model): the scene's methods that walk the level, kept apart from both the scene
//! ([`super::eval`]) and the gatherer's data so that neither imports the other.

use glam::{DVec2, DVec3, IVec3};
use pmfedit_core::map::coords::{ChunkCoord, LATTICE_PER_UNIT};
use pmfedit_core::map::level::LevelHit;
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
    pub(super) fn trace(&self, origin: DVec3, dir: DVec3, max: f64) -> (Option<LevelHit>, bool) {
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
        let mut origin = origin;
        let mut remaining = max;
        let mut reads = self.far.reads.borrow_mut();
        let mut grids = self.grids.borrow_mut();
        let mut track = self.track.borrow_mut();
        let chunk_log2 = i32::from(self.frame.chunk_lattice_log2());
        let mut last = None;
        for _ in 0..3 {
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
            if hit.distance > 1e-9 || !hit.cube.has_pushed_corners() {
                return (Some(hit), false);
            }
            // Leave the box of the cube the ray starts in.
            let lo = hit.level_addr.min.as_dvec3();
            let hi = hit.level_addr.max().as_dvec3();
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
            last = Some(hit);
        }
        // Still inside pushed-corner cubes after three steps: blocked by the last of them.
        (last, false)
    }

    /// Whether a ray from `origin` (lattice) along `dir` reaches the sky: the top of the level, or
    /// a skybox face.
    fn reaches_sky(&self, origin: DVec3, dir: DVec3) -> bool {
        match self.trace(origin, dir, f64::INFINITY) {
            (None, _) => true,
            (Some(hit), _) => self.far.surface(&hit).sky,
        }
    }

    /// Sunlight at a surface point with unit `normal` (Lambert cosine, rays start
    /// [`LightSettings::normal_offset`](super::LightSettings::normal_offset) off the surface), or
    /// at a point in the air (`None`: no cosine). `soft`: rays to every disc sample (else its
    /// centre only, as bounce points do).
    pub(super) fn sun_at(&self, point: DVec3, normal: Option<DVec3>, soft: bool) -> DVec3 {
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
            if d.y > 0.0 && normal.is_none_or(|n| n.dot(d) > 0.0) && self.reaches_sky(origin, d) {
                open += 1;
            }
        }
        light * (cos * open as f64 / disc.len() as f64)
    }

    /// Where a gather ray from `origin` (lattice) along unit `dir` ends (see the module docs).
    fn gather_ray(&self, origin: DVec3, dir: DVec3) -> RayEnd {
        let reach = self.far.distance * f64::from(LATTICE_PER_UNIT);
        match self.trace(origin, dir, reach) {
            (Some(hit), _) if self.far.surface(&hit).sky => RayEnd::Sky,
            (Some(hit), _) => RayEnd::Surface(hit),
            (None, true) => RayEnd::Sky,
            (None, false) => {
                // Nothing within reach: open sky only if the end sees straight up.
                if self.reaches_sky(origin + dir * reach, DVec3::Y) { RayEnd::Sky } else { RayEnd::Roofed }
            }
        }
    }

    /// The light a gather ray brings back at bounce level `level` (0 for luxels and cells).
    fn ray_light(&self, origin: DVec3, dir: DVec3, level: u8) -> DVec3 {
        match self.gather_ray(origin, dir) {
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
    /// (cosine-weighted around +Z), or at a point in the air over the sphere (`None`).
    fn gather(&self, point: DVec3, normal: Option<DVec3>, level: u8, dirs: &[DVec3]) -> DVec3 {
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
            sum += self.ray_light(origin, d, level);
        }
        sum * (scale / dirs.len() as f64)
    }

    /// The light received at the bounce point of `hit` at bounce level `level` (cached per cell,
    /// see the module docs): static lights, the sun (disc centre), gathered sky and emission, and
    /// the next bounce while `level` is below the level's bounce count.
    fn received(&self, hit: &LevelHit, level: u8) -> DVec3 {
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
        e += self.sun_at(point, Some(normal), false);
        e + self.gather(point, Some(normal), level, &self.far.bounce_hemi)
    }

    /// Sun, sky, emitted and bounced light at a luxel (`normal`: the face's unit normal) or an
    /// air cell centre (`None`), luxel units.
    pub fn far_light(&self, point: DVec3, normal: Option<DVec3>) -> DVec3 {
        let mut v = self.sun_at(point, normal, true);
        if self.far.gathers() {
            let dirs = if normal.is_some() { &self.far.hemi } else { &self.far.sphere };
            v += self.gather(point, normal, 0, dirs);
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
        std::mem::take(&mut self.far.reads.borrow_mut().far).into_iter().collect()
    }
}
