//! One direction of a link: a drop-tail queue, a rate server, a loss model and
//! a propagation pipe.
//!
//! A packet arriving at a direction waits in the queue (or is dropped if the
//! queue is full), is serialised at the direction's rate, may be lost by the
//! loss model once serialised, then propagates for the delay. The pipe is a
//! first-in first-out ring: when the delay drops, later packets queue behind
//! earlier ones instead of overtaking them. The direction keeps at most one
//! pending transmission event and one pending arrival event.
//!
//! Outages: a packet is lost if any part of its time on the link (from the start
//! of its serialisation to its arrival) overlaps an outage window. Packets
//! queued when an outage starts keep being serialised at the link rate and are
//! lost; so is everything that arrives during the outage.

use crate::rng::Rng;
use crate::scenario::LossSpec;
use wavelab_tcp::Instant;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The queue was full.
    Queue = 0,
    /// The random loss model.
    Random = 1,
    /// An outage window.
    Outage = 2,
}

impl DropCause {
    /// Names, indexed by the cause's code.
    pub const NAMES: [&'static str; 3] = ["queue", "random", "outage"];
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets offered to the direction.
    pub arrived: u64,
    /// Packets serialised.
    pub sent_packets: u64,
    /// Bytes serialised.
    pub sent_bytes: u64,
    /// Packets that reached the far end.
    pub delivered_packets: u64,
    /// Bytes that reached the far end.
    pub delivered_bytes: u64,
    /// Drops, indexed by [`DropCause`].
    pub dropped: [u64; 3],
    /// Largest number of packets waiting.
    pub max_queue_packets: u64,
    /// Largest number of bytes waiting.
    pub max_queue_bytes: u64,
}

/// A loss model with its own random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    spec: LossSpec,
    bad: bool,
    rng: Rng,
}

impl LossModel {
    /// A model in its good state.
    pub fn new(spec: LossSpec, rng: Rng) -> Self {
        LossModel {
            spec,
            bad: false,
            rng,
        }
    }
    /// Replaces the model (the random stream continues).
    pub fn set(&mut self, spec: LossSpec) {
        self.spec = spec;
        self.bad = false;
    }
    /// Decides the fate of one packet.
    #[inline]
    pub fn lose(&mut self) -> bool {
        // a lossless link, the common case, draws nothing: no call
        !matches!(self.spec, LossSpec::None) && self.draw()
    }

    /// Draws the fate of one packet on a lossy link.
    #[inline(never)]
    fn draw(&mut self) -> bool {
        match self.spec {
            LossSpec::None => false,
            LossSpec::Bernoulli { p } => self.rng.chance(p),
            LossSpec::GilbertElliott {
                p_good_bad,
                p_bad_good,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.bad { p_bad_good } else { p_good_bad };
                if self.rng.chance(flip) {
                    self.bad = !self.bad;
                }
                self.rng.chance(if self.bad { loss_bad } else { loss_good })
            }
        }
    }
}

/// Sorted, merged outage windows `[start, end)`.
#[derive(Clone, Debug, Default)]
pub struct Outages(Vec<(Instant, Instant)>);

impl Outages {
    /// Builds the set from possibly overlapping windows.
    pub fn new(mut windows: Vec<(Instant, Instant)>) -> Self {
        windows.sort();
        let mut merged: Vec<(Instant, Instant)> = Vec::with_capacity(windows.len());
        for (s, e) in windows {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Outages(merged)
    }
    /// Adds the window `[start, end)` (merging with overlapping ones).
    pub fn insert(&mut self, start: Instant, end: Instant) {
        let mut all = std::mem::take(&mut self.0);
        all.push((start, end));
        *self = Outages::new(all);
    }

    /// True if there is no window.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True if `[a, b]` overlaps a window.
    #[inline]
    pub fn overlaps(&self, a: Instant, b: Instant) -> bool {
        // before the first window or after the last, the common cases: no
        // search
        match (self.0.first(), self.0.last()) {
            (Some(first), Some(last)) if first.0 <= b && a < last.1 => {}
            _ => return false,
        }
        let i = self.0.partition_point(|w| w.1 <= a);
        self.0.get(i).is_some_and(|w| w.0 <= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn outage_overlap() {
        let o = Outages::new(vec![(t(100), t(200)), (t(150), t(300)), (t(500), t(600))]);
        assert!(!o.overlaps(t(0), t(99)));
        assert!(o.overlaps(t(90), t(100)));
        assert!(o.overlaps(t(250), t(260)));
        assert!(!o.overlaps(t(300), t(499)));
        assert!(
            o.overlaps(t(0), t(1000)),
            "a packet in the air across the whole outage"
        );
        // the ends: a window is [start, end), a packet's span [a, b]
        assert!(o.overlaps(t(550), t(2000)));
        assert!(o.overlaps(t(599), t(599)));
        assert!(!o.overlaps(t(600), t(700)), "after the last window");
        assert!(!o.overlaps(t(0), t(0)));
        assert!(!Outages::new(vec![]).overlaps(t(0), t(1000)));
    }

    #[test]
    fn gilbert_elliott_loses_in_bursts() {
        let spec = LossSpec::GilbertElliott {
            p_good_bad: 0.01,
            p_bad_good: 0.2,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut m = LossModel::new(spec, Rng::derive(3, Stream::LinkLoss(0)));
        let v: Vec<bool> = (0..100_000).map(|_| m.lose()).collect();
        let rate = v.iter().filter(|x| **x).count() as f64 / v.len() as f64;
        // stationary bad-state probability 0.01 / (0.01 + 0.2) = 4.8 %
        assert!((rate - 0.0476).abs() < 0.006, "{rate}");
        let runs = v.windows(2).filter(|w| w[0] && !w[1]).count() as f64;
        let mean_burst = v.iter().filter(|x| **x).count() as f64 / runs;
        assert!((mean_burst - 5.0).abs() < 0.6, "mean burst {mean_burst}");
    }
}
