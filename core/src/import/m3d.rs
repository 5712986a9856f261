//! Model 3D import and export: voxel models become cubes, mesh models become a prop entity plus
//! resources, and a box of cubes becomes a voxel model.
//!
//! Axes: Model 3D is right-handed with +Y up, +X right and +Z toward the viewer; PMF is
//! right-handed with +Y up too (counter-clockwise quads, docs/spec/PMF-NOTES.md G2), so voxel `(x, y, z)` maps
//! to lattice `(x, y, z)` with no mirroring. A model's origin is voxel `(0, 0, 0)` of its block
//! coordinates; voxel models are stored centred on X and Z with Y = 0 the ground, so `at` is
//! where the bottom centre of the model lands.

use std::collections::HashMap;

use glam::{I64Vec3, IVec3};

use super::{ImportError, ImportReport, ImportedResource};
use crate::format::m3d::{
    self, MAX_VOXEL_CELLS, Model, Rgba, Source, VOXEL_CLEAR, VOXEL_UNSET, VoxelBlock, VoxelType, sanitize_identifier,
};
use crate::format::pmf::entity::{EntityData, Prop};
use crate::map::Map;
use crate::map::coords::{Face, LatticeBox};
use crate::map::level::Level;
use crate::map::library::{
    Library, MapEntity, Material, MaterialId, PhysicsId, PhysicsMaterial, SoundId, SoundMaterial,
};
use crate::map::octree::Cube;

/// Largest voxel edge: `2^20` lattice units.
pub const MAX_CUBE_LOG2: u8 = 20;

/// How [`import_m3d`] treats a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImportMode {
    /// Voxels if the model has voxel data and no triangles, otherwise a mesh.
    #[default]
    Auto,
    /// Voxels become cubes ([`import_voxels`]).
    Voxels,
    /// The model becomes a resource and a prop ([`import_mesh`]).
    Mesh,
}

/// Reads a Model 3D file (binary or ASCII) and imports it as [`ImportMode`] says. `name` names
/// the resources of a mesh import; `at` is a level lattice position; `cube_log2` is the voxel
/// edge for a voxel import.
pub fn import_m3d(
    map: &mut Map,
    level: usize,
    bytes: &[u8],
    name: &str,
    at: IVec3,
    cube_log2: u8,
    mode: ImportMode,
) -> Result<ImportReport, ImportError> {
    let model = m3d::read_any(bytes)?;
    let voxels = match mode {
        ImportMode::Auto => !model.voxel_blocks.is_empty() && model.faces.is_empty(),
        ImportMode::Voxels => true,
        ImportMode::Mesh => false,
    };
    if voxels { import_voxels(map, level, &model, at, cube_log2) } else { mesh(map, level, &model, bytes, name, at) }
}

/// The blocks to import: every block outside an alternate group, and per alternate group the one
/// most likely to load (lowest uncertainty, first on ties).
fn selected_blocks<'a>(model: &'a Model, warnings: &mut Vec<String>) -> Vec<&'a VoxelBlock> {
    let mut out = Vec::new();
    let mut best: HashMap<u8, usize> = HashMap::new();
    for (i, b) in model.voxel_blocks.iter().enumerate() {
        if b.group == 0 {
            out.push(i);
        } else {
            let e = best.entry(b.group).or_insert(i);
            if b.uncertainty < model.voxel_blocks[*e].uncertainty {
                *e = i;
            }
        }
    }
    let grouped = model.voxel_blocks.iter().filter(|b| b.group != 0).count();
    if grouped > best.len() {
        warnings.push(format!(
            "{} alternate voxel blocks skipped (one block per alternate group is imported)",
            grouped - best.len()
        ));
    }
    out.extend(best.into_values());
    out.sort_unstable();
    out.into_iter().map(|i| &model.voxel_blocks[i]).collect()
}

