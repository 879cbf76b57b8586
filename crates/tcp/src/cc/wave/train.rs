//! TCP Wave's measurements: the bursts in flight, their ACK trains, and the RTT
//! statistics built from one sample per burst.
//!
//! A burst is the data one timer expiry released: `[start, end)` in stream
//! offsets, the send time of its first packet. Its ACK train is the ACKs that
//! acknowledge its data. The first ACK of the train gives the burst's RTT
//! sample (first packet sent to first ACK received); the ACK that covers the
//! burst's last byte closes the train, and the time between the first and the
//! last ACK is the train's dispersion.
//!
//! Trains that do not measure the path cleanly are not taken at face value:
//! * an ACK that acknowledges more than two segments at once (a cumulative ACK
//!   after a loss was repaired) gives one RTT sample at most, however many
//!   trains it closes; the sample (inflated by the repair) goes to the RTO
//!   estimator, the statistics use the average RTT instead;
//! * a train cut by a loss (duplicate ACKs arrived during it, or a cumulative
//!   ACK closed it) gives no dispersion sample: the time it took measures the
//!   repair, not the path. Its closing still updates TxTime from the smoothed
//!   dispersion (DCNET 2016, section 3.2: after an outage the first cumulative
//!   ACK brings TxTime back to the old link's value), so the bursts keep
//!   coming and keep producing the duplicate ACKs that repair the next hole.
//!   (Taking such trains' dispersion from the delivery rate, which collapses
//!   during a repair, stretched TxTime to its maximum and slowed the repair
//!   itself: a spiral we observed before choosing this rule);
//! * the train ends at the last ACK that acknowledges only this burst's data.
//!   A receiver that ACKs every second segment pairs the last segment of a
//!   burst with an odd number of segments with the *next* burst's first one, so
//!   the ACK that finally covers the burst comes a whole TxTime later; taken at
//!   face value this makes the dispersion equal to TxTime, which then never
//!   shrinks (a lock-in we observed after the first burst shortened by a fast
//!   retransmission). The dispersion is then extrapolated from the part of the
//!   train inside the burst: span × (bytes after the first ACK) / (bytes
//!   between the first and the last ACK inside the burst). For a train not
//!   affected this is exactly the time between its first and last ACK;
//! * a clean train with a single ACK inside its burst (zero dispersion) takes
//!   its dispersion from the delivery-rate estimate (burst bytes / rate), or
//!   keeps the average.

use crate::time::{Duration, Instant, Rate};
use std::collections::VecDeque;

/// One burst in flight.
#[derive(Clone, Copy, Debug)]
pub struct Burst {
    /// Lowest stream offset sent in the burst.
    pub start: u64,
    /// End (exclusive) of the highest offset sent in the burst.
    pub end: u64,
    /// Payload bytes sent.
    pub bytes: u64,
    /// Segments sent.
    pub segments: u32,
    /// When its first packet was sent.
    pub sent_at: Instant,
    /// When the first ACK of its train arrived, and the offset it acknowledged.
    pub first_ack: Option<(Instant, u64)>,
    /// The last ACK so far that stayed inside the burst: when, and its offset.
    pub last_inside: Option<(Instant, u64)>,
    /// Duplicate ACKs arrived while its train was in progress.
    pub cut: bool,
}

/// What one ACK did to the trains.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainUpdate {
    /// The RTT sample for the RTO estimator (one per ACK at most).
    pub rto_sample: Option<Duration>,
    /// A closed train's dispersion sample, if one closed cleanly.
    pub dispersion: Option<Duration>,
    /// True if the ACK closed at least one train (cleanly or not).
    pub closed: bool,
}

/// The RTT statistics of TCP Wave.
#[derive(Clone, Copy, Debug, Default)]
pub struct RttStats {
    /// Smallest sample since the last reset.
    pub min: Option<Duration>,
    /// The weighted average RTT.
    pub avg: Option<Duration>,
    /// Largest sample since the last reset.
    pub max: Option<Duration>,
}

