//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation): each
//! sent segment is stamped with the connection's delivered count and times; when
//! it is acknowledged (cumulatively or by SACK) the stamp gives one rate sample
//! over the interval max(send_elapsed, ack_elapsed). BBR consumes the samples,
//! TCP Wave uses them as a fallback for its ACK-train dispersion.

use crate::time::{Duration, Instant, Rate};

/// What the sampler records on a segment when it is (re)transmitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxStamp {
    /// Bytes delivered when the segment was sent.
    pub delivered: u64,
    /// When `delivered` last changed, as of the send.
    pub delivered_time: Instant,
    /// Send time of the segment whose ACK started the current sampling interval.
    pub first_sent_time: Instant,
    /// The send time of this segment.
    pub sent_time: Instant,
    /// True if the connection was application-limited at the send.
    pub app_limited: bool,
    /// Bytes in flight before this segment was sent (the segment's own
    /// length is added when it is delivered, giving the draft's
    /// `P.tx_in_flight`, draft-ietf-ccwg-bbr-06 section 2.3).
    pub in_flight: u64,
    /// Connection-wide bytes marked lost when the segment was sent
    /// (`P.lost`, draft-ietf-ccwg-bbr-06 section 4.1.2.1.2).
    pub lost: u64,
}

/// One delivery-rate sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    /// The sampling interval.
    pub interval: Duration,
    /// Delivery rate (delivered / interval); `None` when the interval is zero
    /// or shorter than the minimum RTT, which the draft discards as too noisy
    /// (the delivered and lost counts stay valid; BBR counts no round on such
    /// a sample, as Linux's `bbr_update_bw`).
    pub rate: Option<Rate>,
    /// RTT of the most recently sent segment acknowledged by this ACK; `None`
    /// when that segment had been retransmitted (Karn: the ACK may answer
    /// either transmission), unless timestamps are on and the ACK advances
    /// `snd_una`: the sender then fills in the RTT its timestamp echo
    /// measures, as Linux's `tcp_ack_update_rtt` does.
    pub rtt: Option<Duration>,
    /// True if the sample may under-estimate the path because the sender was
    /// application-limited.
    pub app_limited: bool,
    /// Connection-wide delivered count before the newest acknowledged segment was sent.
    pub prior_delivered: u64,
    /// Bytes newly acknowledged or SACKed by this ACK.
    pub newly_delivered: u64,
    /// Bytes newly marked lost by this ACK.
    pub newly_lost: u64,
    /// Bytes in flight before this ACK.
    pub prior_in_flight: u64,
    /// Connection-wide bytes delivered, this ACK included (C.delivered).
    pub total_delivered: u64,
    /// Bytes in flight when the newest acknowledged segment was sent, that
    /// segment included (draft-ietf-ccwg-bbr-06 section 2.3,
    /// `RS.tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes marked lost between the send of the newest acknowledged
    /// segment and this ACK, this ACK's losses included (`RS.lost`).
    pub lost: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    prior_delivered: u64,
    prior_time: Option<Instant>,
    send_elapsed: Duration,
    ack_elapsed: Duration,
    rtt: Option<Duration>,
    app_limited: bool,
    newly_delivered: u64,
    tx_in_flight: u64,
    prior_lost: u64,
}

/// The connection-wide delivery state.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    delivered: u64,
    delivered_time: Instant,
    first_sent_time: Instant,
    /// Non-zero while application-limited: the delivered count at which the
    /// limitation ends.
    app_limited_until: u64,
    /// Bytes counted as delivered by duplicate ACKs without SACK, not yet
    /// covered by a cumulative ACK.
    emulated: u64,
    /// Connection-wide bytes marked lost (C.lost), as reported to `finish`.
    lost: u64,
    pending: Pending,
    /// True for an algorithm that takes no rate samples: nothing is
    /// accounted, and stamps carry only the send time (which RTT sampling
    /// reads).
    off: bool,
}

impl RateSampler {
    /// A sampler with nothing delivered.
    pub fn new() -> Self {
        Self::default()
    }

    /// A sampler that takes no samples, for an algorithm that ignores them
    /// ([`crate::CongestionControl::uses_rate_samples`]).
    pub fn off() -> Self {
        RateSampler {
            off: true,
            ..Self::default()
        }
    }

    /// Total bytes delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Stamps a segment being sent at `now`; `in_flight` is the bytes
    /// outstanding before it (nothing outstanding restarts the sampling
    /// interval), `pipe` the bytes believed in the network before it (what
    /// the stamp's `in_flight` records).
    pub fn on_send(&mut self, now: Instant, in_flight: u64, pipe: u64) -> TxStamp {
        if self.off {
            return TxStamp {
                sent_time: now,
                ..TxStamp::default()
            };
        }
        if in_flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        TxStamp {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            sent_time: now,
            app_limited: self.app_limited_until != 0,
            in_flight: pipe,
            lost: self.lost,
        }
    }

