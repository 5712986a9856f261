//! `pmfc inspect`: a summary of a `.pmf` file, as text or JSON.

use serde::Serialize;

use pmfedit_core::format::paf;
use pmfedit_core::format::pmf::{self, ClientGeometry, CubeKind};

use crate::sizes::SizeBreakdown;

/// Everything `pmfc inspect` prints.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub name: String,
    pub description: String,
    pub authors: String,
    pub compiler_info: String,
    pub creation_time: u64,
    pub gamemodes: Vec<String>,
    pub extensions: usize,
    pub global_entities: Vec<EntitySummary>,
    pub levels: Vec<LevelSummary>,
    /// Brightness of the static lightmaps, all levels.
    pub luxels: LuxelStats,
    pub archive: Option<Vec<ArchiveEntry>>,
    /// Where the file's bytes go (`pmfc inspect --sizes`; `None` unless asked for, since it
    /// compresses every chunk again several times).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizeBreakdown>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LevelSummary {
    pub flags: u8,
    pub chunk_edge: u32,
    /// Chunk counts (x, y, z).
    pub grid: [u16; 3],
    /// Center chunk (x, y, z).
    pub center_chunk: [u16; 3],
    pub materials: Vec<String>,
    pub physics_materials: Vec<String>,
    pub sound_materials: usize,
    pub environments: EnvironmentCounts,
    pub entities: Vec<EntitySummary>,
    /// Share of (air cell, drawn geometry cube) pairs the file's visibility lists cull, an air cell
    /// without visibility data culling nothing (`vis::oracle::pair_counts`): what an engine culls.
    pub vis_culled: f64,
    pub totals: ChunkSummary,
    pub chunks: Vec<ChunkSummary>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct EnvironmentCounts {
    pub sound: usize,
    pub weather: usize,
    pub sky: usize,
    pub gravity: usize,
}

/// Per-chunk counts (also used for level totals, where `index` is `None`).
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct ChunkSummary {
    /// (x, y, z)
    pub index: Option<[u16; 3]>,
    pub cubes_empty: usize,
    pub cubes_parent: usize,
    pub cubes_geometry: usize,
    pub cubes_ext_geometry: usize,
    pub faces: usize,
    pub triangles: usize,
    pub vertices: usize,
    pub lightmaps: usize,
    pub luxels: usize,
    pub dynamic_lights: usize,
    pub fast_lights: usize,
    pub visibility_cubes: usize,
    pub lit_cubes: usize,
    pub pathfinding_cubes: usize,
    pub environment_regions: usize,
    pub load_regions: usize,
    pub entities: usize,
    /// The chunk's entities (empty in level totals).
    pub entity_list: Vec<EntitySummary>,
}

impl ChunkSummary {
    fn add(&mut self, o: &ChunkSummary) {
        self.cubes_empty += o.cubes_empty;
        self.cubes_parent += o.cubes_parent;
        self.cubes_geometry += o.cubes_geometry;
        self.cubes_ext_geometry += o.cubes_ext_geometry;
        self.faces += o.faces;
        self.triangles += o.triangles;
        self.vertices += o.vertices;
        self.lightmaps += o.lightmaps;
        self.luxels += o.luxels;
        self.dynamic_lights += o.dynamic_lights;
        self.fast_lights += o.fast_lights;
        self.visibility_cubes += o.visibility_cubes;
        self.lit_cubes += o.lit_cubes;
        self.pathfinding_cubes += o.pathfinding_cubes;
        self.environment_regions += o.environment_regions;
        self.load_regions += o.load_regions;
        self.entities += o.entities;
    }

