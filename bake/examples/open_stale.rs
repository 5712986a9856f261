//! How long the editor's engine takes to bring a project whose bakes are all missing or stale
//! to final bakes: the interactive plan on N workers (plus its previews-only worker), as the
//! editor opens it, without drawing anything (under software GL the drawing takes the cores).
//!
//! `cargo run --release -p pmfedit-bake --example open_stale -- PROJECT [THREADS] [--camera]`
//! (a project without `bakes/`, or with bakes of another version; the example never writes the
//! cache). `--camera` puts the camera 40 units above the middle of level 0's occupied chunks, as
//! the editor's viewport tells the engine every frame: bakes go nearest it first, and the light
//! memos kept are those nearest it. Prints the wall time to every chunk final, the bake time
//! summed per stage, the light memo points kept and how far the nearest chunk with a memo lies.

use std::sync::Arc;
use std::time::Instant;

use glam::DVec3;
use pmfedit_bake::compile::CompileSettings;
use pmfedit_bake::rebuild::{Plan, Rebuild};
use pmfedit_bake::scheduler::{Scheduler, Stage};
use pmfedit_core::map::coords::ChunkCoord;
use pmfedit_core::project::Project;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.iter().find(|a| !a.starts_with("--") && a.parse::<usize>().is_err()) else {
        return Err("usage: open_stale PROJECT [THREADS] [--camera]".into());
    };
    let threads = args.iter().find_map(|a| a.parse::<usize>().ok()).unwrap_or(2);
    let camera = args.iter().any(|a| a == "--camera");
    let (_, map) = Project::open(dir)?;
    let level = &map.levels[0];
    let (lo, hi) = level.occupied_bounds().ok_or("level 0 is empty")?;
    let middle = ChunkCoord::from_ivec3((lo.as_ivec3() + hi.as_ivec3()) / 2);
    let eye = level.frame().chunk_center_world(middle) + DVec3::new(0.0, 40.0, 0.0);
    let frame = level.frame();

    let start = Instant::now();
    let scheduler = Scheduler::interactive(threads, CompileSettings::default(), Arc::new(|| {}));
    let mut engine = Rebuild::new(scheduler, Plan::Interactive, Arc::new(map.clone()));
    if camera {
        engine.set_camera(0, eye);
    }
    engine.wait();
    let wall = start.elapsed();
    let mut summed = [0.0; 3];
    for slot in engine.slots().values() {
        for stage in Stage::ALL {
            summed[stage.index()] += slot.times[stage.index()].map_or(0.0, |d| d.as_secs_f64());
        }
    }
    let memos = engine.light_cache();
    let nearest = engine
        .slots()
        .keys()
        .filter(|k| k.0 == 0 && memos.get(k.0, k.1).is_some())
        .map(|k| frame.chunk_center_world(k.1).distance(eye))
        .fold(f64::INFINITY, f64::min);
    println!(
        "{} chunks final in {:.1} s on {threads} workers{}; bake time summed: drafts {:.1} s, previews {:.1} s, full {:.1} s",
        engine.slots().len(),
        wall.as_secs_f64(),
        if camera { " (camera over the middle)" } else { "" },
        summed[0],
        summed[1],
        summed[2]
    );
    println!(
        "light memos kept: {} points; the nearest chunk with one lies {nearest:.0} units from the camera point",
        memos.points()
    );
    Ok(())
}
