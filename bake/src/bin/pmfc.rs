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
