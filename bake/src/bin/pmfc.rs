//! `pmfc`: the headless PlatinumSrc map compiler and file tool.
//!
//! Errors print as `FILE: SECTION at byte N: REASON` and exit with status 1.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use pmfedit_bake::inspect;
use pmfedit_core::format::{paf, pmf};

#[derive(Parser)]
#[command(name = "pmfc", version, about = "PlatinumSrc map compiler and file tool")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print what a compiled map holds: header, levels, chunk grid, cubes, faces, lightmaps,
    /// lights, entities and the embedded archive.
    Inspect {
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Work with PAF archives.
    Paf {
        #[command(subcommand)]
        command: PafCommand,
    },
    /// Import a file into a map: a Model 3D voxel model (.m3d, .a3d) becomes cubes, a Model 3D
    /// mesh becomes a prop entity plus resources to embed. The format is detected from the
    /// file's magic.
    Import(import_cmd::ImportArgs),
    /// Write a box of a map's cubes as a Model 3D voxel model.
    #[command(name = "export-m3d")]
    ExportM3d(import_cmd::ExportM3dArgs),
}

#[derive(Subcommand)]
enum PafCommand {
    /// Pack a folder into an archive (deterministic: same folder, same bytes).
    Pack { dir: PathBuf, out: PathBuf },
    /// List an archive's entries.
    List { file: PathBuf },
    /// Extract an archive into a folder (never writes outside it).
    Unpack { file: PathBuf, dir: PathBuf },
}

/// An error already phrased for the user (`FILE: reason`).
struct Failure(String);

fn fail(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure(format!("{}: {e}", path.display()))
}

fn read_file(path: &Path) -> Result<Vec<u8>, Failure> {
    std::fs::read(path).map_err(|e| fail(path, e))
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|e| fail(path, e))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Inspect { file, json } => {
            let bytes = read_file(&file)?;
            let map = pmf::read(&bytes).map_err(|e| fail(&file, e))?;
            let summary = inspect::summarize(&map).map_err(|e| fail(&file, format!("embedded archive: {e}")))?;
            if json {
                let text = serde_json::to_string_pretty(&summary).map_err(|e| fail(&file, e))?;
                println!("{text}");
            } else {
                print!("{}", inspect::render_text(&summary));
            }
        }
        Command::Paf { command: PafCommand::Pack { dir, out } } => {
            let archive = paf::Archive::from_dir(&dir).map_err(|e| fail(&dir, e))?;
            let bytes = archive.to_bytes().map_err(|e| fail(&out, e))?;
            write_file(&out, &bytes)?;
            eprintln!("{}: {} files, {} bytes", out.display(), archive.file_count(), bytes.len());
        }
        Command::Paf { command: PafCommand::List { file } } => {
            let bytes = read_file(&file)?;
            let archive = paf::Archive::from_bytes(&bytes).map_err(|e| fail(&file, e))?;
            print!("{}", inspect::render_listing(&inspect::archive_listing(&archive), ""));
        }
        Command::Paf { command: PafCommand::Unpack { file, dir } } => {
            let bytes = read_file(&file)?;
            let archive = paf::Archive::from_bytes(&bytes).map_err(|e| fail(&file, e))?;
            archive.extract_to(&dir).map_err(|e| fail(&dir, e))?;
            eprintln!("{}: extracted {} files", dir.display(), archive.file_count());
        }
        Command::Import(args) => import_cmd::import(args)?,
        Command::ExportM3d(args) => import_cmd::export_m3d(args)?,
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(msg)) => {
            eprintln!("{msg}");
            ExitCode::FAILURE
        }
    }
}

/// `pmfc import` and `pmfc export-m3d`.
///
/// Project files (`core::project`) are not part of this build. So `import` runs into a new map
/// and prints what it did (`--inspect`); saving into a project is refused with a clear message
/// until projects land. `export-m3d` reads its map from a Model 3D file (imported into a new
/// map), which makes it a converter (`.a3d` → `.m3d`, re-voxelizing) until then.
mod import_cmd {
    use std::path::{Path, PathBuf};

    use clap::{Args, ValueEnum};
    use glam::DVec3;
    use pmfedit_core::format::m3d;
    use pmfedit_core::import::m3d::{ImportMode, MAX_CUBE_LOG2, export_voxels, import_m3d, occupied_box};
    use pmfedit_core::map::Map;
    use pmfedit_core::map::coords::LatticeBox;

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
        /// The project to import into (project files are not available in this build yet).
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
    }

    #[derive(Debug, Args)]
    pub struct ExportM3dArgs {
        /// The map to read: a Model 3D file, imported into a new map at the origin (project files
        /// are not available in this build yet).
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

    /// The map an import goes into: a new map named after the file (projects are not available
    /// in this build).
    fn new_map(path: &Path) -> Map {
        Map::new(path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
    }

    /// Checks the format from the magic; only Model 3D is known to this build.
    fn check_format(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
        if m3d::is_m3d(bytes) {
            Ok(())
        } else {
            Err(fail(path, "unknown import format (known: Model 3D .m3d and .a3d)"))
        }
    }

    pub fn import(a: ImportArgs) -> Result<(), Failure> {
        if !a.inspect {
            let target = a.out.as_deref().unwrap_or(Path::new("(no -o given)"));
            return Err(fail(
                target,
                "saving an import into a project needs project files, which this build does not have yet; run with \
                 --inspect to see what the import does",
            ));
        }
        let bytes = read_file(&a.file)?;
        check_format(&a.file, &bytes)?;
        let log2 = cube_log2(&a.file, a.cube_size)?;
        let mut map = new_map(&a.file);
        let frame = map.levels.first().map(|l| l.frame()).ok_or_else(|| fail(&a.file, "the map has no level"))?;
        let at = frame.lattice_from_world(DVec3::from_array(a.at));
        let name = a.name.clone().unwrap_or_else(|| new_map(&a.file).meta.name);
        let mode = match a.mode {
            Mode::Auto => ImportMode::Auto,
            Mode::Voxels => ImportMode::Voxels,
            Mode::Mesh => ImportMode::Mesh,
        };
        let report = import_m3d(&mut map, a.level, &bytes, &name, at, log2, mode).map_err(|e| fail(&a.file, e))?;
        println!("{}:", a.file.display());
        print!("{report}");
        println!("library materials: {}", map.library.materials().len());
        if let Some(out) = &a.out {
            eprintln!("{}: not written (--inspect)", out.display());
        }
        Ok(())
    }

    pub fn export_m3d(a: ExportM3dArgs) -> Result<(), Failure> {
        let bytes = read_file(&a.input)?;
        if !m3d::is_m3d(&bytes) {
            return Err(fail(
                &a.input,
                "only Model 3D files can be read as a map in this build (project files are not available yet)",
            ));
        }
        let log2 = cube_log2(&a.input, a.cube_size)?;
        let mut map = new_map(&a.input);
        let origin = map.levels[0].frame().origin_lattice();
        import_m3d(&mut map, 0, &bytes, "input", origin, log2, ImportMode::Voxels).map_err(|e| fail(&a.input, e))?;
        let level =
            map.levels.get(a.level).ok_or_else(|| fail(&a.input, format!("the map has no level {}", a.level)))?;
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
}
