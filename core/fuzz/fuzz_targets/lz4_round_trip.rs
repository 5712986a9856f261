//! compress → decompress gives the input back; then corrupting one byte after the valid frame
//! header gives an error or the original bytes (the content checksum catches the rest).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmfedit_core::format::bin::Reader;
use pmfedit_core::format::lz4f;

fuzz_target!(|data: &[u8]| {
    let frame = lz4f::compress(data);
    let out = lz4f::decompress(&Reader::new(&frame, "fuzz"), data.len() as u64).expect("round trip");
    assert_eq!(out, data);
    if data.len() >= 2 && frame.len() > 16 {
        let mut bad = frame.clone();
        let at = 15 + usize::from(data[0]) % (bad.len() - 15);
        bad[at] ^= data[1] | 1;
        if let Ok(out) = lz4f::decompress(&Reader::new(&bad, "fuzz"), data.len() as u64) {
            assert_eq!(out, data, "corrupt frame decoded to different bytes without an error");
        }
    }
});
