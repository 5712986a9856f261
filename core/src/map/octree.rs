//! The chunk octree. STUB.
