//! The voxel model writer.

use std::collections::HashMap;
use std::io::Write as _;

use super::model::{M3dError, Model, VOXEL_CLEAR, VOXEL_UNSET, sanitize_identifier};
use crate::format::bin::Writer;

/// Builds the string table: the four header strings, then identifiers, deduplicated.
struct Strings {
    table: Vec<u8>,
    offsets: HashMap<String, u32>,
}

impl Strings {
    fn new(header: [&str; 4]) -> Self {
        let mut table = Vec::new();
        for (i, s) in header.iter().enumerate() {
            // The first three may hold spaces but no control characters; the description may hold
            // newlines. None may hold NUL.
            let clean: String =
                s.chars().filter(|&c| c != '\0' && c != '\r' && (i == 3 && c == '\n' || !c.is_control())).collect();
            table.extend_from_slice(clean.as_bytes());
            table.push(0);
        }
        Self { table, offsets: HashMap::new() }
    }

    /// Adds an identifier (sanitized); returns its offset (never 0).
    fn add(&mut self, s: &str) -> u32 {
        let s = sanitize_identifier(s);
        if let Some(&o) = self.offsets.get(&s) {
            return o;
        }
        let o = self.table.len() as u32;
        self.table.extend_from_slice(s.as_bytes());
        self.table.push(0);
        self.offsets.insert(s, o);
        o
    }
}

/// `types` field value and byte size for an index that must hold `max` (values 254/255 and
/// 65534/65535 are reserved by the format's −2/−1).
fn index_width(max: u64) -> (u32, usize) {
    if max <= 253 {
        (0, 1)
    } else if max <= 65533 {
        (1, 2)
    } else {
        (2, 4)
    }
}

fn put(w: &mut Writer, size: usize, v: u64) {
    match size {
        1 => w.u8(v as u8),
        2 => w.u16(v as u16),
        _ => w.u32(v as u32),
    }
}

