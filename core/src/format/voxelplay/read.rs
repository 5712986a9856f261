//! The reader: the header and the body. The layouts are in `layout`, the format 5/6 search is in
//! `resolve`.

use std::sync::Arc;

use super::layout::{Header, ITEM_SIZE, Layout, RUN_SIZE, TailLayout};
use super::resolve;
use super::{
    Chunk, CustomSection, GameObject, Item, ItemOrder, LightSource, ReadOptions, Resolution, ResolutionMethod, RunTail,
    SectionLength, TailKind, VoxelPlayError, VoxelProperties, VoxelProperty, VoxelRun, WorldSave,
};
use crate::format::bin::{ReadErrorKind, ReadResult, Reader};

/// Reads a .NET `BinaryWriter` string: 7-bit-encoded byte length (at most 5 bytes, at most
/// `i32::MAX`), then that many bytes of UTF-8.
pub(super) fn read_string(r: &mut Reader<'_>) -> ReadResult<String> {
    let start = r.offset();
    let mut len: u64 = 0;
    let mut i = 0;
    loop {
        if i == 5 {
            return Err(r.invalid_at(start, "string length prefix is longer than 5 bytes"));
        }
        let b = r.u8()?;
        len |= u64::from(b & 0x7F) << (7 * i);
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    if len > i32::MAX as u64 {
        return Err(r.invalid_at(start, format!("string length {len} is negative as a .NET Int32")));
    }
    if len > r.remaining() as u64 {
        return Err(r.error(ReadErrorKind::Truncated { needed: len, available: r.remaining() as u64 }));
    }
    let at = r.offset();
    let bytes = r.bytes(len as usize)?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => Err(r.invalid_at(at + e.valid_up_to() as u64, "string is not valid UTF-8")),
    }
}

/// A list of strings after an `Int16` count.
fn read_string_list(r: &mut Reader<'_>, what: &'static str) -> ReadResult<Vec<String>> {
    let n = r.u16()?;
    let n = r.count(u64::from(n), 1, what)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(read_string(r)?);
    }
    Ok(out)
}

/// Reads the header of a file whose format byte is known to be supported.
pub(super) fn read_header(data: &[u8], layout: Layout) -> ReadResult<Header> {
    let mut r = Reader::new(data, "header");
    r.u8()?;
    let chunk_size = if layout.chunk_size_byte {
        let at = r.offset();
        let s = r.u8()?;
        if s != 16 && s != 32 {
            return Err(r.invalid_at(at, format!("chunk size {s} is neither 16 nor 32")));
        }
        s
    } else {
        16
    };
    let character_position = r.f32s()?;
    let character_rotation = r.f32s()?;
    let camera_rotation = r.f32s()?;
    r.set_section("voxel definitions");
    let voxel_definitions = read_string_list(&mut r, "voxel definitions")?;
    let item_definitions = if layout.item_definitions {
        r.set_section("item definitions");
        read_string_list(&mut r, "item definitions")?
    } else {
        Vec::new()
    };
    r.set_section("chunk count");
    let at = r.offset();
    let n = r.i32()?;
    if n < 0 {
        return Err(r.invalid_at(at, format!("negative chunk count {n}")));
    }
    let chunk_count = r.count(n as u64, layout.min_chunk_size(), "chunks")?;
    Ok(Header {
        layout,
        chunk_size,
        character_position,
        character_rotation,
        camera_rotation,
        voxel_definitions,
        item_definitions,
        chunk_count,
        body_start: r.position(),
    })
}

/// Reads a run tail of a known kind.
pub(super) fn read_tail(r: &mut Reader<'_>, kind: TailKind) -> ReadResult<RunTail> {
    Ok(match kind {
        TailKind::Plain => RunTail::Plain,
        TailKind::Flags => RunTail::Flags(r.u8()?),
        TailKind::Custom => {
            let marker = r.u8()?;
            let angles = if marker == 1 { Some(r.f32s()?) } else { None };
            RunTail::Custom { marker, angles }
        }
        TailKind::FlagsAndRotation => {
            let flags = r.u8()?;
            let marker = r.u8()?;
            let angles = if marker == 1 { Some(r.f32s()?) } else { None };
            RunTail::FlagsAndRotation { flags, marker, angles }
        }
    })
}

