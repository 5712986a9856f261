//! PTF 0.0 textures (`docs/spec/PTF.md`), and conversion from PNG and other images (T1, T2).
//!
//! Layout: `PTF`, `u8` version 0, `u8` info (bits 0–1 pixel format), `u8` resolution (bits 0–3
//! width exponent, 4–7 height exponent), then one LZ4 frame of `width × height` pixels that runs to
//! the end of the file.

use std::path::Path;

use super::bin::{ReadResult, Reader, Writer};
use super::lz4f;

/// Pixel format (info bits 0–1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// Intensity (grey), 1 byte.
    I = 0,
    /// Intensity + alpha, 2 bytes.
    Ia = 1,
    Rgb = 2,
    Rgba = 3,
}

impl PixelFormat {
    pub fn bytes_per_pixel(self) -> usize {
        self as usize + 1
    }

    fn from_bits(bits: u8) -> Self {
        match bits & 3 {
            0 => Self::I,
            1 => Self::Ia,
            2 => Self::Rgb,
            _ => Self::Rgba,
        }
    }
}

/// Largest side exponent (2^15 = 32768).
pub const MAX_EXP: u8 = 15;

/// A decoded PTF texture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ptf {
    pub format: PixelFormat,
    pub width_exp: u8,
    pub height_exp: u8,
    /// Rows top to bottom, `width × height × bytes_per_pixel` bytes.
    pub pixels: Vec<u8>,
}

/// Why a texture could not be converted or written.
#[derive(Debug, thiserror::Error)]
pub enum PtfError {
    #[error("{path}: {source}")]
    Image { path: String, source: image::ImageError },
    #[error("{path}: {width}×{height} is larger than PTF's {max}×{max} limit")]
    TooLarge { path: String, width: u32, height: u32, max: u32 },
    #[error("PTF pixel data is {actual} bytes, expected {expected}")]
    PixelLength { expected: usize, actual: usize },
}

impl Ptf {
    pub fn width(&self) -> usize {
        1 << self.width_exp
    }

    pub fn height(&self) -> usize {
        1 << self.height_exp
    }

    fn pixel_len(format: PixelFormat, width_exp: u8, height_exp: u8) -> u64 {
        (1u64 << width_exp) * (1u64 << height_exp) * format.bytes_per_pixel() as u64
    }

    /// Parses a PTF file.
    pub fn read(bytes: &[u8]) -> ReadResult<Self> {
        let mut r = Reader::new(bytes, "PTF header");
        if r.array::<3>()? != *b"PTF" {
            return Err(r.invalid_at(0, "not a PTF texture (wrong magic)"));
        }
        let version = r.u8()?;
        if version != 0 {
            return Err(r.invalid_at(3, format!("unsupported PTF version {version}")));
        }
        let info = r.u8()?;
        if info & 0xFC != 0 {
            return Err(r.invalid_at(4, format!("reserved info bits set (0x{info:02x})")));
        }
        let format = PixelFormat::from_bits(info);
        let res = r.u8()?;
        let (width_exp, height_exp) = (res & 0x0F, res >> 4);
        r.set_section("PTF pixel data");
        let pixels = lz4f::decompress(&r, Self::pixel_len(format, width_exp, height_exp))?;
        Ok(Self { format, width_exp, height_exp, pixels })
    }

    /// Serialises the texture.
    pub fn write(&self) -> Result<Vec<u8>, PtfError> {
        let expected = Self::pixel_len(self.format, self.width_exp, self.height_exp) as usize;
        if self.pixels.len() != expected || self.width_exp > MAX_EXP || self.height_exp > MAX_EXP {
            return Err(PtfError::PixelLength { expected, actual: self.pixels.len() });
        }
        let mut w = Writer::with_capacity(self.pixels.len() / 2 + 32);
        w.bytes(b"PTF");
        w.u8(0);
        w.u8(self.format as u8);
        w.u8(self.width_exp | (self.height_exp << 4));
        w.bytes(&lz4f::compress(&self.pixels));
        Ok(w.into_inner())
    }

    /// Converts an image: sides that are not powers of two are resampled up to the next power of
    /// two (T1, with a warning), and the smallest lossless pixel format is chosen (T2).
    /// `name` is used in warnings and errors.
    pub fn from_image(img: &image::DynamicImage, name: &str) -> Result<(Self, Vec<String>), PtfError> {
        let (w, h) = (img.width(), img.height());
        let max = 1u32 << MAX_EXP;
        if w > max || h > max || w == 0 || h == 0 {
            return Err(PtfError::TooLarge { path: name.to_owned(), width: w, height: h, max });
        }
        let (pw, ph) = (w.next_power_of_two(), h.next_power_of_two());
        let mut warnings = Vec::new();
        let rgba = if (pw, ph) != (w, h) {
            warnings.push(format!("{name}: {w}×{h} is not a power of two; resampled to {pw}×{ph}"));
            image::imageops::resize(&img.to_rgba8(), pw, ph, image::imageops::FilterType::CatmullRom)
        } else {
            img.to_rgba8()
        };
        let raw = rgba.as_raw();
        let grey = raw.chunks_exact(4).all(|p| p[0] == p[1] && p[1] == p[2]);
        let opaque = raw.chunks_exact(4).all(|p| p[3] == 255);
        let (format, pixels): (PixelFormat, Vec<u8>) = match (grey, opaque) {
            (true, true) => (PixelFormat::I, raw.chunks_exact(4).map(|p| p[0]).collect()),
            (true, false) => (PixelFormat::Ia, raw.chunks_exact(4).flat_map(|p| [p[0], p[3]]).collect()),
            (false, true) => (PixelFormat::Rgb, raw.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect()),
            (false, false) => (PixelFormat::Rgba, raw.clone()),
        };
        let ptf = Self { format, width_exp: pw.trailing_zeros() as u8, height_exp: ph.trailing_zeros() as u8, pixels };
        Ok((ptf, warnings))
    }