/// Tight bounds, in block cells, of the cells that are not unset: `(min, max exclusive)`.
fn block_bounds(b: &VoxelBlock) -> Option<(I64Vec3, I64Vec3)> {
    let [w, _, d] = b.size.map(i64::from);
    let mut lo = I64Vec3::MAX;
    let mut hi = I64Vec3::MIN;
    for (i, _) in b.data.iter().enumerate().filter(|(_, v)| **v != VOXEL_UNSET) {
        let i = i as i64;
        let p = I64Vec3::new(i % w, i / (w * d), (i / w) % d);
        lo = lo.min(p);
        hi = hi.max(p + I64Vec3::ONE);
    }
    (lo.x <= hi.x).then_some((lo, hi))
}

/// The library's default physics and sound materials (named `default`, else the first), added if
/// the library has none.
fn default_physics_sound(lib: &mut Library) -> Result<(PhysicsId, SoundId), ImportError> {
    let physics = match lib.physics_materials().id_of("default").or_else(|| lib.physics_materials().ids().next()) {
        Some(id) => id,
        None => lib.add_unique(PhysicsMaterial::new("default"))?,
    };
    let sound = match lib.sound_materials().id_of("default").or_else(|| lib.sound_materials().ids().next()) {
        Some(id) => id,
        None => lib.add_unique(SoundMaterial::new("default"))?,
    };
    Ok((physics, sound))
}

/// The library material with this name, or whose name written as a Model 3D identifier is this
/// name (so that an exported `stone 2` comes back as `stone 2`, not as a new `stone_2`).
fn find_material(lib: &Library, name: &str) -> Option<MaterialId> {
    let mats = lib.materials();
    mats.id_of(name).or_else(|| mats.iter().find(|(_, m)| sanitize_identifier(&m.name) == name).map(|(id, _)| id))
}

/// The map material for a voxel type: matched by name, else created from its colour (or the
/// colour of the model material of the same name).
fn voxel_material(
    lib: &mut Library,
    model: &Model,
    t: &VoxelType,
    report: &mut ImportReport,
) -> Result<MaterialId, ImportError> {
    let named = t.name.as_deref().filter(|n| !n.is_empty());
    let color =
        named.and_then(|n| model.material_index(n)).and_then(|i| model.materials[i].diffuse()).unwrap_or(t.color);
    let [r, g, b, a] = color.to_rgba();
    let name = named.map_or_else(|| format!("m3d_{r:02x}{g:02x}{b:02x}"), str::to_owned);
    if let Some(id) = find_material(lib, &name) {
        let found = lib.get(id).map(|m| m.name.clone()).unwrap_or_default();
        if !report.materials_matched.contains(&found) {
            report.materials_matched.push(found);
        }
        return Ok(id);
    }
    let (physics, sound) = default_physics_sound(lib)?;
    let transparent = a != 0 && a != 255;
    let material = Material {
        color: [r, g, b],
        transparent,
        alpha: if transparent { a } else { 255 },
        ..Material::new(name, physics, sound)
    };
    let id = lib.add_unique(material)?;
    report.materials_created.push(lib.get(id).map(|m| m.name.clone()).unwrap_or_default());
    Ok(id)
}

