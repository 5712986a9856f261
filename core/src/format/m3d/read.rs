//! The binary `.m3d` reader.

use std::io::Read;

use super::model::{
    Asset, Face, M3dError, MAX_VOXEL_CELLS, Material, Model, PropFormat, Property, PropertyValue, Rgba, SkippedChunk,
    Source, Types, VOXEL_CLEAR, VOXEL_UNSET, Vertex, VoxelBlock, VoxelItem, VoxelType, inflate_limit, magic_name,
    prop_format,
};
use crate::format::bin::{ReadErrorKind, ReadResult, Reader};

/// Reads a binary Model 3D file. See the [module documentation](super) for what is checked.
pub fn read(bytes: &[u8]) -> Result<Model, M3dError> {
    let mut r = Reader::new(bytes, "3DMO file header");
    let magic = r.array::<4>()?;
    if &magic == b"3dmo" {
        return Err(r.invalid_at(0, "this is an ASCII Model 3D (.a3d) file; read it with read_a3d").into());
    }
    if &magic != b"3DMO" {
        return Err(r.invalid_at(0, format!("not a Model 3D file (magic \"{}\")", magic_name(magic))).into());
    }
    let size = r.u32()?;
    if size < 8 || size as usize > bytes.len() {
        return Err(r
            .invalid_at(4, format!("the header says the file is {size} bytes, but it has {} bytes", bytes.len()))
            .into());
    }
    let mut r = Reader::with_base(&bytes[8..size as usize], 8, "PRVW chunk");
    let mut preview = None;
    if r.data().starts_with(b"PRVW") {
        r.skip(4)?;
        let len = r.u32()?;
        if len < 8 {
            return Err(r.invalid_at(12, format!("chunk length {len} is less than its 8-byte header")).into());
        }
        preview = Some(r.bytes(len as usize - 8)?.to_vec());
    }
    let payload_at = r.offset();
    let rest = &r.data()[r.position()..];
    let mut model = if rest.starts_with(b"HEAD") {
        parse_payload(rest, payload_at, "")?
    } else {
        let inflated = inflate(rest, payload_at)?;
        let mut m = parse_payload(&inflated, 0, " (inflated payload)")?;
        m.source = Source::BinaryCompressed;
        m
    };
    model.preview = preview;
    Ok(model)
}

/// Inflates a zlib stream, refusing output beyond [`inflate_limit`].
fn inflate(data: &[u8], offset: u64) -> Result<Vec<u8>, M3dError> {
    let limit = inflate_limit(data.len());
    let mut out = Vec::new();
    let mut decoder = flate2::read::ZlibDecoder::new(data).take(limit as u64 + 1);
    decoder.read_to_end(&mut out).map_err(|e| M3dError::Inflate { offset, reason: e.to_string() })?;
    if out.len() > limit {
        return Err(M3dError::InflateLimit { offset, compressed: data.len(), limit });
    }
    if !out.starts_with(b"HEAD") {
        return Err(M3dError::Inflate {
            offset,
            reason: "the payload neither starts with HEAD nor inflates to data starting with HEAD".into(),
        });
    }
    Ok(out)
}

/// Reads an index of `size` bytes as the reference loader does: `0xFE`/`0xFF` (16-bit:
/// `0xFFFE`/`0xFFFF`) are −2/−1, 32-bit indices are signed; size 0 reads nothing and is −1.
pub(super) fn index(r: &mut Reader<'_>, size: usize) -> ReadResult<i64> {
    Ok(match size {
        0 => -1,
        1 => {
            let v = r.u8()?;
            if v > 253 { i64::from(v as i8) } else { i64::from(v) }
        }
        2 => {
            let v = r.u16()?;
            if v > 65533 { i64::from(v as i16) } else { i64::from(v) }
        }
        _ => i64::from(r.i32()?),
    })
}

/// An unsigned field of `size` bytes (0 reads nothing and is 0).
fn unsigned(r: &mut Reader<'_>, size: usize) -> ReadResult<u64> {
    Ok(match size {
        0 => 0,
        1 => u64::from(r.u8()?),
        2 => u64::from(r.u16()?),
        _ => u64::from(r.u32()?),
    })
}

/// A signed field of `size` bytes (1, 2 or 4).
fn signed(r: &mut Reader<'_>, size: usize) -> ReadResult<i64> {
    Ok(match size {
        1 => i64::from(r.i8()?),
        2 => i64::from(r.i16()?),
        _ => i64::from(r.i32()?),
    })
}

