//! TCP Wave (Abdelsalam, Luglio, Roseti, Zampognaro): a sender that transmits
//! bursts of BURST segments each time its send timer (period TxTime) expires,
//! and sets TxTime from the ACK trains an unmodified receiver returns.
//!
//! Sources: "TCP Wave Resilience to Link Changes" (DCNET 2016), section 2
//! (fast retransmission, RTO recovery, one RTT sample per burst for the RTO
//! estimator) and section 3.2 (the first ACK after an outage); the TCP Wave
//! project page (the Linux hooks, TxTime = AckTrainDispersion + 0.5
//! DeltaRTT); and the public Linux module (kronat/linux, branch `tcp_wave`,
//! `net/ipv4/tcp_wave.c`: the first 4.12 release 0276e75, a later 4.12
//! revision, and the 2017 netdev posting, module version 0.2), read to
//! confirm the rules the project's reference notes describe in prose:
//! adjustment mode, the stability counter, the weighted average RTT, Karn's
//! rule for the statistics and the ACK-train dispersion. The revisions differ;
//! [`Variant`] names them. No code was taken from any
//! implementation.
//!
//! How it maps onto the sender:
//! * the window never limits ([`CongestionControl::cwnd`] is unlimited); data
//!   leaves only through the gate, which the timer opens for one burst
//!   ([`CongestionControl::on_timer`] = the Linux hook send_timer_expired,
//!   [`CongestionControl::timer`] = get_send_timer_exp_time,
//!   [`CongestionControl::on_send_round`] = segment_sent,
//!   [`CongestionControl::on_app_limited`] = no_data_to_transmit);
//! * the first burst leaves when the connection is established;
//! * RTT: one sample per burst (first packet to first ACK of its train). Every
//!   sample, inflated by retransmissions or not, feeds the RFC 6298 estimator
//!   ([`SenderRequest::RttSample`]; the RTO floor stays the sender's, 1 s by
//!   default) as DCNET 2016 has it, or, with `rto_samples = "karn"`
//!   ([`RtoSamples`]), the sender samples every ACK under Karn's rule as the
//!   module's kernel does; only samples valid under Karn's rule reach Wave's
//!   minimum and maximum RTT and the weighted average;
//! * at each train's end, in the module's order: the average RTT; the
//!   dispersion sample (span × n/(n−1) for n ACKs in the default variant;
//!   none for a train cut by a loss or above the average RTT); then either
//!   the stability counter counts down (TxTime stays), or DeltaRTT is
//!   compared with beta: tracking mode sets TxTime = dispersion +
//!   DeltaRTT / 2 (at least 1 ms, never above TxTime0); adjustment mode sets
//!   the stability counter to avgRTT / TxTime (8 bits, integer µs), forgets
//!   the minimum, sets the average to the largest RTT seen and TxTime to
//!   TxTime0;
//! * fast retransmission: three duplicate ACKs retransmit the lost segment at
//!   once (outside the burst schedule), no window reduction, and the next
//!   burst is one segment smaller (never below the minimum burst). The sender
//!   runs Reno-style recovery for it (no recovery point: every further hole is
//!   found by its own duplicate ACKs from the fresh bursts); a retransmission
//!   lost again is left to the RTO, and fast retransmit is off during RTO
//!   recovery (the sender's recovery point after a timeout);
//! * RTO recovery: BURST and TxTime back to BURST0 and TxTime0, a burst at once
//!   from the first unacknowledged segment; the trains in flight are kept, so
//!   the cumulative ACK that ends the outage completes the train it cut and
//!   brings TxTime back from the statistics, which it leaves unchanged (DCNET
//!   2016, section 3.2: "TxTime is still similar to that used on the old
//!   link"); cumulative ACKs make later bursts skip what they cover (the
//!   sender retransmits only what is still unacknowledged).

mod params;
mod train;

pub use params::{
    DispersionFilter, DupackTrain, MinimumReset, RtoSamples, StabilityDivisor, Variant, WaveParams,
};
pub use train::{BurstSample, ClosedTrain, RttStats, TrainUpdate, Trains};

use super::{
    AckEvent, CongestionControl, CongestionEvent, CongestionKind, RecoveryStyle, SendGate,
    SenderRequest, SentInfo, WindowStart,
};
use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};
use std::collections::VecDeque;

/// A window so large it never limits: TCP Wave releases data with its timer.
pub const UNLIMITED: u64 = u64::MAX / 4;

