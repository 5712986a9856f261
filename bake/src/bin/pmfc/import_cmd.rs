//! `pmfc import` and `pmfc export-m3d`.
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use glam::DVec3;
use pmfedit_bake::jobs::Threads;
use pmfedit_core::format::{m3d, voxelplay};
use pmfedit_core::import::ImportedResource;
use pmfedit_core::import::m3d::{ImportMode, MAX_CUBE_LOG2, export_voxels, import_m3d, occupied_box};
use pmfedit_core::import::voxelplay as voxelplay_import;
use pmfedit_core::map::Map;
use pmfedit_core::map::coords::LatticeBox;
use pmfedit_core::project::Project;

use super::{Failure, fail, read_file, write_file};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Voxels if the model has voxel data and no triangles, otherwise a mesh.
    Auto,
    /// Voxels become cubes.
    Voxels,
    /// The model becomes a resource and a prop entity.
    Mesh,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file to import.
    file: PathBuf,
    /// The project folder to import into; created (with one empty level) if it does not exist.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Where the model's origin (its bottom centre) goes: X,Y,Z in map units from the level
    /// origin.
    #[arg(long, value_parser = parse_vec3, default_value = "0,0,0", allow_hyphen_values = true)]
    at: [f64; 3],
    /// Edge of one voxel in map units: a power of two, at least 0.125.
    #[arg(long = "cube-size", default_value_t = 1.0)]
    cube_size: f64,
    /// How to import a Model 3D file.
    #[arg(long, value_enum, default_value = "auto")]
    mode: Mode,
    /// Level index.
    #[arg(long, default_value_t = 0)]
    level: usize,
    /// Resource name of a mesh import (default: the file name without extension).
    #[arg(long)]
    name: Option<String>,
    /// Import into a new empty map and print the report; nothing is saved.
    #[arg(long)]
    inspect: bool,
    /// Voxel Play formats 5 and 6: names of voxel definitions that carry the flags byte (comma
    /// separated); without it the reader searches for the parse that consumes the file exactly.
    #[arg(long, value_delimiter = ',')]
    transparent_voxels: Option<Vec<String>>,
    /// Voxel Play: import only the voxels inside this box, x0,y0,z0,x1,y1,z1 in Voxel Play world
    /// units (its voxel coordinates). Whatever lies outside the level grid is dropped either way,
    /// and reported.
    #[arg(long, value_parser = parse_box, allow_hyphen_values = true)]
    crop: Option<[f64; 6]>,
}

#[derive(Debug, Args)]
pub struct ExportM3dArgs {
    /// The map to read: a project folder, or a Model 3D file (imported into a new map at the
    /// origin, which makes this a converter).
    input: PathBuf,
    /// The Model 3D file to write.
    #[arg(short, long)]
    out: PathBuf,
    /// The box to export: x0,y0,z0,x1,y1,z1 in map units from the level origin. Default: every
    /// solid cube of the level.
    #[arg(long = "box", value_parser = parse_box, allow_hyphen_values = true)]
    region: Option<[f64; 6]>,
    /// Edge of one voxel in map units: a power of two, at least 0.125.
    #[arg(long = "cube-size", default_value_t = 1.0)]
    cube_size: f64,
    /// Level index.
    #[arg(long, default_value_t = 0)]
    level: usize,
}

fn parse_floats<const N: usize>(s: &str) -> Result<[f64; N], String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|t| t.trim().parse::<f64>().map_err(|_| format!("{t:?} is not a number")))
        .collect::<Result<_, _>>()?;
    let n = v.len();
    let out: [f64; N] = v.try_into().map_err(|_| format!("expected {N} comma-separated numbers, got {n}"))?;
    if out.iter().all(|x| x.is_finite()) { Ok(out) } else { Err("numbers must be finite".into()) }
}

fn parse_vec3(s: &str) -> Result<[f64; 3], String> {
    parse_floats(s)
}

fn parse_box(s: &str) -> Result<[f64; 6], String> {
    parse_floats(s)
}