    /// Without SACK, a duplicate ACK reports that one segment of `len` bytes
    /// left the network: it counts as delivered now (as Linux's emulated SACK
    /// does), and the cumulative ACK that later covers it does not count it
    /// again. Without this, a recovery's cumulative ACKs would deliver at once
    /// data that arrived long before, and their rates would be several times
    /// the path's.
    pub fn on_emulated_delivery(&mut self, len: u64, outstanding: u64) {
        if self.off {
            return;
        }
        let len = len.min(outstanding.saturating_sub(self.emulated));
        // The count moves, not the delivered time: no packet's stamp is known
        // here, and moving it would shorten the intervals of later samples.
        self.delivered += len;
        self.emulated += len;
        self.pending.newly_delivered += len;
    }

    /// Forgets the duplicate-ACK credit: after a timeout (or Tahoe's go-back)
    /// everything outstanding is retransmitted and its ACKs count afresh, as
    /// Linux resets its emulated SACKs when it enters the Loss state.
    pub fn forget_emulated(&mut self) {
        self.emulated = 0;
    }

    /// Records that a segment with `stamp` and `len` bytes was delivered at
    /// `now`; `retransmitted` if it was ever sent more than once.
    pub fn on_delivered(&mut self, now: Instant, stamp: &TxStamp, len: u64, retransmitted: bool) {
        if self.off {
            return;
        }
        let already = self.emulated.min(len);
        self.emulated -= already;
        let len = len - already;
        self.delivered += len;
        self.delivered_time = now;
        self.pending.newly_delivered += len;
        let p = &mut self.pending;
        if p.prior_time.is_none() || stamp.delivered >= p.prior_delivered {
            p.prior_delivered = stamp.delivered;
            p.prior_time = Some(stamp.delivered_time);
            p.app_limited = stamp.app_limited;
            p.send_elapsed = stamp.sent_time - stamp.first_sent_time;
            p.ack_elapsed = self.delivered_time - stamp.delivered_time;
            p.rtt = (!retransmitted).then(|| now - stamp.sent_time);
            p.tx_in_flight = stamp.in_flight + len + already;
            p.prior_lost = stamp.lost;
            self.first_sent_time = stamp.sent_time;
        }
    }

