//! Deterministic randomness for the sample maps: a SplitMix64 stream ([`Rng`]) and 2D value
//! noise ([`value_noise`], [`fbm`]) built on a stateless integer hash ([`hash2`]).
//!
//! Everything is integer hashing plus plain `f64` arithmetic (no fused operations, no platform
//! functions beyond `floor`), so the same seed gives the same numbers on every platform.

/// The SplitMix64 output function: a bijective 64-bit mixer.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash of an integer 2D position and a seed, uniform in `[0, 1)`.
pub fn hash2(seed: u64, x: i32, z: i32) -> f64 {
    let key = u64::from(x as u32) | (u64::from(z as u32) << 32);
    unit(mix64(mix64(seed) ^ mix64(key.wrapping_add(0x9e37_79b9_7f4a_7c15))))
}

/// The top 53 bits of `h` as a float in `[0, 1)`.
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A SplitMix64 pseudo-random stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A stream seeded by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(mix64(seed ^ 0x5851_f42d_4c95_7f2d))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        unit(self.next_u64())
    }

    /// Uniform in `[lo, hi)` (`lo` when the range is empty).
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        if hi <= lo {
            return lo;
        }
        let span = (i64::from(hi) - i64::from(lo)) as u64;
        (i64::from(lo) + (self.next_u64() % span) as i64) as i32
    }

    /// Uniform in `[lo, hi)`.
    pub fn range_f(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
}

fn smooth(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

/// Value noise in `[0, 1)`: hashed values at integer positions, smoothstep-interpolated.
pub fn value_noise(seed: u64, x: f64, z: f64) -> f64 {
    let (x0, z0) = (x.floor(), z.floor());
    let (sx, sz) = (smooth(x - x0), smooth(z - z0));
    let (ix, iz) = (x0 as i32, z0 as i32);
    let a = hash2(seed, ix, iz);
    let b = hash2(seed, ix.wrapping_add(1), iz);
    let c = hash2(seed, ix, iz.wrapping_add(1));
    let d = hash2(seed, ix.wrapping_add(1), iz.wrapping_add(1));
    lerp(lerp(a, b, sx), lerp(c, d, sx), sz)
}

/// Fractal value noise in `[0, 1)`: `octaves` layers, the first of wavelength `wavelength`
/// (in the units of `x` and `z`), each next one half the wavelength and half the amplitude.
pub fn fbm(seed: u64, x: f64, z: f64, wavelength: f64, octaves: u32) -> f64 {
    let (mut sum, mut total, mut amp, mut freq) = (0.0, 0.0, 1.0, 1.0 / wavelength);
    for o in 0..octaves {
        sum += amp * value_noise(mix64(seed.wrapping_add(u64::from(o))), x * freq, z * freq);
        total += amp;
        amp *= 0.5;
        freq *= 2.0;
    }
    sum / total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_deterministic_and_bounded() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let xs: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..8).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..8).map(|_| c.next_u64()).collect::<Vec<_>>());
        for i in 0..200 {
            let r = a.range(-3, 5);
            assert!((-3..5).contains(&r));
            let (x, z) = (f64::from(i) * 0.37 - 20.0, f64::from(i) * 0.11);
            let v = fbm(1, x, z, 16.0, 4);
            assert!((0.0..1.0).contains(&v), "{v}");
            assert_eq!(v, fbm(1, x, z, 16.0, 4));
        }
        // Continuous: no jump across an integer lattice line.
        let (l, r) = (value_noise(3, 4.0 - 1e-9, 2.5), value_noise(3, 4.0, 2.5));
        assert!((l - r).abs() < 1e-6);
        assert_eq!(Rng::new(1).range(5, 5), 5);
    }
}