/// The voxel edge exponent (lattice units) of a cube size in map units.
fn cube_log2(path: &Path, size: f64) -> Result<u8, Failure> {
    let lattice = size * 8.0;
    let ok = lattice >= 1.0 && lattice.fract() == 0.0 && (lattice as u64).is_power_of_two();
    let log2 = (lattice as u64).trailing_zeros();
    if !ok || log2 > u32::from(MAX_CUBE_LOG2) {
        return Err(fail(path, format!("--cube-size {size}: must be a power of two map units from 0.125 to 2^17")));
    }
    Ok(log2 as u8)
}

/// A new map named after the file.
fn new_map(path: &Path) -> Map {
    Map::new(path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

/// The import formats, detected from the bytes.
enum Format {
    M3d,
    VoxelPlay(Box<voxelplay::WorldSave>),
}

/// Whether the file name says Voxel Play save.
fn looks_like_voxelplay(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("sav") || e.eq_ignore_ascii_case("bytes"))
}

/// Detects the format: Model 3D by its magic, else a Voxel Play save (whose first byte is the
/// format version) if it parses as one.
fn detect(path: &Path, bytes: &[u8], options: &voxelplay::ReadOptions) -> Result<Format, Failure> {
    if m3d::is_m3d(bytes) {
        return Ok(Format::M3d);
    }
    match voxelplay::read_world(bytes, options) {
        Ok(save) => Ok(Format::VoxelPlay(Box::new(save))),
        Err(e) if looks_like_voxelplay(path) => Err(fail(path, e)),
        Err(_) => Err(fail(path, "unknown import format (known: Model 3D .m3d/.a3d, Voxel Play world saves)")),
    }
}

/// Opens the project at `dir` for writing (refused while another process has it open), or
/// starts a new map for it.
fn open_or_new(dir: &Path, source: &Path) -> Result<(Option<Project>, Map), Failure> {
    if dir.join("map.ron").is_file() {
        let (p, m) = Project::open_locked_with(dir, &Threads::all()).map_err(|e| Failure(e.to_string()))?;
        Ok((Some(p), m))
    } else {
        Ok((None, new_map(source)))
    }
}

pub fn import(a: ImportArgs) -> Result<(), Failure> {
    let bytes = read_file(&a.file)?;
    let options = voxelplay::ReadOptions { transparent_voxels: a.transparent_voxels.clone(), ..Default::default() };
    let format = detect(&a.file, &bytes, &options)?;
    let log2 = cube_log2(&a.file, a.cube_size)?;
    let (project, mut map) = match (&a.out, a.inspect) {
        (Some(dir), false) => open_or_new(dir, &a.file)?,
        (None, false) => return Err(fail(&a.file, "say where to import into with -o PROJECT (or use --inspect)")),
        (_, true) => (None, new_map(&a.file)),
    };
    let frame = map
        .levels
        .get(a.level)
        .map(|l| l.frame())
        .ok_or_else(|| fail(&a.file, format!("the map has no level {}", a.level)))?;
    let at = frame.lattice_from_world(DVec3::from_array(a.at));
    let mut resources = Vec::new();
    println!("{}:", a.file.display());
    match format {
        Format::M3d => {
            let name = a.name.clone().unwrap_or_else(|| new_map(&a.file).meta.name);
            let mode = match a.mode {
                Mode::Auto => ImportMode::Auto,
                Mode::Voxels => ImportMode::Voxels,
                Mode::Mesh => ImportMode::Mesh,
            };
            let report = import_m3d(&mut map, a.level, &bytes, &name, at, log2, mode).map_err(|e| fail(&a.file, e))?;
            print!("{report}");
            resources = report.resources;
        }
        Format::VoxelPlay(save) => {
            let crop = a.crop.map(|b| voxelplay_import::VoxelBox {
                min: std::array::from_fn(|k| b[k].min(b[k + 3]).floor() as i64),
                max: std::array::from_fn(|k| b[k].max(b[k + 3]).ceil() as i64),
            });
            let options = voxelplay_import::ImportOptions { at, cube_log2: log2, crop };
            let report =
                voxelplay_import::import_world(&mut map, a.level, &save, &options).map_err(|e| fail(&a.file, e))?;
            println!(
                "Voxel Play format {}: {} voxels in {} boxes, {} materials created, {} matched, {} lights, {} entities, {} custom data sections",
                save.version,
                report.voxels,
                report.boxes,
                report.materials_created.len(),
                report.materials_matched.len(),
                report.lights.len(),
                report.entities.len(),
                report.custom_sections.len()
            );
            if report.dropped_voxels > 0 {
                println!(
                    "not imported: {} voxels of {} chunks (see the warnings; --at moves the world, --crop picks a part)",
                    report.dropped_voxels,
                    report.dropped.len()
                );
            }
            for w in &report.warnings {
                println!("warning: {w}");
            }
            // Custom data sections are kept in the project folder as opaque named blobs.
            for (name, blob) in &report.custom_sections {
                let safe: String = name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                    .collect();
                resources.push(ImportedResource { path: format!("voxelplay/{safe}.bin"), bytes: blob.clone() });
            }
        }
    }
    println!("library materials: {}", map.library.materials().len());
    let dir = match (&a.out, a.inspect) {
        (Some(out), true) => {
            eprintln!("{}: not written (--inspect)", out.display());
            return Ok(());
        }
        (None, _) => return Ok(()),
        (Some(dir), false) => dir,
    };
    let mut project = match project {
        Some(p) => p,
        None => Project::create(dir).map_err(|e| Failure(e.to_string()))?,
    };
    for r in &resources {
        let path = dir.join(&r.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail(parent, e))?;
        }
        write_file(&path, &r.bytes)?;
    }
    let report = project.save(&map).map_err(|e| Failure(e.to_string()))?;
    eprintln!(
        "{}: saved ({} chunk files written, {} resources)",
        dir.display(),
        report.chunk_files_written,
        resources.len()
    );
    Ok(())
}

