//! TCP Wave's measurements: the bursts in flight, their ACK trains, and the RTT
//! statistics built from one sample per burst.
//!
//! A burst is the data one timer expiry released: `[start, end)` in stream
//! offsets, the send time of its first packet. Its ACK train is the ACKs that
//! acknowledge its data. The first ACK of the train gives the burst's RTT
//! sample (first packet sent to first ACK received, DCNET 2016 section 2.2);
//! the ACK that covers the burst's last byte closes the train.
//!
//! What a closed train reports, for [`super::Wave`] to turn into a dispersion
//! sample:
//! * the span from its first to its last ACK *inside the burst* and how many
//!   ACKs that is. A receiver that ACKs every second segment pairs the last
//!   segment of a burst with an odd number of segments with the *next*
//!   burst's first one, so the ACK that finally covers the burst comes a whole
//!   TxTime later; that ACK is not part of the train's timing (the module's
//!   "aligned ACKs" serve the same purpose: an ACK whose RTT sample is below
//!   the previous one starts the next round instead of ending this one);
//! * whether it was cut by a loss (duplicate ACKs arrived during it, or a
//!   cumulative ACK closed it): its duration then measures the repair, not the
//!   path;
//! * its burst's RTT sample if the sample may update Wave's statistics: only
//!   samples valid under Karn's rule do (the kernel hands the module no sample
//!   for an ACK covering retransmitted data), and a sample from an ACK that
//!   covered more than two segments is replaced by the average RTT in the
//!   module, which leaves the minimum, the maximum and the average unchanged,
//!   so it counts as no sample here.

use crate::time::{Duration, Instant};
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
    /// When the first ACK of its train arrived.
    pub first_ack: Option<Instant>,
    /// When the last ACK so far that stayed inside the burst arrived.
    pub last_inside: Option<Instant>,
    /// ACKs that advanced inside the burst, the first included.
    pub acks_inside: u32,
    /// Its RTT sample, if valid for Wave's statistics.
    pub valid_rtt: Option<Duration>,
    /// Duplicate ACKs arrived while its train was in progress.
    pub cut: bool,
    /// Duplicate ACKs counted as delivered segments of this train
    /// (`dupack_train = "count"`).
    pub dup_acks: u32,
}

/// The RTT sample of a burst whose train began with this ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BurstSample {
    /// First packet sent to this ACK.
    pub rtt: Duration,
    /// Valid for Wave's statistics (Karn's rule, and not a cumulative ACK).
    pub valid: bool,
    /// The burst's train also closed with this ACK (the sample then belongs
    /// to the train in [`TrainUpdate::closed`]).
    pub of_closed: bool,
}

/// A train that closed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosedTrain {
    /// Segments of its burst.
    pub segments: u32,
    /// Payload bytes of its burst.
    pub bytes: u64,
    /// Its burst's RTT sample, if valid for the statistics.
    pub rtt: Option<Duration>,
    /// Time from its first to its last ACK inside the burst.
    pub span: Duration,
    /// ACKs inside the burst (at least 1).
    pub acks: u32,
    /// Cut by a loss or closed by a cumulative ACK.
    pub cut: bool,
}

/// What one ACK did to the trains.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainUpdate {
    /// A burst's RTT sample (one per ACK at most, from the oldest burst whose
    /// first ACK this was).
    pub sample: Option<BurstSample>,
    /// The first train this ACK closed (a cumulative ACK may close several:
    /// DCNET 2016 section 2.1 allows one statistics update for them).
    pub closed: Option<ClosedTrain>,
}

/// TCP Wave's RTT statistics (the module's `min_rtt`, `avg_rtt`, `max_rtt`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RttStats {
    /// Smallest valid sample since adjustment mode last forgot it.
    pub min: Option<Duration>,
    /// The weighted average RTT, updated at each train's end.
    pub avg: Option<Duration>,
    /// Largest valid sample since the connection started (never reset).
    pub max: Option<Duration>,
}

impl RttStats {
    /// A valid per-burst sample: updates the minimum and the maximum.
    pub fn on_sample(&mut self, r: Duration) {
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
        self.max = Some(self.max.map_or(r, |m| m.max(r)));
    }

    /// The end of a train whose burst's valid sample is `first` (the module's
    /// `first_rtt`): updates the average. The weight of the old average is
    /// a = (first − min) / first, so avg ← a·avg + (1 − a)·first = a·avg + min:
    /// a sample at the minimum (empty queues) sets the average to it at once,
    /// a sample far above it moves it little. The first average is the
    /// minimum. Without a sample (the module then uses the average as
    /// `first_rtt`) or without a minimum, the average is unchanged. Integer
    /// nanoseconds, rounded down.
    pub fn end_train(&mut self, first: Option<Duration>) {
        let Some(min) = self.min else {
            return;
        };
        self.avg = Some(match (self.avg, first) {
            (None, _) => min,
            (Some(avg), Some(first)) if !first.is_zero() && first >= min => {
                let (a, m, f) = (
                    avg.as_nanos() as u128,
                    min.as_nanos() as u128,
                    first.as_nanos() as u128,
                );
                Duration::from_nanos(((f - m) * a / f + m).min(u64::MAX as u128) as u64)
            }
            (Some(avg), _) => avg,
        });
    }

