//! Chunk glue: layout + mesh of one chunk, and the PMF chunk records built from them.
//!
//! [`bake_geometry`] is the geometry half of `bake_chunk`: a pure function of a map snapshot, a
//! level index, a chunk coordinate and the settings. Its [`ChunkGeometry`] holds the
//! [`ChunkLayout`] (cube indices that lighting, visibility and pathfinding attach data to), the
//! [`Mesh`] (vertices; the lighting stage assigns lightmap rectangles on it), the per-chunk used
//! material lists and the common PMF cube records. The builders
//! ([`common`](ChunkGeometry::common), [`client`](ChunkGeometry::client),
//! [`server`](ChunkGeometry::server), [`to_pmf`](ChunkGeometry::to_pmf)) produce the `pmf`
//! chunk blocks with the geometry filled in and everything else empty, for the later stages to
//! complete.
//!
//! # Used lists (docs/spec/PMF-NOTES.md M1, M2)
//! Materials, physics materials and sound materials are listed in order of first use, walking the
//! cubes in array (pre-)order; within an extended cube, per-face materials (and physics
//! materials) in face order. Names are the library names, except sound materials: PMF gives them
//! no name, and the name of sound material `k` is the decimal text of `k`, its position in the
//! exported level list. That list is assumed to be **the library's sound materials in id order**
//! (what `Table::iter` yields), so sound material with the `k`-th smallest id is named `"k"`.
//! A chunk using more than 255 of a kind, or an id missing from the library, is refused with a
//! [`BakeError`] naming the level and chunk.

use std::collections::HashMap;
use std::fmt;

use pmfedit_core::format::pmf;
use pmfedit_core::map::coords::{ChunkCoord, LATTICE_PER_UNIT};
use pmfedit_core::map::octree::{CubeKind, MaterialId, Octree, PhysicsId, SoundId};
use pmfedit_core::map::{Library, Map};

use crate::layout::{BakeSettings, ChunkLayout};
use crate::mesh::{Mesh, mesh_chunk};

/// Most entries of a per-chunk used list (`u8` count, docs/spec/PMF-NOTES.md M1).
pub const MAX_USED: usize = 255;

/// Why a chunk's geometry could not be baked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BakeError {
    /// The map has no level with this index.
    NoSuchLevel { level: usize, count: usize },
    /// The chunk lies outside the PMF grid.
    ChunkOutsideGrid { level: usize, chunk: ChunkCoord },
    /// The chunk uses more than 255 materials (or physics / sound materials).
    TooManyUsed { level: usize, chunk: ChunkCoord, kind: &'static str, count: usize },
    /// A cube refers to a library record that does not exist.
    UnknownId { level: usize, chunk: ChunkCoord, cube: u32, kind: &'static str, id: u16 },
    /// The faces of a geometry cube were put on different lightmap pages (PMF has one lightmap
    /// index per geometry cube).
    SplitLightmap { level: usize, chunk: ChunkCoord, cube: u32 },
    /// The chunk holds more cubes than [`BakeSettings::max_cubes`] allows to bake.
    TooManyCubes { level: usize, chunk: ChunkCoord, cubes: usize, limit: usize },
}

/// `level 0, chunk (x 1, y 2, z 3)`.
struct Place(usize, ChunkCoord);

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "level {}, chunk (x {}, y {}, z {})", self.0, self.1.x, self.1.y, self.1.z)
    }
}

