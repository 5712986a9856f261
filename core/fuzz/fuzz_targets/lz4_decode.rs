//! Raw bytes as an LZ4 frame with a declared size taken from the first four bytes: an error or
//! exactly that many bytes, never a panic or an allocation past the cap.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmfedit_core::format::bin::Reader;
use pmfedit_core::format::lz4f;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let declared = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) % (1 << 24);
    let r = Reader::new(&data[4..], "fuzz");
    if let Ok(out) = lz4f::decompress(&r, declared.into()) {
        assert_eq!(out.len(), declared as usize);
    }
});
