//! LZ4 frames (docs/spec/PMF-NOTES.md L1, L5): written by our own block compressor
//! ([`super::lz4_block`]), read with `lz4_flex::frame`.
//!
//! Frames are written with the content checksum on and the content size in the frame header,
//! in **linked** blocks of at most 64 KB: a match may reach up to 64 KB back into the previous
//! block, so a visibility list that repeats across a block boundary is still one match. (With
//! independent blocks it would not be, half the time for a 32 KB list; 4 MB independent blocks
//! would make every decoder reserve 4 MB twice per frame, even for a small chunk block, where
//! linked 64 KB blocks need 192 KB.) A block that does not get smaller is stored uncompressed.
//! Any LZ4 frame decoder reads them: lz4_flex's, the `lz4` command-line tool.
//!
//! Decoding never produces more than the caller's declared size (plus one byte to detect
//! overruns), and the output must be exactly the declared size.

use std::io::Read;

use lz4_flex::frame::FrameDecoder;
use twox_hash::XxHash32;

use super::bin::{ReadError, Reader};
use super::lz4_block::{BlockCompressor, Compression};

/// Largest decompressed block we accept (docs/spec/PMF-NOTES.md L1: 1 GiB per block).
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// Largest block in our frames (BD = 4: 64 KB).
const BLOCK_SIZE: usize = 64 << 10;

/// Compresses `data` into one LZ4 frame (linked 64 KB blocks, content checksum, content size).
/// The bytes depend on `data` alone.
pub fn compress(data: &[u8]) -> Vec<u8> {
    compress_with(&mut BlockCompressor::new(data.len()), data)
}

/// [`compress`] searched as `compression` says: the same frame layout, which any LZ4 decoder
/// reads; [`Compression::High`] is smaller and slower.
pub fn compress_as(data: &[u8], compression: Compression) -> Vec<u8> {
    compress_with(&mut BlockCompressor::with_compression(data.len(), compression), data)
}

/// [`compress`] with `blocks`' tables, reused from earlier frames: the same bytes, without
/// allocating and clearing the hash tables for every frame (see [`BlockCompressor::restart`]).
pub fn compress_with(blocks: &mut BlockCompressor, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    compress_into(blocks, data, &mut out);
    out
}