/// Writes a voxel model: `HEAD` (scale, types, string table), `VOXT` (colours inline, names),
/// one `VOXD` per block (RLE) and `OMD3`, zlib-compressed behind the `3DMO` header. Meshes,
/// materials and the other parts of `model` are not written.
///
/// Voxel type names are written as Model 3D identifiers (spaces and slashes become `_`).
///
/// A model the reader (and m3d.h) would refuse is not written: voxel blocks need voxel types
/// ([`M3dError::NoVoxelTypes`]), and the bytes are read back before they are returned.
pub fn write_voxel_model(model: &Model) -> Result<Vec<u8>, M3dError> {
    if model.voxel_types.is_empty() && !model.voxel_blocks.is_empty() {
        return Err(M3dError::NoVoxelTypes);
    }
    let mut strings = Strings::new([&model.name, &model.license, &model.author, &model.description]);
    let type_names: Vec<u32> =
        model.voxel_types.iter().map(|t| t.name.as_deref().map_or(0, |n| strings.add(n))).collect();
    let item_names: Vec<Vec<u32>> = model
        .voxel_types
        .iter()
        .map(|t| t.items.iter().map(|i| i.name.as_deref().map_or(0, |n| strings.add(n))).collect())
        .collect();
    let block_names: Vec<u32> =
        model.voxel_blocks.iter().map(|b| b.name.as_deref().map_or(0, |n| strings.add(n))).collect();

    let ntypes = model.voxel_types.len();
    if ntypes > 65534 {
        return Err(M3dError::Write(format!("{ntypes} voxel types; at most 65534 fit a voxel pixel")));
    }
    let (vp_field, vp) = if ntypes <= 254 { (0, 1) } else { (1, 2) };
    let (si_field, si) = index_width(strings.table.len() as u64);
    let mut dim_range = (0i64, 0i64);
    for b in &model.voxel_blocks {
        let cells = b.size.iter().map(|&s| s as usize).product::<usize>();
        if b.data.len() != cells {
            return Err(M3dError::Write(format!("a block of size {:?} has {} cells", b.size, b.data.len())));
        }
        if let Some(&v) = b.data.iter().find(|&&v| v != VOXEL_UNSET && v != VOXEL_CLEAR && v as usize >= ntypes) {
            return Err(M3dError::Write(format!("voxel type {v} is out of range ({ntypes} types)")));
        }
        for &p in &b.position {
            dim_range = (dim_range.0.min(i64::from(p)), dim_range.1.max(i64::from(p)));
        }
        for &s in &b.size {
            dim_range.1 = dim_range.1.max(i64::from(s));
        }
    }
    // Positions are signed, sizes unsigned; the reference writer picks the width from both.
    let (vd_field, vd) = if dim_range.0 >= -128 && dim_range.1 <= 127 {
        (0, 1)
    } else if dim_range.0 >= -32768 && dim_range.1 <= 32767 {
        (1, 2)
    } else {
        (2, 4)
    };
    let types: u32 = 2 // vc_t float
        | (si_field << 4)
        | (2 << 6) // ci_t: colours inline
        | (3 << 8) // no texture coordinates
        | (3 << 10) // no bones
        | (3 << 14) // no skin
        | (3 << 18) // no shapes
        | (3 << 20) // no faces
        | (vd_field << 22)
        | (vp_field << 24);

    let mut w = Writer::new();
    w.bytes(b"HEAD");
    w.u32(16 + strings.table.len() as u32);
    w.f32(if model.scale > 0.0 && model.scale.is_finite() { model.scale } else { 1.0 });
    w.u32(types);
    w.bytes(&strings.table);

    if !model.voxel_types.is_empty() {
        w.bytes(b"VOXT");
        let len = w.reserve_u32();
        let start = w.len() - 8;
        for (i, t) in model.voxel_types.iter().enumerate() {
            if t.items.len() > 255 {
                return Err(M3dError::Write(format!("voxel type {i} has {} items; at most 255", t.items.len())));
            }
            w.u32(t.color.0);
            put(&mut w, si, u64::from(type_names[i]));
            w.u8((t.rotation & 0xBF) | (((t.shape >> 2) & 0x40) as u8));
            w.u8(t.shape as u8);
            w.u8(t.items.len() as u8);
            for (item, &name) in t.items.iter().zip(&item_names[i]) {
                w.u16(item.count);
                put(&mut w, si, u64::from(name));
            }
        }
        w.patch_u32(len, (w.len() - start) as u32);
    }

    for (b, &name) in model.voxel_blocks.iter().zip(&block_names) {
        w.bytes(b"VOXD");
        let len = w.reserve_u32();
        let start = w.len() - 8;
        put(&mut w, si, u64::from(name));
        for &p in &b.position {
            put(&mut w, vd, p as u32 as u64);
        }
        for &s in &b.size {
            put(&mut w, vd, u64::from(s));
        }
        w.u8(b.uncertainty);
        w.u8(b.group);
        rle(&mut w, &b.data, vp);
        let n = w.len() - start;
        let n = u32::try_from(n).map_err(|_| M3dError::Write(format!("a VOXD chunk of {n} bytes")))?;
        w.patch_u32(len, n);
    }
    w.bytes(b"OMD3");

    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(w.as_slice()).map_err(|e| M3dError::Write(e.to_string()))?;
    let compressed = z.finish().map_err(|e| M3dError::Write(e.to_string()))?;
    let total = u32::try_from(compressed.len() + 8)
        .map_err(|_| M3dError::Write(format!("{} bytes compressed", compressed.len())))?;
    let mut out = Vec::with_capacity(compressed.len() + 8);
    out.extend_from_slice(b"3DMO");
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&compressed);
    // The checks above mirror the reader's; reading back catches whatever they miss.
    super::read(&out).map_err(|e| M3dError::Write(format!("the model would not read back: {e}")))?;
    Ok(out)
}

fn pixel(w: &mut Writer, vp: usize, v: u16) {
    let raw = match (v, vp) {
        (VOXEL_UNSET, 1) => 0xFF,
        (VOXEL_CLEAR, 1) => 0xFE,
        (v, _) => v,
    };
    put(w, vp, u64::from(raw));
}

/// The format's RLE: `0x80 | (n − 1)` + one pixel for a run, `n − 1` + `n` pixels for literals.
fn rle(w: &mut Writer, data: &[u16], vp: usize) {
    let mut i = 0;
    while i < data.len() {
        let mut run = 1;
        while i + run < data.len() && run < 128 && data[i + run] == data[i] {
            run += 1;
        }
        if run >= 2 {
            w.u8(0x80 | (run - 1) as u8);
            pixel(w, vp, data[i]);
            i += run;
            continue;
        }
        let start = i;
        while i < data.len() && i - start < 128 && !(i + 1 < data.len() && data[i + 1] == data[i]) {
            i += 1;
        }
        if i == start {
            // A run starts right here: emit it on the next turn.
            continue;
        }
        w.u8((i - start - 1) as u8);
        for &v in &data[start..i] {
            pixel(w, vp, v);
        }
    }
}
