//! A set of disjoint half-open `u64` ranges, kept merged and sorted in a ring
//! buffer. Used by the receiver for out-of-order data and by the sender for
//! its SACK scoreboard. Lookups are binary searches; new ranges usually land
//! at the top (SACK blocks above what is known) and old ones leave at the
//! bottom (cumulative ACKs), both O(1); a range inserted in the middle shifts
//! the shorter side. An empty set costs nothing and allocates nothing.

use std::collections::VecDeque;

/// Disjoint, non-adjacent half-open ranges `[start, end)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: VecDeque<(u64, u64)>,
    covered: u64,
}

impl RangeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// True if the set is empty.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Total length covered.
    pub fn covered(&self) -> u64 {
        self.covered
    }

    /// Index of the first range that ends at or after `x` (so it contains
    /// `x`, touches it, or lies above it).
    fn first_reaching(&self, x: u64) -> usize {
        self.ranges.partition_point(|&(_, e)| e < x)
    }

    /// Index of the first range that ends after `x` (so it contains `x` or
    /// lies above it).
    fn first_past(&self, x: u64) -> usize {
        self.ranges.partition_point(|&(_, e)| e <= x)
    }

    /// Adds `[start, end)`, calling `on_new(s, e)` for each piece that was not
    /// covered before, in ascending order. Returns the bytes newly covered.
    pub fn insert_with(&mut self, start: u64, end: u64, mut on_new: impl FnMut(u64, u64)) -> u64 {
        if start >= end {
            return 0;
        }
        // the ranges that overlap or touch [start, end) are [i, j)
        let i = self.first_reaching(start);
        let mut j = i;
        let mut cursor = start;
        let mut added = 0;
        let (mut new_start, mut new_end) = (start, end);
        while j < self.ranges.len() && self.ranges[j].0 <= end {
            let (rs, re) = self.ranges[j];
            if rs > cursor {
                on_new(cursor, rs);
                added += rs - cursor;
            }
            cursor = cursor.max(re);
            new_start = new_start.min(rs);
            new_end = new_end.max(re);
            self.covered -= re - rs;
            j += 1;
        }
        if cursor < end {
            on_new(cursor, end);
            added += end - cursor;
        }
        self.covered += new_end - new_start;
        match j - i {
            0 => self.ranges.insert(i, (new_start, new_end)),
            1 => self.ranges[i] = (new_start, new_end),
            _ => {
                self.ranges[i] = (new_start, new_end);
                self.ranges.drain(i + 1..j);
            }
        }
        added
    }

    /// Adds `[start, end)`; returns the bytes newly covered.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        self.insert_with(start, end, |_, _| {})
    }

    /// The range containing `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.first_past(x);
        match self.ranges.get(i) {
            Some(&(s, e)) if s <= x => Some((s, e)),
            _ => None,
        }
    }

    /// True if `[start, end)` is entirely covered (an empty range is covered).
    pub fn contains_range(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        matches!(self.range_containing(start), Some((_, e)) if e >= end)
    }

    /// True if `x` is covered.
    pub fn contains(&self, x: u64) -> bool {
        self.range_containing(x).is_some()
    }

    /// True if any part of `[start, end)` is covered.
    pub fn intersects(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return false;
        }
        let i = self.first_past(start);
        matches!(self.ranges.get(i), Some(&(s, _)) if s < end)
    }

    /// Removes everything below `x` (trimming a range that straddles it).
    pub fn remove_below(&mut self, x: u64) {
        while let Some(&(s, e)) = self.ranges.front() {
            if s >= x {
                break;
            }
            if e > x {
                self.ranges[0] = (x, e);
                self.covered -= x - s;
                break;
            }
            self.ranges.pop_front();
            self.covered -= e - s;
        }
    }

    /// The lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.front().copied()
    }

    /// The highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.ranges.back().copied()
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().copied()
    }

    /// Removes every range.
    pub fn clear(&mut self) {
        self.ranges.clear();
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
        #![proptest_config(ProptestConfig {
            cases: crate::testing::cases("WAVELAB_RANGES_CASES", 256),
            ..ProptestConfig::default()
        })]

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

        /// Every query, the reported new pieces and `remove_below`, against a
        /// bitmap.
        #[test]
        fn queries_match_a_bitmap(
            ops in proptest::collection::vec((0u64..200, 0u64..30), 1..30),
            cut in 0u64..230,
            probes in proptest::collection::vec((0u64..240, 0u64..20), 20),
        ) {
            let mut r = RangeSet::new();
            let mut bits = vec![false; 300];
            for (s, l) in ops {
                let mut pieces = Vec::new();
                r.insert_with(s, s + l, |a, b| pieces.push((a, b)));
                let mut want = Vec::new();
                for x in s..s + l {
                    if !bits[x as usize] {
                        match want.last_mut() {
                            Some((_, e)) if *e == x => *e = x + 1,
                            _ => want.push((x, x + 1)),
                        }
                        bits[x as usize] = true;
                    }
                }
                prop_assert_eq!(pieces, want);
            }
            let check = |r: &RangeSet, bits: &[bool]| -> Result<(), TestCaseError> {
                for &(x, l) in &probes {
                    let covered = bits[x as usize];
                    prop_assert_eq!(r.contains(x), covered);
                    let all = (x..x + l).all(|y| bits[y as usize]);
                    let any = (x..x + l).any(|y| bits[y as usize]);
                    prop_assert_eq!(r.contains_range(x, x + l), all);
                    prop_assert_eq!(r.intersects(x, x + l), any);
                    match r.range_containing(x) {
                        Some((s, e)) => {
                            prop_assert!(covered && s <= x && x < e);
                            prop_assert!(s == 0 || !bits[s as usize - 1]);
                            prop_assert!(!bits[e as usize]);
                        }
                        None => prop_assert!(!covered),
                    }
                }
                prop_assert_eq!(r.covered(), bits.iter().filter(|b| **b).count() as u64);
                Ok(())
            };
            check(&r, &bits)?;
            r.remove_below(cut);
            for b in &mut bits[..cut as usize] { *b = false; }
            check(&r, &bits)?;
            prop_assert!(r.first().is_none_or(|(s, _)| s >= cut));
        }
    }
}
