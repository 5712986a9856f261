//! Writes the default asset pack: tileable 64×64 PNG textures in `assets/textures/`, plus the
//! textures the built-in demo map names (`sky_day`, `clouds`, `matcap/glass`).
//!
//! `cargo run -p pmfedit --example gen_assets [OUT_DIR]` (default: the repository's
//! `assets/textures`). Deterministic: the same bytes every run.

use std::f32::consts::TAU;
use std::path::PathBuf;

const N: u32 = 64;

/// A hash of integer coordinates to `[0, 1)`.
fn hash(seed: u32, x: i32, y: i32) -> f32 {
    let mut h =
        seed.wrapping_mul(0x9E37_79B9) ^ (x as u32).wrapping_mul(0x85EB_CA6B) ^ (y as u32).wrapping_mul(0xC2B2_AE35);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    h = h.wrapping_mul(0x297A_2D39);
    h ^= h >> 15;
    (h >> 8) as f32 / (1u32 << 24) as f32
}

/// Tileable value noise with `cells` cells across the texture.
fn noise(seed: u32, x: f32, y: f32, cells: i32) -> f32 {
    let s = cells as f32 / N as f32;
    let (fx, fy) = (x * s, y * s);
    let (x0, y0) = (fx.floor() as i32, fy.floor() as i32);
    let (tx, ty) = (fx - x0 as f32, fy - y0 as f32);
    let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
    let w = |v: i32| v.rem_euclid(cells);
    let v = |a, b| hash(seed, w(a), w(b));
    let top = v(x0, y0) + (v(x0 + 1, y0) - v(x0, y0)) * sx;
    let bottom = v(x0, y0 + 1) + (v(x0 + 1, y0 + 1) - v(x0, y0 + 1)) * sx;
    top + (bottom - top) * sy
}

