//! Any bytes: the PMF reader returns a value or an error, never panics; what it accepts, the writer
//! writes, and that reads back to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmfedit_core::format::pmf;

fuzz_target!(|data: &[u8]| {
    if let Ok(file) = pmf::read(data) {
        if let Ok(bytes) = pmf::write(&file) {
            let again = pmf::read(&bytes).expect("writer output must read back");
            assert!(again == file || format!("{again:?}") == format!("{file:?}"), "round trip changed the file");
        }
    }
});