/// [`compress_with`] appending the frame to `out`: a writer that keeps one output buffer from
/// frame to frame allocates (and the kernel zeroes) no fresh pages per frame. Returns the
/// frame's length.
pub fn compress_into(blocks: &mut BlockCompressor, data: &[u8], out: &mut Vec<u8>) -> usize {
    blocks.restart(data.len());
    let frame = out.len();
    out.extend_from_slice(&MAGIC.to_le_bytes());
    // FLG: version 01, linked blocks, no block checksums, content size, content checksum.
    out.push(0x40 | 0x08 | 0x04);
    // BD: 64 KB blocks.
    out.push(4 << 4);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    // HC: the second byte of xxh32 of the descriptor (FLG through the content size).
    out.push((XxHash32::oneshot(0, &out[frame + 4..]) >> 8) as u8);
    for start in (0..data.len()).step_by(BLOCK_SIZE) {
        let end = (start + BLOCK_SIZE).min(data.len());
        let size_at = out.len();
        out.extend_from_slice(&[0; 4]);
        blocks.compress_block(data, start, end, out);
        let size = out.len() - size_at - 4;
        if size < end - start {
            out[size_at..size_at + 4].copy_from_slice(&(size as u32).to_le_bytes());
        } else {
            // High bit: stored uncompressed. Decoders keep it as history for the next block too.
            out.truncate(size_at);
            out.extend_from_slice(&((end - start) as u32 | 0x8000_0000).to_le_bytes());
            out.extend_from_slice(&data[start..end]);
        }
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&XxHash32::oneshot(0, data).to_le_bytes());
    out.len() - frame
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
    use crate::format::lz4_block::far_list_sample;
    use crate::format::lz4_block::tests::noise;
    use proptest::prelude::*;

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

    /// Frames compressed one after the other with one compressor (an export's worker does) are
    /// the frames [`compress`] writes: linked multi-block frames, small after big, repeats of
    /// an earlier frame's bytes (which must not be matched: they are not in this frame).
    #[test]
    fn reused_tables_give_the_same_frames() {
        let inputs = [
            far_list_sample(30, 4096),
            noise(200, 5),
            far_list_sample(30, 4096),
            (0..=255u8).cycle().take(70_000).collect(),
            Vec::new(),
            noise(150_000, 6),
        ];
        let mut tables = BlockCompressor::new(0);
        // `compress_into` appends to what the buffer holds (a chunk's three frames in a row).
        let mut appended = b"before".to_vec();
        for (i, data) in inputs.iter().enumerate() {
            let frame = compress_with(&mut tables, data);
            assert!(frame == compress(data), "frame {i}");
            assert_eq!(decompress(&reader(&frame), data.len() as u64).unwrap(), *data);
            let at = appended.len();
            assert_eq!(compress_into(&mut tables, data, &mut appended), frame.len(), "frame {i}");
            assert!(appended[at..] == frame, "appended frame {i}");
        }
        assert_eq!(&appended[..6], b"before");
    }

    /// A 40 KB record written 50 times (as a far visibility list is, once per air cube): each
    /// repeat copies from the one before, so the frame holds about one copy. 64 KiB independent
    /// blocks would hold one per block (about 30 here).
    #[test]
    fn repeats_compress_across_64_kib() {
        use lz4_flex::frame::{BlockMode, FrameEncoder, FrameInfo};
        use std::io::Write;
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

    /// Decodes with lz4_flex's frame decoder (another implementation than our reader's checks).
    fn flex_decode(frame: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        FrameDecoder::new(frame).read_to_end(&mut out).expect("lz4_flex decodes our frame");
        out
    }

    #[test]
    fn frame_header_is_linked_64k_with_size_and_checksum() {
        let frame = compress(b"hello");
        // FLG: version 01, B.Indep = 0 (linked), C.Size, C.Checksum; BD: 64 KB.
        assert_eq!(frame[4], 0b0100_1100);
        assert_eq!(frame[5], 0x40);
        assert_eq!(u64::from_le_bytes(frame[6..14].try_into().unwrap()), 5);
        assert_eq!(frame[14], (XxHash32::oneshot(0, &frame[4..14]) >> 8) as u8);
        assert_eq!(flex_decode(&frame), b"hello");
    }

    #[test]
    fn incompressible_blocks_are_stored_and_later_blocks_match_into_them() {
        // Block 1: noise, stored uncompressed. Block 2: most of the same noise again (within
        // the 65 535-byte reach of an offset), which only compresses by matching into block 1.
        let first = noise(BLOCK_SIZE, 7);
        let data = [&first[..], &first[1000..]].concat();
        let frame = compress(&data);
        let header = 15;
        let block1 = u32::from_le_bytes(frame[header..header + 4].try_into().unwrap());
        assert_eq!(block1, BLOCK_SIZE as u32 | 0x8000_0000, "stored uncompressed");
        let at2 = header + 4 + BLOCK_SIZE;
        let block2 = u32::from_le_bytes(frame[at2..at2 + 4].try_into().unwrap());
        assert!(block2 < 1000, "the repeat is a few matches into block 1: {block2} bytes");
        assert_eq!(flex_decode(&frame), data);
        assert_eq!(decompress(&reader(&frame), data.len() as u64).unwrap(), data);
    }

    /// A chunk block of 300 air cells, each listing ~4 050 of 4 096 far chunks `(index, 0)` (the
    /// whole-level visibility shape, 9.7 MB; the list changes a little every 16 cells). A list
    /// equal to the previous cell's is one match of 32 KB: a token, an offset and 128 length
    /// bytes, plus the cell's 20 own bytes, about 0.5 % of the list; a changed list adds a
    /// sequence (~10 bytes) per changed entry (~40), once per 16 cells; the first list costs at
    /// most its size (0.3 % of the whole). So 2 % is a bound with room. lz4_flex's matcher
    /// (as `compress` used it before) lands on the previous entry's zeros after every change
    /// and gets about 4 %.
    #[test]
    fn repeated_far_lists_compress_below_two_percent() {
        let data = far_list_sample(300, 4096);
        let ours = compress(&data);
        let share = ours.len() as f64 / data.len() as f64;
        assert!(share < 0.02, "{} of {} bytes ({:.2} %)", ours.len(), data.len(), share * 100.0);
        assert_eq!(flex_decode(&ours), data);
        // The bound is one lz4_flex's encoder does not meet.
        // Its settings as `compress` used them before this encoder.
        let info = lz4_flex::frame::FrameInfo::new()
            .block_mode(lz4_flex::frame::BlockMode::Independent)
            .content_checksum(true)
            .content_size(Some(data.len() as u64));
        let mut theirs = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        std::io::Write::write_all(&mut theirs, &data).unwrap();
        let theirs = theirs.finish().unwrap();
        eprintln!("{} bytes of far lists: ours {}, lz4_flex {}", data.len(), ours.len(), theirs.len());
        assert!(theirs.len() as f64 / data.len() as f64 > 0.02, "lz4_flex: {} bytes", theirs.len());
    }

    #[test]
    fn the_same_input_gives_the_same_bytes() {
        let data = [far_list_sample(20, 1000), noise(100_000, 3), vec![9; 70_000]].concat();
        let frame = compress(&data);
        assert_eq!(compress(&data), frame);
        assert_eq!(decompress(&reader(&frame), data.len() as u64).unwrap(), data);
    }

    #[test]
    fn the_lz4_command_line_tool_reads_our_frames() {
        let Ok(status) = std::process::Command::new("lz4").arg("--version").output() else {
            eprintln!("lz4 command-line tool not found (apt-get install lz4): skipped");
            return;
        };
        assert!(status.status.success());
        let noisy = noise(BLOCK_SIZE + 100, 11);
        let data = [far_list_sample(40, 4096), noisy.clone(), noisy, b"end".to_vec()].concat();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("frame.lz4");
        std::fs::write(&path, compress(&data)).unwrap();
        let out = std::process::Command::new("lz4").args(["-d", "-c"]).arg(&path).output().unwrap();
        assert!(out.status.success(), "lz4 -d: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stdout == data, "lz4 -d gives other bytes ({} of {})", out.stdout.len(), data.len());
    }

    /// Inputs of one shape: few symbols, runs, far lists, noise; any length up to 200 KB (past
    /// three block boundaries).
    fn shaped_input() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..200_000),
            proptest::collection::vec(0u8..4, 0..200_000),
            proptest::collection::vec((any::<u8>(), 1usize..3000), 0..100)
                .prop_map(|runs| runs.into_iter().flat_map(|(b, n)| std::iter::repeat_n(b, n)).collect()),
            (1u32..30, 1u32..2000, 0usize..1000).prop_map(|(cells, chunks, cut)| {
                let mut v = far_list_sample(cells, chunks);
                v.truncate(v.len().saturating_sub(cut));
                v
            }),
            (0usize..3, 1usize..BLOCK_SIZE)
                .prop_map(|(blocks, n)| [noise(blocks * BLOCK_SIZE, 5), vec![1; n]].concat()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn round_trips_through_both_decoders(data in shaped_input()) {
            let frame = compress(&data);
            prop_assert_eq!(&flex_decode(&frame), &data);
            prop_assert_eq!(&decompress(&reader(&frame), data.len() as u64).unwrap(), &data);
        }
    }
}