impl RttStats {
    /// Feeds one per-burst sample. The weight of the old average is
    /// (sample − min) / sample: a sample near the minimum (empty queues) moves
    /// the average at once, a sample far above it hardly at all. The first
    /// average is the minimum.
    pub fn add(&mut self, r: Duration) {
        let min = self.min.map_or(r, |m| m.min(r));
        self.min = Some(min);
        self.max = Some(self.max.map_or(r, |m| m.max(r)));
        self.avg = Some(match self.avg {
            None => min,
            Some(avg) if r.is_zero() => avg,
            Some(avg) => {
                let w = (r - min).as_secs_f64() / r.as_secs_f64();
                Duration::from_secs_f64(w * avg.as_secs_f64() + (1.0 - w) * r.as_secs_f64())
            }
        });
    }

    /// DeltaRTT = average − minimum (zero before any sample).
    pub fn delta(&self) -> Duration {
        match (self.avg, self.min) {
            (Some(a), Some(m)) => a.saturating_sub(m),
            _ => Duration::ZERO,
        }
    }
}

/// The bursts whose trains are still open.
#[derive(Clone, Debug, Default)]
pub struct Trains {
    bursts: VecDeque<Burst>,
    /// The burst being sent now (between a timer expiry and the end of its round).
    open: Option<Burst>,
}

impl Trains {
    /// A packet of a burst left at `now`: `[offset, offset + len)`.
    pub fn on_burst_packet(&mut self, now: Instant, offset: u64, len: u32) {
        let end = offset + len as u64;
        match &mut self.open {
            Some(b) => {
                b.start = b.start.min(offset);
                b.end = b.end.max(end);
                b.bytes += len as u64;
                b.segments += 1;
            }
            None => {
                self.open = Some(Burst {
                    start: offset,
                    end,
                    bytes: len as u64,
                    segments: 1,
                    sent_at: now,
                    first_ack: None,
                    last_inside: None,
                    cut: false,
                })
            }
        }
    }

    /// The burst's transmit opportunity closed; returns it.
    pub fn close_burst(&mut self) -> Option<Burst> {
        let b = self.open.take()?;
        self.bursts.push_back(b);
        Some(b)
    }

    /// Bursts whose trains are open.
    pub fn len(&self) -> usize {
        self.bursts.len()
    }

    /// True if no train is open.
    pub fn is_empty(&self) -> bool {
        self.bursts.is_empty()
    }

    /// A duplicate ACK: the oldest open train is cut by a loss.
    pub fn on_dupack(&mut self) {
        if let Some(b) = self.bursts.front_mut() {
            b.cut = true;
        }
    }

    /// An ACK moved the cumulative point to `una` at `now`; `cumulative` is true
    /// when it acknowledged more than two segments at once.
    pub fn on_advance(
        &mut self,
        now: Instant,
        una: u64,
        cumulative: bool,
        delivery_rate: Option<Rate>,
        avg_dispersion: Option<Duration>,
    ) -> TrainUpdate {
        let mut up = TrainUpdate::default();
        while let Some(b) = self.bursts.front_mut() {
            if una <= b.start {
                break;
            }
            if b.first_ack.is_none() {
                b.first_ack = Some((now, una.min(b.end)));
                if up.rto_sample.is_none() {
                    up.rto_sample = Some(now - b.sent_at);
                }
            }
            if una <= b.end {
                b.last_inside = Some((now, una));
            }
            if una < b.end {
                if cumulative {
                    b.cut = true;
                }
                break;
            }
            let b = self.bursts.pop_front().expect("front exists");
            up.closed = true;
            if up.dispersion.is_none() && !b.cut && !cumulative {
                up.dispersion = train_dispersion(&b)
                    .or_else(|| fallback_dispersion(b.bytes, delivery_rate))
                    .or(avg_dispersion);
            }
        }
        up
    }
}

/// The dispersion of a closed, clean train: the time between its first and
/// last ACK inside the burst, extrapolated to all the bytes after the first
/// ACK. `None` with fewer than two ACKs inside the burst.
fn train_dispersion(b: &Burst) -> Option<Duration> {
    let (t0, a0) = b.first_ack?;
    let (t1, a1) = b.last_inside?;
    if a1 <= a0 || t1 <= t0 {
        return None;
    }
    let span = (t1 - t0).as_nanos() as u128;
    let scaled = span * (b.end - a0) as u128 / (a1 - a0) as u128;
    Some(Duration::from_nanos(scaled.min(u64::MAX as u128) as u64))
}

