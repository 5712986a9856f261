//! Packing luxel patches onto square lightmap pages.

use glam::DVec3;

use super::{LightError, Patch};

/// A rectangle of luxels on a page; `(x, y)` is its top-left luxel (rows run top to bottom, K1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LuxelRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl LuxelRect {
    /// Whether the rectangles share a luxel.
    pub fn overlaps(&self, other: &LuxelRect) -> bool {
        self.x < other.x + other.width
            && other.x < self.x + self.width
            && self.y < other.y + other.height
            && other.y < self.y + self.height
    }
}

/// One lightmap page: edge `2^size_log2`, and the patches on it (indices into the patch list, in
/// placement order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub size_log2: u8,
    pub patches: Vec<usize>,
}

impl Page {
    /// The edge in luxels.
    pub fn edge(&self) -> u32 {
        1 << self.size_log2
    }
}

/// Where one patch landed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Page index (the lightmap index the face's cube refers to).
    pub page: u8,
    /// Edge of that page, as a power of two.
    pub page_log2: u8,
    /// The patch's luxels on the page.
    pub rect: LuxelRect,
    /// `[u0, v0, u1, v1]`: the lightmap UVs of the centres of the patch's top-left and
    /// bottom-right luxels, in `[0, 1]` of the page. The face's UVs stay inside this rectangle.
    pub uv_rect: [f32; 4],
}

impl Placement {
    /// The page UV of world point `p` on the patch's face: its luxel coordinates on the patch
    /// (see [`Patch::luxel_coords`]) mapped onto the page. Corners of the face land on the
    /// centres of the patch's outer luxels.
    pub fn uv_at(&self, patch: &Patch, p: DVec3) -> [f32; 2] {
        let c = patch.luxel_coords(p);
        let edge = f64::from(1u32 << self.page_log2);
        [((f64::from(self.rect.x) + c.x) / edge) as f32, ((f64::from(self.rect.y) + c.y) / edge) as f32]
    }
}

/// The pages of a chunk and the placement of every patch (same order as the patches).
#[derive(Debug, Clone, PartialEq)]
pub struct Packing {
    pub pages: Vec<Page>,
    pub placements: Vec<Placement>,
}

/// One shelf of a page: a row band `[y, y + height)` filled from the left up to `x`.
#[derive(Debug, Clone, Copy)]
struct Shelf {
    y: u32,
    height: u32,
    x: u32,
}

/// The shelves of one page being filled.
#[derive(Debug, Clone, Default)]
struct Shelves {
    shelves: Vec<Shelf>,
    top: u32,
}

impl Shelves {
    /// Puts a `w × h` rectangle on the first shelf with room, else on a new shelf; `None` if the
    /// page of edge `edge` has no room.
    fn place(&mut self, w: u32, h: u32, edge: u32) -> Option<(u32, u32)> {
        if w > edge || h > edge {
            return None;
        }
        if let Some(s) = self.shelves.iter_mut().find(|s| h <= s.height && s.x + w <= edge) {
            let at = (s.x, s.y);
            s.x += w;
            return Some(at);
        }
        if self.top + h <= edge {
            let y = self.top;
            self.shelves.push(Shelf { y, height: h, x: w });
            self.top += h;
            return Some((0, y));
        }
        None
    }
}

/// `ceil(log2(v))` for `v ≥ 1`.
fn ceil_log2(v: u64) -> u8 {
    (64 - (v.max(1) - 1).leading_zeros()) as u8
}

/// Smallest page-size cap [`pack_tight`] tries: pages of 32×32 luxels (smaller ones would
/// multiply the pages, each a texture the engine binds, for little saving).
pub const MIN_TIGHT_PAGE_LOG2: u8 = 5;

/// [`pack`] at the cap that leaves the fewest luxels unused: every cap from `max_page_log2` down
/// to [`MIN_TIGHT_PAGE_LOG2`] is tried, and the packing whose pages hold the fewest luxels in all
/// wins (ties: the larger cap, so fewer pages). One power-of-two page holding all of a chunk's
/// patches is often more than half empty; several smaller pages waste less, and unused luxels
/// are file bytes and texture memory that light nothing. Deterministic, like [`pack`].
///
/// Errors: those of [`pack`] at `max_page_log2`.
pub fn pack_tight(patches: &[Patch], max_page_log2: u8) -> Result<Packing, LightError> {
    let luxels = |p: &Packing| p.pages.iter().map(|page| 1u64 << (2 * u32::from(page.size_log2))).sum::<u64>();
    let mut best = pack(patches, max_page_log2)?;
    let mut best_luxels = luxels(&best);
    for log2 in (MIN_TIGHT_PAGE_LOG2..max_page_log2).rev() {
        // A smaller cap fails once a patch or a group no longer fits, or the pages run out.
        let Ok(p) = pack(patches, log2) else { break };
        let n = luxels(&p);
        if n < best_luxels {
            (best, best_luxels) = (p, n);
        }
    }
    Ok(best)
}