    /// Marks the connection application-limited with `in_flight` bytes outstanding.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        if self.off {
            return;
        }
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// Closes the ACK's sample. Returns `None` if this ACK delivered nothing;
    /// the sample's `rate` is `None` if the interval is shorter than `min_rtt`.
    pub fn finish(
        &mut self,
        min_rtt: Option<Duration>,
        newly_lost: u64,
        prior_in_flight: u64,
    ) -> Option<RateSample> {
        if self.off {
            return None;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        self.lost += newly_lost;
        let p = core::mem::take(&mut self.pending);
        p.prior_time?;
        let interval = p.send_elapsed.max(p.ack_elapsed);
        let delivered = self.delivered - p.prior_delivered;
        let usable = !interval.is_zero() && min_rtt.is_none_or(|m| interval >= m);
        Some(RateSample {
            delivered,
            interval,
            rate: usable.then(|| Rate::from_bytes_per(delivered, interval)),
            rtt: p.rtt,
            app_limited: p.app_limited,
            prior_delivered: p.prior_delivered,
            newly_delivered: p.newly_delivered,
            newly_lost,
            prior_in_flight,
            total_delivered: self.delivered,
            tx_in_flight: p.tx_in_flight,
            lost: self.lost - p.prior_lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    /// Off, the sampler accounts nothing and closes no sample; its stamps
    /// still carry the send time.
    #[test]
    fn an_off_sampler_only_stamps_send_times() {
        let mut s = RateSampler::off();
        let stamp = s.on_send(t(5), 0, 0);
        assert_eq!(
            stamp,
            TxStamp {
                sent_time: t(5),
                ..TxStamp::default()
            }
        );
        s.on_app_limited(3000);
        s.on_emulated_delivery(1000, 3000);
        s.on_delivered(t(105), &stamp, 1000, false);
        assert_eq!(s.delivered(), 0);
        assert!(s.finish(None, 0, 1000).is_none());
    }

    #[test]
    fn ack_clocked_window_measures_cwnd_per_rtt() {
        // A window of 10 segments of 1000 B, RTT 100 ms, ACK-clocked: each ACK of
        // segment i (at 100 + i ms) releases segment 10 + i. From the second
        // round on, every sample is 10 000 B per 100 ms = 800 kbit/s.
        let mut s = RateSampler::new();
        let mut stamps = Vec::new();
        for i in 0..10 {
            stamps.push(s.on_send(t(i), i * 1000, i * 1000));
        }
        let mut samples = Vec::new();
        for i in 0..30u64 {
            let now = t(100 + (i / 10) * 100 + i % 10);
            let st = stamps[i as usize];
            s.on_delivered(now, &st, 1000, false);
            samples.push(s.finish(Some(Duration::from_millis(1)), 0, 0).unwrap());
            stamps.push(s.on_send(now, 9000, 9000));
        }
        for r in &samples[10..] {
            assert_eq!(r.delivered, 10_000);
            assert_eq!(r.interval, Duration::from_millis(100));
            assert_eq!(r.rate, Some(Rate::from_bps(800_000)));
            assert_eq!(r.total_delivered, r.prior_delivered + r.delivered);
            assert_eq!(r.rtt, Some(Duration::from_millis(100)));
            assert!(!r.app_limited);
        }
        // First round: the interval is the ACK's elapsed time since the start.
        assert_eq!(samples[0].interval, Duration::from_millis(100));
        assert_eq!(samples[0].delivered, 1000);
    }

    #[test]
    fn app_limited_marks_until_delivered() {
        let mut s = RateSampler::new();
        s.on_app_limited(0);
        let st = s.on_send(t(0), 0, 0);
        assert!(st.app_limited);
        s.on_delivered(t(50), &st, 1000, false);
        let r = s.finish(None, 0, 1000);
        // interval is ack_elapsed = 50 ms
        assert!(r.unwrap().app_limited);
        let st2 = s.on_send(t(60), 0, 0);
        assert!(
            !st2.app_limited,
            "limitation ends once its data is delivered"
        );
    }

    /// draft-ietf-ccwg-bbr-06 section 2.3: `tx_in_flight` is what was in
    /// flight when the newest acknowledged segment left, that segment
    /// included; `lost` what was marked lost since.
    #[test]
    fn samples_carry_the_flight_and_the_losses_since_the_send() {
        let mut s = RateSampler::new();
        let a = s.on_send(t(0), 0, 0);
        assert!(
            s.finish(None, 1000, 0).is_none(),
            "a loss before any delivery"
        );
        let b = s.on_send(t(1), 1000, 1000);
        let c = s.on_send(t(2), 2000, 2000);
        s.on_delivered(t(100), &a, 1000, false);
        let r = s.finish(None, 0, 3000).unwrap();
        assert_eq!(
            (r.tx_in_flight, r.lost),
            (1000, 1000),
            "the loss was marked after a left"
        );
        // b and c delivered on one ACK that also marks 2000 bytes lost
        s.on_delivered(t(101), &b, 1000, false);
        s.on_delivered(t(102), &c, 1000, false);
        let r = s.finish(None, 2000, 2000).unwrap();
        assert_eq!(
            r.tx_in_flight, 3000,
            "c, the newest, left with 2000 B ahead"
        );
        assert_eq!(r.lost, 2000, "the first 1000 were marked before c left");
    }

    #[test]
    fn no_sample_without_delivery() {
        let mut s = RateSampler::new();
        assert!(s.finish(None, 0, 0).is_none());
    }

    #[test]
    fn retransmitted_segments_give_no_rtt() {
        let mut s = RateSampler::new();
        let st = s.on_send(t(0), 0, 0);
        s.on_delivered(t(3), &st, 1000, true);
        assert_eq!(s.finish(None, 0, 0).unwrap().rtt, None);
    }

    #[test]
    fn duplicate_acks_without_sack_count_once() {
        let mut s = RateSampler::new();
        let stamps: Vec<TxStamp> = (0..4)
            .map(|i| s.on_send(t(i), i * 1000, i * 1000))
            .collect();
        // segment 0 lost; three duplicate ACKs for segments 1-3
        for _ in 0..3 {
            s.on_emulated_delivery(1000, 4000);
        }
        assert_eq!(s.delivered(), 3000);
        // the retransmission arrives: one cumulative ACK covers all four
        for st in &stamps {
            s.on_delivered(t(200), st, 1000, false);
        }
        assert_eq!(s.delivered(), 4000, "segments 1-3 are not counted twice");
    }

    #[test]
    fn short_interval_keeps_the_sample_without_a_rate() {
        let mut s = RateSampler::new();
        let st = s.on_send(t(0), 0, 0);
        s.on_delivered(t(5), &st, 1000, false);
        let r = s.finish(Some(Duration::from_millis(10)), 0, 1000).unwrap();
        assert_eq!(r.rate, None, "5 ms interval below a 10 ms min RTT");
        assert_eq!(r.newly_delivered, 1000);
        assert_eq!(r.total_delivered, 1000);
    }
}
