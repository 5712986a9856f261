//! The viewport background: a vertical gradient taken from the active level's default sky
//! environment. The −Y skybox face gives the colour below the horizon, the four side faces
//! (averaged) the horizon, +Y the zenith. A face's colour is its material colour times the average
//! colour of its texture once that is loaded. A level without a default sky (or a sky without
//! skybox materials) keeps the fixed background colour.

use pmfedit_core::map::Level;
use pmfedit_core::map::library::{Library, SkySlot};

/// The background when there is no sky (sRGB).
pub const DEFAULT_BACKGROUND: [f32; 3] = [0.47, 0.62, 0.80];

/// Gradient colours (sRGB, `0..=1`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkyColors {
    /// Straight down.
    pub bottom: [f32; 3],
    /// At the horizon.
    pub side: [f32; 3],
    /// Straight up.
    pub top: [f32; 3],
}

impl SkyColors {
    /// One colour everywhere.
    pub fn flat(c: [f32; 3]) -> Self {
        Self { bottom: c, side: c, top: c }
    }

    /// The colour seen looking along a direction with vertical component `y` (−1 down … 1 up);
    /// the shader does the same.
    pub fn at(&self, y: f32) -> [f32; 3] {
        let (to, t) = if y >= 0.0 { (self.top, y.min(1.0)) } else { (self.bottom, (-y).min(1.0)) };
        std::array::from_fn(|i| self.side[i] + (to[i] - self.side[i]) * t)
    }
}

/// The texture references of the level's default sky (to load them for their average colour).
pub fn sky_textures<'a>(library: &'a Library, level: &Level) -> impl Iterator<Item = &'a str> + use<'a> {
    let sky = level.environments.sky.and_then(|id| library.sky_environments().get(id));
    sky.into_iter()
        .flat_map(|s| s.skybox.iter().flatten())
        .filter_map(|m| library.materials().get(*m))
        .map(|m| m.texture.as_str())
        .filter(|t| !t.is_empty())
}

/// The gradient of the level's default sky; `average` gives a texture's average colour when it
/// is known. `None` when the level has no default sky or its skybox slots are all empty.
pub fn sky_colors(library: &Library, level: &Level, average: impl Fn(&str) -> Option<[f32; 3]>) -> Option<SkyColors> {
    let sky = level.environments.sky.and_then(|id| library.sky_environments().get(id))?;
    let face = |slot: SkySlot| -> Option<[f32; 3]> {
        let m = library.materials().get(sky.slot(slot)?)?;
        let c = m.color.map(|v| f32::from(v) / 255.0);
        let t = average(&m.texture).unwrap_or([1.0; 3]);
        Some(std::array::from_fn(|i| c[i] * t[i]))
    };
    let mean = |cs: &[[f32; 3]]| -> Option<[f32; 3]> {
        (!cs.is_empty()).then(|| std::array::from_fn(|i| cs.iter().map(|c| c[i]).sum::<f32>() / cs.len() as f32))
    };
    let top = face(SkySlot::PosY);
    let bottom = face(SkySlot::NegY);
    let sides: Vec<[f32; 3]> =
        [SkySlot::PosX, SkySlot::PosZ, SkySlot::NegX, SkySlot::NegZ].into_iter().filter_map(face).collect();
    let ends: Vec<[f32; 3]> = top.into_iter().chain(bottom).collect();
    let side = mean(&sides).or_else(|| mean(&ends))?;
    Some(SkyColors { bottom: bottom.unwrap_or(side), side, top: top.unwrap_or(side) })
}

impl super::Viewport {
    /// This frame's background from the active level's default sky (loading its textures for
    /// their average colour).
    pub(super) fn update_sky(&mut self, state: &crate::state::EditorState) {
        self.sky = state.map.levels.get(state.level).and_then(|level| {
            for t in sky_textures(&state.map.library, level) {
                self.textures.want(t);
            }
            sky_colors(&state.map.library, level, |t| self.textures.average(t))
        });
    }
}

#[cfg(test)]
mod tests {
    use pmfedit_core::map::library::{Material, SkyEnvironment};
    use pmfedit_core::sample;