/// Packs patches onto square pages of edge at most `2^max_page_log2` (≤ 2^12).
///
/// Patches of one [`Patch::group`] always share a page: each group is first laid out in a box of
/// its own (shelf packing at the cap's width, patches by height, width, face id, input index), and
/// the group boxes are packed onto pages. Deterministic: boxes are taken by height (descending),
/// then width (descending), then group id; each goes to the first shelf with room on the first
/// page with room (first-fit shelf packing), a new page opening when none has. Then every page is
/// shrunk to the smallest power-of-two edge on which its boxes, repacked in the same order, still
/// fit. Patches touch edge to edge: the half-luxel padding is inside each patch (see [`Patch`]),
/// so no gutter is needed for bilinear filtering.
///
/// Errors: a patch or group larger than the cap, more than 255 pages, a cap above 2^12.
pub fn pack(patches: &[Patch], max_page_log2: u8) -> Result<Packing, LightError> {
    if max_page_log2 > pmfedit_core::format::pmf::MAX_LIGHTMAP_EXP {
        return Err(LightError::PageSize(max_page_log2));
    }
    let cap = 1u32 << max_page_log2;
    if let Some(p) = patches.iter().find(|p| p.width > cap || p.height > cap) {
        return Err(LightError::PatchTooBig { id: p.face, size: (p.width, p.height), max_edge: cap });
    }
    // Lay out each group in a box of its own.
    let mut groups: std::collections::BTreeMap<u32, Vec<usize>> = std::collections::BTreeMap::new();
    for (k, p) in patches.iter().enumerate() {
        groups.entry(p.group).or_default().push(k);
    }
    struct GroupBox {
        group: u32,
        width: u32,
        height: u32,
        /// (patch, x, y) inside the box.
        members: Vec<(usize, u32, u32)>,
    }
    let mut boxes = Vec::with_capacity(groups.len());
    for (group, mut members) in groups {
        members.sort_by(|&a, &b| {
            let (pa, pb) = (&patches[a], &patches[b]);
            pb.height.cmp(&pa.height).then(pb.width.cmp(&pa.width)).then(pa.face.cmp(&pb.face)).then(a.cmp(&b))
        });
        let mut shelves = Shelves::default();
        let mut placed = Vec::with_capacity(members.len());
        let (mut width, mut height) = (0, 0);
        for k in members {
            let p = &patches[k];
            let Some((x, y)) = shelves.place(p.width, p.height, cap) else {
                return Err(LightError::PatchTooBig { id: p.face, size: (cap + 1, cap + 1), max_edge: cap });
            };
            width = width.max(x + p.width);
            height = height.max(y + p.height);
            placed.push((k, x, y));
        }
        boxes.push(GroupBox { group, width, height, members: placed });
    }
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by(|&a, &b| {
        let (ba, bb) = (&boxes[a], &boxes[b]);
        bb.height.cmp(&ba.height).then(bb.width.cmp(&ba.width)).then(ba.group.cmp(&bb.group))
    });
    // First fit over pages of the cap's size.
    let mut pages: Vec<(Shelves, Vec<usize>)> = Vec::new();
    for &k in &order {
        let (w, h) = (boxes[k].width, boxes[k].height);
        match pages.iter_mut().find_map(|(s, list)| s.place(w, h, cap).map(|_| list)) {
            Some(list) => list.push(k),
            None => {
                let mut s = Shelves::default();
                s.place(w, h, cap).expect("a group box fits an empty page of the cap");
                pages.push((s, vec![k]));
                if pages.len() > 255 {
                    return Err(LightError::TooManyPages(pages.len()));
                }
            }
        }
    }
    // Shrink each page.
    let mut placements =
        vec![Placement { page: 0, page_log2: 0, rect: LuxelRect::default(), uv_rect: [0.0; 4] }; patches.len()];
    let mut out = Vec::with_capacity(pages.len());
    for (page_index, (_, list)) in pages.into_iter().enumerate() {
        let area: u64 = list.iter().map(|&k| u64::from(boxes[k].width) * u64::from(boxes[k].height)).sum();
        let longest = list.iter().map(|&k| boxes[k].width.max(boxes[k].height)).max().unwrap_or(1);
        let area_edge = (area as f64).sqrt().ceil() as u64;
        let mut log2 = ceil_log2(u64::from(longest)).max(ceil_log2(area_edge)).min(max_page_log2);
        let spots = loop {
            let edge = 1u32 << log2;
            let mut s = Shelves::default();
            let spots: Option<Vec<(u32, u32)>> =
                list.iter().map(|&k| s.place(boxes[k].width, boxes[k].height, edge)).collect();
            match spots {
                Some(v) => break v,
                // The cap always fits: this page was filled at the cap with exactly these boxes
                // in this order.
                None => log2 += 1,
            }
        };
        let edge = f64::from(1u32 << log2);
        let mut page_patches = Vec::new();
        for (&b, &(bx, by)) in list.iter().zip(&spots) {
            for &(k, dx, dy) in &boxes[b].members {
                let p = &patches[k];
                let (x, y) = (bx + dx, by + dy);
                let rect = LuxelRect { x, y, width: p.width, height: p.height };
                let uv_rect = [
                    ((f64::from(x) + 0.5) / edge) as f32,
                    ((f64::from(y) + 0.5) / edge) as f32,
                    ((f64::from(x + p.width) - 0.5) / edge) as f32,
                    ((f64::from(y + p.height) - 0.5) / edge) as f32,
                ];
                placements[k] = Placement { page: page_index as u8, page_log2: log2, rect, uv_rect };
                page_patches.push(k);
            }
        }
        out.push(Page { size_log2: log2, patches: page_patches });
    }
    Ok(Packing { pages: out, placements })
}