/// TxTime update mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// TxTime follows the ACK trains.
    Tracking,
    /// DeltaRTT exceeded beta: TxTime reset, updates paused for a while.
    Adjustment,
}

/// The algorithm variables Wave reports at each sample (`cc_<name>` in a
/// run's series), in the order of `metrics`; the emulator records the BPF
/// TCP Wave's state under the same names.
pub const METRICS: &[&str] = &[
    "burst",
    "tx_time",
    "dispersion",
    "min_rtt",
    "avg_rtt",
    "delta_rtt",
    "mode",
    "stability",
    "rate",
    "max_rtt",
];

/// TCP Wave.
#[derive(Clone, Debug)]
pub struct Wave {
    p: WaveParams,
    mss: u32,
    /// Current burst size in segments.
    burst: u32,
    /// Segments to take off the next burst (one per fast retransmission).
    fr_reduction: u32,
    /// Current timer period.
    tx_time: Duration,
    next_expiry: Option<Instant>,
    /// Segments the current burst may still send.
    burst_quota: u32,
    /// Immediate retransmissions allowed outside the burst schedule.
    fr_quota: u32,
    trains: Trains,
    rtt: RttStats,
    /// The ACK-train dispersion TxTime is computed from (smoothed as
    /// [`WaveParams::dispersion_filter`] says).
    dispersion: Option<Duration>,
    delivery_rate: Option<Rate>,
    mode: Mode,
    /// Trains whose TxTime update is still to be skipped: the module's 8-bit
    /// stability factor.
    stability: u8,
    requests: VecDeque<SenderRequest>,
}

impl Wave {
    /// A sender-side TCP Wave with these parameters.
    pub fn new(params: &WaveParams, start: &WindowStart) -> Self {
        Wave {
            burst: params.burst,
            tx_time: params.tx_time,
            p: params.clone(),
            mss: start.mss,
            fr_reduction: 0,
            next_expiry: None,
            burst_quota: 0,
            fr_quota: 0,
            trains: Trains::default(),
            rtt: RttStats::default(),
            dispersion: None,
            delivery_rate: None,
            mode: Mode::Tracking,
            stability: 0,
            requests: VecDeque::new(),
        }
    }

    /// The current timer period, TxTime.
    pub fn tx_time(&self) -> Duration {
        self.tx_time
    }
    /// The current burst size in segments.
    pub fn burst(&self) -> u32 {
        self.burst
    }
    /// The update mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The RTT statistics.
    pub fn rtt_stats(&self) -> &RttStats {
        &self.rtt
    }
    /// The ACK-train dispersion TxTime is computed from.
    pub fn dispersion(&self) -> Option<Duration> {
        self.dispersion
    }
    /// Trains whose TxTime update is still to be skipped.
    pub fn stability(&self) -> u8 {
        self.stability
    }
    /// The parameters in force.
    pub fn params(&self) -> &WaveParams {
        &self.p
    }

    /// Opens the gate for one burst at `now` and schedules the next expiry.
    fn start_burst(&mut self, now: Instant) {
        let size = self
            .burst
            .saturating_sub(self.fr_reduction)
            .max(self.p.min_burst);
        self.fr_reduction = 0;
        self.burst_quota = size;
        self.next_expiry = Some(now + self.tx_time);
    }

    /// The dispersion sample a closed train gives, if any: its first-to-last
    /// span (times n/(n−1) for its n ACKs when `dispersion_scaling` is on).
    /// None for a train cut by a loss, for a burst shorter than BURST (the
    /// netdev posting keeps the previous value then: a short burst's train
    /// is short), and for a sample above the average RTT (DCNET 2016,
    /// section 3.2: a train stretched by an outage or a path change,
    /// measured against the old path's statistics). A clean train with a
    /// single ACK inside its burst takes the time its bytes need at the
    /// delivery-rate estimate, when there is one.
    fn dispersion_sample(&self, c: &ClosedTrain) -> Option<Duration> {
        if c.cut || c.segments < self.burst {
            return None;
        }
        let sample = if c.acks >= 2 {
            if self.p.dispersion_scaling {
                let n = c.acks as u128;
                Duration::from_nanos((c.span.as_nanos() as u128 * n / (n - 1)) as u64)
            } else {
                c.span
            }
        } else {
            let r = self.delivery_rate.filter(|r| r.as_bps() > 0)?;
            r.tx_time(c.bytes)
        };
        Some(sample).filter(|&d| !d.is_zero() && self.rtt.avg.is_none_or(|avg| d <= avg))
    }

