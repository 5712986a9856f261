//! LZ4 frames (docs/spec/PMF-NOTES.md L1, L5) on top of `lz4_flex::frame`.
//!
//! Frames are written with the content checksum on and the content size in the frame header.
//! Decoding never produces more than the caller's declared size (plus one byte to detect
//! overruns), and the output must be exactly the declared size.

use std::io::{Read, Write};

use lz4_flex::frame::{BlockMode, FrameDecoder, FrameEncoder, FrameInfo};

use super::bin::{ReadError, Reader};

/// Largest decompressed block we accept (docs/spec/PMF-NOTES.md L1: 1 GiB per block).
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// Compresses `data` into one LZ4 frame (independent blocks, content checksum, content size).
///
/// The block size is left to `lz4_flex` (`BlockSize::Auto`): the smallest of 64 KiB, 256 KiB
/// and 4 MiB that holds `data`, so a large chunk block is cut every 4 MiB only. A record repeated
/// within LZ4's 64 KiB window can then cost a few bytes per 255 repeated, when the match finder
/// finds the earlier copy (it does for varied bytes; not for the self-similar far visibility
/// lists, docs/spec/PMF-NOTES.md L1); linked blocks would only add the few repeats that straddle
/// a 4 MiB boundary.
pub fn compress(data: &[u8]) -> Vec<u8> {
    let info = FrameInfo::new()
        .block_mode(BlockMode::Independent)
        .content_checksum(true)
        .content_size(Some(data.len() as u64));
    let mut enc = FrameEncoder::with_frame_info(info, Vec::with_capacity(data.len() / 2 + 32));
    // Writing into a Vec cannot fail.
    enc.write_all(data).expect("write to Vec");
    enc.finish().expect("finish to Vec")
}

/// Decompresses one LZ4 frame that must hold exactly `expected_len` bytes.
///
/// `frame` is read through `r`'s section and offset so errors point at the frame in the file.
/// Refuses `expected_len` above [`MAX_DECOMPRESSED`] before allocating anything.
pub fn decompress(frame: &Reader<'_>, expected_len: u64) -> Result<Vec<u8>, ReadError> {
    let expected = frame.limit(expected_len, MAX_DECOMPRESSED)?;
    let data = &frame.data()[frame.position()..];
    // lz4_flex treats input that ends at a block boundary as the end of the frame, so walk the
    // block structure first: the frame must end with its end mark (and checksum) exactly at the end
    // of the section.
    let len = frame_len(data).map_err(|(at, why)| frame.invalid_at(frame.offset() + at as u64, why.to_string()))?;
    if len != data.len() {
        return Err(frame.invalid_at(
            frame.offset() + len as u64,
            format!("{} bytes after the end of the LZ4 frame", data.len() - len),
        ));
    }
    let mut dec = FrameDecoder::new(data);
    // Never grow past the declared size (+1 to notice a frame that holds more).
    let mut out = Vec::with_capacity(expected.min(64 << 20));
    if let Err(e) = (&mut dec).take(expected as u64 + 1).read_to_end(&mut out) {
        return Err(frame.invalid(format!("LZ4 frame: {e}")));
    }
    if out.len() > expected {
        return Err(frame.invalid(format!("LZ4 frame holds more than the {expected} declared bytes")));
    }
    if out.len() < expected {
        return Err(frame.invalid(format!("LZ4 frame holds {} bytes, but {expected} were declared", out.len())));
    }
    Ok(out)
}

/// Checks that `frame` looks like an LZ4 frame of `expected_len` bytes without decompressing it
/// all: the same size limit and frame structure as [`decompress`], the content size in the
/// frame header (when the frame states one) equal to `expected_len`, and the first `prefix`
/// bytes of content decoding. Memory stays below `prefix` bytes whatever the frame declares.
pub fn probe(frame: &Reader<'_>, expected_len: u64, prefix: usize) -> Result<(), ReadError> {
    let expected = frame.limit(expected_len, MAX_DECOMPRESSED)?;
    let data = &frame.data()[frame.position()..];
    let len = frame_len(data).map_err(|(at, why)| frame.invalid_at(frame.offset() + at as u64, why.to_string()))?;
    if len != data.len() {
        return Err(frame.invalid_at(frame.offset() + len as u64, "bytes after the end of the LZ4 frame"));
    }
    // FLG bit 3: an 8-byte content size follows FLG and BD (frame_len checked they are there).
    if data[4] & 0x08 != 0 {
        let size = u64::from_le_bytes(data[6..14].try_into().expect("8 bytes"));
        if size != expected_len {
            return Err(frame.invalid(format!("LZ4 frame states {size} bytes of content, {expected_len} declared")));
        }
    }
    let want = expected.min(prefix);
    let mut out = Vec::with_capacity(want);
    if let Err(e) = FrameDecoder::new(data).take(want as u64).read_to_end(&mut out) {
        return Err(frame.invalid(format!("LZ4 frame: {e}")));
    }
    if out.len() < want {
        return Err(frame.invalid(format!("LZ4 frame holds {} bytes, but {expected} were declared", out.len())));
    }
    Ok(())
}

const MAGIC: u32 = 0x184D_2204;

/// What is wrong with the structure of an LZ4 frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum FrameError {
    #[error("LZ4 frame is truncated")]
    Truncated,
    #[error("not an LZ4 frame (wrong magic number)")]
    Magic,
    #[error("LZ4 frame header is truncated")]
    HeaderTruncated,
    #[error("unsupported LZ4 frame version {0}")]
    Version(u8),
    #[error("LZ4 block of {0} bytes runs past the end of the data")]
    BlockPastEnd(usize),
}

