//! The manifest `map.ron`: everything but the chunk octrees, in pretty RON.
//!
//! # Shape (format version 1)
//! ```ron
//! (
//!     format_version: 1,
//!     meta: (name: "…", description: "…", authors: "…", gamemodes: [ … ]),
//!     library: ( materials: (items: { 0: ( … ) }, next_id: 1), physics: …, sounds: …,
//!                sound_envs: …, weather_envs: …, sky_envs: …, gravity_envs: …, … ),
//!     levels: [
//!         (
//!             name: "main",
//!             chunk_size_log2: 4,
//!             center_chunk: (y: 128, x: 2048, z: 2048),
//!             flags: (keep_velocity: false, keep_chunk_offset: false, keep_in_chunk_offset: false),
//!             environments: ( … ),
//!             air_physics_material: None,
//!             objects: (lights: …, entities: …, regions: …, load_regions: …),
//!             lighting: (sun: ( … ), sky: ( … ), bounces: 1),
//!             chunks: [
//!                 (0, 0, 0, "89ab0123cdef4567"),   // x, y, z, content hash = chunks/<hash>.bin
//!             ],
//!         ),
//!     ],
//! )
//! ```
//! Every collection is ordered (tables by id, chunks in grid order `y`, `x`, `z`), so saving the
//! same map gives the same bytes and a small edit gives a small diff; no timestamps. A recovery
//! snapshot (`.recovery/map.ron`) has the same shape plus a `recovery: Some(( … ))` stamp after
//! `format_version`. Unknown fields are refused (a typo in a hand edit is an error, not a silent
//! default), except inside the library and object records, which default missing fields.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::chunk_file::{self, LeafIdError};
use crate::map::coords::{ChunkCoord, MAX_CHUNK_SIZE_LOG2};
use crate::map::ids::PhysicsId;
use crate::map::level::LevelFlags;
use crate::map::library::{EnvRef, EnvironmentDefaults, LevelObjects, Problem, Severity};
use crate::map::lighting::{LevelLighting, LightingError};
use crate::map::path_sets::{PathSetError, PathSets};
use crate::map::{Library, Map, MapMeta, MetaError};

/// The manifest format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 2;

/// The type of [`Level::environments`](crate::map::Level::environments).
pub type LevelEnvironments = EnvironmentDefaults;

/// The manifest. Serialised from borrowed map parts, deserialised into owned ones.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest<'a> {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// Only in a recovery snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryStamp>,
    /// Map metadata.
    pub meta: Cow<'a, MapMeta>,
    /// Map-wide libraries.
    pub library: Cow<'a, Library>,
    /// At least one level.
    pub levels: Vec<LevelManifest<'a>>,
    /// Path attribute sets by id; written only when there are some (older projects have none).
    #[serde(default, skip_serializing_if = "PathSets::is_empty")]
    pub path_sets: Cow<'a, PathSets>,
}

/// One level of the manifest.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelManifest<'a> {
    /// Display name, unique among the levels.
    pub name: Cow<'a, str>,
    /// Chunk edge `2^chunk_size_log2` map units.
    pub chunk_size_log2: u8,
    /// The chunk whose center is the world origin.
    pub center_chunk: ChunkCoord,
    /// Level flags.
    pub flags: LevelFlags,
    /// Default environments.
    pub environments: Cow<'a, LevelEnvironments>,
    /// Air physics material.
    pub air_physics_material: Option<PhysicsId>,
    /// Lights, entities, regions, load regions.
    pub objects: Cow<'a, LevelObjects>,
    /// Sun, sky and bounce; daylight when missing (projects saved before it existed).
    #[serde(default)]
    pub lighting: LevelLighting,
    /// Non-empty chunks in grid order: `(x, y, z, "content hash")`.
    pub chunks: Vec<ChunkRef>,
}

/// A chunk of a level: `(x, y, z, "16 hex digits")`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef(pub i32, pub i32, pub i32, pub String);

impl ChunkRef {
    /// The entry for chunk `c` with content hash `hash`.
    pub fn new(c: ChunkCoord, hash: u64) -> Self {
        ChunkRef(c.x, c.y, c.z, format!("{hash:016x}"))
    }

    /// The coordinate.
    pub fn coord(&self) -> ChunkCoord {
        ChunkCoord::new(self.0, self.1, self.2)
    }
}