    use super::*;

    fn close(a: [f32; 3], b: [f32; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn the_demo_sky_is_its_sky_material_and_follows_colour_edits() {
        let mut map = sample::demo();
        let sky = {
            let id = map.levels[0].environments.sky.expect("the demo has a default sky");
            map.library.sky_environments().get(id).unwrap().clone()
        };
        let mat = sky.skybox[2].unwrap();
        let c = map.library.materials().get(mat).unwrap().color.map(|v| f32::from(v) / 255.0);
        let got = sky_colors(&map.library, &map.levels[0], |_| None).unwrap();
        assert_eq!(got, SkyColors::flat(c));
        // A texture average multiplies in.
        let half = sky_colors(&map.library, &map.levels[0], |_| Some([0.5; 3])).unwrap();
        assert!(close(half.side, c.map(|v| v * 0.5)));
        // Editing the material's colour changes the gradient.
        let mut m = map.library.materials().get(mat).unwrap().clone();
        m.color = [255, 0, 0];
        map.library.replace(mat, m).unwrap();
        assert_eq!(sky_colors(&map.library, &map.levels[0], |_| None).unwrap(), SkyColors::flat([1.0, 0.0, 0.0]));
        // No default sky: no gradient.
        map.levels[0].environments.sky = None;
        assert_eq!(sky_colors(&map.library, &map.levels[0], |_| None), None);
    }

    #[test]
    fn bottom_side_and_top_come_from_their_faces() {
        let mut map = sample::demo();
        let lib = &mut map.library;
        let (phys, snd) = {
            let (_, m) = lib.materials().iter().next().unwrap();
            (m.physics, m.sound)
        };
        let mut add = |name: &str, color: [u8; 3]| {
            lib.add(Material { color, texture: format!("textures/{name}.png"), ..Material::new(name, phys, snd) })
                .unwrap()
        };
        let ground = add("t_ground", [0, 0, 255]);
        let red = add("t_red", [255, 0, 0]);
        let green = add("t_green", [0, 255, 0]);
        let up = add("t_up", [255, 255, 255]);
        // Face order +X, +Y, +Z, −X, −Y, −Z; −Z left empty.
        let sky = lib
            .add(SkyEnvironment {
                name: "test".into(),
                skybox: [Some(red), Some(up), Some(green), Some(red), Some(ground), None],
                ..Default::default()
            })
            .unwrap();
        map.levels[0].environments.sky = Some(sky);
        let avg = |t: &str| (t == "textures/t_up.png").then_some([0.5, 0.25, 1.0]);
        let s = sky_colors(&map.library, &map.levels[0], avg).unwrap();
        assert!(close(s.bottom, [0.0, 0.0, 1.0]));
        assert!(close(s.side, [2.0 / 3.0, 1.0 / 3.0, 0.0]), "{:?}", s.side);
        assert!(close(s.top, [0.5, 0.25, 1.0]));
        assert!(close(s.at(1.0), s.top) && close(s.at(-1.0), s.bottom) && close(s.at(0.0), s.side));
        assert!(close(s.at(0.5), [(2.0 / 3.0 + 0.5) / 2.0, (1.0 / 3.0 + 0.25) / 2.0, 0.5]));
        let mut textures: Vec<&str> = sky_textures(&map.library, &map.levels[0]).collect();
        textures.sort();
        textures.dedup();
        assert_eq!(textures.len(), 4);
        // Only a top face: it is the horizon too.
        let only_top = map
            .library
            .add(SkyEnvironment {
                name: "top".into(),
                skybox: [None, Some(up), None, None, None, None],
                ..Default::default()
            })
            .unwrap();
        map.levels[0].environments.sky = Some(only_top);
        assert_eq!(sky_colors(&map.library, &map.levels[0], |_| None).unwrap(), SkyColors::flat([1.0; 3]));
        let empty = map.library.add(SkyEnvironment { name: "empty".into(), ..Default::default() }).unwrap();
        map.levels[0].environments.sky = Some(empty);
        assert_eq!(sky_colors(&map.library, &map.levels[0], |_| None), None);
    }
}