impl fmt::Display for BakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BakeError::NoSuchLevel { level, count } => write!(f, "level {level} does not exist (the map has {count})"),
            BakeError::ChunkOutsideGrid { level, chunk } => {
                write!(f, "{}: outside the level grid (x and z in 0..4096, y in 0..256)", Place(level, chunk))
            }
            BakeError::TooManyUsed { level, chunk, kind, count } => write!(
                f,
                "{}: uses {count} {kind}s, but a PMF chunk can list at most {MAX_USED} (docs/spec/PMF-NOTES.md M1); \
                 use fewer {kind}s in this chunk or a smaller chunk size",
                Place(level, chunk)
            ),
            BakeError::UnknownId { level, chunk, cube, kind, id } => {
                write!(f, "{}: cube {cube} uses {kind} #{id}, which is not in the library", Place(level, chunk))
            }
            BakeError::TooManyCubes { level, chunk, cubes, limit } => write!(
                f,
                "{}: holds {cubes} cubes, more than the {limit} a chunk may hold to be baked \
                 (BakeSettings::max_cubes; the bake's memory grows with them): use bigger cubes here, or a smaller \
                 chunk size",
                Place(level, chunk)
            ),
            BakeError::SplitLightmap { level, chunk, cube } => write!(
                f,
                "{}: the faces of geometry cube {cube} are on different lightmaps (PMF allows one per geometry cube)",
                Place(level, chunk)
            ),
        }
    }
}

impl std::error::Error for BakeError {}

/// The used lists of one chunk, as library ids in order of first use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsedLists {
    pub materials: Vec<MaterialId>,
    pub physics: Vec<PhysicsId>,
    pub sounds: Vec<SoundId>,
}

/// A used list being built: ids in order of first use and their indices.
struct Used<I> {
    order: Vec<I>,
    index: HashMap<I, u8>,
    kind: &'static str,
    overflow: usize,
}

impl<I: Copy + Eq + std::hash::Hash> Used<I> {
    fn new(kind: &'static str) -> Self {
        Self { order: Vec::new(), index: HashMap::new(), kind, overflow: 0 }
    }

    /// The chunk index of `id`, adding it on first use (255 on overflow; counted and refused
    /// at the end).
    fn get(&mut self, id: I) -> u8 {
        if let Some(&i) = self.index.get(&id) {
            return i;
        }
        if self.order.len() == MAX_USED {
            self.overflow += 1;
            self.index.insert(id, u8::MAX);
            return u8::MAX;
        }
        let i = self.order.len() as u8;
        self.order.push(id);
        self.index.insert(id, i);
        i
    }

    fn finish(self, level: usize, chunk: ChunkCoord) -> Result<Vec<I>, BakeError> {
        if self.overflow > 0 {
            return Err(BakeError::TooManyUsed {
                level,
                chunk,
                kind: self.kind,
                count: self.order.len() + self.overflow,
            });
        }
        Ok(self.order)
    }
}

/// The geometry of one chunk. See the [module documentation](self).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkGeometry {
    /// Level index in the map.
    pub level: usize,
    /// The chunk.
    pub chunk: ChunkCoord,
    /// The PMF cube array layout.
    pub layout: ChunkLayout,
    /// Visible faces and vertices.
    pub mesh: Mesh,
    /// Used library ids, in order of first use.
    pub used: UsedLists,
    /// PMF names of `used.materials`.
    pub material_names: Vec<String>,
    /// PMF names of `used.physics`.
    pub physics_names: Vec<String>,
    /// PMF names of `used.sounds`: decimal indices in the exported level list (M2).
    pub sound_names: Vec<String>,
    /// The common cube records, one per layout cube (visibility not yet filled).
    pub cubes: Vec<pmf::Cube>,
}

/// Bakes the geometry of chunk `chunk` of level `level` of a map snapshot: layout, mesh, used
/// lists and common cubes. Pure and deterministic. A chunk missing from the level bakes as air.
pub fn bake_geometry(
    snapshot: &Map,
    level: usize,
    chunk: ChunkCoord,
    settings: &BakeSettings,
) -> Result<ChunkGeometry, BakeError> {
    let lvl = snapshot.levels.get(level).ok_or(BakeError::NoSuchLevel { level, count: snapshot.levels.len() })?;
    if !chunk.is_in_grid() {
        return Err(BakeError::ChunkOutsideGrid { level, chunk });
    }
    let empty;
    let octree = match lvl.chunk(chunk) {
        Some(c) => c.octree(),
        None => {
            empty = Octree::new(lvl.frame().chunk_lattice_log2());
            &empty
        }
    };
    // Bound the work before any of it: everything below grows with the cubes.
    let cubes = octree.node_count();
    if cubes > settings.max_cubes {
        return Err(BakeError::TooManyCubes { level, chunk, cubes, limit: settings.max_cubes });
    }
    let layout = ChunkLayout::build(octree, settings);
    let mesh = mesh_chunk(lvl, &snapshot.library, chunk, &layout, settings);
    let mut geometry = ChunkGeometry {
        level,
        chunk,
        layout,
        mesh,
        used: UsedLists::default(),
        material_names: Vec::new(),
        physics_names: Vec::new(),
        sound_names: Vec::new(),
        cubes: Vec::new(),
    };
    geometry.build_cubes(&snapshot.library)?;
    Ok(geometry)
}

