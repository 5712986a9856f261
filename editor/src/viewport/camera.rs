//! The viewport camera: a position (f64, world space) and a yaw/pitch direction, driven as a fly
//! camera (right mouse + WASD) or an orbit camera (Alt + left drag around a pivot in front of it).
//!
//! Rendering is camera-relative: the view matrix has no translation and everything drawn is
//! first moved by `-eye` in f64, so precision holds anywhere in a 2^27-unit level.

use glam::{DVec3, Mat4, Vec3};

/// Perspective camera.
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

    /// Unit right vector (horizontal).
    pub fn right(&self) -> DVec3 {
        self.forward().cross(DVec3::Y).try_normalize().unwrap_or(DVec3::X)
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

    /// Looks at `target` from `distance` away along the current direction.
    pub fn frame(&mut self, target: DVec3, distance: f64) {
        let distance = distance.max(0.5);
        self.eye = target - self.forward() * distance;
        self.orbit_distance = distance;
    }

    /// Turns by pixel deltas (fly look).
    pub fn turn(&mut self, dx: f64, dy: f64) {
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
        let per_px = 2.0 * (self.fov_y / 2.0).tan() * self.orbit_distance / viewport_height_px.max(1.0);
        self.eye += (-self.right() * dx + self.up() * dy) * per_px;
    }

    /// Dollies towards the pivot (`steps` > 0 zooms in).
    pub fn zoom(&mut self, steps: f64) {
        let pivot = self.pivot();
        self.orbit_distance = (self.orbit_distance * 0.85f64.powf(steps)).clamp(0.25, 10_000.0);
        self.eye = pivot - self.forward() * self.orbit_distance;
    }

    /// Moves in camera space: `v.x` right, `v.y` world up, `v.z` forward, in map units.
    pub fn fly(&mut self, v: DVec3) {
        self.eye += self.right() * v.x + DVec3::Y * v.y + self.forward() * v.z;
    }

    /// Camera-relative view matrix (rotation only).
    pub fn view(&self) -> Mat4 {
        Mat4::look_to_rh(Vec3::ZERO, self.forward().as_vec3(), Vec3::Y)
    }

    /// Projection for a viewport aspect ratio (width / height).
    pub fn projection(&self, aspect: f32) -> Mat4 {
        Mat4::perspective_rh_gl(self.fov_y as f32, aspect.max(1e-3), NEAR, FAR)
    }

    /// The world-space ray through a point of the viewport given in `[-1, 1]` normalized device
    /// coordinates (`y` up): origin (the eye) and unit direction.
    pub fn ray(&self, ndc_x: f64, ndc_y: f64, aspect: f64) -> (DVec3, DVec3) {
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
