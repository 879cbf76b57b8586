//! TCP Vegas's congestion avoidance, the worked example of
//! docs/custom-cc.md: a delay-based window algorithm in about a hundred
//! lines, with its state in the time series.
//!
//! After Brakmo and Peterson, "TCP Vegas: End to End Congestion Avoidance on
//! a Global Internet", IEEE JSAC 13(8), 1995, section 3.2 (and Peterson and
//! Davie, "TCP Congestion Control: A Systems Approach", chapter 5):
//!
//! * `BaseRTT` is the smallest RTT measured (reset when the driver reports a
//!   path change: a handover makes the old one meaningless);
//! * once per round trip (a round ends when the data outstanding at its start
//!   is acknowledged), with `RTT` the smallest sample of the round,
//!   `Diff = (Expected - Actual) * BaseRTT = cwnd * (RTT - BaseRTT) / RTT`,
//!   in segments: the data the flow keeps queued in the network;
//! * in congestion avoidance, `Diff < alpha` grows the window by one segment
//!   per round, `Diff > beta` shrinks it by one, otherwise it holds
//!   (alpha = 1, beta = 3 segments: the paper's "1 and 3 buffers");
//! * slow start grows the window every other round only, and ends when
//!   `Diff > gamma` (1 segment).
//!
//! Our choices where the paper leaves room, each written down (the first two
//! as Linux's tcp_vegas): leaving slow start cuts the window to the one that
//! would queue nothing (`cwnd * BaseRTT / RTT`) plus a segment, and sets
//! ssthresh to it; a decrease in congestion avoidance lowers ssthresh with
//! the window, so that slow start does not win it back; losses get
//! Reno's response (RFC 5681: half the flight after a fast retransmit, one
//! segment after a timeout), not the paper's new retransmission mechanism,
//! which would belong in the sender; a round with no valid RTT sample
//! (Karn's rule) changes nothing.

use serde::Deserialize;
use wavelab_tcp::cc::registry::CcParams;
use wavelab_tcp::cc::{
    half_flight, AckEvent, CongestionControl, CongestionEvent, CongestionKind, PathInfo,
    WindowStart,
};
use wavelab_tcp::Instant;

/// Vegas's thresholds, in segments, as a scenario writes them
/// (`cc = { algorithm = "vegas", alpha = 2, beta = 4 }`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VegasParams {
    /// Grow the window while fewer segments than this are queued (default 1).
    #[serde(default = "one")]
    pub alpha: f64,
    /// Shrink it while more than this are queued (default 3).
    #[serde(default = "three")]
    pub beta: f64,
    /// Leave slow start once more than this are queued (default 1).
    #[serde(default = "one")]
    pub gamma: f64,
}

fn one() -> f64 {
    1.0
}
fn three() -> f64 {
    3.0
}

impl CcParams for VegasParams {
    fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("gamma", self.gamma),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "{name}: {v} must be a number of segments, 0 or more"
                ));
            }
        }
        if self.beta < self.alpha {
            return Err(format!(
                "beta: {} must be at least alpha ({})",
                self.beta, self.alpha
            ));
        }
        Ok(())
    }
}

/// Builds Vegas for one connection (what [`crate::register_all`] registers).
pub fn build(p: &VegasParams, start: &WindowStart) -> Box<dyn CongestionControl + Send> {
    Box::new(Vegas::new(p.clone(), start))
}

/// One connection's Vegas.
#[derive(Debug)]
pub struct Vegas {
    p: VegasParams,
    mss: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Smallest RTT measured (s), `None` before the first sample.
    base_rtt: Option<f64>,
    /// Smallest RTT sample of the current round (s).
    round_rtt: Option<f64>,
    /// The round ends when the cumulative ACK reaches this offset.
    round_end: u64,
    /// Slow start grows the window in every other round only.
    grow_this_round: bool,
    /// The last round's Diff, in segments (NaN before the first).
    diff: f64,
}