    fn is_all_air(&self) -> bool {
        self.cubes_geometry + self.cubes_ext_geometry + self.entities + self.load_regions + self.environment_regions
            == 0
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EntitySummary {
    pub name: String,
    pub kind: String,
    pub position: Option<[f32; 3]>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ArchiveEntry {
    pub path: String,
    pub kind: String,
    pub size: u64,
    pub target: Option<String>,
}

fn entities(list: &[pmf::entity::Entity]) -> Vec<EntitySummary> {
    list.iter()
        .map(|e| EntitySummary {
            name: e.name.clone(),
            kind: e.data.type_name().to_owned(),
            position: e.data.position(),
        })
        .collect()
}

fn chunk_summary(index: pmf::ChunkIndex, c: &pmf::Chunk) -> ChunkSummary {
    let mut s = ChunkSummary { index: Some([index.x, u16::from(index.y), index.z]), ..ChunkSummary::default() };
    for (cube, client) in c.common.cubes.iter().zip(&c.client.cubes) {
        match cube.kind {
            CubeKind::Empty => s.cubes_empty += 1,
            CubeKind::Parent(_) => s.cubes_parent += 1,
            CubeKind::Geometry(_) => s.cubes_geometry += 1,
            CubeKind::ExtGeometry(_) => s.cubes_ext_geometry += 1,
        }
        match &client.geometry {
            ClientGeometry::None => {}
            ClientGeometry::Geometry(g) => {
                let faces = (g.faces & 0x3F).count_ones() as usize;
                s.faces += faces;
                s.triangles += 2 * faces;
            }
            ClientGeometry::ExtGeometry(g) => {
                s.faces += g.triangle_counts.iter().filter(|&&n| n > 0).count();
                s.triangles += g.triangle_counts.iter().map(|&n| usize::from(n)).sum::<usize>();
            }
        }
        s.visibility_cubes += usize::from(cube.visibility.is_some());
        s.lit_cubes += usize::from(client.lighting.is_some());
    }
    s.pathfinding_cubes = c.server.cubes.iter().filter(|c| c.pathfinding.is_some()).count();
    s.vertices = c.client.vertices.len();
    s.lightmaps = c.client.lightmaps.len();
    s.luxels = c.client.lightmaps.iter().map(|l| l.edge() * l.edge()).sum();
    s.dynamic_lights = c.common.dynamic_lights.len();
    s.fast_lights = c.common.fast_lights.len();
    s.environment_regions = c.common.weather_regions.len()
        + c.common.gravity_regions.len()
        + c.client.sound_regions.len()
        + c.client.sky_regions.len();
    s.load_regions = c.server.load_regions.len();
    s.entities = c.server.entities.len();
    s.entity_list = entities(&c.server.entities);
    s
}

/// Brightness statistics of every static lightmap luxel of a file (all levels, chunks and
/// pages, padding included): what the issue tracker and `pmfc bench` quote for "is the exported
/// map lit".
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct LuxelStats {
    /// Luxels counted.
    pub luxels: usize,
    /// Mean of all channels of all luxels, `0..=255`.
    pub mean: f64,
    /// Share of luxels with any channel at 64 or more, `0..=1`.
    pub share_ge_64: f64,
}

/// [`LuxelStats`] of `file`.
pub fn luxel_stats(file: &pmf::File) -> LuxelStats {
    let (mut luxels, mut sum, mut bright) = (0usize, 0u64, 0usize);
    for chunk in file.levels.iter().flat_map(|l| &l.chunks) {
        for map in &chunk.client.lightmaps {
            for rgb in map.luxels.chunks_exact(3) {
                luxels += 1;
                sum += rgb.iter().map(|&c| u64::from(c)).sum::<u64>();
                bright += usize::from(rgb.iter().any(|&c| c >= 64));
            }
        }
    }
    let n = luxels.max(1) as f64;
    LuxelStats { luxels, mean: sum as f64 / (3.0 * n), share_ge_64: bright as f64 / n }
}

/// Summarises a parsed file. The embedded archive is parsed too; an archive error is returned.
pub fn summarize(file: &pmf::File) -> Result<Summary, paf::PafError> {
    let levels = file
        .levels
        .iter()
        .map(|l| {
            let chunks: Vec<ChunkSummary> =
                l.chunks.iter().enumerate().map(|(i, c)| chunk_summary(l.grid.index_of(i), c)).collect();
            let mut totals = ChunkSummary::default();
            for c in &chunks {
                totals.add(c);
            }
            LevelSummary {
                flags: l.flags,
                chunk_edge: 1 << l.chunk_size_exp,
                grid: [l.grid.x, l.grid.y, l.grid.z],
                center_chunk: [l.center_chunk.x, u16::from(l.center_chunk.y), l.center_chunk.z],
                materials: l.common.materials.iter().map(|m| m.name.clone()).collect(),
                physics_materials: l.common.physics_materials.iter().map(|m| m.name.clone()).collect(),
                sound_materials: l.common.sound_materials.len(),
                environments: EnvironmentCounts {
                    sound: l.client.sound_environments.len(),
                    weather: l.common.weather_environments.len(),
                    sky: l.client.sky_environments.len(),
                    gravity: l.common.gravity_environments.len(),
                },
                entities: entities(&l.server.entities),
                vis_culled: crate::vis::oracle::pair_counts(l).culled(),
                totals,
                chunks,
            }
        })
        .collect();
    let archive = if file.archive.is_empty() {
        None
    } else {
        let a = paf::Archive::from_bytes(&file.archive)?;
        Some(archive_listing(&a))
    };
    Ok(Summary {
        name: file.header.name.clone(),
        description: file.header.description.clone(),
        authors: file.header.authors.clone(),
        compiler_info: file.header.compiler_info.clone(),
        creation_time: file.header.creation_time,
        gamemodes: file.header.gamemodes.clone(),
        extensions: file.extensions.len(),
        global_entities: entities(&file.entities),
        levels,
        luxels: luxel_stats(file),
        archive,
        sizes: None,
    })
}

/// The listing of a PAF archive, for `inspect` and `paf list`.
pub fn archive_listing(a: &paf::Archive) -> Vec<ArchiveEntry> {
    a.listing()
        .into_iter()
        .map(|e| ArchiveEntry { path: e.path, kind: e.kind.to_string(), size: e.size, target: e.link_target })
        .collect()
}

/// Renders the summary as text. Chunks that hold only air are folded into one line per level.
pub fn render_text(s: &Summary) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(o, "name:          {}", s.name);
    let _ = writeln!(o, "description:   {}", s.description);
    let _ = writeln!(o, "authors:       {}", s.authors);
    let _ = writeln!(o, "compiler:      {}", s.compiler_info);
    let _ = writeln!(o, "created:       {} (unix seconds)", s.creation_time);
    let _ = writeln!(o, "gamemodes:     {}", if s.gamemodes.is_empty() { "-".into() } else { s.gamemodes.join(", ") });
    let _ = writeln!(o, "extensions:    {}", s.extensions);
    let _ = writeln!(
        o,
        "luxels:        {} (mean {:.1}/255, {:.1} % with a channel >= 64)",
        s.luxels.luxels,
        s.luxels.mean,
        s.luxels.share_ge_64 * 100.0
    );
    let _ = writeln!(o, "levels:        {}", s.levels.len());
    for (i, l) in s.levels.iter().enumerate() {
        let _ = writeln!(o, "\nlevel {i}:");
        let _ = writeln!(o, "  flags:        0x{:02x}", l.flags);
        let _ = writeln!(o, "  chunk edge:   {} units", l.chunk_edge);
        let _ = writeln!(
            o,
            "  chunk grid:   {}×{}×{} (x×y×z), center chunk x{} y{} z{}",
            l.grid[0], l.grid[1], l.grid[2], l.center_chunk[0], l.center_chunk[1], l.center_chunk[2]
        );
        let _ = writeln!(o, "  materials:    {} [{}]", l.materials.len(), l.materials.join(", "));
        let _ = writeln!(o, "  physics mats: {} [{}]", l.physics_materials.len(), l.physics_materials.join(", "));
        let _ = writeln!(o, "  sound mats:   {}", l.sound_materials);
        let e = &l.environments;
        let _ = writeln!(
            o,
            "  environments: sound {}, weather {}, sky {}, gravity {}",
            e.sound, e.weather, e.sky, e.gravity
        );
        let t = &l.totals;
        let _ = writeln!(
            o,
            "  cubes:        {} empty, {} parent, {} geometry, {} extended geometry",
            t.cubes_empty, t.cubes_parent, t.cubes_geometry, t.cubes_ext_geometry
        );
        let _ = writeln!(o, "  faces:        {} ({} triangles), {} vertices", t.faces, t.triangles, t.vertices);
        let _ = writeln!(o, "  lightmaps:    {} ({} luxels)", t.lightmaps, t.luxels);
        let _ = writeln!(o, "  lights:       {} dynamic, {} fast", t.dynamic_lights, t.fast_lights);
        let _ = writeln!(
            o,
            "  air data:     {} with visibility, {} lit, {} with pathfinding",
            t.visibility_cubes, t.lit_cubes, t.pathfinding_cubes
        );
        let _ = writeln!(
            o,
            "  culling:      {:.1} % of (air cell, drawn geometry cube) pairs culled by the visibility lists",
            l.vis_culled * 100.0
        );
        let _ = writeln!(o, "  regions:      {} environment, {} load", t.environment_regions, t.load_regions);
        let _ = writeln!(o, "  entities:     {} level-wide, {} in chunks", l.entities.len(), t.entities);
        for e in &l.entities {
            let _ = writeln!(o, "    {}", entity_line(e));
        }
        let _ = writeln!(o, "  chunks:");
        let air = l.chunks.iter().filter(|c| c.is_all_air()).count();
        for c in l.chunks.iter().filter(|c| !c.is_all_air()) {
            let [x, y, z] = c.index.unwrap_or_default();
            let _ = writeln!(
                o,
                "    x{x} y{y} z{z}: cubes {}/{}/{}/{} (empty/parent/geo/ext), {} faces, {} tris, {} verts, {} lightmaps ({} luxels), {} dyn, {} fast lights, {} entities",
                c.cubes_empty,
                c.cubes_parent,
                c.cubes_geometry,
                c.cubes_ext_geometry,
                c.faces,
                c.triangles,
                c.vertices,
                c.lightmaps,
                c.luxels,
                c.dynamic_lights,
                c.fast_lights,
                c.entities
            );
            for e in &c.entity_list {
                let _ = writeln!(o, "      {}", entity_line(e));
            }
        }
        if air > 0 {
            let _ = writeln!(o, "    ({air} chunks of air only)");
        }
    }
    let _ = writeln!(o, "\nglobal entities: {}", s.global_entities.len());
    for e in &s.global_entities {
        let _ = writeln!(o, "  {}", entity_line(e));
    }
    match &s.archive {
        None => {
            let _ = writeln!(o, "\nembedded archive: none");
        }
        Some(entries) => {
            let _ = writeln!(o, "\nembedded archive: {} entries", entries.len());
            o.push_str(&render_listing(entries, "  "));
        }
    }
    if let Some(sizes) = &s.sizes {
        o.push_str(&render_sizes(sizes));
    }
    o
}

/// The `--sizes` table: per part, its raw bytes and its share of the compressed file.
fn render_sizes(s: &SizeBreakdown) -> String {
    use std::fmt::Write as _;
    let mb = |b: i64| b as f64 / 1e6;
    let share = |b: i64| 100.0 * b as f64 / s.file.max(1) as f64;
    let mut o = String::new();
    let _ = writeln!(o, "\nsizes (MB = 10^6 bytes; compressed = what taking the part out saves, in this order):");
    let _ = writeln!(o, "  {:<38} {:>12} {:>14} {:>8}", "part", "raw MB", "compressed MB", "of file");
    for p in &s.parts {
        let _ = writeln!(
            o,
            "  {:<38} {:>12.2} {:>14.2} {:>7.1} %",
            p.name,
            p.raw as f64 / 1e6,
            mb(p.compressed),
            share(p.compressed)
        );
    }
    let outside = "header, level blocks, chunk tables, archive";
    let _ = writeln!(
        o,
        "  {:<38} {:>12} {:>14.2} {:>7.1} %",
        outside,
        "",
        mb(s.outside_chunks as i64),
        share(s.outside_chunks as i64)
    );
    let _ = writeln!(o, "  {:<38} {:>12} {:>14.2} {:>7.1} %", "file", "", mb(s.file as i64), 100.0);
    let l = &s.luxels;
    let pct = |n: u64| 100.0 * n as f64 / l.total.max(1) as f64;
    let _ = writeln!(
        o,
        "  static luxels: {} in {} pages: faces {:.1} %, patch padding {:.1} %, page filler {:.1} %; {} of {} patches uniform",
        l.total,
        l.pages,
        pct(l.face_area),
        pct(l.padding),
        pct(l.filler),
        l.uniform_patches,
        l.patches
    );
    o
}

fn entity_line(e: &EntitySummary) -> String {
    match e.position {
        Some([x, y, z]) => format!("{} \"{}\" at ({x}, {y}, {z})", e.kind, e.name),
        None => format!("{} \"{}\"", e.kind, e.name),
    }
}

/// One line per archive entry.
pub fn render_listing(entries: &[ArchiveEntry], indent: &str) -> String {
    let mut o = String::new();
    for e in entries {
        match (&e.target, e.kind.as_str()) {
            (Some(t), _) => o.push_str(&format!("{indent}{:<5} {:>10}  {} -> {t}\n", e.kind, "", e.path)),
            (None, "dir") => o.push_str(&format!("{indent}{:<5} {:>10}  {}/\n", e.kind, "", e.path)),
            (None, _) => o.push_str(&format!("{indent}{:<5} {:>10}  {}\n", e.kind, e.size, e.path)),
        }
    }
    o
}
