//! The two estimators of BBR's path model (draft, "BBR Network Path Model").
//!
//! * [`MaxBwFilter`]: BBR.BtlBw, the maximum delivery rate over the last N
//!   packet-timed round trips ("BBR.BtlBw Max Filter"). The draft suggests
//!   Kathleen Nichols' three-sample windowed filter; that filter is an
//!   approximation which, when its best sample expires, can fall back to a
//!   value below a sample still inside the window. Because the window here is
//!   counted in rounds (small integers), an exact filter costs no more: one
//!   entry per round of the window, the running maximum of the current round
//!   updated in O(1) per sample, and the maximum of the earlier rounds
//!   recomputed once per round (O(N) per round trip, not per ACK).
//! * [`MinRttFilter`]: BBR.RTprop, "BBR.RTprop Min Filter" as the draft
//!   specifies it: the lowest RTT sample, replaced by any lower or equal sample
//!   and by whatever sample arrives once the estimate is older than the window.
//!   That expiry is what sends BBR into PROBE_RTT.

use crate::time::{Duration, Instant};

/// Exact windowed maximum over the last `window` rounds: a sample taken in
/// round `r` counts while the latest round `t` seen satisfies `t - r < window`
/// (with a window of 10, rounds `t - 9 ..= t`).
///
/// Time only moves with samples: between updates the filter keeps answering
/// as of the last round it saw, as the draft's filter does.
#[derive(Clone, Debug)]
pub struct MaxBwFilter {
    /// `slots[r % window]` = `(r, maximum of round r)`; `u64::MAX` marks an
    /// unused slot.
    slots: Vec<(u64, u64)>,
    /// The latest round seen, `None` before the first sample.
    round: Option<u64>,
    /// Maximum of the rounds before `round` that are still in the window.
    earlier: u64,
}

impl MaxBwFilter {
    /// An empty filter over `window` rounds (at least 1).
    pub fn new(window: u32) -> Self {
        MaxBwFilter {
            slots: vec![(u64::MAX, 0); window.max(1) as usize],
            round: None,
            earlier: 0,
        }
    }

    /// The window length in rounds.
    pub fn window(&self) -> u64 {
        self.slots.len() as u64
    }

    /// The maximum over the window, `None` before the first sample.
    pub fn get(&self) -> Option<u64> {
        let r = self.round?;
        Some(self.earlier.max(self.slot(r)))
    }

    /// Feeds `value` measured in round `round` (rounds never go back; a sample
    /// from an earlier round than the latest is counted in the latest) and
    /// returns the new maximum.
    pub fn update(&mut self, round: u64, value: u64) -> u64 {
        let round = match self.round {
            Some(cur) if round <= cur => cur,
            _ => {
                self.advance(round);
                round
            }
        };
        let n = self.window();
        let slot = &mut self.slots[(round % n) as usize];
        if slot.0 == round {
            slot.1 = slot.1.max(value);
        } else {
            *slot = (round, value);
        }
        self.earlier.max(slot.1)
    }

    fn slot(&self, round: u64) -> u64 {
        let s = self.slots[(round % self.window()) as usize];
        if s.0 == round {
            s.1
        } else {
            0
        }
    }

    /// Moves the window to end at `round`; recomputes the maximum of the
    /// earlier rounds still inside it.
    fn advance(&mut self, round: u64) {
        self.round = Some(round);
        let oldest = (round + 1).saturating_sub(self.window());
        self.earlier = self
            .slots
            .iter()
            .filter(|s| s.0 >= oldest && s.0 < round)
            .map(|s| s.1)
            .max()
            .unwrap_or(0);
    }
}

/// BBR.RTprop: the minimum RTT and when it was last lowered or matched
/// (draft, "Updating the BBR.RTprop Min Filter").
#[derive(Clone, Debug)]
pub struct MinRttFilter {
    window: Duration,
    value: Option<Duration>,
    stamp: Instant,
    /// The estimate's lifetime was restarted without a measurement (a
    /// PROBE_RTT that took no RTT sample): the next sample replaces it.
    unmeasured: bool,
}

impl MinRttFilter {
    /// An empty estimate whose window is `window`.
    pub fn new(window: Duration) -> Self {
        MinRttFilter {
            window,
            value: None,
            stamp: Instant::ZERO,
            unmeasured: false,
        }
    }

    /// The estimate, `None` before the first sample.
    pub fn get(&self) -> Option<Duration> {
        self.value
    }

