//! Any bytes: the PAF reader returns a tree or an error, never panics; an accepted tree writes and
//! reads back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmfedit_core::format::paf::Archive;

fuzz_target!(|data: &[u8]| {
    if let Ok(archive) = Archive::from_bytes(data) {
        if let Ok(bytes) = archive.to_bytes() {
            assert_eq!(Archive::from_bytes(&bytes).expect("writer output must read back"), archive);
        }
    }
});
