//! PMF writer. STUB.

use super::error::WriteResult;
use super::types::File;

/// Serialises a whole `.pmf` file.
pub fn write(_file: &File) -> WriteResult<Vec<u8>> {
    Ok(Vec::new())
}