    /// Folds a dispersion sample into the value TxTime uses.
    fn fold_dispersion(&mut self, sample: Duration) {
        let prev = self.dispersion;
        self.dispersion = Some(match (prev, self.p.dispersion_filter) {
            (None, _) | (Some(_), DispersionFilter::Latest) => sample,
            (Some(p), DispersionFilter::Mean) => (p + sample) / 2,
            (Some(p), DispersionFilter::RttWeighted) if sample > p => {
                // alpha = DeltaRTT / beta on the new sample (at most 1)
                let beta = self.p.beta.as_nanos().max(1) as u128;
                let alpha = (self.rtt.delta().as_nanos() as u128).min(beta);
                let mixed = ((beta - alpha) * p.as_nanos() as u128
                    + alpha * sample.as_nanos() as u128)
                    / beta;
                Duration::from_nanos(mixed as u64)
            }
            (Some(_), DispersionFilter::RttWeighted) => sample,
        });
    }

    /// A train closed: the module's end-of-round update, in its order. The
    /// average RTT first; then the dispersion sample (folded at every train:
    /// it measures the path whatever the mode); then, while the stability
    /// counter is above zero, count it down and leave TxTime; otherwise
    /// compare DeltaRTT with beta: tracking mode sets TxTime = dispersion +
    /// DeltaRTT / 2 (within [`WaveParams::min_tx_time`], TxTime0), adjustment
    /// mode resets it (see [`Wave::enter_adjustment`]).
    fn on_train(&mut self, c: &ClosedTrain) {
        self.rtt.end_train(c.rtt);
        if let Some(sample) = self.dispersion_sample(c) {
            self.fold_dispersion(sample);
        }
        if self.stability > 0 {
            self.stability -= 1;
            return;
        }
        let delta = self.rtt.delta();
        if delta > self.p.beta {
            self.enter_adjustment();
        } else if let Some(disp) = self.dispersion {
            // no dispersion known yet: "impossible to do tracking", TxTime stays
            self.mode = Mode::Tracking;
            self.tx_time = (disp + delta / 2)
                .max(self.p.min_tx_time)
                .min(self.p.tx_time);
        }
    }

    /// Adjustment mode. The stability counter is the average RTT divided by
    /// the current TxTime, both taken before anything changes, in integer
    /// microseconds and kept in 8 bits as the module keeps it (a quotient
    /// above 255 wraps). Then the minimum RTT is forgotten (the next valid
    /// sample becomes the minimum), the average becomes the largest RTT seen,
    /// and TxTime returns to TxTime0. The first 4.12 release divided by the
    /// dispersion and set the minimum to zero instead.
    fn enter_adjustment(&mut self) {
        let us = |d: Duration| (d.as_nanos() / 1000).max(1);
        let avg = self.rtt.avg.map_or(0, |a| a.as_nanos() / 1000);
        let divisor = match self.p.variant.stability_divisor() {
            StabilityDivisor::TxTime => us(self.tx_time),
            StabilityDivisor::Dispersion => self.dispersion.map_or(u64::MAX, us),
        };
        self.stability = (avg / divisor) as u8;
        self.rtt.min = match self.p.variant.minimum_reset() {
            MinimumReset::Forget => None,
            MinimumReset::Zero => Some(Duration::ZERO),
        };
        self.rtt.avg = self.rtt.max.or(self.rtt.avg);
        self.tx_time = self.p.tx_time;
        self.mode = Mode::Adjustment;
    }

    /// A burst's RTT sample: every one feeds the RFC 6298 estimator (DCNET
    /// 2016, section 2.2: "all the RTT measurements including those
    /// calculated during retransmissions"); only Karn-valid ones reach the
    /// minimum and maximum.
    fn on_burst_sample(&mut self, s: &BurstSample) {
        if s.valid {
            self.rtt.on_sample(s.rtt);
        }
    }
}