    /// DeltaRTT = average − minimum (zero while either is unknown).
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
                    acks_inside: 0,
                    valid_rtt: None,
                    cut: false,
                    dup_acks: 0,
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

    /// A duplicate ACK under the Linux module's rule (`dupack_train =
    /// "count"`): it counts as one delivered segment of the oldest open
    /// train, starts that train's timing if no ACK has yet (it gives no RTT
    /// sample), and closes the train, uncut, once the segments acknowledged
    /// inside it (up to `una`) and the duplicate ACKs counted for it reach
    /// its burst's segment count. The module's round likewise ends when the
    /// kernel's delivered count (`acked_sacked`, one per duplicate ACK
    /// without SACK) reaches the burst size. A later ACK that covers the
    /// closed burst's data then belongs to the next train.
    pub fn on_dupack_counted(&mut self, now: Instant, una: u64) -> Option<ClosedTrain> {
        let b = self.bursts.front_mut()?;
        let first = *b.first_ack.get_or_insert(now);
        b.dup_acks += 1;
        b.acks_inside += 1;
        b.last_inside = Some(now);
        let span = (b.end - b.start).max(1);
        let seg = span.div_ceil(b.segments.max(1) as u64);
        let acked = una.clamp(b.start, b.end) - b.start;
        if acked + b.dup_acks as u64 * seg < span {
            return None;
        }
        let b = self.bursts.pop_front().expect("front exists");
        Some(ClosedTrain {
            segments: b.segments,
            bytes: b.bytes,
            rtt: b.valid_rtt,
            span: now - first,
            acks: b.acks_inside,
            cut: b.cut,
        })
    }

