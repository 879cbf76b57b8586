//! TCP Wave (Abdelsalam, Luglio, Roseti, Zampognaro): a sender that transmits
//! bursts of BURST segments each time its send timer (period TxTime) expires,
//! and sets TxTime from the ACK trains an unmodified receiver returns.
//!
//! Sources: "TCP Wave Resilience to Link Changes" (DCNET 2016), section 2
//! (fast retransmission and RTO recovery); the TCP Wave project page (the
//! Linux hooks and TxTime = AckTrainDispersion + 0.5 DeltaRTT); and the
//! behaviour of the public Linux 4.12 module as the project's reference notes
//! describe it in prose (adjustment mode, the weighted average RTT, the
//! stability factor). No code was taken from any implementation.
//!
//! How it maps onto the sender:
//! * the window never limits ([`CongestionControl::cwnd`] is unlimited); data
//!   leaves only through the gate, which the timer opens for one burst
//!   ([`CongestionControl::on_timer`] = the Linux hook send_timer_expired,
//!   [`CongestionControl::timer`] = get_send_timer_exp_time,
//!   [`CongestionControl::on_send_round`] = segment_sent,
//!   [`CongestionControl::on_app_limited`] = no_data_to_transmit);
//! * the first burst leaves when the connection is established;
//! * a train's dispersion sample above the average RTT is discarded (DCNET
//!   2016, section 3.2); a train cut by a loss gives no sample;
//! * after each ACK train, with the smoothed dispersion: tracking mode TxTime = dispersion + DeltaRTT / 2
//!   (at least 1 ms, never above TxTime0), or, when DeltaRTT exceeds beta,
//!   adjustment mode: TxTime back to TxTime0, the average RTT set to the
//!   largest RTT seen, the minimum forgotten, and the next
//!   avgRTT / dispersion trains (the stability factor) leave TxTime alone;
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
//!   brings TxTime back from the smoothed statistics (DCNET 2016, section 3.2);
//!   cumulative ACKs make later bursts skip what they cover (the sender
//!   retransmits only what is still unacknowledged);
//! * RTT: one sample per burst (first packet to first ACK of its train); every
//!   sample, inflated by retransmissions or not, feeds the RTO estimator
//!   ([`SenderRequest::RttSample`]); the RTO floor stays the sender's (1 s by
//!   default).

mod train;

pub use train::{Burst, RttStats, TrainUpdate, Trains};

use super::{
    AckEvent, CongestionControl, CongestionEvent, CongestionKind, RecoveryStyle, SendGate,
    SenderRequest, SentInfo, WindowStart,
};
use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A window so large it never limits: TCP Wave releases data with its timer.
pub const UNLIMITED: u64 = u64::MAX / 4;

/// TCP Wave's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WaveParams {
    /// Initial burst size in segments, BURST0 (default 10).
    pub burst: u32,
    /// Smallest burst in segments (default 3, as the Linux module).
    pub min_burst: u32,
    /// Initial (and largest) timer period, TxTime0 (default 500 ms).
    pub tx_time: Duration,
    /// Smallest timer period (default 1 ms).
    pub min_tx_time: Duration,
    /// DeltaRTT above which adjustment mode starts (default 350 ms as in the
    /// DCNET 2016 paper; the Linux module uses 150 ms).
    pub beta: Duration,
}

impl Default for WaveParams {
    fn default() -> Self {
        WaveParams {
            burst: 10,
            min_burst: 3,
            tx_time: Duration::from_millis(500),
            min_tx_time: Duration::from_millis(1),
            beta: Duration::from_millis(350),
        }
    }
}

impl WaveParams {
    /// Checks the values; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.min_burst == 0 {
            return Err("min_burst: must be at least 1 segment".into());
        }
        if self.burst < self.min_burst {
            return Err(format!(
                "burst: {} is below min_burst {}",
                self.burst, self.min_burst
            ));
        }
        if self.min_tx_time.is_zero() {
            return Err("min_tx_time: must be above zero".into());
        }
        if self.tx_time < self.min_tx_time {
            return Err(format!(
                "tx_time: {} is below min_tx_time {}",
                self.tx_time, self.min_tx_time
            ));
        }
        Ok(())
    }
}

