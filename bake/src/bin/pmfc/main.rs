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
        /// Also say where the bytes go: per kind of record (visibility, luxels, vertices, air-cell
        /// light, pathfinding, cubes), raw and compressed, and how the lightmap pages' luxels are
        /// used. Compresses every chunk again several times.
        #[arg(long)]
        sizes: bool,
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
    /// Create a project folder holding a sample map.
    New(build_cmd::NewArgs),
    /// Compile a project into a `.pmf`: bake every chunk (in parallel), embed resources.
    Build(build_cmd::BuildArgs),
    /// Re-export whenever the project or its assets change, re-baking only dirty chunks.
    Watch(build_cmd::WatchArgs),
    /// Measure the compiler on procedural terrain.
    Bench(build_cmd::BenchArgs),
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

/// Replaces `path` atomically: a kill at any moment leaves the old file or the new one, never a
/// partial or empty one.
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    pmfedit_core::project::atomic::write_atomic(path, bytes).map_err(|e| fail(path, e))
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Inspect { file, json, sizes } => {
            let bytes = read_file(&file)?;
            let map = pmf::read(&bytes).map_err(|e| fail(&file, e))?;
            let mut summary = inspect::summarize(&map).map_err(|e| fail(&file, format!("embedded archive: {e}")))?;
            if sizes {
                let breakdown =
                    pmfedit_bake::sizes::size_breakdown(&map, bytes.len() as u64).map_err(|e| fail(&file, e))?;
                summary.sizes = Some(breakdown);
            }
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
            let r = archive.extract_to(&dir).map_err(|e| fail(&dir, e))?;
            eprintln!(
                "{}: extracted {} files ({} of them copies of links), {} bytes",
                dir.display(),
                r.files,
                r.files - archive.file_count().min(r.files),
                r.bytes
            );
            for s in &r.links_skipped {
                eprintln!("warning: link {} → {} not extracted: {}", s.path, s.target, s.reason);
            }
        }
        Command::Import(args) => import_cmd::import(args)?,
        Command::New(args) => build_cmd::new(args)?,
        Command::Build(args) => build_cmd::build(args)?,
        Command::Watch(args) => build_cmd::watch(args)?,
        Command::Bench(args) => build_cmd::bench(args)?,
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
mod build_cmd;
mod import_cmd;
