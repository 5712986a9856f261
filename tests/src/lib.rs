//! Test-side builders for golden files and cross-crate tests.