/// Reads one chunk. `tail_of(definition)` says what follows each run.
fn read_chunk(r: &mut Reader<'_>, h: &Header, tail_of: &dyn Fn(u16) -> TailKind) -> ReadResult<Chunk> {
    let l = h.layout;
    let position = r.f32s()?;
    let above_surface = r.u8()?;
    let populated = if l.populated_byte { Some(r.u8()?) } else { None };

    let n = r.u16()?;
    let n = r.count(u64::from(n), RUN_SIZE, "runs")?;
    let mut runs = Vec::with_capacity(n);
    let volume = h.volume();
    for _ in 0..n {
        let at = r.offset();
        let definition = r.u16()?;
        if usize::from(definition) >= h.voxel_definitions.len() {
            return Err(r.invalid_at(
                at,
                format!("voxel definition index {definition} out of range ({} definitions)", h.voxel_definitions.len()),
            ));
        }
        let color = r.array()?;
        let start = r.u16()?;
        let repetitions = r.u16()?;
        if u32::from(start) + u32::from(repetitions) > volume {
            return Err(r.invalid_at(
                at,
                format!("run of {repetitions} voxels from index {start} leaves the chunk of {volume} voxels"),
            ));
        }
        let tail = read_tail(r, tail_of(definition))?;
        runs.push(VoxelRun { definition, color, start, repetitions, tail });
    }

    let n = r.u16()?;
    let n = r.count(u64::from(n), l.light_size(), "light sources")?;
    let mut light_sources = Vec::with_capacity(n);
    for _ in 0..n {
        let voxel_index = r.u16()?;
        let normal = r.f32s()?;
        let item_definition = if l.light_item { Some(r.i16()?) } else { None };
        light_sources.push(LightSource { voxel_index, normal, item_definition });
    }

    let mut items = Vec::new();
    if l.items {
        let n = r.u16()?;
        let n = r.count(u64::from(n), ITEM_SIZE, "items")?;
        items.reserve_exact(n);
        for _ in 0..n {
            let definition = r.i16()?;
            let position = r.f32s()?;
            let quantity = r.i16()?;
            items.push(Item { definition, position, quantity });
        }
    }

    let mut voxel_properties = Vec::new();
    if l.voxel_properties {
        let n = r.u16()?;
        let n = r.count(u64::from(n), 4, "voxels with custom properties")?;
        voxel_properties.reserve_exact(n);
        for _ in 0..n {
            let voxel_index = r.u16()?;
            let m = r.u16()?;
            let m = r.count(u64::from(m), 9, "custom voxel properties")?;
            let mut properties = Vec::with_capacity(m);
            for _ in 0..m {
                let id = r.i32()?;
                let float_value = r.f32()?;
                let string_value = read_string(r)?;
                properties.push(VoxelProperty { id, float_value, string_value });
            }
            voxel_properties.push(VoxelProperties { voxel_index, properties });
        }
    }

    Ok(Chunk { position, above_surface, populated, runs, light_sources, items, voxel_properties })
}

fn read_game_objects(r: &mut Reader<'_>) -> ReadResult<Vec<GameObject>> {
    let n = r.u16()?;
    let n = r.count(u64::from(n), 1 + 1 + 36 + 2, "game objects")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let prefab_path = read_string(r)?;
        let name = read_string(r)?;
        let position = r.f32s()?;
        let rotation = r.f32s()?;
        let scale = r.f32s()?;
        let m = r.u16()?;
        let m = r.count(u64::from(m), 2, "game object data values")?;
        let mut data = Vec::with_capacity(m);
        for _ in 0..m {
            let key = read_string(r)?;
            let value = read_string(r)?;
            data.push((key, value));
        }
        out.push(GameObject { prefab_path, name, position, rotation, scale, data });
    }
    Ok(out)
}

/// Reads the custom sections with lengths of `width` and requires the end of the file after them.
fn read_sections(mut r: Reader<'_>, width: SectionLength) -> ReadResult<Vec<CustomSection>> {
    let n = r.u16()?;
    let min = 1 + if width == SectionLength::I32 { 4 } else { 2 };
    let n = r.count(u64::from(n), min, "custom data sections")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let name = read_string(&mut r)?;
        let at = r.offset();
        let len = match width {
            SectionLength::I32 => {
                let len = r.i32()?;
                if len < 0 {
                    return Err(r.invalid_at(at, format!("negative custom data section length {len}")));
                }
                len as u64
            }
            SectionLength::I16 => u64::from(r.u16()?),
        };
        if len > r.remaining() as u64 {
            return Err(r.error(ReadErrorKind::Truncated { needed: len, available: r.remaining() as u64 }));
        }
        let data = r.bytes(len as usize)?.to_vec();
        out.push(CustomSection { name, data });
    }
    r.expect_end()?;
    Ok(out)
}

/// Everything after the header.
pub(super) struct Body {
    pub chunks: Vec<Chunk>,
    pub game_objects: Vec<GameObject>,
    pub custom_sections: Vec<CustomSection>,
    pub section_length: Option<SectionLength>,
}