/// Imports the voxels of `model` into level `level`: each voxel becomes a solid cube of edge
/// `2^cube_log2` lattice units, voxel `(0, 0, 0)` at lattice position `at`. Clear voxels make
/// their cube air; unset voxels leave the map alone. Voxel types become materials: an existing
/// material of the same name, else a new one with the type's colour. Of each alternate block
/// group only the most likely block is imported.
///
/// The whole model is checked against the level grid first: when that fails nothing changes.
/// Writes go through [`Level::fill_box`], one box per run of equal voxels along X.
pub fn import_voxels(
    map: &mut Map,
    level: usize,
    model: &Model,
    at: IVec3,
    cube_log2: u8,
) -> Result<ImportReport, ImportError> {
    if level >= map.levels.len() {
        return Err(ImportError::NoLevel(level));
    }
    if cube_log2 > MAX_CUBE_LOG2 {
        return Err(ImportError::Invalid(format!("voxel edge 2^{cube_log2} is larger than 2^{MAX_CUBE_LOG2}")));
    }
    if model.voxel_blocks.is_empty() {
        return Err(ImportError::Invalid("the model has no voxel data (import it as a mesh)".into()));
    }
    let mut report = ImportReport { source: model.source.to_string(), ..ImportReport::default() };
    report.warnings.extend(model.warnings.iter().cloned());
    let blocks = selected_blocks(model, &mut report.warnings);
    let edge = 1i64 << cube_log2;
    let origin = at.as_i64vec3();

    // Bounds first, in 64 bits: nothing changes when the model does not fit the grid.
    let mut bounds: Option<(I64Vec3, I64Vec3)> = None;
    for b in &blocks {
        if let Some((lo, hi)) = block_bounds(b) {
            let pos = IVec3::from_array(b.position).as_i64vec3();
            let (lo, hi) = (origin + (pos + lo) * edge, origin + (pos + hi) * edge);
            bounds = Some(bounds.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
        }
    }
    let Some((lo, hi)) = bounds else {
        report.warnings.push("every voxel of the model is unset; nothing imported".into());
        return Ok(report);
    };
    let grid = map.levels[level].frame().grid_box();
    if lo.cmplt(grid.min.as_i64vec3()).any() || hi.cmpgt(grid.max.as_i64vec3()).any() {
        return Err(ImportError::Invalid(format!(
            "the model covers lattice {:?}..{:?}, which reaches outside the level grid {:?}..{:?}",
            lo.to_array(),
            hi.to_array(),
            grid.min.to_array(),
            grid.max.to_array()
        )));
    }
    report.bounds = Some(LatticeBox::new(lo.as_ivec3(), hi.as_ivec3()));

    // Materials of the types in use.
    let mut used = vec![false; model.voxel_types.len()];
    for b in &blocks {
        for &v in &b.data {
            if let Some(u) = used.get_mut(usize::from(v)) {
                *u = true;
            }
        }
    }
    let mut cubes: Vec<Option<Cube>> = vec![None; model.voxel_types.len()];
    for (i, t) in model.voxel_types.iter().enumerate().filter(|(i, _)| used[*i]) {
        let id = voxel_material(&mut map.library, model, t, &mut report)?;
        let m = map.library.get(id).expect("just matched or created");
        cubes[i] = Some(Cube::solid(id, m.physics, m.sound));
    }

    let lvl = &mut map.levels[level];
    for b in &blocks {
        let [w, h, d] = b.size;
        let pos = IVec3::from_array(b.position).as_i64vec3();
        for y in 0..h {
            for z in 0..d {
                let row = &b.data[b.index(0, y, z)..b.index(0, y, z) + w as usize];
                let mut x = 0;
                while x < row.len() {
                    let v = row[x];
                    let run = row[x..].iter().take_while(|&&u| u == v).count();
                    if v != VOXEL_UNSET {
                        let cube = if v == VOXEL_CLEAR { Cube::EMPTY } else { cubes[usize::from(v)].expect("in use") };
                        // In 64 bits: only the sum is known to fit (it lies inside the grid).
                        let min = origin + (pos + I64Vec3::new(x as i64, i64::from(y), i64::from(z))) * edge;
                        let max = min + I64Vec3::new(run as i64, 1, 1) * edge;
                        let changes = lvl.fill_box(LatticeBox::new(min.as_ivec3(), max.as_ivec3()), cube)?;
                        report.changes.merge(&changes);
                        if v == VOXEL_CLEAR {
                            report.voxels_cleared += run as u64;
                        } else {
                            report.voxels_placed += run as u64;
                        }
                    }
                    x += run;
                }
            }
        }
    }
    Ok(report)
}

/// A name usable as one PAF path component: letters, digits, `-`, `_` and `.` (not leading);
/// anything else becomes `_`.
pub fn resource_name(name: &str) -> String {
    let s: String = name
        .chars()
        .enumerate()
        .map(|(i, c)| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || (c == '.' && i > 0) { c } else { '_' })
        .collect();
    if s.is_empty() { "model".to_owned() } else { s }
}

/// Imports a model file as a mesh resource: the file goes to `models/<name>.m3d` (`.a3d` for an
/// ASCII model), its inlined PNG assets to `textures/<name>_<i>.png`, and a prop entity with
/// model `map:models/<name>` is placed in the level at lattice position `at`. The map has no
/// resource list yet: the caller keeps [`ImportReport::resources`] for the compiler to embed.
pub fn import_mesh(
    map: &mut Map,
    level: usize,
    model_bytes: &[u8],
    name: &str,
    at: IVec3,
) -> Result<ImportReport, ImportError> {
    let model = m3d::read_any(model_bytes)?;
    mesh(map, level, &model, model_bytes, name, at)
}

fn mesh(
    map: &mut Map,
    level: usize,
    model: &Model,
    bytes: &[u8],
    name: &str,
    at: IVec3,
) -> Result<ImportReport, ImportError> {
    let lvl = map.levels.get_mut(level).ok_or(ImportError::NoLevel(level))?;
    if model.faces.is_empty() && model.voxel_blocks.is_empty() {
        return Err(ImportError::Invalid("the model has neither triangles nor voxels".into()));
    }
    let name = resource_name(name);
    let mut report = ImportReport {
        source: model.source.to_string(),
        triangles: model.faces.len() as u64,
        ..ImportReport::default()
    };
    report.warnings.extend(model.warnings.iter().cloned());
    let ext = if model.source == Source::Ascii { "a3d" } else { "m3d" };
    report.resources.push(ImportedResource { path: format!("models/{name}.{ext}"), bytes: bytes.to_vec() });
    let mut n = 0;
    for asset in &model.assets {
        if asset.is_png() {
            report
                .resources
                .push(ImportedResource { path: format!("textures/{name}_{n}.png"), bytes: asset.data.clone() });
            n += 1;
        } else {
            report.warnings.push(format!("inlined asset {:?} is not a PNG image; not exported", asset.name));
        }
    }
    for m in &model.materials {
        for tex in m.texture_maps() {
            if !model.assets.iter().any(|a| a.name == tex) {
                report.warnings.push(format!(
                    "material {:?} uses texture {tex:?}, which the model does not inline; add it to the map's \
                     textures yourself",
                    m.name
                ));
            }
        }
    }
    let position = lvl.frame().world_from_lattice(at).as_vec3().to_array();
    let prop = Prop { position, model: format!("map:models/{name}"), ..Prop::default() };
    let id = lvl.objects.add(MapEntity::new(name, EntityData::Prop(prop)))?;
    report.entities.push(id);
    Ok(report)
}

/// Cells of edge `2^cube_log2` covering `region`, per axis (the last cell may stick out).
fn cell_dims(region: &LatticeBox, cube_log2: u8) -> I64Vec3 {
    let edge = 1i64 << cube_log2;
    ((region.max - region.min).as_i64vec3() + I64Vec3::splat(edge - 1)) / edge
}

/// Where to import the model [`export_voxels`] writes for `region` so that it lands back on
/// `region`: the bottom centre cell of the region (the model is centred on X and Z).
pub fn export_origin(region: &LatticeBox, cube_log2: u8) -> IVec3 {
    let dims = cell_dims(region, cube_log2).as_ivec3();
    region.min + IVec3::new(dims.x / 2, 0, dims.z / 2) * (1 << cube_log2)
}

/// The lattice box of the level's solid cubes, `None` for a level without any.
pub fn occupied_box(level: &Level) -> Option<LatticeBox> {
    let frame = level.frame();
    level
        .leaves()
        .filter(|(_, _, c)| c.is_solid())
        .map(|(chunk, a, _)| a.translated(frame.chunk_min_lattice(chunk)).lattice_box())
        .reduce(|a, b| a.union(&b))
}

/// The voxel model of `region`: one voxel per cell of edge `2^cube_log2` lattice units, taken
/// from the cube at the cell's centre (air → unset; a cube with per-face materials gives its top
/// face's material). One voxel type per material used, named after it with its colour. The block
/// is centred on X and Z with Y = 0 at the region's bottom (see [`export_origin`]).
pub fn export_model(library: &Library, level: &Level, region: LatticeBox, cube_log2: u8) -> Result<Model, ImportError> {
    if region.is_empty() {
        return Err(ImportError::Invalid("the export box is empty".into()));
    }
    if cube_log2 > MAX_CUBE_LOG2 {
        return Err(ImportError::Invalid(format!("voxel edge 2^{cube_log2} is larger than 2^{MAX_CUBE_LOG2}")));
    }
    let grid = level.frame().grid_box();
    if !grid.contains_box(&region) {
        return Err(ImportError::Invalid(format!(
            "the export box {:?}..{:?} reaches outside the level grid",
            region.min.to_array(),
            region.max.to_array()
        )));
    }
    let dims = cell_dims(&region, cube_log2);
    let cells = (dims.x as u64).saturating_mul(dims.y as u64).saturating_mul(dims.z as u64);
    if cells > MAX_VOXEL_CELLS {
        return Err(ImportError::Invalid(format!(
            "the export box holds {cells} voxels of edge 2^{cube_log2}; at most {MAX_VOXEL_CELLS}"
        )));
    }
    let edge = 1i32 << cube_log2;
    let half = IVec3::splat(edge / 2);
    let last = region.max - IVec3::ONE;
    let mut types: Vec<VoxelType> = Vec::new();
    let mut index: HashMap<MaterialId, u16> = HashMap::new();
    let mut data = Vec::with_capacity(cells as usize);
    for y in 0..dims.y as i32 {
        for z in 0..dims.z as i32 {
            for x in 0..dims.x as i32 {
                let p = (region.min + IVec3::new(x, y, z) * edge + half).min(last);
                let (cube, _) = level.get(p)?;
                let v = match cube.face_material(Face::PosY) {
                    None => VOXEL_UNSET,
                    Some(id) => match index.get(&id) {
                        Some(&i) => i,
                        None => {
                            if types.len() >= 65534 {
                                return Err(ImportError::Invalid("more than 65534 materials in the box".into()));
                            }
                            let (name, color) = match library.get(id) {
                                Some(m) => {
                                    let a = if m.transparent { m.alpha } else { 255 };
                                    (m.name.clone(), [m.color[0], m.color[1], m.color[2], a])
                                }
                                None => (format!("missing_material_{}", id.0), [255, 0, 255, 255]),
                            };
                            let i = types.len() as u16;
                            types.push(VoxelType {
                                color: Rgba::from_rgba(color),
                                name: Some(name),
                                ..VoxelType::default()
                            });
                            index.insert(id, i);
                            i
                        }
                    },
                };
                data.push(v);
            }
        }
    }
    if types.is_empty() {
        return Err(ImportError::NoCubes);
    }
    let size = dims.as_uvec3().to_array();
    let block =
        VoxelBlock { position: [-(size[0] as i32 / 2), 0, -(size[2] as i32 / 2)], size, data, ..VoxelBlock::default() };
    let units = (dims.max_element() as f32) * (edge as f32) / 8.0;
    Ok(Model {
        name: if level.name.is_empty() { "pmfedit export".into() } else { level.name.clone() },
        scale: units / 2.0,
        voxel_types: types,
        voxel_blocks: vec![block],
        ..Model::default()
    })
}

/// Writes `region` of `level` as a zlib-compressed Model 3D voxel model ([`export_model`]).
pub fn export_voxels(
    library: &Library,
    level: &Level,
    region: LatticeBox,
    cube_log2: u8,
) -> Result<Vec<u8>, ImportError> {
    Ok(m3d::write_voxel_model(&export_model(library, level, region, cube_log2)?)?)
}

#[cfg(test)]
mod tests;