/// TxTime update mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// TxTime follows the ACK trains.
    Tracking,
    /// DeltaRTT exceeded beta: TxTime reset, updates paused for a while.
    Adjustment,
}

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
    /// Smoothed ACK-train dispersion.
    dispersion: Option<Duration>,
    delivery_rate: Option<Rate>,
    mode: Mode,
    /// Trains whose TxTime update is still to be skipped (stability factor).
    skip_updates: u32,
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
            skip_updates: 0,
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
    /// The smoothed ACK-train dispersion.
    pub fn dispersion(&self) -> Option<Duration> {
        self.dispersion
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

    /// A train closed, with a clean dispersion `sample` or none (cut by a
    /// loss or by a cumulative ACK): folds the sample into the smoothed
    /// dispersion, then sets TxTime from the smoothed statistics (tracking
    /// mode), or enters adjustment mode when DeltaRTT exceeds beta.
    fn on_train(&mut self, sample: Option<Duration>) {
        // DCNET 2016, section 3.2: a dispersion sample above the average RTT
        // (a train stretched by an outage or a path change, measured against
        // statistics from the old path) is discarded.
        if let Some(sample) = sample.filter(|&d| self.rtt.avg.is_none_or(|avg| d <= avg)) {
            self.dispersion = Some(match self.dispersion {
                None => sample,
                Some(avg) => (avg + sample) / 2,
            });
        }
        let Some(disp) = self.dispersion else {
            return;
        };
        if self.skip_updates > 0 {
            self.skip_updates -= 1;
            return;
        }
        let delta = self.rtt.delta();
        if delta > self.p.beta {
            self.mode = Mode::Adjustment;
            self.tx_time = self.p.tx_time;
            self.rtt.avg = self.rtt.max;
            self.rtt.min = None;
            self.rtt.max = None;
            let avg = self.rtt.avg.unwrap_or(Duration::ZERO);
            self.skip_updates = if disp.is_zero() {
                0
            } else {
                (avg.as_secs_f64() / disp.as_secs_f64()).round().min(1e6) as u32
            };
        } else {
            self.mode = Mode::Tracking;
            self.tx_time = (disp + delta / 2)
                .max(self.p.min_tx_time)
                .min(self.p.tx_time);
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
    fn set_mss(&mut self, mss: u32) {
        self.mss = mss;
    }
    fn on_established(&mut self, now: Instant, _rtt: Option<Duration>) {
        self.start_burst(now);
    }
    fn takes_rtt_samples(&self) -> bool {
        true
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
            self.trains.on_dupack();
        }
        if ack.bytes_acked == 0 {
            return;
        }
        let cumulative = ack.bytes_acked > 2 * ack.mss as u64;
        let up = self.trains.on_advance(
            now,
            ack.snd_una,
            cumulative,
            self.delivery_rate,
            self.dispersion,
        );
        if let Some(r) = up.rto_sample {
            self.requests.push_back(SenderRequest::RttSample(r));
            // A cumulative ACK's sample is inflated by the repair: the
            // statistics use the average instead.
            let stat = if cumulative {
                self.rtt.avg.unwrap_or(r)
            } else {
                r
            };
            self.rtt.add(stat);
        }
        if up.closed {
            self.on_train(up.dispersion);
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
                self.burst = self.p.burst;
                self.tx_time = self.p.tx_time;
                self.fr_reduction = 0;
                self.fr_quota = 0;
                self.skip_updates = 0;
                self.mode = Mode::Tracking;
                self.start_burst(now);
            }
            CongestionKind::Ecn => {}
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "burst",
            "tx_time",
            "dispersion",
            "min_rtt",
            "avg_rtt",
            "delta_rtt",
            "mode",
            "stability",
            "rate",
        ]
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
        out[7] = self.skip_updates as f64;
        // The rate the schedule aims at: one burst of payload per TxTime.
        out[8] = self.burst as f64 * self.mss as f64 * 8.0 / self.tx_time.as_secs_f64();
    }
}

#[cfg(test)]
mod tests;
