//! WSC-TCP (Srinivasan, "Efficient TCP enhancements for Hybrid Networks",
//! MS thesis, UC Santa Cruz 2016): NewReno with four mechanisms
//! fed by the wireless link layer and by the host's past sessions, each
//! switchable on its own ([`WscParams`]):
//!
//! * **corrected RTT** (section 3.1): the link reports each delivered
//!   segment with the link-layer retransmissions n it needed and its
//!   retransmission timeout LL_RTO ([`crate::cc::LinkReport`]); the RTT
//!   sample of an ACK becomes observed − n × LL_RTO for the segment newly
//!   covered by the ACK with the largest n × LL_RTO (the ACK could not
//!   leave before the latest of them arrived; each report's own LL_RTO). It is floored at
//!   the smallest clean sample (the handshake's, or one of an ACK covering
//!   no link-layer retransmission), so an LL_RTO larger than the link's
//!   real retry delay cannot make it absurd. The corrected sample feeds the
//!   RFC 6298 estimator ([`SenderRequest::RttSample`]), hence the RTO;
//!   NewReno uses RTT nowhere else;
//! * **dynamic duplicate-ACK threshold** (section 3.2): the configured
//!   threshold plus the segments the link delivered past the first segment
//!   still in link-layer retry ([`SenderRequest::DupThreshAbove`]); our
//!   reading of the garbled pseudo-code is in [`link`];
//! * **best-start** (section 3.3): the initial window from the host's past
//!   sessions on the path in the same time-of-day bucket, else slow start
//!   ([`history`]);
//! * **RTT clustering** (section 3.4): k-means over the recent samples; a
//!   sample in a small cluster does not reach the estimator ([`cluster`]).
//!
//! The window arithmetic is NewReno's ([`Reno`]), unchanged: the thesis
//! changes what the sender believes about delay and reordering, not how it
//! reacts to a loss it believes in. No code was taken from any
//! implementation (there is none public).

pub mod cluster;
pub mod history;
pub mod link;
mod params;
#[cfg(test)]
mod tests;

pub use cluster::RttClusters;
pub use history::{best_start, SessionRecord, SteadyWindow};
pub use link::LinkLedger;
pub use params::{DupThreshRestore, WscParams, MAX_CLUSTER_WINDOW};

use super::reno::{Reno, RenoParams, RenoVariant};
use super::{
    AckEvent, CongestionControl, CongestionEvent, Notification, RecoveryExit, RecoveryStyle,
    SenderRequest, SentInfo, UndoEvent, WindowOptions, WindowStart,
};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// How the session's initial window was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// No history was offered (best-start off, or no host keeps one).
    NotAsked,
    /// From the history: this many segments.
    BestStart(u32),
    /// The history had no session in this bucket: slow start.
    SlowStart,
}

/// WSC-TCP.
#[derive(Clone, Debug)]
pub struct WscTcp {
    p: WscParams,
    reno: Reno,
    mss: u64,
    ledger: LinkLedger,
    clusters: Option<RttClusters>,
    requests: VecDeque<SenderRequest>,
    /// The threshold increase last asked of the sender.
    extra: u32,
    /// The cumulative ACK point seen last.
    snd_una: u64,
    /// The smallest RTT sample that needed no correction (the handshake's
    /// included): the floor of corrected ones.
    min_clean: Option<Duration>,
    last_corrected: Option<Duration>,
    corrected: u64,
    start: Start,
    session_start: Option<Instant>,
    steady: SteadyWindow,
}

