//! Test-side builders for golden files and cross-crate tests.
//!
//! Golden files are produced by these builders (never typed-in bytes): `tests/golden.rs` writes
//! each case with the PMF writer and compares against the committed bytes.

pub mod edits;
pub mod golden;
pub mod tree;
