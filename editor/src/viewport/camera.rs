//! The viewport camera: a position (f64, world space) and a yaw/pitch direction, driven as a fly
//! camera (right mouse + WASD) or an orbit camera (Alt + left drag around a pivot in front of it).
//!
//! The same camera looks straight down, or along +Z or +X, through an orthographic projection
//! ([`OrthoView`], [`Camera::set_ortho`]): sizes read the same across the view, which is where
//! boxes are drawn and sized precisely. Those views do not turn: the right and middle buttons
//! pan, the wheel zooms to the pointer.
//!
//! Rendering is camera-relative: the view matrix has no translation and everything drawn is
//! first moved by `-eye` in f64, so precision holds anywhere in a 2^27-unit level.

use glam::{DVec3, Mat4, Vec3};

/// An orthographic view: which way it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrthoView {
    /// Straight down (−Y); +X right, −Z up on screen.
    Top,
    /// Along +Z; −X right, +Y up.
    Front,
    /// Along +X; +Z right, +Y up.
    Side,
}

impl OrthoView {
    /// Every orthographic view.
    pub const ALL: [OrthoView; 3] = [OrthoView::Top, OrthoView::Front, OrthoView::Side];

    /// Its name in menus and the heads-up text.
    pub const fn label(self) -> &'static str {
        match self {
            OrthoView::Top => "Top",
            OrthoView::Front => "Front",
            OrthoView::Side => "Side",
        }
    }

    /// (yaw, pitch) of its view direction.
    fn angles(self) -> (f64, f64) {
        use std::f64::consts::FRAC_PI_2;
        match self {
            OrthoView::Top => (FRAC_PI_2, -FRAC_PI_2),
            OrthoView::Front => (FRAC_PI_2, 0.0),
            OrthoView::Side => (0.0, 0.0),
        }
    }

    /// The world axis it looks along (0 = X, 1 = Y, 2 = Z): the normal of the plane it draws on.
    pub const fn axis(self) -> usize {
        match self {
            OrthoView::Top => 1,
            OrthoView::Front => 2,
            OrthoView::Side => 0,
        }
    }
}

/// How far back an orthographic camera's eye sits from what it looks at, map units (within
/// [`FAR`], so everything in front of the target and far behind it is drawn).
pub const ORTHO_BACK: f64 = 2000.0;

/// Perspective or orthographic camera.
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    pub eye: DVec3,
    /// Radians around +Y; 0 looks along +X.
    pub yaw: f64,
    /// Radians, positive looks up.
    pub pitch: f64,
    /// Vertical field of view, radians.
    pub fov_y: f64,
    /// Distance to the orbit pivot along the view direction.
    pub orbit_distance: f64,
    /// Fly speed, map units per second.
    pub speed: f64,
    /// The orthographic view, if the camera is in one (`None`: perspective).
    pub ortho: Option<OrthoView>,
    /// Half the height the orthographic view shows, map units.
    pub ortho_half_height: f64,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            eye: DVec3::new(0.0, 8.0, -16.0),
            yaw: 0.0,
            pitch: 0.0,
            fov_y: 60f64.to_radians(),
            orbit_distance: 16.0,
            speed: 12.0,
            ortho: None,
            ortho_half_height: 8.0,
        }
    }
}

/// Near and far planes, map units.
pub const NEAR: f32 = 0.05;
pub const FAR: f32 = 20_000.0;

impl Camera {
    /// Unit view direction.
    pub fn forward(&self) -> DVec3 {
        DVec3::new(self.pitch.cos() * self.yaw.cos(), self.pitch.sin(), self.pitch.cos() * self.yaw.sin())
    }

    /// Unit right vector (horizontal; +X looking straight down).
    pub fn right(&self) -> DVec3 {
        let r = self.forward().cross(DVec3::Y);
        // Straight down (the top view) the cross product is rounding noise.
        if r.length_squared() < 1e-12 { DVec3::X } else { r.normalize() }
    }

