//! Resident memory of this process, for the benchmarks (`pmfc bench --json`, the editor's
//! `--bench-frames`), and where a baked chunk's memory goes ([`RecordBytes`]). Resident figures
//! are Linux only: elsewhere they are `None`.

use pmfedit_core::format::pmf;

/// Resident memory figures in bytes, from `/proc/self/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resident {
    /// Resident now (`VmRSS`).
    pub now: u64,
    /// The most resident at any moment so far (`VmHWM`, the high-water mark).
    pub peak: u64,
}

/// This process's resident memory, or `None` where `/proc/self/status` cannot be read.
pub fn resident() -> Option<Resident> {
    parse_status(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// `VmRSS` and `VmHWM` (kB) of a `/proc/PID/status` text.
fn parse_status(text: &str) -> Option<Resident> {
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    };
    Some(Resident { now: field("VmRSS:")?, peak: field("VmHWM:")? })
}

/// Bytes as mebibytes, for reports.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Where a baked chunk record's memory goes, in bytes (struct sizes plus heap buffers, without
/// allocator overhead), for the benchmark's breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordBytes {
    /// The per-cube structs (common, client and server cube) and moved corner points.
    pub cubes: u64,
    /// Visibility lists of air cells (and each cell's boxed pair of list pointers).
    pub visibility: u64,
    /// Lightmap pages, dynamic light layers and fast-light multipliers.
    pub lighting: u64,
    /// Vertices.
    pub vertices: u64,
    /// Everything else (names, regions, entities, cube lighting references, pathfinding).
    pub other: u64,
}

impl RecordBytes {
    /// The record of one chunk.
    pub fn of(chunk: &pmf::Chunk) -> RecordBytes {
        use std::mem::size_of;
        let vec = |cap: usize, each: usize| (cap * each) as u64;
        let mut r = RecordBytes::default();
        let (c, l, s) = (&chunk.common, &chunk.client, &chunk.server);
        r.cubes = vec(c.cubes.capacity(), size_of::<pmf::Cube>())
            + vec(l.cubes.capacity(), size_of::<pmf::ClientCube>())
            + vec(s.cubes.capacity(), size_of::<pmf::ServerCube>())
            + c.cubes
                .iter()
                .filter_map(|cube| match &cube.kind {
                    pmf::CubeKind::ExtGeometry(g) => Some(g.points.heap_bytes() as u64),
                    _ => None,
                })
                .sum::<u64>();
        // Air cells share their lists (`Arc`): each distinct list counts once.
        let (mut cube_lists, mut chunk_lists) = (std::collections::HashSet::new(), std::collections::HashSet::new());
        for v in c.cubes.iter().filter_map(|cube| cube.visibility.as_ref()) {
            r.visibility += size_of::<pmf::Visibility>() as u64;
            if cube_lists.insert(v.cubes.as_ptr()) {
                r.visibility += vec(v.cubes.len(), 4);
            }
            if chunk_lists.insert(v.chunks.as_ptr()) {
                r.visibility += vec(v.chunks.len(), size_of::<pmf::VisibleChunk>());
                r.visibility += v.chunks.iter().map(|vc| vec(vc.cubes.capacity(), 4)).sum::<u64>();
            }
        }
        r.lighting = l.lightmaps.iter().map(|m| m.luxels.capacity() as u64).sum::<u64>()
            + l.dynamic_lights.iter().flat_map(|d| &d.layers).map(|x| x.luxels.capacity() as u64).sum::<u64>()
            + l.fast_lights.iter().flat_map(|f| &f.ranges).map(|x| x.multipliers.capacity() as u64).sum::<u64>();
        r.vertices = vec(l.vertices.capacity(), size_of::<pmf::Vertex>());
        r.other = size_of::<pmf::Chunk>() as u64
            + l.cubes.iter().filter_map(|c| c.lighting.as_ref()).map(|x| x.heap_bytes() as u64).sum::<u64>()
            + s.cubes
                .iter()
                .filter_map(|c| c.pathfinding.as_ref())
                .map(|p| vec(p.len(), size_of::<pmf::PathAttribute>()))
                .sum::<u64>()
            + s.entities.len() as u64 * size_of::<pmf::entity::Entity>() as u64;
        r
    }

    /// All of it.
    pub fn total(&self) -> u64 {
        self.cubes + self.visibility + self.lighting + self.vertices + self.other
    }
}

impl std::ops::Add for RecordBytes {
    type Output = RecordBytes;

    /// The sum of two breakdowns.
    fn add(self, o: RecordBytes) -> RecordBytes {
        RecordBytes {
            cubes: self.cubes + o.cubes,
            visibility: self.visibility + o.visibility,
            lighting: self.lighting + o.lighting,
            vertices: self.vertices + o.vertices,
            other: self.other + o.other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_status_fields() {
        let text = "Name:\tpmfc\nVmPeak:\t  999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n";
        assert_eq!(parse_status(text), Some(Resident { now: 1024 * 1024, peak: 2048 * 1024 }));
        assert_eq!(parse_status("Name:\tx\n"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_this_process() {
        let r = resident().expect("linux has /proc/self/status");
        assert!(r.peak >= r.now && r.now > 0, "{r:?}");
    }
}