pub fn export_m3d(a: ExportM3dArgs) -> Result<(), Failure> {
    let log2 = cube_log2(&a.input, a.cube_size)?;
    let map = if a.input.is_dir() {
        Project::open_with(&a.input, &Threads::all()).map_err(|e| Failure(e.to_string()))?.1
    } else {
        let bytes = read_file(&a.input)?;
        if !m3d::is_m3d(&bytes) {
            return Err(fail(&a.input, "not a project folder or a Model 3D file"));
        }
        let mut map = new_map(&a.input);
        let origin = map.levels[0].frame().origin_lattice();
        import_m3d(&mut map, 0, &bytes, "input", origin, log2, ImportMode::Voxels).map_err(|e| fail(&a.input, e))?;
        map
    };
    let level = map.levels.get(a.level).ok_or_else(|| fail(&a.input, format!("the map has no level {}", a.level)))?;
    let frame = level.frame();
    let region = match a.region {
        Some(b) => {
            let lo = frame.lattice_from_world_f(DVec3::new(b[0], b[1], b[2]));
            let hi = frame.lattice_from_world_f(DVec3::new(b[3], b[4], b[5]));
            LatticeBox::new(lo.min(hi).floor().as_ivec3(), lo.max(hi).ceil().as_ivec3())
        }
        None => occupied_box(level).ok_or_else(|| fail(&a.input, "the level has no solid cubes to export"))?,
    };
    let out = export_voxels(&map.library, level, region, log2).map_err(|e| fail(&a.out, e))?;
    write_file(&a.out, &out)?;
    let model = m3d::read(&out).map_err(|e| fail(&a.out, format!("written file does not read back: {e}")))?;
    eprintln!(
        "{}: {} voxels, {} voxel types, {} bytes",
        a.out.display(),
        model.voxel_count(),
        model.voxel_types.len(),
        out.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        assert_eq!(parse_vec3("1, -2.5,3"), Ok([1.0, -2.5, 3.0]));
        assert!(parse_vec3("1,2").is_err());
        assert!(parse_box("0,0,0,1,1,x").is_err());
        assert!(parse_vec3("1,inf,2").is_err());
        let p = Path::new("f");
        assert_eq!(cube_log2(p, 0.125).ok(), Some(0));
        assert_eq!(cube_log2(p, 1.0).ok(), Some(3));
        assert_eq!(cube_log2(p, 4.0).ok(), Some(5));
        for bad in [0.0, 0.1, 0.3, 3.0, -1.0, 1e30] {
            assert!(cube_log2(p, bad).is_err(), "{bad}");
        }
    }
}