    /// An ACK moved the cumulative point to `una` at `now`. `cumulative`: it
    /// acknowledged more than two segments at once; `karn_valid`: the sender
    /// had an RTT sample for it under Karn's rule.
    pub fn on_advance(
        &mut self,
        now: Instant,
        una: u64,
        cumulative: bool,
        karn_valid: bool,
    ) -> TrainUpdate {
        let mut up = TrainUpdate::default();
        // the burst whose first ACK gave `up.sample`
        let mut sampled = None;
        while let Some(b) = self.bursts.front_mut() {
            if una <= b.start {
                break;
            }
            if b.first_ack.is_none() {
                b.first_ack = Some(now);
                let rtt = now - b.sent_at;
                let valid = karn_valid && !cumulative;
                if up.sample.is_none() {
                    up.sample = Some(BurstSample {
                        rtt,
                        valid,
                        of_closed: false,
                    });
                    b.valid_rtt = valid.then_some(rtt);
                    sampled = Some(b.start);
                }
            }
            if una <= b.end {
                b.last_inside = Some(now);
                b.acks_inside += 1;
            }
            if una < b.end {
                if cumulative {
                    b.cut = true;
                }
                break;
            }
            let b = self.bursts.pop_front().expect("front exists");
            if up.closed.is_none() {
                let first = b.first_ack.expect("set above");
                if sampled == Some(b.start) {
                    if let Some(s) = up.sample.as_mut() {
                        s.of_closed = true;
                    }
                }
                up.closed = Some(ClosedTrain {
                    segments: b.segments,
                    bytes: b.bytes,
                    rtt: b.valid_rtt,
                    span: b.last_inside.map_or(Duration::ZERO, |t| t - first),
                    acks: b.acks_inside.max(1),
                    cut: b.cut || cumulative,
                });
            }
        }
        up
    }
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
    fn clean_train_gives_rtt_span_and_ack_count() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 10);
        // ACKs every two segments, 2 ms apart, the first at 100 ms
        let mut ups = Vec::new();
        for k in 1..=5u64 {
            ups.push(t.on_advance(ms(98 + 2 * k), 2000 * k, false, true));
        }
        let s = ups[0].sample.unwrap();
        assert_eq!((s.rtt, s.valid, s.of_closed), (d(100), true, false));
        assert!(ups[1..].iter().all(|u| u.sample.is_none()));
        let c = ups[4].closed.unwrap();
        assert_eq!((c.span, c.acks, c.segments), (d(8), 5, 10));
        assert_eq!(c.rtt, Some(d(100)));
        assert!(!c.cut);
        assert!(t.is_empty());
    }

    #[test]
    fn counted_duplicate_acks_close_a_train_uncut_after_a_bursts_worth() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 10);
        burst(&mut t, 50, 10, 10);
        // segment 4 lost: ACKs for 0-1, 2-3 advance, then every later
        // segment draws a duplicate ACK of 4000, 1 ms apart
        let up = t.on_advance(ms(100), 2000, false, true);
        assert!(up.closed.is_none());
        t.on_advance(ms(102), 4000, false, true);
        let mut closed = Vec::new();
        for k in 0..12u64 {
            if let Some(c) = t.on_dupack_counted(ms(103 + k), 4000) {
                closed.push((k, c));
            }
        }
        // 4 segments acknowledged + 6 duplicate ACKs = the burst's 10
        assert_eq!(closed.len(), 1, "{closed:?}");
        let (k, c) = closed[0];
        assert_eq!(k, 5);
        assert_eq!((c.span, c.acks, c.segments, c.cut), (d(8), 8, 10, false));
        assert_eq!(c.rtt, Some(d(100)));
        // the next duplicates count for the second burst, whose timing they start
        assert_eq!(t.len(), 1);
        assert_eq!(t.bursts[0].first_ack, Some(ms(109)));
        assert_eq!(t.bursts[0].dup_acks, 6);
    }

    #[test]
    fn a_sample_without_karns_blessing_reaches_only_the_rto_estimator() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 2);
        let up = t.on_advance(ms(100), 2000, false, false);
        let s = up.sample.unwrap();
        assert_eq!((s.rtt, s.valid, s.of_closed), (d(100), false, true));
        assert_eq!(up.closed.unwrap().rtt, None);
    }

    #[test]
    fn cumulative_ack_over_bursts_gives_one_sample_and_one_closed_train() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 10);
        burst(&mut t, 50, 10, 10);
        burst(&mut t, 100, 20, 10);
        let up = t.on_advance(ms(400), 25_000, true, true);
        let s = up.sample.unwrap();
        assert_eq!(s.rtt, d(400), "one sample, from the oldest burst");
        assert!(
            !s.valid,
            "a cumulative ACK's sample does not reach the statistics"
        );
        let c = up.closed.unwrap();
        assert!(c.cut, "a repair, not a path measurement");
        assert_eq!(t.len(), 1, "the third burst's train stays open");
        let up = t.on_advance(ms(402), 30_000, false, true);
        assert_eq!(
            up.sample, None,
            "its first ACK came with the cumulative one"
        );
        assert!(up.closed.unwrap().cut, "cut by the cumulative ACK");
    }

    #[test]
    fn an_ack_paired_with_the_next_burst_is_not_part_of_the_train() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 9);
        burst(&mut t, 60, 9, 10);
        // pairs (0,1) .. (6,7) ACKed 2 ms apart from 100 ms; segment 8 waits for
        // the next burst's first segment, ACKed together at 160 ms
        for k in 1..=4u64 {
            let up = t.on_advance(ms(98 + 2 * k), 2000 * k, false, true);
            assert_eq!(up.closed, None);
        }
        let up = t.on_advance(ms(160), 10_000, false, true);
        let c = up.closed.unwrap();
        assert_eq!((c.span, c.acks), (d(6), 4), "not 60 ms");
        let s = up.sample.unwrap();
        assert_eq!(s.rtt, d(100), "the next burst's first ACK");
        assert!(!s.of_closed, "it belongs to the next burst's train");
    }

    #[test]
    fn duplicate_acks_cut_the_train() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 4);
        t.on_advance(ms(100), 1000, false, true);
        t.on_dupack();
        let up = t.on_advance(ms(300), 4000, false, true);
        assert!(up.closed.unwrap().cut);
    }

    #[test]
    fn a_train_of_one_ack_has_no_span() {
        let mut t = Trains::default();
        burst(&mut t, 0, 0, 2);
        let up = t.on_advance(ms(100), 2000, false, true);
        let c = up.closed.unwrap();
        assert_eq!((c.span, c.acks, c.cut), (Duration::ZERO, 1, false));
        assert!(up.sample.unwrap().of_closed);
    }

    #[test]
    fn rtt_stats_follow_the_weighted_average_at_train_ends() {
        let mut s = RttStats::default();
        s.on_sample(d(100));
        assert_eq!(
            (s.min, s.avg),
            (Some(d(100)), None),
            "the average waits for the train's end"
        );
        s.end_train(Some(d(100)));
        assert_eq!(s.avg, Some(d(100)), "the first average is the minimum");
        s.on_sample(d(200));
        s.end_train(Some(d(200))); // a = (200 - 100) / 200 = 0.5: avg = 0.5*100 + 100
        assert_eq!(s.avg, Some(d(150)));
        assert_eq!(s.delta(), d(50));
        s.end_train(None);
        assert_eq!(s.avg, Some(d(150)), "no valid sample: unchanged");
        s.on_sample(d(100));
        s.end_train(Some(d(100))); // a = 0: the average drops to the minimum at once
        assert_eq!(s.avg, Some(d(100)));
        assert_eq!(s.max, Some(d(200)));
    }
}