    /// When the estimate was last set, lowered or matched (or refreshed).
    pub fn stamp(&self) -> Instant {
        self.stamp
    }

    /// True once the estimate is strictly older than the window at `now`
    /// (never for an empty filter).
    pub fn is_expired(&self, now: Instant) -> bool {
        self.value.is_some() && now > self.stamp.saturating_add(self.window)
    }

    /// Feeds an RTT sample taken at `now`: it becomes the estimate if it is
    /// lower than or equal to it, or if the estimate had expired. Returns
    /// whether the estimate had expired (the draft's `rtprop_expired`).
    pub fn update(&mut self, now: Instant, rtt: Duration) -> bool {
        let expired = self.is_expired(now);
        if self.value.is_none_or(|v| rtt <= v) || expired || self.unmeasured {
            self.value = Some(rtt);
            self.stamp = now;
            self.unmeasured = false;
        }
        expired
    }

    /// Restarts the estimate's lifetime at `now` without changing it (the
    /// draft does this when PROBE_RTT ends). `measured` is false when no RTT
    /// sample arrived since the estimate expired: the estimate is then kept
    /// only until the next sample, which replaces it whatever its value (our
    /// choice; the draft and Linux keep the stale value for a whole window).
    pub fn refresh(&mut self, now: Instant, measured: bool) {
        self.stamp = now;
        self.unmeasured |= !measured;
    }

    /// True while the estimate awaits the sample that replaces it
    /// ([`MinRttFilter::refresh`] without a measurement).
    pub fn is_unmeasured(&self) -> bool {
        self.unmeasured
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Instant {
        Instant::from_nanos(t * 1_000_000)
    }

    #[test]
    fn max_filter_is_empty_until_the_first_sample() {
        let f = MaxBwFilter::new(10);
        assert_eq!(f.get(), None);
        let mut f = MaxBwFilter::new(10);
        assert_eq!(f.update(0, 0), 0);
        assert_eq!(f.get(), Some(0));
    }

    #[test]
    fn max_filter_keeps_the_maximum_of_the_window() {
        let mut f = MaxBwFilter::new(10);
        for (round, v) in [(0, 5), (0, 9), (0, 7), (1, 3), (2, 8), (3, 1)] {
            f.update(round, v);
        }
        assert_eq!(f.get(), Some(9));
        // A later, lower sample never lowers the maximum inside the window.
        f.update(9, 2);
        assert_eq!(f.get(), Some(9), "round 0 is still inside rounds 0..=9");
    }

    #[test]
    fn max_filter_expires_a_sample_after_exactly_window_rounds() {
        let mut f = MaxBwFilter::new(10);
        f.update(0, 100);
        f.update(1, 50);
        f.update(5, 70);
        assert_eq!(f.update(9, 10), 100, "rounds 0..=9: round 0 counts");
        // Round 10: round 0 leaves, the best of rounds 1..=10 is round 5's 70.
        assert_eq!(f.update(10, 10), 70);
        assert_eq!(f.update(14, 10), 70, "round 5 counts up to round 14");
        assert_eq!(f.update(15, 10), 10, "round 5 left at round 15");
    }

    #[test]
    fn max_filter_is_exact_where_a_three_sample_filter_is_not() {
        // A best sample, then a slightly lower one, then low ones: when the best
        // expires, the second (still in the window) must take over. Nichols'
        // filter never keeps round 1's 99 (below the best, within the first
        // quarter of the window) and falls back to 98 when the best expires.
        let mut f = MaxBwFilter::new(10);
        f.update(0, 100);
        f.update(1, 99);
        f.update(3, 98);
        for r in 4..=10 {
            f.update(r, 1);
        }
        assert_eq!(f.get(), Some(99), "round 1's 99 is in rounds 1..=10");
        f.update(11, 1);
        assert_eq!(f.get(), Some(98));
        f.update(12, 1);
        assert_eq!(f.get(), Some(98));
        f.update(13, 1);
        assert_eq!(f.get(), Some(1));
    }

    #[test]
    fn max_filter_jumping_past_the_window_forgets_everything() {
        let mut f = MaxBwFilter::new(10);
        f.update(3, 100);
        assert_eq!(f.update(40, 7), 7);
        // Stale slots written long ago with the same index do not come back.
        assert_eq!(f.update(43, 1), 7);
        assert_eq!(f.get(), Some(7));
    }

    #[test]
    fn max_filter_of_one_round_is_the_current_round() {
        let mut f = MaxBwFilter::new(1);
        f.update(0, 9);
        assert_eq!(f.update(0, 3), 9);
        assert_eq!(f.update(1, 3), 3);
    }

    #[test]
    fn max_filter_matches_brute_force() {
        // Pseudo-random samples, several per round, rounds advancing by 0..3.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for window in [1u32, 2, 3, 10, 17] {
            let mut f = MaxBwFilter::new(window);
            let mut all: Vec<(u64, u64)> = Vec::new();
            let mut round = 0u64;
            for _ in 0..3000 {
                round += next() % 4 / 2; // mostly the same round, sometimes +1
                if next() % 50 == 0 {
                    round += next() % 15;
                }
                let v = next() % 1000;
                all.push((round, v));
                let got = f.update(round, v);
                let want = all
                    .iter()
                    .filter(|(r, _)| round - r < window as u64)
                    .map(|s| s.1)
                    .max()
                    .unwrap();
                assert_eq!(got, want, "window {window} round {round}");
                assert_eq!(f.get(), Some(want));
            }
        }
    }

