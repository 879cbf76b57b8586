//! A set of disjoint half-open `u64` ranges, kept merged. Used by the receiver
//! for out-of-order data and by the sender for its SACK scoreboard. Every
//! operation costs O(log n) plus the ranges it merges, so a SACK block that
//! repeats what is already known costs almost nothing.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open ranges `[start, end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    map: BTreeMap<u64, u64>,
    covered: u64,
}

impl RangeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True if the set is empty.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Total length covered.
    pub fn covered(&self) -> u64 {
        self.covered
    }

    /// Adds `[start, end)`, calling `on_new(s, e)` for each piece that was not
    /// covered before, in ascending order. Returns the bytes newly covered.
    pub fn insert_with(&mut self, start: u64, end: u64, mut on_new: impl FnMut(u64, u64)) -> u64 {
        if start >= end {
            return 0;
        }
        let mut new_start = start;
        let mut new_end = end;
        let mut cursor = start;
        let mut added = 0;
        if let Some((&ps, &pe)) = self.map.range(..=start).next_back() {
            if pe >= start {
                new_start = ps;
                new_end = new_end.max(pe);
                cursor = cursor.max(pe);
                self.map.remove(&ps);
                self.covered -= pe - ps;
            }
        }
        while let Some((&rs, &re)) = self.map.range(start..=end).next() {
            if rs > cursor {
                on_new(cursor, rs);
                added += rs - cursor;
            }
            cursor = cursor.max(re);
            new_end = new_end.max(re);
            self.map.remove(&rs);
            self.covered -= re - rs;
        }
        if cursor < end {
            on_new(cursor, end);
            added += end - cursor;
        }
        self.map.insert(new_start, new_end);
        self.covered += new_end - new_start;
        added
    }

    /// Adds `[start, end)`; returns the bytes newly covered.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        self.insert_with(start, end, |_, _| {})
    }

    /// True if `[start, end)` is entirely covered (an empty range is covered).
    pub fn contains_range(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        matches!(self.map.range(..=start).next_back(), Some((_, &e)) if e >= end)
    }

    /// True if `x` is covered.
    pub fn contains(&self, x: u64) -> bool {
        matches!(self.map.range(..=x).next_back(), Some((_, &e)) if e > x)
    }

    /// The range containing `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<(u64, u64)> {
        match self.map.range(..=x).next_back() {
            Some((&s, &e)) if e > x => Some((s, e)),
            _ => None,
        }
    }

    /// True if any part of `[start, end)` is covered.
    pub fn intersects(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return false;
        }
        if let Some((_, &e)) = self.map.range(..=start).next_back() {
            if e > start {
                return true;
            }
        }
        self.map.range(start..end).next().is_some()
    }

    /// Removes everything below `x` (trimming a range that straddles it).
    pub fn remove_below(&mut self, x: u64) {
        while let Some((&s, &e)) = self.map.iter().next() {
            if s >= x {
                break;
            }
            self.map.remove(&s);
            self.covered -= e - s;
            if e > x {
                self.map.insert(x, e);
                self.covered += e - x;
                break;
            }
        }
    }

    /// The lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.map.iter().next().map(|(&s, &e)| (s, e))
    }

    /// The highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.map.iter().next_back().map(|(&s, &e)| (s, e))
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(&s, &e)| (s, e))
    }

    /// Removes every range.
    pub fn clear(&mut self) {
        self.map.clear();
        self.covered = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn merges_and_reports_new_pieces() {
        let mut r = RangeSet::new();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(30, 40), 10);
        let mut pieces = Vec::new();
        assert_eq!(r.insert_with(5, 45, |s, e| pieces.push((s, e))), 20);
        assert_eq!(pieces, vec![(5, 10), (20, 30), (40, 45)]);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(5, 45)]);
        assert_eq!(r.covered(), 40);
        assert_eq!(r.insert(45, 50), 5); // adjacent merges
        assert_eq!(r.len(), 1);
        assert_eq!(r.insert(6, 9), 0);
    }

    #[test]
    fn queries() {
        let mut r = RangeSet::new();
        r.insert(10, 20);
        r.insert(30, 40);
        assert!(r.contains(10) && !r.contains(20) && r.contains(39));
        assert!(r.contains_range(12, 20) && !r.contains_range(12, 31));
        assert!(r.intersects(19, 31) && !r.intersects(20, 30));
        assert_eq!(r.range_containing(35), Some((30, 40)));
        r.remove_below(15);
        assert_eq!(r.first(), Some((15, 20)));
        assert_eq!(r.covered(), 15);
        r.remove_below(35);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(35, 40)]);
    }

    proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u64..200, 0u64..30), 1..40)) {
            let mut r = RangeSet::new();
            let mut bits = vec![false; 256];
            for (s, l) in ops {
                let mut newly = 0;
                for b in &mut bits[s as usize..(s + l) as usize] { if !*b { newly += 1; *b = true; } }
                prop_assert_eq!(r.insert(s, s + l), newly);
            }
            prop_assert_eq!(r.covered(), bits.iter().filter(|b| **b).count() as u64);
            let mut prev_end = None;
            for (s, e) in r.iter() {
                prop_assert!(s < e);
                if let Some(p) = prev_end { prop_assert!(s > p); }
                prev_end = Some(e);
                for x in s..e { prop_assert!(bits[x as usize]); }
            }
        }
    }
}