impl ChunkGeometry {
    /// Fills `used`, the names and `cubes`.
    fn build_cubes(&mut self, lib: &Library) -> Result<(), BakeError> {
        let (level, chunk) = (self.level, self.chunk);
        let mut mats = Used::new("material");
        let mut phys = Used::new("physics material");
        let mut sounds = Used::new("sound material");
        let mut cubes = Vec::with_capacity(self.layout.len());
        for c in self.layout.cubes() {
            let (kind, backfaces) = match (&c.cube, c.children) {
                // Layout children follow their parent in pre-order, so none is the root (0).
                (None, Some(kids)) => {
                    (pmf::CubeKind::Parent(pmf::ParentCube { children: kids.map(pmf::ChildIndex::new) }), false)
                }
                (None, None) => unreachable!("a layout parent has children"),
                (Some(cube), _) => {
                    let kind = match &cube.kind {
                        CubeKind::Empty => pmf::CubeKind::Empty,
                        CubeKind::Geometry(g) => pmf::CubeKind::Geometry(pmf::GeometryCube {
                            material: mats.get(g.material),
                            physics_material: phys.get(g.physics),
                            sound_material: sounds.get(g.sound),
                        }),
                        CubeKind::Extended(e) => {
                            let edge = c.addr.edge() as f32 / LATTICE_PER_UNIT as f32;
                            pmf::CubeKind::ExtGeometry(pmf::ExtGeometryCube {
                                materials: e.face_materials.map(|m| mats.get(m)),
                                physics_materials: e.face_physics.map(|p| phys.get(p)),
                                sound_material: sounds.get(e.sound),
                                points: pmf::MovedPoints::new(std::array::from_fn(|k| {
                                    (e.corners[k] != [0; 3]).then(|| e.corner_position(k, edge).to_array())
                                })),
                            })
                        }
                    };
                    (kind, cube.draw_backfaces)
                }
            };
            cubes.push(pmf::Cube { draw_backfaces: backfaces, visibility: None, kind });
        }
        self.used = UsedLists {
            materials: mats.finish(level, chunk)?,
            physics: phys.finish(level, chunk)?,
            sounds: sounds.finish(level, chunk)?,
        };
        // Names; a missing id is reported with the first cube that uses it.
        let first_user = |pred: &dyn Fn(&CubeKind) -> bool| -> u32 {
            self.layout.cubes().iter().position(|c| c.cube.as_ref().is_some_and(|c| pred(&c.kind))).unwrap_or(0) as u32
        };
        for &m in &self.used.materials {
            let Some(mat) = lib.materials().get(m) else {
                let cube = first_user(&|k| uses_material(k, m));
                return Err(BakeError::UnknownId { level, chunk, cube, kind: "material", id: m.0 });
            };
            self.material_names.push(mat.name.clone());
        }
        for &p in &self.used.physics {
            let Some(phys) = lib.physics_materials().get(p) else {
                let cube = first_user(&|k| uses_physics(k, p));
                return Err(BakeError::UnknownId { level, chunk, cube, kind: "physics material", id: p.0 });
            };
            self.physics_names.push(phys.name.clone());
        }
        let sound_ids: Vec<SoundId> = lib.sound_materials().ids().collect();
        for &s in &self.used.sounds {
            let Ok(k) = sound_ids.binary_search(&s) else {
                let cube = first_user(&|k| uses_sound(k, s));
                return Err(BakeError::UnknownId { level, chunk, cube, kind: "sound material", id: s.0 });
            };
            self.sound_names.push(k.to_string());
        }
        self.cubes = cubes;
        Ok(())
    }