    /// Switches to the orthographic `view` (`None`: back to perspective), looking at the same
    /// point and showing about as much as before.
    pub fn set_ortho(&mut self, view: Option<OrthoView>) {
        let target = self.pivot();
        let h = match self.ortho {
            Some(_) => self.ortho_half_height,
            None => (self.fov_y / 2.0).tan() * self.orbit_distance,
        };
        self.ortho = view;
        match view {
            Some(v) => {
                (self.yaw, self.pitch) = v.angles();
                self.ortho_half_height = h.clamp(0.5, 5000.0);
                self.orbit_distance = ORTHO_BACK;
                self.eye = target - self.forward() * ORTHO_BACK;
            }
            None => {
                self.pitch = self.pitch.clamp(-1.2, 1.2);
                let d = (h / (self.fov_y / 2.0).tan()).clamp(0.5, 10_000.0);
                self.eye = target - self.forward() * d;
                self.orbit_distance = d;
            }
        }
    }

    /// How far `p` looks: its distance from the eye, or in an orthographic view the distance
    /// from which a perspective view would show as much.
    pub fn apparent_distance(&self, p: DVec3) -> f64 {
        match self.ortho {
            Some(_) => self.ortho_half_height / (self.fov_y / 2.0).tan(),
            None => (p - self.eye).length(),
        }
    }

    /// Map units per screen pixel at world point `p` in a view `viewport_height_px` high.
    pub fn units_per_px(&self, p: DVec3, viewport_height_px: f64) -> f64 {
        let h = match self.ortho {
            Some(_) => self.ortho_half_height,
            None => (self.fov_y / 2.0).tan() * (p - self.eye).dot(self.forward()).max(1e-3),
        };
        2.0 * h / viewport_height_px.max(1.0)
    }

    /// Unit up vector of the view.
    pub fn up(&self) -> DVec3 {
        self.right().cross(self.forward())
    }

    /// The orbit pivot.
    pub fn pivot(&self) -> DVec3 {
        self.eye + self.forward() * self.orbit_distance
    }

    /// Looks from `eye` at `target`.
    pub fn look_at(&mut self, eye: DVec3, target: DVec3) {
        let d = target - eye;
        let len = d.length();
        self.eye = eye;
        if len > 1e-9 {
            let d = d / len;
            self.pitch = d.y.clamp(-1.0, 1.0).asin();
            self.yaw = d.z.atan2(d.x);
            self.orbit_distance = len;
        }
    }

    /// Looks at `target` from `distance` away along the current direction (an orthographic
    /// view shows as much as a perspective one would from there).
    pub fn frame(&mut self, target: DVec3, distance: f64) {
        let distance = distance.max(0.5);
        if self.ortho.is_some() {
            self.ortho_half_height = (self.fov_y / 2.0).tan() * distance;
            self.eye = target - self.forward() * ORTHO_BACK;
            self.orbit_distance = ORTHO_BACK;
            return;
        }
        self.eye = target - self.forward() * distance;
        self.orbit_distance = distance;
    }

    /// Turns by pixel deltas (fly look); an orthographic view does not turn.
    pub fn turn(&mut self, dx: f64, dy: f64) {
        if self.ortho.is_some() {
            return;
        }
        const RAD_PER_PX: f64 = 0.004;
        self.yaw += dx * RAD_PER_PX;
        self.pitch = (self.pitch - dy * RAD_PER_PX).clamp(-1.55, 1.55);
    }

    /// Orbits around the pivot by pixel deltas.
    pub fn orbit(&mut self, dx: f64, dy: f64) {
        let pivot = self.pivot();
        self.turn(dx, dy);
        self.eye = pivot - self.forward() * self.orbit_distance;
    }