/// The per-file widths, in bytes (0 = not in the file).
#[derive(Debug, Clone, Copy)]
struct Sizes {
    vc: usize,
    vi: usize,
    si: usize,
    ci: usize,
    ti: usize,
    bi: usize,
    nb: usize,
    sk: usize,
    vd: usize,
    vp: usize,
}

struct Parser<'a> {
    s: Sizes,
    strtab: &'a [u8],
    m: Model,
    bad_color_index: usize,
}

fn parse_payload(data: &[u8], base: u64, suffix: &str) -> Result<Model, M3dError> {
    let mut r = Reader::with_base(data, base, format!("HEAD chunk{suffix}"));
    let magic = r.array::<4>()?;
    if &magic != b"HEAD" {
        return Err(r.invalid_at(base, "the payload does not start with HEAD").into());
    }
    let len = r.u32()?;
    if len < 16 {
        return Err(r.invalid_at(base + 4, format!("HEAD length {len} is less than its 16-byte minimum")).into());
    }
    let mut head = r.sub(len as usize - 8, format!("HEAD chunk{suffix}"))?;
    let scale = head.f32()?;
    let types = Types(head.u32()?);
    let strtab = head.bytes(head.remaining())?;
    let s = Sizes {
        vc: types.coord(),
        vi: types.vertex_index(),
        si: types.string(),
        ci: types.color(),
        ti: types.texcoord(),
        bi: types.bone(),
        nb: types.bones_per_vertex(),
        sk: types.skin(),
        vd: types.voxel_dim(),
        vp: types.voxel_pixel(),
    };
    let types_at = base + 12;
    if s.vi == 0 || s.si == 0 {
        return Err(head.invalid_at(types_at, "the vertex index and string offset types must be defined").into());
    }
    if s.vp == 4 {
        return Err(head.invalid_at(types_at, "voxel pixel type 10 (32-bit) is not defined by the format").into());
    }

    let mut strings: Vec<String> = strtab.split(|&b| b == 0).map(|s| String::from_utf8_lossy(s).into_owned()).collect();
    if strtab.last() == Some(&0) {
        strings.pop();
    }
    let get = |i: usize| strings.get(i).cloned().unwrap_or_default();
    let m = Model {
        source: Source::Binary,
        scale: if scale > 0.0 && scale.is_finite() { scale } else { 1.0 },
        types: Some(types),
        name: get(0),
        license: get(1),
        author: get(2),
        description: get(3),
        strings,
        ..Model::default()
    };
    let mut p = Parser { s, strtab, m, bad_color_index: 0 };

    loop {
        let at = r.offset();
        r.set_section(format!("chunk list{suffix}"));
        if r.remaining() < 4 {
            return Err(r.invalid("the payload ends without the OMD3 end chunk").into());
        }
        let magic = r.array::<4>()?;
        if &magic == b"OMD3" {
            break;
        }
        let name = magic_name(magic);
        let len = r.u32()?;
        if len < 8 {
            return Err(r
                .invalid_at(at + 4, format!("{name} chunk length {len} is less than its 8-byte header"))
                .into());
        }
        if (len as usize - 8) > r.remaining() {
            return Err(r
                .invalid_at(
                    at + 4,
                    format!("{name} chunk declares {len} bytes, but only {} are left", r.remaining() + 8),
                )
                .into());
        }
        let mut c = r.sub(len as usize - 8, format!("{name} chunk{suffix}"))?;
        match &magic {
            b"CMAP" => p.cmap(&mut c)?,
            b"TMAP" => p.tmap(&mut c)?,
            b"VRTS" => p.vrts(&mut c)?,
            b"BONE" => p.bone(&mut c)?,
            b"MTRL" => p.mtrl(&mut c)?,
            b"MESH" => p.mesh(&mut c)?,
            b"VOXT" => p.voxt(&mut c)?,
            b"VOXD" => p.voxd(&mut c)?,
            b"ASET" => p.aset(&mut c)?,
            _ => p.m.skipped.push(SkippedChunk { magic: name, offset: at, length: u64::from(len) }),
        }
    }
    if p.bad_color_index > 0 {
        p.m.warnings.push(format!(
            "{} colour indices point past the colour map ({} colours); they read as transparent black",
            p.bad_color_index,
            p.m.colormap.len()
        ));
    }
    Ok(p.m)
}