/// Reads the chunks and everything after them. `tail_of(definition)` says what follows each run.
pub(super) fn read_body(data: &[u8], h: &Header, tail_of: &dyn Fn(u16) -> TailKind) -> ReadResult<Body> {
    let body = &data[h.body_start..];
    let mut r = Reader::with_base(body, h.body_start as u64, "chunks");
    let mut chunks = Vec::with_capacity(h.chunk_count);
    for i in 0..h.chunk_count {
        r.set_section(Arc::from(format!("chunk {i}")));
        chunks.push(read_chunk(&mut r, h, tail_of)?);
    }
    let mut game_objects = Vec::new();
    if h.layout.game_objects {
        r.set_section("game objects");
        game_objects = read_game_objects(&mut r)?;
    }
    if !h.layout.custom_sections {
        r.set_section("end of file");
        r.expect_end()?;
        return Ok(Body { chunks, game_objects, custom_sections: Vec::new(), section_length: None });
    }
    r.set_section("custom data sections");
    // What Voxel Play writes (Int32 lengths) first, then what the specification says (Int16).
    let (custom_sections, width) = match read_sections(r.clone(), SectionLength::I32) {
        Ok(s) => (s, SectionLength::I32),
        Err(e32) => match read_sections(r, SectionLength::I16) {
            Ok(s) => (s, SectionLength::I16),
            // Report the reading that got further.
            Err(e16) => return Err(if e16.offset > e32.offset { e16 } else { e32 }),
        },
    };
    Ok(Body { chunks, game_objects, custom_sections, section_length: Some(width) })
}

/// Reads a Voxel Play world save (formats 5 to 14). See the [module documentation](super).
pub fn read_world(data: &[u8], options: &ReadOptions) -> Result<WorldSave, VoxelPlayError> {
    let &version = data.first().ok_or(VoxelPlayError::Empty)?;
    let layout = Layout::of(version).ok_or(VoxelPlayError::UnsupportedVersion(version))?;
    let header = read_header(data, layout)?;

    let (kinds, resolution) = match layout.tail {
        TailLayout::Flags => (None, None),
        TailLayout::FlagsAndRotation => (None, None),
        TailLayout::PerDefinition => {
            let (kinds, resolution) = match &options.transparent_voxels {
                Some(list) => user_kinds(&header, list, &options.custom_voxels),
                None => resolve::search(data, &header, options)?,
            };
            (Some(kinds), Some(resolution))
        }
    };
    let tail_of = |d: u16| match (layout.tail, &kinds) {
        (TailLayout::Flags, _) => TailKind::Flags,
        (TailLayout::FlagsAndRotation, _) => TailKind::FlagsAndRotation,
        (TailLayout::PerDefinition, Some(k)) => k.get(usize::from(d)).copied().flatten().unwrap_or(TailKind::Plain),
        (TailLayout::PerDefinition, None) => TailKind::Plain,
    };
    let Body { mut chunks, game_objects, custom_sections, section_length } = read_body(data, &header, &tail_of)?;
    let item_order = if matches!(version, 11 | 12) {
        settle_item_order(&mut chunks, header.chunk_size)
    } else {
        ItemOrder::PositionFirst
    };
    Ok(WorldSave {
        version,
        chunk_size: header.chunk_size,
        character_position: header.character_position,
        character_rotation: header.character_rotation,
        camera_rotation: header.camera_rotation,
        voxel_definitions: header.voxel_definitions,
        item_definitions: header.item_definitions,
        chunks,
        game_objects,
        custom_sections,
        section_length,
        item_order,
        resolution,
    })
}

/// Formats 11 and 12: re-reads the items quantity-first if more of them then lie in or next to
/// their chunk (see the module documentation). The records are the same 16 bytes either way.
fn settle_item_order(chunks: &mut [Chunk], chunk_size: u8) -> ItemOrder {
    let reach = f32::from(chunk_size) * 1.5;
    let near = |it: &Item, c: &Chunk| (0..3).all(|k| (it.position[k] - c.position[k]).abs() <= reach);
    let (mut as_read, mut swapped) = (0usize, 0usize);
    for c in chunks.iter() {
        for it in &c.items {
            as_read += usize::from(near(it, c));
            swapped += usize::from(near(&quantity_first(it), c));
        }
    }
    if swapped <= as_read {
        return ItemOrder::PositionFirst;
    }
    for c in chunks {
        for it in &mut c.items {
            *it = quantity_first(it);
        }
    }
    ItemOrder::QuantityFirst
}

/// The item whose record, read position-first, gave `it`, read quantity-first.
fn quantity_first(it: &Item) -> Item {
    let mut raw = [0u8; 14];
    for (k, v) in it.position.iter().enumerate() {
        raw[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    raw[12..].copy_from_slice(&it.quantity.to_le_bytes());
    Item {
        definition: it.definition,
        quantity: i16::from_le_bytes([raw[0], raw[1]]),
        position: std::array::from_fn(|k| f32::from_le_bytes(raw[2 + 4 * k..6 + 4 * k].try_into().expect("4 bytes"))),
    }
}

/// The tail kinds a user list gives: custom list first, then the transparent list, else plain.
fn user_kinds(h: &Header, transparent: &[String], custom: &[String]) -> (Vec<Option<TailKind>>, Resolution) {
    let kinds = h
        .voxel_definitions
        .iter()
        .map(|name| {
            Some(if custom.contains(name) {
                TailKind::Custom
            } else if transparent.contains(name) {
                TailKind::Flags
            } else {
                TailKind::Plain
            })
        })
        .collect();
    let resolution = Resolution {
        method: ResolutionMethod::UserList,
        kinds: Vec::clone(&kinds),
        candidates: 1,
        exhaustive: true,
        steps: 0,
    };
    (kinds, resolution)
}
