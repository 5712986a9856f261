//! The ASCII `.a3d` reader.
//!
//! Layout (reference exporter): a `3dmodel <scale>` line, the name, licence and author lines, a
//! description running to the first blank line, then sections, each a keyword line (`Textmap`,
//! `Vertex`, `Bones`, `Material <name>`, `Mesh`, `VoxTypes`, `Voxel [name]`, …) followed by rows
//! up to a blank line, and optionally `End`. Lines may end in LF or CRLF. Colours are `#aabbggrr`
//! hex, the numeric value of [`Rgba`]. Voxel rows hold a type index, `.` (unset) or `-` (clear).

use super::model::{
    Face, M3dError, MAX_VOXEL_CELLS, Material, Model, PropFormat, Property, PropertyValue, Rgba, SkippedChunk, Source,
    VOXEL_CLEAR, VOXEL_UNSET, Vertex, VoxelBlock, VoxelItem, VoxelType, prop, prop_format,
};

/// One line: 1-based number, byte offset, text without its line end.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    no: usize,
    offset: usize,
    text: &'a str,
}

impl Line<'_> {
    fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

fn err(line: usize, reason: impl Into<String>) -> M3dError {
    M3dError::Ascii { line, reason: reason.into() }
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut offset = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let t = raw.strip_suffix('\n').unwrap_or(raw);
        let t = t.strip_suffix('\r').unwrap_or(t);
        out.push(Line { no: i + 1, offset, text: t });
        offset += raw.len();
    }
    out
}

fn float(line: usize, tok: &str) -> Result<f32, M3dError> {
    tok.parse::<f32>().map_err(|_| err(line, format!("{tok:?} is not a number")))
}

fn int<T: std::str::FromStr>(line: usize, tok: &str) -> Result<T, M3dError> {
    tok.parse::<T>().map_err(|_| err(line, format!("{tok:?} is not an integer in range")))
}

fn hex(line: usize, tok: &str) -> Result<u32, M3dError> {
    let t = tok.strip_prefix('#').unwrap_or(tok);
    let t = t.strip_prefix("0x").unwrap_or(t);
    u32::from_str_radix(t, 16).map_err(|_| err(line, format!("{tok:?} is not a hex colour")))
}

/// Reads an ASCII Model 3D file. Errors name the line.
pub fn read_a3d(text: &str) -> Result<Model, M3dError> {
    let lines = split_lines(text);
    let first = lines.first().map(|l| l.text).unwrap_or_default();
    if !first.starts_with("3dmodel") {
        return Err(err(1, "an ASCII Model 3D file starts with \"3dmodel\""));
    }
    let scale = first.split_whitespace().nth(1).and_then(|s| s.parse::<f32>().ok()).unwrap_or(1.0);
    if lines.len() < 4 {
        return Err(err(lines.len(), "the header needs the name, licence and author lines"));
    }
    let mut m = Model {
        source: Source::Ascii,
        scale: if scale > 0.0 && scale.is_finite() { scale } else { 1.0 },
        name: lines[1].text.trim().to_owned(),
        license: lines[2].text.trim().to_owned(),
        author: lines[3].text.trim().to_owned(),
        ..Model::default()
    };
    let mut i = 4;
    let mut desc = Vec::new();
    while i < lines.len() && !lines[i].is_blank() {
        desc.push(lines[i].text.trim_end());
        i += 1;
    }
    m.description = desc.join("\n");

    let mut p = Ascii { m, text_len: text.len(), seen: Vec::new() };
    loop {
        while i < lines.len() && lines[i].is_blank() {
            i += 1;
        }
        let Some(head) = lines.get(i) else { break };
        let keyword = head.text.split_whitespace().next().unwrap_or_default();
        if keyword == "End" {
            break;
        }
        let arg = head.text.trim()[keyword.len()..].trim();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].is_blank() {
            end += 1;
        }
        let rows = &lines[start..end];
        match keyword {
            "Textmap" => p.textmap(head, rows)?,
            "Vertex" => p.vertex(head, rows)?,
            "Bones" => {
                p.unique(head, "Bones")?;
                p.m.bone_count = rows.len();
            }
            "Material" => p.material(head, arg, rows)?,
            "Mesh" => p.mesh(rows)?,
            "VoxTypes" | "Voxtypes" => p.voxtypes(head, rows)?,
            "Voxel" => p.voxel(head, arg, rows)?,
            "Preview" | "Procedural" | "Shape" | "Labels" | "Action" | "Assets" | "Extra" => p.skip(head, rows, None),
            _ => p.skip(head, rows, Some("unknown section")),
        }
        i = end;
    }
    Ok(p.m)
}