    /// Pans the eye (and pivot) by pixel deltas, scaled to the pivot distance.
    pub fn pan(&mut self, dx: f64, dy: f64, viewport_height_px: f64) {
        let per_px = self.units_per_px(self.pivot(), viewport_height_px);
        self.eye += (-self.right() * dx + self.up() * dy) * per_px;
    }

    /// Dollies towards the pivot (`steps` > 0 zooms in).
    pub fn zoom(&mut self, steps: f64) {
        self.zoom_at(steps, 0.0, 0.0, 1.0, None);
    }

    /// Zooms towards what is under a point of the view (`ndc_x`, `ndc_y` in `[-1, 1]`, `y` up;
    /// `aspect` width / height): `target` (the world point under it, e.g. a picked face), else the
    /// point at the pivot's distance along its ray. That point stays under the pointer; `steps`
    /// > 0 zooms in.
    pub fn zoom_at(&mut self, steps: f64, ndc_x: f64, ndc_y: f64, aspect: f64, target: Option<DVec3>) {
        let k = 0.85f64.powf(steps);
        if self.ortho.is_some() {
            // The point under the pointer moves with the scale unless the eye follows it.
            let h = self.ortho_half_height;
            let nh = (h * k).clamp(0.05, 5000.0);
            let shift = self.right() * (ndc_x * aspect) + self.up() * ndc_y;
            self.eye += shift * (h - nh);
            self.ortho_half_height = nh;
            return;
        }
        let (o, d) = self.ray(ndc_x, ndc_y, aspect);
        let p = target.unwrap_or(o + d * self.orbit_distance);
        let dist = (p - self.eye).length();
        let new_dist = (dist * k).clamp(0.25, 10_000.0);
        self.eye = p - (p - self.eye) * (new_dist / dist.max(1e-9));
        self.orbit_distance = (self.orbit_distance * new_dist / dist.max(1e-9)).clamp(0.25, 10_000.0);
    }

    /// Moves in camera space: `v.x` right, `v.y` world up, `v.z` forward, in map units.
    pub fn fly(&mut self, v: DVec3) {
        self.eye += self.right() * v.x + DVec3::Y * v.y + self.forward() * v.z;
    }

    /// Camera-relative view matrix (rotation only).
    pub fn view(&self) -> Mat4 {
        Mat4::look_to_rh(Vec3::ZERO, self.forward().as_vec3(), self.up().as_vec3())
    }