impl Parser<'_> {
    /// A string table reference; `None` for offset 0.
    fn string(&self, r: &mut Reader<'_>) -> ReadResult<Option<String>> {
        let at = r.offset();
        let off = unsigned(r, self.s.si)?;
        if off == 0 {
            return Ok(None);
        }
        let Some(rest) = usize::try_from(off).ok().and_then(|o| self.strtab.get(o..)).filter(|s| !s.is_empty()) else {
            return Err(r.invalid_at(
                at,
                format!("string offset {off} is outside the string table ({} bytes)", self.strtab.len()),
            ));
        };
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Ok(Some(String::from_utf8_lossy(&rest[..end]).into_owned()))
    }

    fn color(&mut self, r: &mut Reader<'_>) -> ReadResult<Rgba> {
        Ok(match self.s.ci {
            0 => Rgba(0),
            4 => Rgba(r.u32()?),
            n => {
                let i = unsigned(r, n)? as usize;
                self.m.colormap.get(i).copied().unwrap_or_else(|| {
                    self.bad_color_index += 1;
                    Rgba(0)
                })
            }
        })
    }

    fn coord(&self, r: &mut Reader<'_>) -> ReadResult<f32> {
        Ok(match self.s.vc {
            1 => f32::from(r.i8()?) / 127.0,
            2 => f32::from(r.i16()?) / 32767.0,
            4 => r.f32()?,
            _ => r.f64()? as f32,
        })
    }

    /// Fails if the chunk is a second copy of a unique chunk.
    fn unique(&self, r: &Reader<'_>, seen: bool) -> ReadResult<()> {
        if seen { Err(r.invalid_at(r.offset() - 8, "this chunk may appear only once")) } else { Ok(()) }
    }

    fn skip_chunk(&mut self, r: &mut Reader<'_>, why: &str) -> ReadResult<()> {
        let magic = r.section().split(' ').next().unwrap_or_default().to_owned();
        let offset = r.offset() - 8;
        self.m.warnings.push(format!("{magic} chunk at byte {offset} skipped: {why}"));
        self.m.skipped.push(SkippedChunk { magic, offset, length: r.remaining() as u64 + 8 });
        r.skip(r.remaining())
    }

    fn records(r: &Reader<'_>, reclen: usize, what: &'static str) -> ReadResult<usize> {
        if !r.remaining().is_multiple_of(reclen) {
            return Err(
                r.invalid(format!("chunk length {} is not a whole number of {reclen}-byte {what}", r.remaining()))
            );
        }
        r.count((r.remaining() / reclen) as u64, reclen, what)
    }

    fn cmap(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        self.unique(r, !self.m.colormap.is_empty())?;
        let n = Self::records(r, 4, "colours")?;
        self.m.colormap = (0..n).map(|_| r.u32().map(Rgba)).collect::<ReadResult<_>>()?;
        Ok(())
    }

    fn tmap(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        self.unique(r, !self.m.texcoords.is_empty())?;
        if self.s.ti == 0 {
            return self.skip_chunk(r, "the header's texture index type is undefined");
        }
        let n = Self::records(r, 2 * self.s.vc, "texture coordinates")?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut uv = [0.0; 2];
            for v in &mut uv {
                *v = match self.s.vc {
                    1 => f32::from(r.u8()?) / 255.0,
                    2 => f32::from(r.u16()?) / 65535.0,
                    4 => r.f32()?,
                    _ => r.f64()? as f32,
                };
            }
            out.push(uv);
        }
        self.m.texcoords = out;
        Ok(())
    }

    fn vrts(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        self.unique(r, !self.m.vertices.is_empty())?;
        let n = Self::records(r, 4 * self.s.vc + self.s.ci + self.s.sk, "vertices")?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut position = [0.0; 4];
            for v in &mut position {
                *v = self.coord(r)?;
            }
            let color = if self.s.ci > 0 { Some(self.color(r)?) } else { None };
            let skin = index(r, self.s.sk)? as i32;
            out.push(Vertex { position, color, skin });
        }
        self.m.vertices = out;
        Ok(())
    }

    fn bone(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        self.unique(r, self.m.bone_count > 0)?;
        if self.s.bi == 0 {
            return self.skip_chunk(r, "the header's bone index type is undefined");
        }
        let at = r.offset();
        let bones = unsigned(r, self.s.bi)?;
        let skins = unsigned(r, self.s.sk)?;
        let bone_len = self.s.bi + self.s.si + 2 * self.s.vi;
        self.m.bone_count = r.count(bones, bone_len, "bones").map_err(|e| at_offset(e, at))?;
        // A skin record holds at least one bone index (or its weights).
        let skin_min = if self.s.nb == 1 { self.s.bi } else { self.s.nb };
        let after_bones = r.remaining().saturating_sub(self.m.bone_count * bone_len);
        if skins.saturating_mul(skin_min.max(1) as u64) > after_bones as u64 {
            return Err(r.error_at(
                at,
                ReadErrorKind::CountTooLarge {
                    what: "skin records",
                    count: skins,
                    min_size: skin_min.max(1) as u64,
                    available: after_bones as u64,
                },
            ));
        }
        self.m.skin_count = skins as usize;
        // The hierarchy and the skin are not decoded: the chunk length bounds them.
        r.skip(r.remaining())
    }

    fn material_slot(&mut self, name: &str) -> usize {
        match self.m.material_index(name) {
            Some(i) => i,
            None => {
                self.m.materials.push(Material { name: name.to_owned(), properties: Vec::new(), defined: false });
                self.m.materials.len() - 1
            }
        }
    }

    fn mtrl(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        let at = r.offset() - 8;
        let name = self.string(r)?.unwrap_or_else(|| format!("material{}", self.m.materials.len()));
        let mut props = Vec::new();
        while !r.is_empty() {
            let pat = r.offset();
            let id = r.u8()?;
            let value = if id >= 128 {
                match self.string(r)? {
                    Some(s) if !s.is_empty() => PropertyValue::Map(s),
                    // No texture (offset 0 or an empty name).
                    _ => continue,
                }
            } else {
                match prop_format(id) {
                    Some(PropFormat::Color) => PropertyValue::Color(self.color(r)?),
                    Some(PropFormat::Float) => PropertyValue::Float(r.f32()?),
                    Some(PropFormat::U8) => PropertyValue::Int(u32::from(r.u8()?)),
                    None => {
                        self.m.warnings.push(format!(
                            "material {name:?}: unknown property {id} at byte {pat}; the rest of its chunk is skipped"
                        ));
                        r.skip(r.remaining())?;
                        break;
                    }
                }
            };
            props.push(Property { id, value });
        }
        let slot = self.material_slot(&name);
        let m = &mut self.m.materials[slot];
        if m.defined {
            self.m
                .warnings
                .push(format!("MTRL chunk at byte {at}: material {name:?} is defined twice; kept the first"));
        } else {
            m.properties = props;
            m.defined = true;
        }
        Ok(())
    }

    fn vertex_ref(&self, r: &mut Reader<'_>, what: &str) -> ReadResult<Option<u32>> {
        let at = r.offset();
        let v = index(r, self.s.vi)?;
        if v < 0 {
            return Ok(None);
        }
        if v as usize >= self.m.vertices.len() {
            return Err(r.invalid_at(
                at,
                format!(
                    "{what} index {v} is out of range ({} vertices; VRTS must precede MESH)",
                    self.m.vertices.len()
                ),
            ));
        }
        Ok(Some(v as u32))
    }

    fn mesh(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        let mut material = None;
        while !r.is_empty() {
            let at = r.offset();
            let magic = r.u8()?;
            let (points, kind) = (magic >> 4, magic & 15);
            if points == 0 {
                let name = self.string(r)?;
                if kind == 0 {
                    material = name.map(|n| self.material_slot(&n));
                }
                continue;
            }
            if points != 3 {
                return Err(r.invalid_at(at, format!("polygon of {points} points; only triangles are supported")));
            }
            let mut face = Face { material, ..Face::default() };
            for j in 0..3 {
                face.vertices[j] = self.vertex_ref(r, "vertex")?.ok_or_else(|| r.invalid("undefined vertex index"))?;
                if kind & 1 != 0 {
                    let tat = r.offset();
                    let t = index(r, self.s.ti)?;
                    if t >= 0 {
                        if t as usize >= self.m.texcoords.len() {
                            return Err(r.invalid_at(
                                tat,
                                format!(
                                    "texture coordinate index {t} is out of range ({} in TMAP)",
                                    self.m.texcoords.len()
                                ),
                            ));
                        }
                        face.texcoords[j] = Some(t as u32);
                    }
                }
                if kind & 2 != 0 {
                    face.normals[j] = self.vertex_ref(r, "normal")?;
                }
                if kind & 4 != 0 {
                    r.skip(self.s.vi)?;
                }
            }
            self.m.faces.push(face);
        }
        Ok(())
    }

    fn voxt(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        self.unique(r, !self.m.voxel_types.is_empty())?;
        let min = self.s.ci + self.s.si + 3 + self.s.sk;
        let mut out = Vec::with_capacity(r.remaining() / min);
        while !r.is_empty() {
            let color = self.color(r)?;
            let name = self.string(r)?;
            let info = r.u8()?;
            let shape = u16::from(r.u8()?) | (u16::from(info & 0x40) << 2);
            let count = r.u8()?;
            let skin = index(r, self.s.sk)? as i32;
            let mut items = Vec::with_capacity(count as usize);
            for _ in 0..count {
                items.push(VoxelItem { count: r.u16()?, name: self.string(r)? });
            }
            out.push(VoxelType { color, name, rotation: info & 0xBF, shape, skin, items });
        }
        self.m.voxel_types = out;
        Ok(())
    }

    fn voxd(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        let (vd, vp) = (self.s.vd, self.s.vp);
        if vd == 0 || vp == 0 {
            return Err(r.invalid_at(
                r.offset() - 8,
                "voxel data, but the header leaves the voxel dimension or voxel pixel type undefined",
            ));
        }
        // m3d.h refuses voxel data without a voxel type list before it (M3D_ERR_VOXT).
        if self.m.voxel_types.is_empty() {
            return Err(r.invalid_at(r.offset() - 8, "voxel data without a VOXT chunk (voxel types) before it"));
        }
        let name = self.string(r)?;
        let mut position = [0i32; 3];
        for p in &mut position {
            *p = signed(r, vd)? as i32;
        }
        let size_at = r.offset();
        let mut size = [0u32; 3];
        for s in &mut size {
            *s = unsigned(r, vd)? as u32;
        }
        let uncertainty = r.u8()?;
        let group = r.u8()?;
        let cells = size.iter().map(|&s| u64::from(s)).product::<u64>();
        let used: u64 = self.m.voxel_blocks.iter().map(|b| b.data.len() as u64).sum();
        if cells > MAX_VOXEL_CELLS - used {
            return Err(r.invalid_at(
                size_at,
                format!(
                    "block of {}×{}×{} voxels: the model would hold more than {MAX_VOXEL_CELLS} voxel cells",
                    size[0], size[1], size[2]
                ),
            ));
        }
        // One RLE record of at least 2 bytes fills at most 128 cells.
        if cells > 64 * r.remaining() as u64 {
            return Err(r.invalid_at(
                size_at,
                format!(
                    "block of {}×{}×{} voxels cannot be encoded in the {} bytes left in the chunk",
                    size[0],
                    size[1],
                    size[2],
                    r.remaining()
                ),
            ));
        }
        let cells = cells as usize;
        let types = self.m.voxel_types.len();
        let pixel = |r: &mut Reader<'_>| -> ReadResult<u16> {
            let at = r.offset();
            match index(r, vp)? {
                -1 => Ok(VOXEL_UNSET),
                -2 => Ok(VOXEL_CLEAR),
                v if v >= 0 && (v as usize) < types => Ok(v as u16),
                v => Err(r.invalid_at(at, format!("voxel type {v} is out of range ({types} types in VOXT)"))),
            }
        };
        let mut data = Vec::with_capacity(cells);
        while data.len() < cells {
            let at = r.offset();
            let rec =
                r.u8().map_err(|_| r.invalid(format!("the RLE data ends after {} of {cells} voxels", data.len())))?;
            let n = usize::from(rec & 0x7F) + 1;
            if data.len() + n > cells {
                return Err(r.invalid_at(
                    at,
                    format!("RLE record of {n} voxels overflows the block ({} of {cells} filled)", data.len()),
                ));
            }
            if rec & 0x80 != 0 {
                let v = pixel(r)?;
                data.resize(data.len() + n, v);
            } else {
                for _ in 0..n {
                    data.push(pixel(r)?);
                }
            }
        }
        if !r.is_empty() {
            self.m.warnings.push(format!("VOXD chunk: {} bytes after the voxel data ignored", r.remaining()));
            r.skip(r.remaining())?;
        }
        self.m.voxel_blocks.push(VoxelBlock { name, position, size, uncertainty, group, data });
        Ok(())
    }

    fn aset(&mut self, r: &mut Reader<'_>) -> ReadResult<()> {
        let name = self.string(r)?.unwrap_or_default();
        let data = r.bytes(r.remaining())?.to_vec();
        self.m.assets.push(Asset { name, data });
        Ok(())
    }
}

/// Moves a count error to the offset where the count was read.
fn at_offset(mut e: crate::format::bin::ReadError, at: u64) -> crate::format::bin::ReadError {
    e.offset = at;
    e
}
