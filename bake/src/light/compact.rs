//! Uniform patches stored small: a face whose luxels all hold one colour gets one luxel.
//!
//! Bilinear filtering of a patch whose luxels are all equal gives that colour everywhere, and so
//! does sampling one luxel at its centre: the face looks the same, for a fraction of the luxels.
//! Its vertices then all get the same lightmap UV, and every face of that colour on a page gets
//! the same one, which LZ4 finds as repeats in the vertex array (vertices are most of a terrain
//! file; docs/spec/PMF-NOTES.md K1, `pmfc inspect --sizes`).
//!
//! How: every face's patch is tested for one colour after the bake. A cube (patch group) whose
//! faces are all uniform points at a *palette page* holding each such colour of the chunk once
//! (ascending, row-major from the top-left); the other groups are packed again with
//! [`pack_tight`], their uniform faces as 1×1 patches, and the palette page comes after their
//! pages. Chunks with dynamic light layers are left as baked (a layer addresses the page's luxels
//! too, and would have to be uniform with it), and so is a chunk that would not gain luxels or
//! would need more than 255 pages.

use std::collections::BTreeMap;

use pmfedit_core::format::pmf;

use super::bake::{ChunkLighting, FaceLightmap};
use super::pack::{LuxelRect, Placement, pack_tight};
use super::patch::Patch;

/// The colour of every luxel of `rect` on `map`, if they are all the same.
fn uniform(map: &pmf::Lightmap, rect: &LuxelRect) -> Option<[u8; 3]> {
    let edge = map.edge();
    let at = |x: u32, y: u32| 3 * (y as usize * edge + x as usize);
    let first = at(rect.x, rect.y);
    let colour = [map.luxels[first], map.luxels[first + 1], map.luxels[first + 2]];
    for y in rect.y..rect.y + rect.height {
        let row = &map.luxels[at(rect.x, y)..at(rect.x + rect.width, y)];
        if row.chunks_exact(3).any(|c| c != colour) {
            return None;
        }
    }
    Some(colour)
}

/// The patch shrunk to one luxel, its sample point the middle one, so that every point of the
/// face maps to that luxel's centre ([`Patch::luxel_coords`] of a 1×1 patch).
fn one_luxel(patch: &Patch) -> Patch {
    let middle = patch.luxels[patch.luxels.len() / 2];
    Patch {
        width: 1,
        height: 1,
        u_min: patch.u_min + 0.5 * patch.u_step * f64::from(patch.width - 1),
        v_min: patch.v_min + 0.5 * patch.v_step * f64::from(patch.height - 1),
        u_step: 0.0,
        v_step: 0.0,
        luxels: vec![middle],
        ..patch.clone()
    }
}

/// The placement of luxel `(x, y)` of a page of edge `2^log2` for a 1×1 patch.
fn luxel_placement(page: u8, log2: u8, x: u32, y: u32) -> Placement {
    let edge = f64::from(1u32 << log2);
    let (u, v) = (((f64::from(x) + 0.5) / edge) as f32, ((f64::from(y) + 0.5) / edge) as f32);
    Placement { page, page_log2: log2, rect: LuxelRect { x, y, width: 1, height: 1 }, uv_rect: [u, v, u, v] }
}

