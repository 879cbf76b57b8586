//! 32-bit TCP sequence numbers with wrap-around arithmetic (RFC 793 section 3.3),
//! and their mapping to 64-bit stream offsets used inside the endpoints.
//!
//! On the wire a sequence number is 32 bits and wraps. Inside the sender and the
//! receiver every position is a `u64` stream offset (offset 0 is the first data
//! byte, the one after the SYN), so bookkeeping never has to reason about
//! wrapping. [`SeqNum::to_offset`] converts back, choosing the offset nearest to a
//! reference point, which is correct as long as the two are less than 2^31 apart
//! (the window can never be that large).

use core::fmt;
use core::ops::{Add, Sub};

/// A 32-bit sequence or acknowledgment number as carried in a TCP header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// True if `self` comes strictly before `other` in sequence space.
    pub fn lt(self, other: SeqNum) -> bool {
        (self.0.wrapping_sub(other.0) as i32) < 0
    }
    /// True if `self` comes before or equals `other`.
    pub fn le(self, other: SeqNum) -> bool {
        self == other || self.lt(other)
    }
    /// True if `self` comes strictly after `other`.
    pub fn gt(self, other: SeqNum) -> bool {
        other.lt(self)
    }
    /// Signed distance `self - other` in sequence space.
    pub fn diff(self, other: SeqNum) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }
    /// The sequence number of stream offset `offset` for a stream whose first data
    /// byte has sequence number `base` (ISN + 1).
    pub fn from_offset(base: SeqNum, offset: u64) -> SeqNum {
        SeqNum(base.0.wrapping_add(offset as u32))
    }
    /// The stream offset of this sequence number, for a stream whose first data byte
    /// is `base`, choosing among all offsets with the same low 32 bits the one
    /// closest to `reference`. Offsets below zero clamp to zero.
    pub fn to_offset(self, base: SeqNum, reference: u64) -> u64 {
        let low = self.0.wrapping_sub(base.0);
        let ref_low = reference as u32;
        let delta = low.wrapping_sub(ref_low) as i32 as i64;
        let candidate = reference as i64 + delta;
        candidate.max(0) as u64
    }
}

impl Add<u32> for SeqNum {
    type Output = SeqNum;
    fn add(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }
}
impl Sub<u32> for SeqNum {
    type Output = SeqNum;
    fn sub(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_sub(n))
    }
}
impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn comparisons_wrap() {
        let a = SeqNum(u32::MAX - 5);
        let b = a + 10;
        assert_eq!(b, SeqNum(4));
        assert!(a.lt(b));
        assert!(b.gt(a));
        assert!(a.le(a));
        assert_eq!(b.diff(a), 10);
        assert_eq!(a.diff(b), -10);
    }

    #[test]
    fn offsets_across_the_wrap() {
        let base = SeqNum(u32::MAX - 100);
        let off = 5_000_000_000u64;
        let s = SeqNum::from_offset(base, off);
        assert_eq!(s.to_offset(base, off - 1_000_000), off);
        assert_eq!(s.to_offset(base, off + 1_000_000), off);
        assert_eq!(SeqNum::from_offset(base, 0).to_offset(base, 10), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: crate::testing::cases("WAVELAB_SEQ_CASES", 256),
            ..ProptestConfig::default()
        })]

        #[test]
        fn offset_roundtrip(base in any::<u32>(), off in 0u64..(1u64 << 48), skew in -(1i64 << 30)..(1i64 << 30)) {
            let base = SeqNum(base);
            let s = SeqNum::from_offset(base, off);
            let reference = (off as i64 + skew).max(0) as u64;
            prop_assert_eq!(s.to_offset(base, reference), off);
        }
    }
}