    /// Common chunk data: used lists and cubes; regions and lights empty.
    pub fn common(&self) -> pmf::ChunkCommon {
        pmf::ChunkCommon {
            used_materials: self.material_names.clone(),
            used_physics_materials: self.physics_names.clone(),
            used_sound_materials: self.sound_names.clone(),
            cubes: self.cubes.clone(),
            ..pmf::ChunkCommon::default()
        }
    }

    /// The client-side cubes: geometry records (first vertex, face bits or triangle counts,
    /// lightmap indices from the mesh's assignments, 0 where none), no lighting.
    pub fn client_cubes(&self) -> Result<Vec<pmf::ClientCube>, BakeError> {
        let mut out = vec![pmf::ClientCube::default(); self.layout.len()];
        for cm in &self.mesh.cubes {
            let faces = &self.mesh.faces[cm.first_face as usize..(cm.first_face + u32::from(cm.face_count)) as usize];
            let page = |f: &crate::mesh::MeshFace| f.lightmap.map_or(0, |(p, _)| p);
            out[cm.cube as usize].geometry = if cm.extended {
                let mut lightmaps = [0u8; 6];
                for f in faces {
                    lightmaps[f.face.index()] = page(f);
                }
                pmf::ClientGeometry::ExtGeometry(pmf::ClientExtGeometryCube {
                    first_vertex: cm.first_vertex,
                    lightmaps,
                    triangle_counts: cm.triangle_counts,
                })
            } else {
                let lightmap = faces.first().map_or(0, page);
                if faces.iter().any(|f| page(f) != lightmap) {
                    return Err(BakeError::SplitLightmap { level: self.level, chunk: self.chunk, cube: cm.cube });
                }
                pmf::ClientGeometry::Geometry(pmf::ClientGeometryCube {
                    lightmap,
                    first_vertex: cm.first_vertex,
                    faces: cm.face_bits,
                })
            };
        }
        Ok(out)
    }

    /// Client chunk data: vertices and cubes; regions, lightmaps and lights empty.
    pub fn client(&self) -> Result<pmf::ChunkClient, BakeError> {
        Ok(pmf::ChunkClient {
            vertices: self.mesh.vertices.clone(),
            cubes: self.client_cubes()?,
            ..pmf::ChunkClient::default()
        })
    }

    /// Server chunk data: one default server cube per cube (no pathfinding data yet).
    pub fn server(&self) -> pmf::ChunkServer {
        pmf::ChunkServer { cubes: vec![pmf::ServerCube::default(); self.layout.len()], ..pmf::ChunkServer::default() }
    }

    /// The three chunk blocks.
    pub fn to_pmf(&self) -> Result<pmf::Chunk, BakeError> {
        Ok(pmf::Chunk { common: self.common(), client: self.client()?, server: self.server() })
    }
}

fn uses_material(k: &CubeKind, m: MaterialId) -> bool {
    match k {
        CubeKind::Empty => false,
        CubeKind::Geometry(g) => g.material == m,
        CubeKind::Extended(e) => e.face_materials.contains(&m),
    }
}

fn uses_physics(k: &CubeKind, p: PhysicsId) -> bool {
    match k {
        CubeKind::Empty => false,
        CubeKind::Geometry(g) => g.physics == p,
        CubeKind::Extended(e) => e.face_physics.contains(&p),
    }
}

fn uses_sound(k: &CubeKind, s: SoundId) -> bool {
    match k {
        CubeKind::Empty => false,
        CubeKind::Geometry(g) => g.sound == s,
        CubeKind::Extended(e) => e.sound == s,
    }
}
