//! PAF archives (see shared/spec/PAF.md).