    /// Decodes an image file (PNG) and converts it; see [`Ptf::from_image`].
    pub fn from_image_bytes(bytes: &[u8], name: &str) -> Result<(Self, Vec<String>), PtfError> {
        let img = image::load_from_memory(bytes).map_err(|source| PtfError::Image { path: name.to_owned(), source })?;
        Self::from_image(&img, name)
    }

    /// Reads and converts an image file from disk.
    pub fn from_image_file(path: &Path) -> Result<(Self, Vec<String>), PtfError> {
        let name = path.display().to_string();
        let img = image::open(path).map_err(|source| PtfError::Image { path: name.clone(), source })?;
        Self::from_image(&img, &name)
    }

    /// Expands to RGBA8 (for thumbnails and viewers).
    pub fn to_rgba8(&self) -> Vec<u8> {
        match self.format {
            PixelFormat::I => self.pixels.iter().flat_map(|&i| [i, i, i, 255]).collect(),
            PixelFormat::Ia => self.pixels.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect(),
            PixelFormat::Rgb => self.pixels.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
            PixelFormat::Rgba => self.pixels.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{DynamicImage, Rgba, RgbaImage};

    fn png(img: &RgbaImage) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn header_bytes_and_round_trip() {
        let ptf = Ptf { format: PixelFormat::Rgb, width_exp: 2, height_exp: 1, pixels: (0..24).collect() };
        let bytes = ptf.write().unwrap();
        assert_eq!(&bytes[..6], &[b'P', b'T', b'F', 0, 2, 0x12]);
        assert_eq!(Ptf::read(&bytes).unwrap(), ptf);
    }

    #[test]
    fn smallest_lossless_format_is_chosen() {
        let cases: [(Rgba<u8>, PixelFormat, usize); 4] = [
            (Rgba([9, 9, 9, 255]), PixelFormat::I, 1),
            (Rgba([9, 9, 9, 100]), PixelFormat::Ia, 2),
            (Rgba([9, 8, 9, 255]), PixelFormat::Rgb, 3),
            (Rgba([9, 8, 9, 100]), PixelFormat::Rgba, 4),
        ];
        for (px, format, bpp) in cases {
            let img = RgbaImage::from_pixel(4, 2, px);
            let (ptf, warnings) = Ptf::from_image_bytes(&png(&img), "t.png").unwrap();
            assert!(warnings.is_empty());
            assert_eq!(ptf.format, format);
            assert_eq!(ptf.pixels.len(), 8 * bpp);
            // Expanding back gives the original pixels exactly.
            assert_eq!(ptf.to_rgba8(), img.into_raw());
        }
    }

    #[test]
    fn non_power_of_two_is_resampled_with_a_warning() {
        let img = DynamicImage::ImageRgba8(RgbaImage::from_pixel(5, 3, Rgba([200, 10, 10, 255])));
        let (ptf, warnings) = Ptf::from_image(&img, "textures/odd.png").unwrap();
        assert_eq!((ptf.width(), ptf.height()), (8, 4));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("textures/odd.png: 5×3"), "{}", warnings[0]);
    }

    #[test]
    fn hostile_input_is_an_error() {
        let good =
            Ptf { format: PixelFormat::Rgba, width_exp: 3, height_exp: 3, pixels: vec![7; 256] }.write().unwrap();
        for n in 0..good.len() {
            assert!(Ptf::read(&good[..n]).is_err(), "truncated to {n}");
        }
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(Ptf::read(&bad).unwrap_err().to_string().contains("wrong magic"));
        let mut bad = good.clone();
        bad[3] = 1;
        assert!(Ptf::read(&bad).unwrap_err().to_string().contains("version 1"));
        // Forged resolution: 32768×32768 RGBA is 4 GiB, refused before allocating.
        let mut bad = good.clone();
        bad[5] = 0xFF;
        assert!(Ptf::read(&bad).unwrap_err().to_string().contains("limit"));
        assert!(Ptf::from_image_bytes(b"not a png", "x.png").unwrap_err().to_string().starts_with("x.png: "));
    }
}