/// `lighting` with its uniform patches stored as single luxels (see the module doc), pages
/// capped at `2^max_page_log2` like the bake's. Returns `lighting` unchanged where that does not
/// apply or does not pay (or the packing fails, which the bake's own packing at that cap rules
/// out).
pub fn compact_uniform(lighting: ChunkLighting, max_page_log2: u8) -> ChunkLighting {
    if lighting.faces.is_empty() || lighting.client_dynamic_lights.iter().any(|l| !l.layers.is_empty()) {
        return lighting;
    }
    let colours: Vec<Option<[u8; 3]>> = lighting
        .faces
        .iter()
        .map(|f| uniform(&lighting.lightmaps[usize::from(f.placement.page)], &f.placement.rect))
        .collect();
    let mut all_uniform: BTreeMap<u32, bool> = BTreeMap::new();
    for (f, c) in lighting.faces.iter().zip(&colours) {
        *all_uniform.entry(f.patch.group).or_insert(true) &= c.is_some();
    }
    let in_palette = |k: usize| all_uniform[&lighting.faces[k].patch.group];
    let palette: Vec<[u8; 3]> = {
        let mut p: Vec<[u8; 3]> = (0..colours.len()).filter(|&k| in_palette(k)).filter_map(|k| colours[k]).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    // The other groups, their uniform faces as 1×1 patches.
    let rest: Vec<usize> = (0..colours.len()).filter(|&k| !in_palette(k)).collect();
    let patches: Vec<Patch> = rest
        .iter()
        .map(|&k| {
            let p = &lighting.faces[k].patch;
            if colours[k].is_some() { one_luxel(p) } else { p.clone() }
        })
        .collect();
    let Ok(packing) = pack_tight(&patches, max_page_log2) else { return lighting };
    let palette_log2 = if palette.is_empty() {
        None
    } else {
        let log2 = (0..=max_page_log2).find(|&e| palette.len() <= 1usize << (2 * u32::from(e)));
        match log2 {
            Some(e) => Some(e),
            None => return lighting,
        }
    };
    let page_count = packing.pages.len() + usize::from(palette_log2.is_some());
    let luxels = |log2: u8| 1usize << (2 * u32::from(log2));
    let new_luxels: usize =
        packing.pages.iter().map(|p| luxels(p.size_log2)).sum::<usize>() + palette_log2.map_or(0, luxels);
    let old_luxels: usize = lighting.lightmaps.iter().map(|m| m.edge() * m.edge()).sum();
    if page_count > 255 || new_luxels >= old_luxels {
        return lighting;
    }

    let mut maps: Vec<pmf::Lightmap> = packing
        .pages
        .iter()
        .map(|p| pmf::Lightmap { size_exp: p.size_log2, luxels: vec![0; pmf::Lightmap::byte_len(p.size_log2)] })
        .collect();
    let mut faces: Vec<Option<FaceLightmap>> = vec![None; lighting.faces.len()];
    for ((&k, patch), place) in rest.iter().zip(patches).zip(packing.placements) {
        let old = &lighting.faces[k].placement;
        let (from, to) = (&lighting.lightmaps[usize::from(old.page)], &mut maps[usize::from(place.page)]);
        let (fe, te) = (from.edge(), to.edge());
        let r = place.rect;
        for j in 0..r.height as usize {
            let dst = 3 * ((r.y as usize + j) * te + r.x as usize);
            let len = 3 * r.width as usize;
            match colours[k] {
                Some(c) => to.luxels[dst..dst + 3].copy_from_slice(&c),
                None => {
                    let src = 3 * ((old.rect.y as usize + j) * fe + old.rect.x as usize);
                    to.luxels[dst..dst + len].copy_from_slice(&from.luxels[src..src + len]);
                }
            }
        }
        faces[k] = Some(FaceLightmap { patch, placement: place });
    }
    if let Some(log2) = palette_log2 {
        let page = maps.len() as u8;
        let edge = 1u32 << log2;
        let mut map = pmf::Lightmap { size_exp: log2, luxels: vec![0; pmf::Lightmap::byte_len(log2)] };
        for (i, c) in palette.iter().enumerate() {
            map.luxels[3 * i..3 * i + 3].copy_from_slice(c);
        }
        maps.push(map);
        for (k, slot) in faces.iter_mut().enumerate() {
            if let (None, Some(c)) = (&slot, colours[k]) {
                let i = palette.binary_search(&c).expect("every palette face's colour is in the palette") as u32;
                let patch = one_luxel(&lighting.faces[k].patch);
                *slot = Some(FaceLightmap { patch, placement: luxel_placement(page, log2, i % edge, i / edge) });
            }
        }
    }
    let faces = faces.into_iter().map(|f| f.expect("every face is placed")).collect();
    ChunkLighting { lightmaps: maps, faces, ..lighting }
}

#[cfg(test)]
mod tests {
    use glam::DVec3;

    use super::*;
    use crate::light::{LightSettings, SurfaceFace, pack_tight, plan_patches};

    /// A +Y square of edge `s` at `(x, 0, z)`, in group `group`.
    fn square(id: u32, group: u32, x: f64, z: f64, s: f64) -> SurfaceFace {
        let c = vec![
            DVec3::new(x, 0.0, z),
            DVec3::new(x, 0.0, z + s),
            DVec3::new(x + s, 0.0, z + s),
            DVec3::new(x + s, 0.0, z),
        ];
        SurfaceFace::new(id, c, DVec3::Y).in_group(group)
    }

    /// Lighting of `faces` as the bake lays it out, luxel `(i, j)` of face `k` coloured by
    /// `colour(k, i, j)`.
    fn lit(faces: &[SurfaceFace], colour: impl Fn(usize, u32, u32) -> [u8; 3]) -> ChunkLighting {
        let settings = LightSettings::default();
        let patches = plan_patches(faces, &settings).unwrap();
        let packing = pack_tight(&patches, settings.max_page_log2).unwrap();
        let mut maps: Vec<pmf::Lightmap> = packing
            .pages
            .iter()
            .map(|p| pmf::Lightmap { size_exp: p.size_log2, luxels: vec![0; pmf::Lightmap::byte_len(p.size_log2)] })
            .collect();
        for (k, (p, place)) in patches.iter().zip(&packing.placements).enumerate() {
            let map = &mut maps[usize::from(place.page)];
            let edge = map.edge();
            for j in 0..p.height {
                for i in 0..p.width {
                    let at = 3 * ((place.rect.y + j) as usize * edge + (place.rect.x + i) as usize);
                    map.luxels[at..at + 3].copy_from_slice(&colour(k, i, j));
                }
            }
        }
        let faces =
            patches.into_iter().zip(packing.placements).map(|(patch, placement)| FaceLightmap { patch, placement });
        ChunkLighting { lightmaps: maps, faces: faces.collect(), ..ChunkLighting::default() }
    }

    /// What a bilinear sampler (clamped to the page) reads at `uv` of `map`.
    fn sample(map: &pmf::Lightmap, uv: [f32; 2]) -> [f64; 3] {
        let edge = map.edge();
        let (x, y) = (f64::from(uv[0]) * edge as f64 - 0.5, f64::from(uv[1]) * edge as f64 - 0.5);
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let texel = |xi: f64, yi: f64, c: usize| {
            let (xi, yi) = (xi.clamp(0.0, edge as f64 - 1.0) as usize, yi.clamp(0.0, edge as f64 - 1.0) as usize);
            f64::from(map.luxels[3 * (yi * edge + xi) + c])
        };
        std::array::from_fn(|c| {
            let top = texel(x0, y0, c) * (1.0 - fx) + texel(x0 + 1.0, y0, c) * fx;
            let bottom = texel(x0, y0 + 1.0, c) * (1.0 - fx) + texel(x0 + 1.0, y0 + 1.0, c) * fx;
            top * (1.0 - fy) + bottom * fy
        })
    }

    /// What the engine draws at a grid of points over every face, before and after.
    fn drawn(l: &ChunkLighting, faces: &[SurfaceFace]) -> Vec<[f64; 3]> {
        let mut out = Vec::new();
        for (f, fl) in faces.iter().zip(&l.faces) {
            let (lo, hi) = (f.corners[0], f.corners[2]);
            for a in 0..=8 {
                for b in 0..=8 {
                    let p = lo + (hi - lo) * DVec3::new(f64::from(a) / 8.0, 0.0, f64::from(b) / 8.0);
                    out.push(sample(&l.lightmaps[usize::from(fl.page())], fl.uv_at(p)));
                }
            }
        }
        out
    }

    /// Cube 0: two faces of one colour; cube 1: a uniform face and a gradient; cube 2: a face of
    /// cube 0's colour.
    fn case() -> (Vec<SurfaceFace>, ChunkLighting) {
        let faces = vec![
            square(0, 0, 0.0, 0.0, 1.0),
            square(1, 0, 1.0, 0.0, 8.0),
            square(2, 1, 0.0, 9.0, 2.0),
            square(3, 1, 2.0, 9.0, 4.0),
            square(4, 2, 9.0, 0.0, 5.0),
        ];
        let l = lit(&faces, |k, i, j| match k {
            0 | 1 | 4 => [40, 50, 60],
            2 => [7, 7, 7],
            _ => [(10 * i) as u8, (20 * j) as u8, 3],
        });
        (faces, l)
    }

    #[test]
    fn uniform_faces_take_one_luxel_and_are_drawn_the_same() {
        let (faces, before) = case();
        let after = compact_uniform(before.clone(), LightSettings::default().max_page_log2);
        let luxels = |l: &ChunkLighting| l.lightmaps.iter().map(|m| m.edge() * m.edge()).sum::<usize>();
        assert!(luxels(&after) < luxels(&before), "{} → {}", luxels(&before), luxels(&after));
        for (b, a) in drawn(&before, &faces).iter().zip(drawn(&after, &faces)) {
            for c in 0..3 {
                assert!((b[c] - a[c]).abs() < 0.01, "{b:?} drawn as {a:?}");
            }
        }
        // Cubes 0 and 2 (all faces uniform) share the palette page, the last, which holds their
        // one colour once; every vertex of those faces gets the same UV.
        let palette = (after.lightmaps.len() - 1) as u8;
        for k in [0, 1, 4] {
            assert_eq!(after.faces[k].page(), palette);
            assert_eq!(after.faces[k].placement.rect, LuxelRect { x: 0, y: 0, width: 1, height: 1 });
            assert_eq!(after.faces[k].uv_at(faces[k].corners[0]), after.faces[0].uv_at(faces[0].corners[2]));
        }
        assert_eq!(&after.lightmaps[usize::from(palette)].luxels[..3], &[40, 50, 60]);
        // Cube 1 keeps one page for both faces: the uniform one as one luxel, the gradient whole.
        assert_eq!(after.faces[2].page(), after.faces[3].page());
        assert_eq!((after.faces[2].placement.rect.width, after.faces[2].placement.rect.height), (1, 1));
        assert_eq!(after.faces[3].placement.rect.width, before.faces[3].placement.rect.width);
    }

    #[test]
    fn chunks_with_dynamic_layers_are_left_as_baked() {
        let (_, mut before) = case();
        before.client_dynamic_lights.push(pmf::ClientDynamicLight {
            color: [255; 3],
            layers: vec![pmf::LightmapLayer { lightmap: 0, luxels: vec![1; before.lightmaps[0].luxels.len()] }],
        });
        assert_eq!(compact_uniform(before.clone(), 9), before);
    }
}
