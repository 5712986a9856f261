//! The editable map: metadata, map-wide libraries and environments, and levels made of chunked
//! octrees with their lights, entities and regions.
//!
//! Decisions (issue 3): libraries (materials, physics and sound materials) and environments are
//! map-wide and exported into every level; lights, entities and regions belong to a level.

pub mod library;
pub mod octree;

pub mod coords;
pub mod ids;
pub mod level;