/// What marks a manifest as a recovery snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryStamp {
    /// When it was written, milliseconds since the Unix epoch.
    pub saved_at_ms: u64,
    /// Fingerprint (16 hex digits) of the `map.ron` the unsaved edits started from, if any.
    pub base_manifest: Option<String>,
}

/// Reads only the version and the recovery stamp (ignoring everything else), so that a file of
/// another version is reported as such rather than as a field error.
#[derive(Debug, Deserialize)]
pub struct Probe {
    /// Missing in something that is not a manifest.
    #[serde(default, deserialize_with = "some")]
    pub format_version: Option<u32>,
    /// See [`Manifest::recovery`].
    #[serde(default)]
    pub recovery: Option<RecoveryStamp>,
}

/// A present field as `Some` (RON spells options `Some(…)`, but the version is a plain number).
fn some<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// The RON layout: pretty, four-space indent, `\n` line ends, tuples on one line.
pub fn pretty() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new().new_line("\n").indentor("    ").separate_tuple_members(false).struct_names(false)
}

/// Why a manifest was refused: the reason and, for RON syntax and type errors, the 1-based line
/// and column `ron` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// `(line, column)`, 1-based.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub reason: String,
}

impl From<String> for ManifestError {
    fn from(reason: String) -> Self {
        Self { position: None, reason }
    }
}

/// Parses RON, keeping the position of a parse error.
pub fn parse<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, ManifestError> {
    ron::from_str(text)
        .map_err(|e| ManifestError { position: Some((e.position.line, e.position.col)), reason: e.code.to_string() })
}

/// Parses a whole manifest: version first, then the full shape, then [`check`].
pub fn read(text: &str) -> Result<Manifest<'static>, ManifestError> {
    let probe: Probe = parse(text)?;
    match probe.format_version {
        None => return Err("no format_version: not a pmfedit project manifest".to_owned().into()),
        Some(FORMAT_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "format_version {v} is not supported (this build reads version {FORMAT_VERSION}; \
                 a newer pmfedit may have written it)"
            )
            .into());
        }
    }
    // A `{ … }` table keeps only the last of two equal keys: refuse the file instead.
    if let Some(d) = super::duplicates::first_duplicate_key(text) {
        return Err(ManifestError {
            position: Some(d.position),
            reason: format!(
                "id {} appears twice in one table (first on line {}); only one record may have it",
                d.key, d.first_line
            ),
        });
    }
    let m: Manifest<'static> = parse(text)?;
    check(&m)?;
    Ok(m)
}

/// Serialises a manifest (pretty RON, trailing newline).
pub fn write(m: &Manifest<'_>) -> String {
    let mut s = ron::ser::to_string_pretty(m, pretty()).expect("the manifest types serialise to RON");
    s.push('\n');
    s
}