impl CongestionControl for Wave {
    fn name(&self) -> &'static str {
        "wave"
    }
    fn cwnd(&self) -> u64 {
        UNLIMITED
    }
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::Reno
    }
    /// Wave's bursts, not a window, decide what goes out in a recovery.
    fn proportional_reduction(&self) -> bool {
        false
    }
    fn set_mss(&mut self, mss: u32) {
        self.mss = mss;
    }
    fn on_established(&mut self, now: Instant, _rtt: Option<Duration>) {
        self.start_burst(now);
    }
    fn takes_rtt_samples(&self) -> bool {
        self.p.rto_samples == RtoSamples::All
    }
    fn poll_request(&mut self) -> Option<SenderRequest> {
        self.requests.pop_front()
    }
    fn send_gate(&self, _now: Instant) -> SendGate {
        match self.burst_quota + self.fr_quota {
            0 => SendGate::Closed,
            n => SendGate::Quota { segments: n },
        }
    }
    fn timer(&self) -> Option<Instant> {
        self.next_expiry
    }
    fn on_timer(&mut self, now: Instant) {
        self.start_burst(now);
    }
    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        if self.fr_quota > 0 && (info.retransmission || self.burst_quota == 0) {
            // A fast-retransmission opportunity, outside the bursts and their
            // trains, is used up by whatever the sender put in it: with SACK
            // the scoreboard may find nothing to retransmit and send new data
            // instead (which must not leave the gate open).
            self.fr_quota -= 1;
            return;
        }
        self.burst_quota = self.burst_quota.saturating_sub(1);
        self.trains.on_burst_packet(now, info.offset, info.len);
    }
    fn on_send_round(&mut self, _now: Instant, _segments: u32) {
        self.trains.close_burst();
        // The transmit opportunity is over: what the gate did not release now
        // waits for the next expiry.
        self.burst_quota = 0;
        self.fr_quota = 0;
    }
    fn on_app_limited(&mut self, _now: Instant) {
        self.burst_quota = 0;
    }
    fn on_ack(&mut self, now: Instant, ack: &AckEvent) {
        if ack.dupack {
            match self.p.dupack_train {
                DupackTrain::Cut => self.trains.on_dupack(),
                DupackTrain::Count => {
                    if let Some(c) = self.trains.on_dupack_counted(now, ack.snd_una) {
                        self.on_train(&c);
                    }
                }
            }
        }
        if ack.bytes_acked == 0 {
            return;
        }
        let cumulative = ack.bytes_acked > 2 * ack.mss as u64;
        // Karn's rule: the sender has a sample for this ACK only if it covers
        // no retransmitted data (or timestamps measured it), as the kernel
        // hands the module a sample only then.
        let up = self
            .trains
            .on_advance(now, ack.snd_una, cumulative, ack.rtt.is_some());
        if let Some(s) = up.sample {
            if self.takes_rtt_samples() {
                self.requests.push_back(SenderRequest::RttSample(s.rtt));
            }
            if s.of_closed {
                self.on_burst_sample(&s);
            }
        }
        if let Some(c) = up.closed {
            self.on_train(&c);
        }
        if let Some(s) = up.sample.filter(|s| !s.of_closed) {
            self.on_burst_sample(&s);
        }
    }
    fn on_rate_sample(&mut self, _now: Instant, rs: &RateSample) {
        if let Some(r) = rs.rate.filter(|_| !rs.app_limited) {
            self.delivery_rate = Some(r);
        }
    }
    fn on_congestion(&mut self, now: Instant, ev: &CongestionEvent) {
        match ev.kind {
            CongestionKind::FastRetransmit => {
                self.fr_reduction += 1;
                self.fr_quota += 1;
            }
            CongestionKind::Rto { .. } => {
                // DCNET 2016, section 2.2: BURST and TxTime back to their
                // initial values; the statistics and the stability counter
                // are the module's and stay as they are.
                self.burst = self.p.burst;
                self.tx_time = self.p.tx_time;
                self.fr_reduction = 0;
                self.fr_quota = 0;
                self.start_burst(now);
            }
            CongestionKind::Ecn => {}
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        METRICS
    }
    fn metrics(&self, out: &mut [f64]) {
        let secs = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        out[0] = self.burst as f64;
        out[1] = self.tx_time.as_secs_f64();
        out[2] = secs(self.dispersion);
        out[3] = secs(self.rtt.min);
        out[4] = secs(self.rtt.avg);
        out[5] = self.rtt.delta().as_secs_f64();
        out[6] = match self.mode {
            Mode::Tracking => 0.0,
            Mode::Adjustment => 1.0,
        };
        out[7] = self.stability as f64;
        // The rate the schedule aims at: one burst of payload per TxTime.
        out[8] = self.burst as f64 * self.mss as f64 * 8.0 / self.tx_time.as_secs_f64();
        out[9] = secs(self.rtt.max);
    }
}

#[cfg(test)]
mod tests;