/// Fractal noise: octaves of 4, 8, 16, 32 cells.
fn fbm(seed: u32, x: f32, y: f32) -> f32 {
    let mut sum = 0.0;
    let mut amp = 0.5;
    for (i, cells) in [4, 8, 16, 32].into_iter().enumerate() {
        sum += amp * noise(seed + i as u32, x, y, cells);
        amp *= 0.5;
    }
    sum / 0.9375
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    let t = t.clamp(0.0, 1.0);
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

fn shade(c: [f32; 3], k: f32) -> [f32; 3] {
    c.map(|v| v * k)
}

fn texture(name: &str, x: f32, y: f32) -> ([f32; 3], f32) {
    let n = fbm(name.len() as u32 * 7, x, y);
    let fine = noise(99, x, y, 32);
    match name {
        "stone" => (shade([0.58, 0.58, 0.6], 0.75 + 0.45 * n), 1.0),
        "brick" => {
            let row = (y / 8.0).floor() as i32;
            let off = if row % 2 == 0 { 0.0 } else { 8.0 };
            let bx = (x + off).rem_euclid(16.0);
            let by = y.rem_euclid(8.0);
            let mortar = bx < 1.0 || by < 1.0;
            if mortar {
                (shade([0.75, 0.73, 0.68], 0.9 + 0.2 * fine), 1.0)
            } else {
                let tone = hash(3, ((x + off) / 16.0).floor() as i32 % 4, row % 8);
                (shade([0.66, 0.33, 0.26], 0.8 + 0.25 * tone + 0.15 * fine), 1.0)
            }
        }
        "grass" => {
            let blade = noise(5, x, y * 0.25, 32);
            (mix([0.28, 0.5, 0.18], [0.5, 0.75, 0.3], 0.6 * n + 0.5 * blade - 0.1), 1.0)
        }
        "dirt" => (mix([0.36, 0.25, 0.15], [0.56, 0.4, 0.26], n + 0.3 * (fine - 0.5)), 1.0),
        "wood" => {
            let ring = ((x + 6.0 * fbm(11, x, y)) / 64.0 * 5.0 * TAU).sin() * 0.5 + 0.5;
            (mix([0.45, 0.3, 0.16], [0.7, 0.5, 0.3], 0.7 * ring + 0.3 * noise(12, x, y * 0.1, 8)), 1.0)
        }
        "metal" => {
            let brushed = noise(21, x, y * 0.05, 32);
            let (cx, cy) = (x.rem_euclid(32.0) - 4.0, y.rem_euclid(32.0) - 4.0);
            let rivet = (cx * cx + cy * cy).sqrt() < 2.0;
            let base = shade([0.66, 0.68, 0.72], 0.85 + 0.2 * brushed);
            (if rivet { shade(base, 1.25) } else { base }, 1.0)
        }
        // The water's animation frames (`water_1`, `water_2`): the same waves, a third of a
        // period further each.
        "water" | "water_1" | "water_2" => {
            let phase = match name {
                "water_1" => TAU / 3.0,
                "water_2" => 2.0 * TAU / 3.0,
                _ => 0.0,
            };
            let w = ((x / 64.0 * 2.0 + y / 64.0) * TAU + 3.0 * n + phase).sin() * 0.5 + 0.5;
            (mix([0.15, 0.35, 0.7], [0.4, 0.65, 0.9], 0.6 * w + 0.3 * n), 0.7)
        }
        "sand" => (mix([0.8, 0.72, 0.52], [0.92, 0.85, 0.65], 0.5 * n + 0.5 * fine), 1.0),
        "glass" => {
            let edge = x < 2.0 || y < 2.0 || x > 61.0 || y > 61.0;
            let streak = ((x + y) / 64.0 * TAU * 2.0).sin() > 0.92;
            let c = if edge {
                [0.7, 0.8, 0.85]
            } else if streak {
                [0.95, 0.97, 1.0]
            } else {
                [0.78, 0.88, 0.95]
            };
            (c, if edge { 0.9 } else { 0.35 })
        }
        "tiles" => {
            let grout = x.rem_euclid(16.0) < 1.0 || y.rem_euclid(16.0) < 1.0;
            let tone = hash(31, (x / 16.0).floor() as i32, (y / 16.0).floor() as i32);
            if grout {
                ([0.45, 0.45, 0.42], 1.0)
            } else {
                (shade([0.85, 0.85, 0.8], 0.92 + 0.1 * tone + 0.05 * fine), 1.0)
            }
        }
        "concrete" => {
            let pit = hash(41, x as i32, y as i32) > 0.97;
            (shade([0.62, 0.62, 0.6], if pit { 0.6 } else { 0.85 + 0.25 * n + 0.08 * fine }), 1.0)
        }
        "lava" => {
            let cracks = (1.0 - (2.0 * fbm(51, x, y) - 1.0).abs()).powf(6.0);
            (mix([0.25, 0.05, 0.02], [1.0, 0.65, 0.1], cracks * 1.4), 1.0)
        }
        // The demo's sky material (emissive): a pale blue with faint haze.
        "sky_day" => (mix([0.42, 0.62, 0.93], [0.66, 0.82, 1.0], 0.8 * n + 0.2 * fine), 1.0),
        // The demo's additive cloud layer: white puffs whose brightness and alpha are the
        // density, black (adds nothing) between them.
        "clouds" => {
            let t = ((fbm(61, x, y) - 0.42) / 0.3).clamp(0.0, 1.0);
            let d = t * t * (3.0 - 2.0 * t);
            ([d, d, d], d)
        }
        // The glass material's matcap: a lit sphere seen head-on, brighter towards the rim
        // (Fresnel) with a highlight up and to the left; dark outside the disc.
        "matcap/glass" => {
            let (nx, ny) = ((x + 0.5) / (N as f32 / 2.0) - 1.0, (y + 0.5) / (N as f32 / 2.0) - 1.0);
            let r2 = nx * nx + ny * ny;
            if r2 > 1.0 {
                return ([0.1, 0.12, 0.15], 1.0);
            }
            let nz = (1.0 - r2).sqrt();
            let fresnel = (1.0 - nz).powi(2);
            let spec = ((-0.45 * nx - 0.45 * ny + 0.77 * nz).max(0.0)).powi(24);
            (mix(mix([0.5, 0.6, 0.7], [0.92, 0.96, 1.0], fresnel), [1.0; 3], spec), 1.0)
        }
        _ => ([1.0, 0.0, 1.0], 1.0),
    }
}

fn main() {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/textures"));
    std::fs::create_dir_all(&out).expect("create the output folder");
    let names = [
        "stone",
        "brick",
        "grass",
        "dirt",
        "wood",
        "metal",
        "water",
        "water_1",
        "water_2",
        "sand",
        "glass",
        "tiles",
        "concrete",
        "lava",
        "sky_day",
        "clouds",
        "matcap/glass",
    ];
    for name in names {
        let img = image::RgbaImage::from_fn(N, N, |x, y| {
            let (c, a) = texture(name, x as f32, y as f32);
            let b = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
            image::Rgba([b(c[0]), b(c[1]), b(c[2]), b(a)])
        });
        let path = out.join(format!("{name}.png"));
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("create the output folder");
        img.save(&path).expect("write the texture");
        println!("{}", path.display());
    }
}
