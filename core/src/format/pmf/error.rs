//! Errors of the PMF writer.

/// The writer refuses what the reader would reject; this says what and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{context}: {reason}")]
pub struct WriteError {
    /// Where in the file model the bad value is, e.g. `level 0 / chunk y0 x1 z2 / used materials`.
    pub context: String,
    pub reason: String,
}

impl WriteError {
    pub fn new(context: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { context: context.into(), reason: reason.into() }
    }
}

pub type WriteResult<T> = Result<T, WriteError>;

/// Why a [`ChunkStream`](super::write::ChunkStream) stopped: the file is refused, or the output
/// failed.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error(transparent)]
    Format(#[from] WriteError),
    #[error("writing the file: {0}")]
    Io(#[from] std::io::Error),
}