/// The time `bytes` take at the estimated delivery rate.
fn fallback_dispersion(bytes: u64, rate: Option<Rate>) -> Option<Duration> {
    let r = rate?;
    (r.as_bps() > 0).then(|| r.tx_time(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Instant {
        Instant::from_nanos(t * 1_000_000)
    }
    fn d(t: u64) -> Duration {
        Duration::from_millis(t)
    }

    fn burst(trains: &mut Trains, at: u64, first_seg: u64, n: u64) {
        for i in 0..n {
            trains.on_burst_packet(ms(at), (first_seg + i) * 1000, 1000);
        }
        trains.close_burst();
    }

    #[test]
    fn clean_train_gives_rtt_and_dispersion() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 10);
        // ACKs every two segments, 2 ms apart, the first at 100 ms
        let mut ups = Vec::new();
        for k in 1..=5u64 {
            ups.push(t.on_advance(ms(98 + 2 * k), 2000 * k, false, None, None));
        }
        assert_eq!(ups[0].rto_sample, Some(d(100)));
        assert!(ups[1..].iter().all(|u| u.rto_sample.is_none()));
        assert_eq!(ups[4].dispersion, Some(d(8)));
        assert!(t.is_empty());
    }

    #[test]
    fn cumulative_ack_over_bursts_gives_one_sample_and_one_update() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 10);
        burst(&mut t, 50, 10, 10);
        burst(&mut t, 100, 20, 10);
        let rate = Some(Rate::from_mbps(8));
        let up = t.on_advance(ms(400), 25_000, true, rate, Some(d(7)));
        assert_eq!(
            up.rto_sample,
            Some(d(400)),
            "one sample, from the oldest burst"
        );
        assert_eq!(up.dispersion, None, "a repair, not a path measurement");
        assert_eq!(t.len(), 1, "the third burst's train stays open");
        let up = t.on_advance(ms(402), 30_000, false, rate, Some(d(7)));
        assert_eq!(
            up.rto_sample, None,
            "its first ACK came with the cumulative one"
        );
        assert_eq!(up.dispersion, None, "cut by the cumulative ACK");
    }

    #[test]
    fn an_ack_paired_with_the_next_burst_does_not_stretch_the_train() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 9);
        burst(&mut t, 60, 9, 10);
        // pairs (0,1) .. (6,7) ACKed 2 ms apart from 100 ms; segment 8 waits for
        // the next burst's first segment, ACKed together at 160 ms
        for k in 1..=4u64 {
            let up = t.on_advance(ms(98 + 2 * k), 2000 * k, false, None, None);
            assert_eq!(up.dispersion, None);
        }
        let up = t.on_advance(ms(160), 10_000, false, None, None);
        // inside the burst: 6000 B in 6 ms after the first ACK; 7000 B to go
        assert_eq!(up.dispersion, Some(d(7)), "not 60 ms");
        assert_eq!(up.rto_sample, Some(d(100)), "the next burst's first ACK");
    }

    #[test]
    fn duplicate_acks_cut_the_train() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 4);
        t.on_advance(ms(100), 1000, false, None, None);
        t.on_dupack();
        let up = t.on_advance(ms(300), 4000, false, None, Some(d(7)));
        assert_eq!(up.dispersion, None);
    }

    #[test]
    fn zero_dispersion_falls_back_to_the_delivery_rate_or_the_average() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 2);
        burst(&mut t, 10, 2, 2);
        // 2000 B at 8 Mbit/s = 2 ms
        let up = t.on_advance(ms(100), 2000, false, Some(Rate::from_mbps(8)), Some(d(7)));
        assert_eq!(up.dispersion, Some(d(2)));
        let up = t.on_advance(ms(110), 4000, false, None, Some(d(7)));
        assert_eq!(up.dispersion, Some(d(7)), "no rate yet: keep the average");
    }

    #[test]
    fn rtt_stats_follow_the_weighted_average() {
        let mut s = RttStats::default();
        s.add(d(100));
        assert_eq!((s.min, s.avg), (Some(d(100)), Some(d(100))));
        s.add(d(200)); // w = (200 - 100) / 200 = 0.5: avg = 0.5*100 + 0.5*200
        assert_eq!(s.avg, Some(d(150)));
        assert_eq!(s.delta(), d(50));
        s.add(d(100)); // w = 0: the average drops to the sample at once
        assert_eq!(s.avg, Some(d(100)));
        assert_eq!(s.max, Some(d(200)));
    }
}