    #[test]
    fn min_rtt_takes_lower_and_equal_samples() {
        let mut f = MinRttFilter::new(Duration::from_secs(10));
        assert_eq!(f.get(), None);
        assert!(
            !f.is_expired(ms(1_000_000)),
            "an empty filter never expires"
        );
        assert!(!f.update(ms(0), Duration::from_millis(100)));
        assert!(!f.update(ms(100), Duration::from_millis(120)));
        assert_eq!(f.get(), Some(Duration::from_millis(100)));
        assert_eq!(f.stamp(), ms(0), "a higher sample does not refresh");
        f.update(ms(200), Duration::from_millis(90));
        assert_eq!(
            (f.get(), f.stamp()),
            (Some(Duration::from_millis(90)), ms(200))
        );
        f.update(ms(300), Duration::from_millis(90));
        assert_eq!(f.stamp(), ms(300), "an equal sample refreshes the stamp");
    }

    #[test]
    fn min_rtt_expires_strictly_after_the_window() {
        let mut f = MinRttFilter::new(Duration::from_secs(10));
        f.update(ms(1000), Duration::from_millis(100));
        // At exactly stamp + 10 s the estimate still holds.
        assert!(!f.is_expired(ms(11_000)));
        assert!(!f.update(ms(11_000), Duration::from_millis(150)));
        assert_eq!(f.get(), Some(Duration::from_millis(100)));
        // One nanosecond later any sample replaces it, even a higher one.
        let later = ms(11_000) + Duration::from_nanos(1);
        assert!(f.is_expired(later));
        assert!(f.update(later, Duration::from_millis(150)));
        assert_eq!(
            (f.get(), f.stamp()),
            (Some(Duration::from_millis(150)), later)
        );
        assert!(!f.is_expired(later + Duration::from_secs(10)));
        // refresh() restarts the lifetime without changing the value.
        f.refresh(ms(30_000), true);
        assert!(!f.is_expired(ms(40_000)));
        assert!(f.is_expired(ms(40_001)));
        assert_eq!(f.get(), Some(Duration::from_millis(150)));
    }

    /// A refresh without a measurement (a PROBE_RTT in which every ACK
    /// covered retransmitted data) keeps the schedule but lets the next
    /// sample replace the estimate, even a higher one: after a handover to a
    /// longer path the old path's RTT must not survive another window.
    #[test]
    fn an_unmeasured_refresh_lets_the_next_sample_replace_the_estimate() {
        let mut f = MinRttFilter::new(Duration::from_secs(10));
        f.update(ms(0), Duration::from_millis(68));
        assert!(f.is_expired(ms(10_001)));
        f.refresh(ms(10_500), false);
        assert!(!f.is_expired(ms(10_600)));
        assert!(f.is_unmeasured());
        assert!(!f.update(ms(11_000), Duration::from_millis(485)));
        assert_eq!(f.get(), Some(Duration::from_millis(485)));
        assert_eq!(f.stamp(), ms(11_000));
        // measured again: a higher sample no longer replaces it
        f.update(ms(11_100), Duration::from_millis(500));
        assert_eq!(f.get(), Some(Duration::from_millis(485)));
        // a measured refresh only restarts the lifetime
        f.refresh(ms(12_000), true);
        f.update(ms(12_100), Duration::from_millis(490));
        assert_eq!(f.get(), Some(Duration::from_millis(485)));
    }
}