/// Why a map, or a parsed manifest, breaks a rule of the project format (everything but the RON
/// syntax and the chunk files' own bytes). Each is what [`check_map`] refuses before a save and
/// what [`check`] refuses when `map.ron` is read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The metadata breaks a PMF limit.
    #[error("meta: {0}")]
    Meta(#[from] MetaError),
    /// Library problems of error severity (the first few are shown).
    #[error("{}", problems_text("library", .0))]
    Library(Vec<Problem>),
    /// The path attribute sets are invalid.
    #[error(transparent)]
    PathSets(#[from] PathSetError),
    /// A count or size over what the PMF format can hold.
    #[error(transparent)]
    Limit(#[from] super::limits::LimitError),
    /// The map has no level.
    #[error("the map has no level (a map needs at least one level)")]
    NoLevels,
    /// Two levels of a map share a name.
    #[error("two levels are named {0:?}")]
    DuplicateLevelName(String),
    /// Something wrong inside one level; `index` is given when the manifest is read.
    #[error("{}: {error}", level_text(*.index, .name))]
    InLevel {
        /// The level's index in the manifest.
        index: Option<usize>,
        /// The level's name.
        name: String,
        /// What is wrong.
        error: Box<CheckError>,
    },
    /// (In a level, in the manifest.) Another level has this level's name.
    #[error("another level has this name")]
    NameTaken,
    /// (In a level.) The chunk size is not one PMF allows.
    #[error("chunk_size_log2 {0} is not in 0..={MAX_CHUNK_SIZE_LOG2}")]
    ChunkSize(u8),
    /// (In a level.) The center chunk is outside the chunk grid.
    #[error("center_chunk {0:?} is outside the grid (x, z in 0..4096, y in 0..256)")]
    CenterOutsideGrid(ChunkCoord),
    /// (In a level.) A default environment is missing from the library.
    #[error("default {0} is not in the library")]
    MissingDefaultEnvironment(EnvRef),
    /// (In a level.) Sun, sky or bounce settings out of range.
    #[error("lighting: {0}")]
    Lighting(#[from] LightingError),
    /// (In a level.) The air physics material is missing from the library.
    #[error("air_physics_material {0} is not in the library")]
    MissingAirPhysics(PhysicsId),
    /// (In a level.) Invalid objects or regions with a missing environment (the first few).
    #[error("{}", problems_text("objects", .0))]
    Objects(Vec<Problem>),
    /// (In a level, in the manifest.) A chunk coordinate outside the grid.
    #[error("chunk ({}, {}, {}) is outside the grid", .0.0, .0.1, .0.2)]
    ChunkOutsideGrid((i32, i32, i32)),
    /// (In a level, in the manifest.) A chunk listed twice.
    #[error("chunk ({}, {}, {}) is listed twice", .0.0, .0.1, .0.2)]
    ChunkListedTwice((i32, i32, i32)),
    /// (In a level, in the manifest.) A chunk file name that is not a content hash.
    #[error("chunk ({}, {}, {}): {hash:?} is not a content hash (16 lower-case hex digits)", .chunk.0, .chunk.1, .chunk.2)]
    BadChunkHash {
        /// The chunk `(x, y, z)`.
        chunk: (i32, i32, i32),
        /// What the manifest says.
        hash: String,
    },
    /// A chunk of a level uses an id the library lacks (found before a save).
    #[error("level {level:?}, chunk ({}, {}, {}): {error}", .chunk.x, .chunk.y, .chunk.z)]
    ChunkIds {
        /// The level's name.
        level: String,
        /// The chunk.
        chunk: ChunkCoord,
        /// The first leaf at fault.
        error: LeafIdError,
    },
}

/// `level 0 ("main")` when the index is known (reading a manifest), `level "main"` otherwise.
fn level_text(index: Option<usize>, name: &str) -> String {
    match index {
        Some(i) => format!("level {i} ({name:?})"),
        None => format!("level {name:?}"),
    }
}

impl CheckError {
    fn in_level(index: Option<usize>, name: &str) -> impl FnOnce(CheckError) -> CheckError + '_ {
        move |error| CheckError::InLevel { index, name: name.to_owned(), error: Box::new(error) }
    }
}

impl From<CheckError> for ManifestError {
    fn from(e: CheckError) -> Self {
        Self { position: None, reason: e.to_string() }
    }
}

/// The level default environments, checked against the library.
pub trait CheckEnvironments {
    /// An error if a default names a missing environment.
    fn check(&self, lib: &Library) -> Result<(), CheckError>;
}

impl CheckEnvironments for EnvironmentDefaults {
    fn check(&self, lib: &Library) -> Result<(), CheckError> {
        match self.iter().find(|e| !lib.contains_environment(*e)) {
            Some(e) => Err(CheckError::MissingDefaultEnvironment(e)),
            None => Ok(()),
        }
    }
}

/// The first few problems of a list, in words.
fn problems_text(what: &str, problems: &[Problem]) -> String {
    let shown: Vec<String> = problems.iter().take(3).map(|p| p.to_string()).collect();
    let more = problems.len().saturating_sub(3);
    let tail = if more > 0 { format!(" (and {more} more)") } else { String::new() };
    format!("{what}: {}{tail}", shown.join("; "))
}

/// Checks the map-wide part: metadata and library.
pub fn check_map_wide(meta: &MapMeta, lib: &Library) -> Result<(), CheckError> {
    meta.validate()?;
    let errors: Vec<Problem> = lib.validate().into_iter().filter(|p| p.severity() == Severity::Error).collect();
    if !errors.is_empty() {
        return Err(CheckError::Library(errors));
    }
    Ok(())
}

/// Checks one level's settings and objects against the library. Object problems that the
/// editor allows while editing (shared global IDs, shared names, controllers without a light)
/// are not refused; invalid records and missing environments are.
pub fn check_level(
    lib: &Library,
    chunk_size_log2: u8,
    center: ChunkCoord,
    envs: &LevelEnvironments,
    air: Option<PhysicsId>,
    objects: &LevelObjects,
) -> Result<(), CheckError> {
    if chunk_size_log2 > MAX_CHUNK_SIZE_LOG2 {
        return Err(CheckError::ChunkSize(chunk_size_log2));
    }
    if !center.is_in_grid() {
        return Err(CheckError::CenterOutsideGrid(center));
    }
    envs.check(lib)?;
    if let Some(p) = air
        && !lib.physics_materials().contains(p)
    {
        return Err(CheckError::MissingAirPhysics(p));
    }
    let refused: Vec<Problem> = objects
        .validate(lib)
        .into_iter()
        .filter(|p| matches!(p, Problem::Invalid { .. } | Problem::MissingEnvironment { .. }))
        .collect();
    if !refused.is_empty() {
        return Err(CheckError::Objects(refused));
    }
    Ok(())
}

/// Checks a map before it is saved: everything [`read`] would refuse except the chunks.
pub fn check_map(map: &Map) -> Result<(), CheckError> {
    check_map_wide(&map.meta, &map.library)?;
    map.path_sets.validate()?;
    super::limits::check(&map.library, map.levels.iter().map(|l| (l.name.as_str(), &l.objects)))?;
    if map.levels.is_empty() {
        return Err(CheckError::NoLevels);
    }
    let mut names = BTreeSet::new();
    for level in &map.levels {
        if !names.insert(level.name.as_str()) {
            return Err(CheckError::DuplicateLevelName(level.name.clone()));
        }
        let f = level.frame();
        check_level(
            &map.library,
            f.chunk_size_log2,
            f.center_chunk,
            &level.environments,
            level.air_physics_material,
            &level.objects,
        )
        .and_then(|()| Ok(level.lighting.validate()?))
        .map_err(CheckError::in_level(None, &level.name))?;
    }
    Ok(())
}

/// Checks a parsed manifest (all but the chunk files).
pub fn check(m: &Manifest<'_>) -> Result<(), CheckError> {
    check_map_wide(&m.meta, &m.library)?;
    m.path_sets.validate()?;
    super::limits::check(&m.library, m.levels.iter().map(|l| (&*l.name, &*l.objects)))?;
    if m.levels.is_empty() {
        return Err(CheckError::NoLevels);
    }
    let mut names = BTreeSet::new();
    for (i, level) in m.levels.iter().enumerate() {
        let in_level = CheckError::in_level(Some(i), &level.name);
        if !names.insert(&*level.name) {
            return Err(in_level(CheckError::NameTaken));
        }
        let checked = check_level(
            &m.library,
            level.chunk_size_log2,
            level.center_chunk,
            &level.environments,
            level.air_physics_material,
            &level.objects,
        )
        .and_then(|()| Ok(level.lighting.validate()?))
        .and_then(|()| check_chunk_list(&level.chunks));
        checked.map_err(in_level)?;
    }
    Ok(())
}

/// A level's chunk list: inside the grid, each once, file names that are content hashes.
fn check_chunk_list(chunks: &[ChunkRef]) -> Result<(), CheckError> {
    let mut seen = BTreeSet::new();
    for c in chunks {
        let coord = c.coord();
        let xyz = (c.0, c.1, c.2);
        if !coord.is_in_grid() {
            return Err(CheckError::ChunkOutsideGrid(xyz));
        }
        if !seen.insert(coord) {
            return Err(CheckError::ChunkListedTwice(xyz));
        }
        if chunk_file::parse_hash(&c.3).is_none() {
            return Err(CheckError::BadChunkHash { chunk: xyz, hash: c.3.clone() });
        }
    }
    Ok(())
}

/// Every chunk file a manifest refers to.
pub fn referenced_hashes(m: &Manifest<'_>) -> BTreeSet<u64> {
    m.levels.iter().flat_map(|l| l.chunks.iter().filter_map(|c| chunk_file::parse_hash(&c.3))).collect()
}

/// 64-bit FNV-1a of some bytes (manifest fingerprints for recovery).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}
