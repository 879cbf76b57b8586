//! BBRv3's windowed filters (draft-ietf-ccwg-bbr-06 sections 5.5.3-5.5.6 and
//! 5.5.9) and the deterministic generator behind its randomized probe wait
//! (section 5.3.3.8).

/// The max-bandwidth filter: the maximum delivery rate over the current and
/// the previous ProbeBW cycle (section 2.11, `MaxBwFilterLen` = 2; the
/// virtual time is `cycle_count`, section 5.5.6). Rates in bytes per second.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MaxBwFilter {
    /// `[previous cycle, current cycle]`.
    slots: [f64; 2],
}

impl MaxBwFilter {
    /// The estimate: the larger of the two cycles' maxima (0 before any sample).
    pub fn get(&self) -> f64 {
        self.slots[0].max(self.slots[1])
    }
    /// Folds a sample into the current cycle.
    pub fn update(&mut self, rate: f64) {
        self.slots[1] = self.slots[1].max(rate);
    }
    /// `AdvanceMaxBwFilter`: a new cycle starts; the oldest one is forgotten.
    pub fn advance(&mut self) {
        self.slots = [self.slots[1], 0.0];
    }
}

/// A windowed maximum over packet-timed rounds (the extra-acked filter of
/// section 5.5.9): one entry per round, the newest `len` rounds kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundMaxFilter {
    /// `(round, max in that round)`, oldest first.
    entries: std::collections::VecDeque<(u64, u64)>,
}

impl RoundMaxFilter {
    /// Adds `value` seen in `round` and forgets rounds older than `len`
    /// rounds; returns the maximum over the window.
    pub fn update(&mut self, round: u64, value: u64, len: u32) -> u64 {
        let len = len.max(1) as u64;
        match self.entries.back_mut() {
            Some((r, v)) if *r == round => *v = (*v).max(value),
            _ => self.entries.push_back((round, value)),
        }
        while self.entries.front().is_some_and(|&(r, _)| r + len <= round) {
            self.entries.pop_front();
        }
        self.get()
    }
    /// The maximum over the kept rounds (0 when empty).
    pub fn get(&self) -> u64 {
        self.entries.iter().map(|e| e.1).max().unwrap_or(0)
    }
}

/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014): the draft's
/// `random_int_between` and `random_float_between` (section 5.3.3.8). The
/// sans-IO core reads no clock and no global generator: the state starts
/// from the `seed` parameter and the instant the connection opened, so a
/// run is repeatable and two flows opened at different instants draw
/// different waits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator starting at `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    /// Mixes `x` into the state.
    pub fn mix(&mut self, x: u64) {
        self.0 ^= x.rotate_left(17);
        self.next_u64();
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_bw_covers_two_cycles() {
        let mut f = MaxBwFilter::default();
        f.update(10.0);
        f.update(7.0);
        assert_eq!(f.get(), 10.0);
        f.advance();
        f.update(5.0);
        assert_eq!(f.get(), 10.0, "the previous cycle still counts");
        f.advance();
        assert_eq!(f.get(), 5.0, "two cycles later it is gone");
        f.advance();
        assert_eq!(f.get(), 0.0);
    }

    #[test]
    fn round_max_forgets_old_rounds() {
        let mut f = RoundMaxFilter::default();
        assert_eq!(f.update(1, 9, 2), 9);
        assert_eq!(f.update(2, 3, 2), 9);
        assert_eq!(f.update(3, 4, 2), 4);
        assert_eq!(f.update(3, 1, 1), 4);
        assert_eq!(f.update(4, 2, 1), 2);
    }

    #[test]
    fn generator_is_repeatable_and_seeded() {
        let draw = |seed| {
            let mut g = SplitMix64::new(seed);
            (0..4).map(|_| g.next_f64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        assert!(draw(3).iter().all(|x| (0.0..1.0).contains(x)));
    }
}
