pub mod voxelplay;