/// The byte length of the LZ4 frame at the start of `data`, found by walking its block headers
/// (no decompression). Errors give the offset within `data` and the reason.
fn frame_len(data: &[u8]) -> Result<usize, (usize, FrameError)> {
    let u32_at = |at: usize| -> Result<u32, (usize, FrameError)> {
        data.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok_or((at, FrameError::Truncated))
    };
    if u32_at(0)? != MAGIC {
        return Err((0, FrameError::Magic));
    }
    let flg = *data.get(4).ok_or((4, FrameError::HeaderTruncated))?;
    if flg >> 6 != 1 {
        return Err((4, FrameError::Version(flg >> 6)));
    }
    let block_checksums = flg & 0x10 != 0;
    let content_checksum = flg & 0x04 != 0;
    let mut at = 6 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 } + 1;
    if at > data.len() {
        return Err((data.len(), FrameError::HeaderTruncated));
    }
    loop {
        let block = u32_at(at)?;
        at += 4;
        if block == 0 {
            break;
        }
        let size = (block & 0x7FFF_FFFF) as usize + if block_checksums { 4 } else { 0 };
        if size > data.len() - at {
            return Err((at - 4, FrameError::BlockPastEnd(size)));
        }
        at += size;
    }
    if content_checksum {
        u32_at(at)?;
        at += 4;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::bin::ReadErrorKind;

    fn reader(b: &[u8]) -> Reader<'_> {
        Reader::with_base(b, 1000, "block")
    }

    #[test]
    fn round_trip() {
        for data in [&b""[..], b"a", &[7u8; 100_000][..], &(0..=255u8).cycle().take(70_000).collect::<Vec<_>>()] {
            let frame = compress(data);
            assert_eq!(&frame[..4], &[0x04, 0x22, 0x4D, 0x18], "LZ4 frame magic");
            assert_eq!(decompress(&reader(&frame), data.len() as u64).unwrap(), data);
        }
    }

    /// A 40 KB record written 50 times (as a far visibility list is, once per air cube): each
    /// repeat copies from the one before, so the frame holds about one copy. 64 KiB independent
    /// blocks would hold one per block (about 30 here).
    #[test]
    fn repeats_compress_across_64_kib() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let record: Vec<u8> = (0..40_000)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect();
        let data = record.repeat(50);
        let frame = compress(&data);
        assert!(frame.len() < 2 * record.len(), "{} bytes for 50 repeats of {}", frame.len(), record.len());
        assert_eq!(decompress(&reader(&frame), data.len() as u64).unwrap(), data);
        let with = |mode, size| {
            let info = FrameInfo::new().block_mode(mode).block_size(size).content_checksum(true);
            let mut enc = FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(&data).unwrap();
            enc.finish().unwrap()
        };
        let small = with(BlockMode::Independent, lz4_flex::frame::BlockSize::Max64KB);
        assert!(small.len() > 10 * frame.len(), "64 KiB blocks: {}, ours: {}", small.len(), frame.len());
        // Linked blocks decode too (our reader takes any valid frame).
        let linked = with(BlockMode::Linked, lz4_flex::frame::BlockSize::Max64KB);
        for f in [&small, &linked] {
            assert_eq!(decompress(&reader(f), data.len() as u64).unwrap(), data);
        }
    }

    #[test]
    fn wrong_declared_size_is_an_error() {
        let frame = compress(b"hello world");
        assert!(decompress(&reader(&frame), 10).is_err());
        assert!(decompress(&reader(&frame), 12).is_err());
    }

    #[test]
    fn huge_declared_size_is_refused_before_allocating() {
        let frame = compress(b"x");
        let e = decompress(&reader(&frame), u64::from(u32::MAX)).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::SizeTooLarge { .. }), "{e}");
    }

    #[test]
    fn corrupt_checksum_is_an_error() {
        let mut frame = compress(b"hello hello hello hello");
        let n = frame.len();
        frame[n - 1] ^= 0xFF;
        assert!(decompress(&reader(&frame), 23).is_err());
    }

    #[test]
    fn trailing_bytes_are_an_error() {
        let mut frame = compress(b"abc");
        frame.push(0);
        let e = decompress(&reader(&frame), 3).unwrap_err();
        assert!(e.to_string().contains("1 bytes after the end"), "{e}");
        assert_eq!(e.offset, 1000 + frame.len() as u64 - 1);
    }

    #[test]
    fn probe_checks_without_decompressing_everything() {
        let data = vec![3u8; 1 << 20];
        let frame = compress(&data);
        probe(&reader(&frame), data.len() as u64, 1024).unwrap();
        // The frame states its content size: another declared size is refused.
        assert!(probe(&reader(&frame), data.len() as u64 - 1, 1024).is_err());
        assert!(probe(&reader(&frame[..frame.len() - 1]), data.len() as u64, 1024).is_err());
        let e = probe(&reader(&frame), u64::from(u32::MAX), 1024).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::SizeTooLarge { .. }), "{e}");
        assert!(probe(&reader(b"not lz4 at all, not lz4 at all"), 10, 1024).is_err());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let frame = compress(&[5u8; 3000]);
        for n in 0..frame.len() {
            assert!(decompress(&reader(&frame[..n]), 3000).is_err(), "truncated to {n}");
        }
    }
}