struct Ascii {
    m: Model,
    text_len: usize,
    seen: Vec<&'static str>,
}

impl Ascii {
    fn unique(&mut self, head: &Line<'_>, what: &'static str) -> Result<(), M3dError> {
        if self.seen.contains(&what) {
            return Err(err(head.no, format!("a second {what} section; it may appear only once")));
        }
        self.seen.push(what);
        Ok(())
    }

    fn skip(&mut self, head: &Line<'_>, rows: &[Line<'_>], warn: Option<&str>) {
        let keyword = head.text.split_whitespace().next().unwrap_or_default().to_owned();
        let end = rows.last().map_or(head.offset + head.text.len(), |l| l.offset + l.text.len());
        if let Some(w) = warn {
            self.m.warnings.push(format!("line {}: {w} {keyword:?} skipped", head.no));
        }
        self.m.skipped.push(SkippedChunk {
            magic: keyword,
            offset: head.offset as u64,
            length: (end - head.offset) as u64,
        });
    }

    fn textmap(&mut self, head: &Line<'_>, rows: &[Line<'_>]) -> Result<(), M3dError> {
        self.unique(head, "Textmap")?;
        for l in rows {
            let t: Vec<&str> = l.text.split_whitespace().collect();
            if t.len() < 2 {
                return Err(err(l.no, "a texture coordinate row needs u and v"));
            }
            self.m.texcoords.push([float(l.no, t[0])?, float(l.no, t[1])?]);
        }
        Ok(())
    }

    fn vertex(&mut self, head: &Line<'_>, rows: &[Line<'_>]) -> Result<(), M3dError> {
        self.unique(head, "Vertex")?;
        for l in rows {
            let t: Vec<&str> = l.text.split_whitespace().collect();
            if t.len() < 4 {
                return Err(err(l.no, "a vertex row needs x, y, z and w"));
            }
            let mut position = [0.0; 4];
            for (v, tok) in position.iter_mut().zip(&t) {
                *v = float(l.no, tok)?;
            }
            let color = match t.get(4) {
                Some(c) if c.starts_with('#') => Some(Rgba(hex(l.no, c)?)),
                _ => None,
            };
            self.m.vertices.push(Vertex { position, color, skin: -1 });
        }
        Ok(())
    }

    fn material(&mut self, head: &Line<'_>, name: &str, rows: &[Line<'_>]) -> Result<(), M3dError> {
        if name.is_empty() {
            return Err(err(head.no, "a Material section needs a name"));
        }
        let mut props = Vec::new();
        for l in rows {
            let text = l.text.trim();
            let key = text.split_whitespace().next().unwrap_or_default();
            let value = text[key.len()..].trim();
            let id = if let Some(map) = key.strip_prefix("map_") {
                let base = match map {
                    "bump" => Some(prop::KM),
                    "N" | "il" => Some(8),
                    "refl" => Some(prop::PM),
                    k => prop::KEYWORDS.iter().find(|(n, _)| *n == k).map(|(_, id)| *id),
                };
                base.map(|b| b | 128)
            } else {
                prop::KEYWORDS.iter().find(|(n, _)| *n == key).map(|(_, id)| *id)
            };
            let Some(id) = id else {
                self.m.warnings.push(format!("line {}: unknown material property {key:?} skipped", l.no));
                continue;
            };
            if value.is_empty() {
                return Err(err(l.no, format!("material property {key:?} has no value")));
            }
            let value = if id >= 128 {
                PropertyValue::Map(value.to_owned())
            } else {
                match prop_format(id) {
                    Some(PropFormat::Color) => PropertyValue::Color(Rgba(hex(l.no, value)?)),
                    Some(PropFormat::Float) => PropertyValue::Float(float(l.no, value)?),
                    _ => PropertyValue::Int(int(l.no, value)?),
                }
            };
            props.push(Property { id, value });
        }
        match self.m.material_index(name) {
            Some(i) if self.m.materials[i].defined => {
                self.m.warnings.push(format!("line {}: material {name:?} is defined twice; kept the first", head.no));
            }
            Some(i) => {
                self.m.materials[i].properties = props;
                self.m.materials[i].defined = true;
            }
            None => self.m.materials.push(Material { name: name.to_owned(), properties: props, defined: true }),
        }
        Ok(())
    }

    fn mesh(&mut self, rows: &[Line<'_>]) -> Result<(), M3dError> {
        let mut material = None;
        for l in rows {
            let t: Vec<&str> = l.text.split_whitespace().collect();
            match t.first().copied() {
                Some("use") => {
                    material = match t.get(1) {
                        Some(name) => Some(match self.m.material_index(name) {
                            Some(i) => i,
                            None => {
                                self.m.materials.push(Material { name: (*name).to_owned(), ..Material::default() });
                                self.m.materials.len() - 1
                            }
                        }),
                        None => None,
                    };
                    continue;
                }
                Some("par") => continue,
                _ => {}
            }
            if t.len() != 3 {
                return Err(err(l.no, format!("a face of {} points; only triangles are supported", t.len())));
            }
            let mut face = Face { material, ..Face::default() };
            for (j, tok) in t.iter().enumerate() {
                let parts: Vec<&str> = tok.split('/').collect();
                let v: u32 = int(l.no, parts[0])?;
                if v as usize >= self.m.vertices.len() {
                    return Err(err(l.no, format!("vertex {v} is out of range ({} vertices)", self.m.vertices.len())));
                }
                face.vertices[j] = v;
                if let Some(uv) = parts.get(1).filter(|s| !s.is_empty()) {
                    let uv: u32 = int(l.no, uv)?;
                    if uv as usize >= self.m.texcoords.len() {
                        return Err(err(
                            l.no,
                            format!("texture coordinate {uv} is out of range ({})", self.m.texcoords.len()),
                        ));
                    }
                    face.texcoords[j] = Some(uv);
                }
                if let Some(n) = parts.get(2).filter(|s| !s.is_empty()) {
                    let n: u32 = int(l.no, n)?;
                    if n as usize >= self.m.vertices.len() {
                        return Err(err(
                            l.no,
                            format!("normal {n} is out of range ({} vertices)", self.m.vertices.len()),
                        ));
                    }
                    face.normals[j] = Some(n);
                }
            }
            self.m.faces.push(face);
        }
        Ok(())
    }

    fn voxtypes(&mut self, head: &Line<'_>, rows: &[Line<'_>]) -> Result<(), M3dError> {
        self.unique(head, "VoxTypes")?;
        for l in rows {
            let mut t = l.text.split_whitespace();
            let first = t.next().unwrap_or_default();
            let mut parts = first.split('/');
            let color = Rgba(hex(l.no, parts.next().unwrap_or_default())?);
            let rotation = match parts.next() {
                Some(r) => u8::try_from(hex(l.no, r)?).map_err(|_| err(l.no, "rotation does not fit a byte"))?,
                None => 0,
            };
            let shape = match parts.next() {
                Some(s) => u16::try_from(hex(l.no, s)?).map_err(|_| err(l.no, "voxel shape out of range"))?,
                None => 0,
            };
            let name = t.next().filter(|n| *n != "-" && *n != "{").map(str::to_owned);
            let mut items = Vec::new();
            let rest: Vec<&str> = t.collect();
            if let Some(open) = rest.iter().position(|s| *s == "{") {
                let inner = &rest[open + 1..];
                let close = inner.iter().position(|s| *s == "}").ok_or_else(|| err(l.no, "item list without '}'"))?;
                for pair in inner[..close].chunks(2) {
                    let [count, name] = pair else { return Err(err(l.no, "an item needs a count and a name")) };
                    items.push(VoxelItem { count: int(l.no, count)?, name: Some((*name).to_owned()) });
                }
            }
            if self.m.voxel_types.len() >= 65534 {
                return Err(err(l.no, "more than 65534 voxel types"));
            }
            self.m.voxel_types.push(VoxelType { color, name, rotation, shape, skin: -1, items });
        }
        Ok(())
    }

    fn voxel(&mut self, head: &Line<'_>, name: &str, rows: &[Line<'_>]) -> Result<(), M3dError> {
        let mut block = VoxelBlock { name: (!name.is_empty()).then(|| name.to_owned()), ..VoxelBlock::default() };
        let (mut layer, mut row) = (0usize, 0usize);
        let mut started = false;
        let types = self.m.voxel_types.len();
        for l in rows {
            let t: Vec<&str> = l.text.split_whitespace().collect();
            let nums = |n: usize| -> Result<Vec<i64>, M3dError> {
                if t.len() < n + 1 {
                    return Err(err(l.no, format!("{:?} needs {n} values", t[0])));
                }
                t[1..=n].iter().map(|s| int::<i64>(l.no, s)).collect()
            };
            match t[0] {
                "uncertain" => {
                    let v = nums(1)?;
                    let pct = if (1..256).contains(&v[0]) { v[0] } else { 0 };
                    block.uncertainty = (pct * 255 / 100).min(255) as u8;
                    if let Some(g) = t.get(2) {
                        block.group = int::<i64>(l.no, g)?.clamp(0, 255) as u8;
                    }
                }
                "pos" => {
                    let v = nums(3)?;
                    for (p, x) in block.position.iter_mut().zip(v) {
                        *p = i32::try_from(x).map_err(|_| err(l.no, "position out of range"))?;
                    }
                }
                "dim" => {
                    if started {
                        return Err(err(l.no, "dim after the voxel data"));
                    }
                    let v = nums(3)?;
                    for (s, x) in block.size.iter_mut().zip(v) {
                        *s = u32::try_from(x).map_err(|_| err(l.no, "dimension out of range"))?;
                    }
                }
                "layer" => {
                    if started {
                        if row != block.size[2] as usize {
                            return Err(err(l.no, format!("layer {layer} has {row} rows, not {}", block.size[2])));
                        }
                        layer += 1;
                        row = 0;
                    } else {
                        let cells = block.size.iter().map(|&s| u64::from(s)).product::<u64>();
                        let used: u64 = self.m.voxel_blocks.iter().map(|b| b.data.len() as u64).sum();
                        if cells == 0 {
                            return Err(err(l.no, "voxel data before a non-zero dim"));
                        }
                        // Every cell takes at least one character of the text.
                        if cells > MAX_VOXEL_CELLS - used || cells > self.text_len as u64 {
                            return Err(err(l.no, format!("a block of {cells} voxels is too large for this file")));
                        }
                        block.data = vec![VOXEL_UNSET; cells as usize];
                        started = true;
                    }
                    if layer >= block.size[1] as usize {
                        return Err(err(l.no, format!("more than {} layers", block.size[1])));
                    }
                }
                _ => {
                    if !started {
                        return Err(err(l.no, "voxel row before \"layer\""));
                    }
                    let [w, _, d] = block.size;
                    if row >= d as usize {
                        return Err(err(l.no, format!("layer {layer} has more than {d} rows")));
                    }
                    if t.len() != w as usize {
                        return Err(err(l.no, format!("a voxel row of {} cells; the block is {w} wide", t.len())));
                    }
                    let base = block.index(0, layer as u32, row as u32);
                    for (x, tok) in t.iter().enumerate() {
                        block.data[base + x] = match *tok {
                            "." => VOXEL_UNSET,
                            "-" => VOXEL_CLEAR,
                            s => {
                                let v: usize = int(l.no, s)?;
                                if v >= types {
                                    return Err(err(l.no, format!("voxel type {v} is out of range ({types} types)")));
                                }
                                v as u16
                            }
                        };
                    }
                    row += 1;
                }
            }
        }
        if !started {
            return Err(err(head.no, "a Voxel section without layers"));
        }
        if layer + 1 != block.size[1] as usize || row != block.size[2] as usize {
            return Err(err(head.no, format!("the voxel data does not fill the {:?} block", block.size)));
        }
        self.m.voxel_blocks.push(block);
        Ok(())
    }
}