impl WscTcp {
    /// WSC-TCP with these parameters.
    pub fn new(p: &WscParams, start: &WindowStart) -> Self {
        WscTcp {
            reno: Reno::new(RenoVariant::NewReno, &RenoParams::default(), start),
            mss: start.mss as u64,
            ledger: LinkLedger::default(),
            clusters: p
                .clustering
                .then(|| RttClusters::new(p.cluster_k, p.cluster_window, p.cluster_min_share)),
            requests: VecDeque::new(),
            extra: 0,
            snd_una: 0,
            min_clean: None,
            last_corrected: None,
            corrected: 0,
            start: Start::NotAsked,
            session_start: None,
            steady: SteadyWindow::default(),
            p: p.clone(),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &WscParams {
        &self.p
    }
    /// How the initial window was chosen.
    pub fn start(&self) -> Start {
        self.start
    }
    /// The duplicate-ACK threshold's current increase over the configured one.
    pub fn dupthresh_extra(&self) -> u32 {
        self.extra
    }
    /// The last RTT sample after correction (before the clustering filter).
    pub fn last_corrected_rtt(&self) -> Option<Duration> {
        self.last_corrected
    }
    /// RTT samples the correction changed.
    pub fn corrected_samples(&self) -> u64 {
        self.corrected
    }
    /// RTT samples the clustering filter withheld.
    pub fn withheld_samples(&self) -> u64 {
        self.clusters.as_ref().map_or(0, |c| c.withheld())
    }
    /// What the link layer reported.
    pub fn ledger(&self) -> &LinkLedger {
        &self.ledger
    }

    fn tracks_link(&self) -> bool {
        self.p.corrected_rtt || self.p.dynamic_dupthresh
    }

    fn apply_start(&mut self) {
        if let Start::BestStart(w) = self.start {
            let bytes = w as u64 * self.mss;
            self.reno.set_window(bytes, bytes.max(2 * self.mss));
        }
    }

    fn update_dupthresh(&mut self, now: Instant) {
        if !self.p.dynamic_dupthresh {
            return;
        }
        let e = self
            .ledger
            .extra(now, self.p.dupthresh_restore, self.p.pending_limit);
        if e != self.extra {
            self.extra = e;
            self.requests.push_back(SenderRequest::DupThreshAbove(e));
        }
    }

    /// Section 3.1: the sample of an ACK that moved the cumulative point
    /// from `self.snd_una` to `snd_una`, corrected.
    fn correct(&mut self, raw: Duration, snd_una: u64) -> Duration {
        let (delay, n) = if self.p.corrected_rtt {
            self.ledger.max_link_delay(self.snd_una, snd_una)
        } else {
            (Duration::ZERO, 0)
        };
        if n > 0 {
            self.corrected += 1;
            let floor = self.min_clean.unwrap_or(Duration::ZERO).min(raw);
            raw.saturating_sub(delay).max(floor)
        } else {
            self.min_clean = Some(self.min_clean.map_or(raw, |m| m.min(raw)));
            raw
        }
    }
}

impl CongestionControl for WscTcp {
    fn name(&self) -> &'static str {
        "wsc-tcp"
    }
    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn takes_rtt_samples(&self) -> bool {
        self.p.corrected_rtt || self.p.clustering
    }
    fn set_mss(&mut self, mss: u32) {
        self.mss = mss as u64;
        self.reno.set_mss(mss);
        self.apply_start();
    }
    fn set_options(&mut self, options: &WindowOptions) {
        self.reno.set_options(options);
    }
    fn on_undo(&mut self, now: Instant, undo: &UndoEvent) {
        self.reno.on_undo(now, undo);
    }
    fn on_established(&mut self, _now: Instant, rtt: Option<Duration>) {
        self.min_clean = rtt;
    }
    fn poll_request(&mut self) -> Option<SenderRequest> {
        self.requests.pop_front()
    }
    #[inline]
    fn on_packet_sent(&mut self, _now: Instant, info: &SentInfo) {
        if self.tracks_link() {
            self.ledger.sent(info.offset, info.len);
        }
    }
    fn on_notification(&mut self, now: Instant, n: &Notification) {
        match n {
            Notification::LinkReport(r) if self.tracks_link() => {
                self.ledger.delivered(now, r.offset, r.retries, r.link_rto);
            }
            Notification::LinkDrop(r) if self.tracks_link() => {
                self.ledger.dropped(r.offset, r.link_rto);
            }
            _ => return,
        }
        self.update_dupthresh(now);
    }
    fn on_ack(&mut self, now: Instant, ack: &AckEvent) {
        if let Some(raw) = ack.rtt.filter(|_| self.takes_rtt_samples()) {
            let rtt = self.correct(raw, ack.snd_una);
            self.last_corrected = Some(rtt);
            if self.clusters.as_mut().is_none_or(|c| c.admit(rtt)) {
                self.requests.push_back(SenderRequest::RttSample(rtt));
            }
        }
        if ack.snd_una > self.snd_una {
            self.snd_una = ack.snd_una;
            if self.tracks_link() {
                self.ledger.acked(ack.snd_una);
            }
        }
        self.reno.on_ack(now, ack);
        self.steady.observe(now, self.reno.cwnd());
        self.update_dupthresh(now);
    }
    fn on_congestion(&mut self, now: Instant, ev: &CongestionEvent) {
        self.reno.on_congestion(now, ev);
        self.steady.congestion(now, self.reno.cwnd());
    }
    fn on_recovery_exit(&mut self, now: Instant, exit: &RecoveryExit) {
        self.reno.on_recovery_exit(now, exit);
        self.steady.observe(now, self.reno.cwnd());
    }
    fn on_path_history(&mut self, now: Instant, past: &[SessionRecord]) {
        if !self.p.best_start {
            return;
        }
        self.session_start = Some(now);
        self.start = match best_start(&self.p, now, past) {
            Some(w) => Start::BestStart(w),
            None => Start::SlowStart,
        };
        self.apply_start();
    }
    fn session_record(&self) -> Option<SessionRecord> {
        let started = self.session_start?;
        Some(SessionRecord {
            started,
            window: self.steady.segments(self.mss),
        })
    }
    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "slow_start",
            "ca_acked",
            "dupthresh_extra",
            "corrected_rtt",
            "withheld_samples",
            "best_start",
        ]
    }
    fn metrics(&self, out: &mut [f64]) {
        self.reno.metrics(&mut out[..2]);
        out[2] = self.extra as f64;
        out[3] = self.last_corrected.map_or(f64::NAN, |d| d.as_secs_f64());
        out[4] = self.withheld_samples() as f64;
        out[5] = match self.start {
            Start::BestStart(w) => w as f64,
            Start::NotAsked | Start::SlowStart => 0.0,
        };
    }
}