    /// Projection for a viewport aspect ratio (width / height).
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let aspect = aspect.max(1e-3);
        match self.ortho {
            Some(_) => {
                let h = self.ortho_half_height as f32;
                Mat4::orthographic_rh_gl(-h * aspect, h * aspect, -h, h, NEAR, FAR)
            }
            None => Mat4::perspective_rh_gl(self.fov_y as f32, aspect, NEAR, FAR),
        }
    }

    /// The world-space ray through a point of the viewport given in `[-1, 1]` normalized device
    /// coordinates (`y` up): origin and unit direction. Perspective rays start at the eye;
    /// orthographic ones are parallel, from the eye's plane.
    pub fn ray(&self, ndc_x: f64, ndc_y: f64, aspect: f64) -> (DVec3, DVec3) {
        if self.ortho.is_some() {
            let h = self.ortho_half_height;
            let o = self.eye + self.right() * (ndc_x * h * aspect) + self.up() * (ndc_y * h);
            return (o, self.forward());
        }
        let t = (self.fov_y / 2.0).tan();
        let d = self.forward() + self.right() * (ndc_x * t * aspect) + self.up() * (ndc_y * t);
        (self.eye, d.normalize())
    }

    /// Where a world point lands in normalized device coordinates, `None` behind the camera.
    pub fn project(&self, p: DVec3, aspect: f32) -> Option<glam::Vec2> {
        let rel = (p - self.eye).as_vec3();
        let clip = self.projection(aspect) * self.view() * rel.extend(1.0);
        (clip.w > NEAR).then(|| glam::Vec2::new(clip.x / clip.w, clip.y / clip.w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_at_and_ray_through_center_agree() {
        let mut c = Camera::default();
        c.look_at(DVec3::new(-14.0, 9.0, -16.0), DVec3::new(6.0, 3.0, 0.0));
        let (o, d) = c.ray(0.0, 0.0, 1.6);
        let to = (DVec3::new(6.0, 3.0, 0.0) - o).normalize();
        assert!(d.dot(to) > 0.999_999);
        assert!((c.pivot() - DVec3::new(6.0, 3.0, 0.0)).length() < 1e-9);
        let p = c.project(DVec3::new(6.0, 3.0, 0.0), 1.6).unwrap();
        assert!(p.length() < 1e-4);
        // A ray through a corner projects back onto that corner.
        let (o, d) = c.ray(0.5, -0.25, 1.6);
        let p = c.project(o + d * 10.0, 1.6).unwrap();
        assert!((p - glam::Vec2::new(0.5, -0.25)).length() < 1e-3, "{p}");
    }

    /// Zooming keeps the world point under the pointer where it is on screen, in perspective
    /// (the issue: it went to the screen centre) and in the orthographic views.
    #[test]
    fn zoom_keeps_the_point_under_the_pointer() {
        for view in [None, Some(OrthoView::Top), Some(OrthoView::Front), Some(OrthoView::Side)] {
            let mut c = Camera::default();
            c.look_at(DVec3::new(-14.0, 9.0, -16.0), DVec3::new(6.0, 3.0, 0.0));
            c.set_ortho(view);
            let (ndc, aspect) = ((0.6, -0.3), 1.5);
            let (o, d) = c.ray(ndc.0, ndc.1, aspect);
            let p = o + d * 20.0;
            c.zoom_at(2.0, ndc.0, ndc.1, aspect, Some(p));
            let at = c.project(p, aspect as f32).unwrap();
            assert!((at - glam::Vec2::new(0.6, -0.3)).length() < 1e-3, "{view:?}: {at}");
            c.zoom_at(-3.5, ndc.0, ndc.1, aspect, Some(p));
            let at = c.project(p, aspect as f32).unwrap();
            assert!((at - glam::Vec2::new(0.6, -0.3)).length() < 1e-3, "{view:?}: {at}");
        }
    }

    /// The orthographic views look along their axis, their rays are parallel and project back
    /// where they came from; leaving them keeps the target.
    #[test]
    fn orthographic_views_look_along_their_axis() {
        for view in OrthoView::ALL {
            let mut c = Camera::default();
            c.look_at(DVec3::new(-14.0, 9.0, -16.0), DVec3::new(6.0, 3.0, 0.0));
            c.set_ortho(Some(view));
            let f = c.forward();
            assert!((f.abs()[view.axis()] - 1.0).abs() < 1e-9, "{view:?}: {f}");
            assert!((c.pivot() - DVec3::new(6.0, 3.0, 0.0)).length() < 1e-6);
            let (o1, d1) = c.ray(-0.5, 0.5, 1.6);
            let (_, d2) = c.ray(0.5, -0.5, 1.6);
            assert!(d1.dot(d2) > 1.0 - 1e-12, "parallel rays");
            let p = c.project(o1 + d1 * 100.0, 1.6).unwrap();
            assert!((p - glam::Vec2::new(-0.5, 0.5)).length() < 1e-4, "{view:?}: {p}");
            c.set_ortho(None);
            assert!((c.pivot() - DVec3::new(6.0, 3.0, 0.0)).length() < 1e-6);
        }
    }

    #[test]
    fn orbit_keeps_the_pivot() {
        let mut c = Camera::default();
        c.look_at(DVec3::new(0.0, 5.0, -10.0), DVec3::ZERO);
        c.orbit(120.0, 40.0);
        assert!(c.pivot().length() < 1e-9);
        c.zoom(2.0);
        assert!(c.pivot().length() < 1e-9);
    }
}