impl Vegas {
    /// Vegas with the initial window of `start`.
    pub fn new(p: VegasParams, start: &WindowStart) -> Self {
        let mss = start.mss as u64;
        Vegas {
            p,
            mss,
            cwnd: start.initial_cwnd as u64 * mss,
            ssthresh: start.initial_ssthresh.unwrap_or(u64::MAX),
            base_rtt: None,
            round_rtt: None,
            round_end: 0,
            grow_this_round: true,
            diff: f64::NAN,
        }
    }

    /// The end of a round: Vegas's once-per-RTT decision.
    fn end_round(&mut self, ack: &AckEvent) {
        let (Some(base), Some(rtt)) = (self.base_rtt, self.round_rtt.take()) else {
            return;
        };
        let segments = self.cwnd as f64 / self.mss as f64;
        self.diff = segments * (rtt - base) / rtt;
        if self.cwnd < self.ssthresh {
            if self.diff > self.p.gamma {
                // leave slow start at the window that would queue nothing
                // (cwnd * BaseRTT / RTT) plus one segment
                let target = (self.cwnd as f64 * base / rtt).floor() as u64;
                self.cwnd = self.cwnd.min(target + self.mss).max(2 * self.mss);
                self.ssthresh = self.cwnd;
            }
            self.grow_this_round = !self.grow_this_round;
        } else if ack.may_grow_window() && self.diff < self.p.alpha {
            self.cwnd += self.mss;
        } else if self.diff > self.p.beta {
            self.cwnd = (self.cwnd - self.mss).max(2 * self.mss);
            // stay in congestion avoidance
            self.ssthresh = self.ssthresh.min(self.cwnd);
        }
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn set_mss(&mut self, mss: u32) {
        let segments = self.cwnd / self.mss;
        self.mss = mss as u64;
        self.cwnd = segments * self.mss;
    }
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn on_ack(&mut self, _now: Instant, ack: &AckEvent) {
        if let Some(rtt) = ack.rtt.map(|d| d.as_secs_f64()) {
            self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
            self.round_rtt = Some(self.round_rtt.map_or(rtt, |r| r.min(rtt)));
        }
        if self.cwnd < self.ssthresh && self.grow_this_round && ack.may_grow_window() {
            // slow start (RFC 5681 with RFC 3465's one segment per ACK)
            self.cwnd += ack.bytes_acked.min(self.mss);
        }
        if ack.snd_una >= self.round_end {
            self.end_round(ack);
            self.round_end = ack.snd_nxt;
        }
    }
    fn on_congestion(&mut self, _now: Instant, e: &CongestionEvent) {
        match e.kind {
            CongestionKind::Rto { repeated } => {
                if !repeated {
                    self.ssthresh = half_flight(e.flight_size, e.mss);
                }
                self.cwnd = self.mss;
            }
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                self.ssthresh = half_flight(e.flight_size, e.mss);
                self.cwnd = self.ssthresh;
            }
        }
        self.round_rtt = None;
    }
    fn on_path_change(&mut self, _now: Instant, _path: &PathInfo) {
        self.base_rtt = None;
    }
    fn metric_names(&self) -> &'static [&'static str] {
        &["base_rtt", "diff"]
    }
    fn metrics(&self, out: &mut [f64]) {
        out[0] = self.base_rtt.unwrap_or(f64::NAN);
        out[1] = self.diff;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavelab_tcp::testing::acked;
    use wavelab_tcp::Duration;

    fn vegas() -> Vegas {
        let start = WindowStart {
            mss: 1000,
            initial_cwnd: 10,
            initial_ssthresh: Some(10_000),
            abc_limit: 2,
        };
        Vegas::new(serde_json_params("{}"), &start)
    }

    fn serde_json_params(text: &str) -> VegasParams {
        serde_json::from_str(text).unwrap()
    }

    fn ack(snd_una: u64, rtt_ms: u64) -> AckEvent {
        acked(1000, 1000)
            .in_flight(10_000, 9000)
            .sample(Some(Duration::from_millis(rtt_ms)))
            .seq(snd_una, snd_una + 10_000)
            .build()
    }

    /// One round whose smallest RTT is `rtt_ms`, ended by an ACK past it.
    fn round(v: &mut Vegas, at: &mut u64, rtt_ms: u64) {
        *at = v.round_end;
        v.on_ack(Instant::ZERO, &ack(*at, rtt_ms));
    }

    #[test]
    fn the_window_follows_the_segments_queued() {
        let mut v = vegas();
        let mut at = 0;
        // BaseRTT = 100 ms; no queue: Diff = 0 < alpha, one more segment
        round(&mut v, &mut at, 100);
        assert_eq!(v.base_rtt, Some(0.1));
        assert_eq!(v.diff, 0.0);
        assert_eq!(v.cwnd, 11_000);
        // 11 segments, RTT 125 ms: Diff = 11 * 25 / 125 = 2.2, between alpha and beta
        round(&mut v, &mut at, 125);
        assert!((v.diff - 2.2).abs() < 1e-12, "{}", v.diff);
        assert_eq!(v.cwnd, 11_000);
        // RTT 200 ms: Diff = 5.5 > beta: one segment fewer
        round(&mut v, &mut at, 200);
        assert_eq!((v.cwnd, v.ssthresh), (10_000, 10_000));
        let mut m = [0.0; 2];
        v.metrics(&mut m);
        assert_eq!(m, [0.1, 5.5]);
    }

    #[test]
    fn slow_start_grows_every_other_round_and_ends_on_gamma() {
        let mut v = vegas();
        v.ssthresh = u64::MAX;
        let mut at = 0;
        let before = v.cwnd;
        round(&mut v, &mut at, 100); // grows on its ACK, then the next round holds
        assert_eq!(v.cwnd, before + 1000);
        round(&mut v, &mut at, 100);
        assert_eq!(v.cwnd, before + 1000, "a holding round");
        round(&mut v, &mut at, 100);
        assert_eq!(v.cwnd, before + 2000);
        assert_eq!(v.ssthresh, u64::MAX);
        // 12 segments, RTT 150 ms: Diff = 4 > gamma: congestion avoidance at
        // the window that queues nothing (12 * 100 / 150 = 8) plus one
        round(&mut v, &mut at, 150);
        assert_eq!((v.cwnd, v.ssthresh), (9000, 9000));
    }

    #[test]
    fn losses_get_renos_response_and_a_path_change_forgets_base_rtt() {
        let mut v = vegas();
        let e = |kind| CongestionEvent {
            kind,
            flight_size: 20_000,
            ssthresh_basis: 20_000,
            in_flight: 20_000,
            mss: 1000,
        };
        v.on_congestion(Instant::ZERO, &e(CongestionKind::FastRetransmit));
        assert_eq!((v.cwnd, v.ssthresh), (10_000, 10_000));
        v.on_congestion(Instant::ZERO, &e(CongestionKind::Rto { repeated: false }));
        assert_eq!((v.cwnd, v.ssthresh), (1000, 10_000));
        v.on_ack(Instant::ZERO, &ack(1000, 80));
        assert_eq!(v.base_rtt, Some(0.08));
        v.on_path_change(
            Instant::ZERO,
            &PathInfo {
                rate: None,
                delay: None,
            },
        );
        assert_eq!(v.base_rtt, None);
    }

    #[test]
    fn parameters_are_checked_by_name() {
        let p: VegasParams = serde_json::from_str(r#"{"alpha": 4}"#).unwrap();
        assert_eq!(
            p.validate().unwrap_err(),
            "beta: 3 must be at least alpha (4)"
        );
        let p: VegasParams = serde_json::from_str(r#"{"gamma": -1}"#).unwrap();
        assert!(p.validate().unwrap_err().starts_with("gamma: -1"));
        assert!(serde_json::from_str::<VegasParams>(r#"{"delta": 1}"#).is_err());
    }
}
