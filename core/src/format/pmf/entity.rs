//! PMF entities (PMF-NOTES E1, shared/spec/ENTITIES.md). STUB: the API below is fixed; the body is
//! being written.

use super::error::WriteResult;
use super::strings::{StringTable, StringTableBuilder};
use crate::format::bin::{ReadResult, Reader, Writer};

/// One entity record.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    /// Bit i = header gamemode i; 0 = all.
    pub gamemodes: u32,
    pub name: String,
    pub data: EntityData,
}

/// Type data, typed where ENTITIES.md defines it.
#[derive(Debug, Clone, PartialEq)]
pub enum EntityData {
    Dummy,
}

/// Reads `u32 count` + that many entities; strings resolve through `strings`.
pub fn read_entities(r: &mut Reader<'_>, strings: &StringTable<'_>) -> ReadResult<Vec<Entity>> {
    let n = r.u32()?;
    let n = r.count(n.into(), 13, "entities")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(read_entity(r, strings)?);
    }
    Ok(out)
}

/// Reads one entity record.
pub fn read_entity(r: &mut Reader<'_>, _strings: &StringTable<'_>) -> ReadResult<Entity> {
    Err(r.invalid("entities are not implemented yet"))
}

/// Writes `u32 count` + the entities, interning strings into `strings`.
pub fn write_entities(w: &mut Writer, strings: &mut StringTableBuilder, entities: &[Entity]) -> WriteResult<()> {
    w.u32(entities.len() as u32);
    for e in entities {
        write_entity(w, strings, e)?;
    }
    Ok(())
}

/// Writes one entity record.
pub fn write_entity(_w: &mut Writer, _strings: &mut StringTableBuilder, _e: &Entity) -> WriteResult<()> {
    Ok(())
}
