//! PMF reader. STUB.

use super::types::File;
use crate::format::bin::{ReadResult, Reader};

/// Parses a whole `.pmf` file.
pub fn read(bytes: &[u8]) -> ReadResult<File> {
    Err(Reader::new(bytes, "PMF").invalid("not implemented"))
}
