//! PTF textures (see shared/spec/PTF.md).
