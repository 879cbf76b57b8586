//! Connection-level reassembly (RFC 8684 section 3.3: the receiver
//! reorders data arriving on any subflow by data sequence number before
//! the application reads it): the data ranges received, and the in-order
//! point below which everything arrived. The sender keeps the same
//! structure for what the data ACKs cover (section 3.3.2).

use crate::ranges::RangeSet;

/// Data ranges received (or acknowledged), and the in-order prefix.
#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    ranges: RangeSet,
    /// Bytes received more than once (duplicates across subflows:
    /// reinjections and the redundant scheduler).
    duplicate: u64,
}

impl Reassembly {
    /// Adds data bytes `start..end`; returns how many were new.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let new = self.ranges.insert(start, end);
        self.duplicate += (end - start) - new;
        new
    }

    /// The in-order point: every data byte below it arrived (the data ACK
    /// the receiver sends, RFC 8684 section 3.3.2).
    pub fn in_order(&self) -> u64 {
        match self.ranges.first() {
            Some((0, end)) => end,
            _ => 0,
        }
    }

    /// True if every byte of `start..end` arrived.
    pub fn contains(&self, start: u64, end: u64) -> bool {
        start >= end || self.ranges.contains_range(start, end)
    }

    /// Bytes above the in-order point held for reordering.
    pub fn held(&self) -> u64 {
        self.ranges.covered() - self.in_order()
    }

    /// Bytes that arrived more than once.
    pub fn duplicate(&self) -> u64 {
        self.duplicate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reorders_across_subflows_and_counts_duplicates() {
        let mut r = Reassembly::default();
        assert_eq!(r.insert(1000, 2000), 1000);
        assert_eq!(r.in_order(), 0);
        assert_eq!(r.held(), 1000);
        assert_eq!(r.insert(0, 1000), 1000);
        assert_eq!(r.in_order(), 2000);
        // a reinjected copy
        assert_eq!(r.insert(500, 1500), 0);
        assert_eq!(r.duplicate(), 1000);
        assert!(r.contains(0, 2000));
        assert!(!r.contains(1500, 2500));
        assert_eq!(r.held(), 0);
    }
}
