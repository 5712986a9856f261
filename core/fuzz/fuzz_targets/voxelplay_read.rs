//! Any bytes: the Voxel Play save reader returns a world or an error, never panics, and its format
//! 5/6 search stays within its budget. A small accepted world also imports without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pmfedit_core::format::voxelplay::{ReadOptions, read_world};
use pmfedit_core::import::voxelplay::{ImportOptions, import_world};
use pmfedit_core::map::Map;

fuzz_target!(|data: &[u8]| {
    let Ok(save) = read_world(data, &ReadOptions::default()) else { return };
    if save.chunks.len() <= 16 {
        let mut map = Map::new("fuzz");
        let at = map.levels[0].frame().origin_lattice();
        let _ = import_world(&mut map, 0, &save, &ImportOptions::at(at, 3));
    }
});
