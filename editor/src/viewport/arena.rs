//! Sub-allocators of the shared GPU buffers and lightmap atlases ([`super::regions`]): pure
//! bookkeeping, so they are tested without a GPU.
//!
//! - [`Arena`]: ranges of one buffer (vertices or indices of a region's pass), first fit from a
//!   free list, freed neighbours merged; a chunk's new mesh takes its old range back when it
//!   fits, so an edit rewrites one chunk's bytes in place.
//! - [`Shelves`]: rectangles of one atlas texture (a region's lightmaps), on shelves whose height
//!   is a power of two; a freed rectangle is reused by the next one of the same width and shelf
//!   height (a re-baked chunk's atlas usually keeps its size).

use std::collections::{BTreeMap, HashMap};

/// Ranges of `0..capacity` (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arena {
    /// Free ranges: start → length, never touching each other (merged on free).
    free: BTreeMap<u32, u32>,
    capacity: u32,
}

impl Arena {
    /// An arena of `capacity` free units.
    pub fn new(capacity: u32) -> Self {
        let mut a = Self { free: BTreeMap::new(), capacity: 0 };
        a.grow(capacity);
        a
    }

    /// Units in all.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Units not allocated.
    pub fn free_units(&self) -> u32 {
        self.free.values().sum()
    }

    /// The first free range of `n` units (`n > 0`), or `None` when no free range is that long
    /// ([`Arena::grow`] first).
    pub fn alloc(&mut self, n: u32) -> Option<u32> {
        debug_assert!(n > 0);
        let (&start, &len) = self.free.iter().find(|(_, len)| **len >= n)?;
        self.free.remove(&start);
        if len > n {
            self.free.insert(start + n, len - n);
        }
        Some(start)
    }

    /// Gives back `n` units from `start` (an earlier [`Arena::alloc`]), merged with free
    /// neighbours.
    pub fn free(&mut self, start: u32, n: u32) {
        if n == 0 {
            return;
        }
        let (mut start, mut n) = (start, n);
        if let Some((&before, &len)) = self.free.range(..start).next_back()
            && before + len == start
        {
            self.free.remove(&before);
            start = before;
            n += len;
        }
        if let Some(len) = self.free.remove(&(start + n)) {
            n += len;
        }
        self.free.insert(start, n);
    }

    /// Adds the units `capacity..new_capacity` (the buffer behind it grew); no-op when not
    /// larger.
    pub fn grow(&mut self, new_capacity: u32) {
        if new_capacity > self.capacity {
            let old = self.capacity;
            self.capacity = new_capacity;
            self.free(old, new_capacity - old);
        }
    }
}

/// One row of [`Shelves`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shelf {
    y: u32,
    height: u32,
    /// Where the next rectangle goes.
    x: u32,
}

/// Rectangles of a `width` × `height` atlas (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shelves {
    width: u32,
    height: u32,
    shelves: Vec<Shelf>,
    /// Freed rectangles by (width, shelf height): their corners.
    free: HashMap<(u32, u32), Vec<(u32, u32)>>,
    /// The first row no shelf covers.
    top: u32,
}

impl Shelves {
    /// An empty atlas of `width` × `height` texels.
    pub fn new(width: u32, height: u32) -> Self {
        Self { width, height, ..Self::default() }
    }

    /// Texels across.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Texels down.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The shelf height a rectangle `h` high goes on.
    fn shelf_height(h: u32) -> u32 {
        h.max(1).next_power_of_two()
    }

    /// The corner of a free `w` × `h` rectangle, or `None` when the atlas has no room
    /// ([`Shelves::grow`] first, or start over with a wider one).
    pub fn alloc(&mut self, w: u32, h: u32) -> Option<(u32, u32)> {
        let sh = Self::shelf_height(h);
        if w > self.width {
            return None;
        }
        if let Some(at) = self.free.get_mut(&(w, sh)).and_then(Vec::pop) {
            return Some(at);
        }
        if let Some(s) = self.shelves.iter_mut().find(|s| s.height == sh && s.x + w <= self.width) {
            let at = (s.x, s.y);
            s.x += w;
            return Some(at);
        }
        if self.top + sh > self.height {
            return None;
        }
        self.shelves.push(Shelf { y: self.top, height: sh, x: w });
        self.top += sh;
        Some((0, self.top - sh))
    }

    /// Gives back the `w` × `h` rectangle at `at` (an earlier [`Shelves::alloc`] of that size).
    pub fn free(&mut self, at: (u32, u32), w: u32, h: u32) {
        self.free.entry((w, Self::shelf_height(h))).or_default().push(at);
    }

    /// Makes the atlas `height` texels high (rows below the old height become free).
    pub fn grow(&mut self, height: u32) {
        self.height = self.height.max(height);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_reuses_freed_ranges_and_merges_neighbours() {
        let mut a = Arena::new(100);
        assert_eq!(a.alloc(30), Some(0));
        assert_eq!(a.alloc(30), Some(30));
        assert_eq!(a.alloc(30), Some(60));
        assert_eq!(a.alloc(11), None, "10 left");
        // A chunk's new mesh of the same size or smaller takes its old range back.
        a.free(30, 30);
        assert_eq!(a.alloc(25), Some(30));
        assert_eq!(a.free_units(), 15);
        // Freeing both sides of a hole merges them into one range.
        a.free(0, 30);
        a.free(30, 25);
        assert_eq!(a.alloc(55), Some(0), "0..30 and 30..55 merged");
        a.free(0, 55);
        a.free(60, 30);
        assert_eq!(a.free_units(), 100);
        assert_eq!(a.alloc(100), Some(0), "everything merged back into one range");
        // Growing adds the new units at the end, merged with a free tail.
        a.free(50, 50);
        a.grow(150);
        assert_eq!(a.capacity(), 150);
        assert_eq!(a.alloc(100), Some(50));
        assert_eq!(a.alloc(1), None);
    }

    #[test]
    fn shelves_place_rectangles_without_overlap_and_reuse_freed_ones() {
        let mut s = Shelves::new(64, 64);
        let sizes = [(32, 16), (32, 10), (16, 16), (64, 32), (8, 9)];
        let placed: Vec<(u32, u32)> = sizes.iter().map(|&(w, h)| s.alloc(w, h).expect("fits")).collect();
        // (32, 10) shares the 16-high shelf of (32, 16); (16, 16) needs a second 16-high shelf,
        // which (8, 9) then shares.
        assert_eq!(placed, [(0, 0), (32, 0), (0, 16), (0, 32), (16, 16)]);
        for (i, (&(w, h), &(x, y))) in sizes.iter().zip(&placed).enumerate() {
            assert!(x + w <= 64 && y + h <= 64);
            for (&(w2, h2), &(x2, y2)) in sizes.iter().zip(&placed).skip(i + 1) {
                let apart = x + w <= x2 || x2 + w2 <= x || y + h <= y2 || y2 + h2 <= y;
                assert!(apart, "{:?} overlaps {:?}", (x, y, w, h), (x2, y2, w2, h2));
            }
        }
        assert_eq!(s.alloc(64, 64), None, "full");
        // A freed rectangle goes to the next one of its width and shelf height.
        s.free(placed[0], 32, 16);
        assert_eq!(s.alloc(32, 12), Some(placed[0]));
        assert_eq!(s.alloc(128, 1), None, "wider than the atlas");
        s.grow(128);
        assert_eq!(s.alloc(64, 64), Some((0, 64)));
    }
}
