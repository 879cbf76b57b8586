//! DCTCP (Bensley et al., RFC 8257) and an L4S scalable response, the
//! essentials of TCP Prague (De Schepper, Tilmans, Briscoe and Goel,
//! draft-briscoe-iccrg-prague-congestion-control-04, 2024).
//!
//! Both estimate the fraction of their data the network marks CE and reduce
//! in proportion to it, where classic ECN halves the window on any mark:
//!
//! * the receiver echoes each data packet's CE state (RFC 8257 section
//!   3.2); the driver gives a connection whose algorithm asks for it
//!   ([`CongestionControl::ecn_style`]) that echo
//!   ([`crate::Receiver::set_per_packet_echo`]), and ECN is negotiated
//!   whatever `tcp.ecn` says: both endpoints run DCTCP (RFC 8257 section 1);
//! * once per observation window (about one round trip: the window ends
//!   when the cumulative ACK passes the `snd_nxt` recorded when it began),
//!   `alpha = (1 - g) alpha + g F`, with F the fraction of the window's
//!   acknowledged bytes that came with ECN-Echo (RFC 8257 section 3.3,
//!   g = 1/16 by default, section 4.2; [`CongestionControl::on_ecn_feedback`]
//!   gives the algorithm every ACK's bytes and echo before the sender's
//!   response, so the estimate is current when the window is cut);
//! * on an ECN-Echo, at most once per window of data (the sender's RFC 3168
//!   rule, `sender/ecn.rs`), `cwnd = cwnd (1 - alpha / 2)`, and ssthresh
//!   the same (RFC 8257 section 3.3), never below 2 MSS (our floor, as for
//!   every window algorithm here, RFC 5681 equation 4);
//! * on a loss, the classic response: ssthresh = FlightSize / 2 and fast
//!   recovery, or one segment after a timeout (RFC 8257 section 3.5);
//! * growth is Reno's (RFC 5681 with RFC 3465 byte counting, section 3.4).
//!
//! Prague ([`DctcpVariant::Prague`]) differs as the draft's section 2
//! describes it for the reference Linux implementation: its data carries
//! ECT(1), the L4S identifier (RFC 9331 section 4.1), so that an L4S queue
//! (DualPI2's L queue, RFC 9332) takes it; it is paced, at cwnd / SRTT
//! times 2 in slow start and 1.2 in congestion avoidance (Linux's default
//! `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, which the reference
//! implementation uses); it falls back on Reno's halving on a loss.
//!
//! Left out of Prague (docs/algorithms/dctcp.md): AccECN feedback (RFC
//! 9768; the DCTCP per-packet echo stands in, exact with one ACK per packet
//! and nearly so with delayed ACKs, RFC 8257 section 3.2), reduced RTT
//! dependence, windows below 2 MSS, detection of a classic ECN bottleneck,
//! and paced chirping.

use super::reno::{grow, undo_window};
use super::{
    half_flight, loss_ssthresh, AckEvent, CongestionControl, CongestionEvent, CongestionKind,
    EcnFeedback, EcnStyle, RecoveryExit, UndoEvent, WindowOptions, WindowStart,
};
use crate::time::{Duration, Instant, Rate};
use serde::{Deserialize, Serialize};

/// DCTCP or Prague.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DctcpVariant {
    /// DCTCP (RFC 8257): ECT(0), not paced.
    Dctcp,
    /// TCP Prague's essentials: ECT(1), paced.
    Prague,
}

/// Parameters of DCTCP and Prague.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpParams {
    /// The estimation gain g: the weight of the newest window's marked
    /// fraction in alpha (1/16, RFC 8257 section 4.2). Above 0, at most 1.
    pub g: f64,
    /// alpha before the first window is observed (1, the conservative
    /// start RFC 8257 section 3.3 gives: the first mark halves the window,
    /// as Linux's `dctcp_alpha_on_init` default does too). From 0 to 1.
    pub initial_alpha: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            g: 1.0 / 16.0,
            initial_alpha: 1.0,
        }
    }
}

impl DctcpParams {
    /// Checks the values; the message names the field and its value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.g.is_finite() && self.g > 0.0 && self.g <= 1.0) {
            return Err(format!(
                "g: {} is out of range; it must be above 0 and at most 1 (RFC 8257 uses 1/16)",
                self.g
            ));
        }
        if !(self.initial_alpha.is_finite() && (0.0..=1.0).contains(&self.initial_alpha)) {
            return Err(format!(
                "initial_alpha: {} is out of range; it must be at least 0 and at most 1",
                self.initial_alpha
            ));
        }
        Ok(())
    }
}

/// Pacing gain in slow start (Linux's `tcp_pacing_ss_ratio`, 200%).
const PACING_SS: f64 = 2.0;
/// Pacing gain in congestion avoidance (Linux's `tcp_pacing_ca_ratio`, 120%).
const PACING_CA: f64 = 1.2;

/// The DCTCP (or Prague) window and its estimate of the marked fraction.
#[derive(Clone, Debug)]
pub struct Dctcp {
    variant: DctcpVariant,
    g: f64,
    mss: u64,
    initial_segments: u64,
    abc_limit: u64,
    cwnd: u64,
    ssthresh: u64,
    ca_acked: u64,
    options: WindowOptions,
    /// The estimate of the fraction of bytes marked (RFC 8257's
    /// DCTCP.Alpha).
    alpha: f64,
    /// The observation window ends when the cumulative ACK passes this
    /// offset (DCTCP.WindowEnd).
    window_end: u64,
    /// Bytes acknowledged in this window (DCTCP.BytesAcked).
    bytes_acked: u64,
    /// Of those, bytes acknowledged with ECN-Echo (DCTCP.BytesMarked).
    bytes_marked: u64,
    /// The marked fraction F of the last window that ended.
    fraction: f64,
    /// Windows observed so far.
    windows: u64,
    /// The smoothed RTT, for Prague's pacing.
    srtt: Option<Duration>,
}

impl Dctcp {
    /// A window starting at `start.initial_cwnd` segments; `params` must be
    /// valid.
    pub fn new(variant: DctcpVariant, params: &DctcpParams, start: &WindowStart) -> Self {
        let mss = start.mss as u64;
        Dctcp {
            variant,
            g: params.g,
            mss,
            initial_segments: start.initial_cwnd as u64,
            abc_limit: start.abc_limit as u64,
            cwnd: start.initial_cwnd as u64 * mss,
            ssthresh: start.initial_ssthresh.unwrap_or(u64::MAX),
            ca_acked: 0,
            options: WindowOptions::default(),
            alpha: params.initial_alpha,
            window_end: 0,
            bytes_acked: 0,
            bytes_marked: 0,
            fraction: 0.0,
            windows: 0,
            srtt: None,
        }
    }

    /// The current estimate of the marked fraction (DCTCP.Alpha).
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// True while cwnd is below ssthresh.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        match self.variant {
            DctcpVariant::Dctcp => "dctcp",
            DctcpVariant::Prague => "prague",
        }
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn ecn_style(&self) -> EcnStyle {
        match self.variant {
            DctcpVariant::Dctcp => EcnStyle::Dctcp,
            DctcpVariant::Prague => EcnStyle::L4s,
        }
    }
    fn pacing_rate(&self) -> Option<Rate> {
        if self.variant != DctcpVariant::Prague {
            return None;
        }
        let srtt = self.srtt.filter(|d| !d.is_zero())?;
        let gain = if self.in_slow_start() {
            PACING_SS
        } else {
            PACING_CA
        };
        Some(Rate::from_bytes_per(self.cwnd, srtt).scaled(gain))
    }

    fn set_mss(&mut self, mss: u32) {
        self.mss = mss as u64;
        self.cwnd = self.initial_segments * self.mss;
    }

    fn set_options(&mut self, options: &WindowOptions) {
        self.options = *options;
    }

    fn on_established(&mut self, _now: Instant, rtt: Option<Duration>) {
        self.srtt = self.srtt.or(rtt);
    }

    fn on_ecn_feedback(&mut self, _now: Instant, fb: &EcnFeedback) {
        self.bytes_acked += fb.bytes_acked;
        if fb.ece {
            self.bytes_marked += fb.bytes_acked;
        }
        if fb.snd_una > self.window_end {
            if self.bytes_acked > 0 {
                self.fraction = self.bytes_marked as f64 / self.bytes_acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * self.fraction;
                self.windows += 1;
            }
            self.window_end = fb.snd_nxt;
            self.bytes_acked = 0;
            self.bytes_marked = 0;
        }
    }

    fn on_undo(&mut self, _now: Instant, undo: &UndoEvent) {
        undo_window(&mut self.cwnd, &mut self.ssthresh, undo);
        self.ca_acked = 0;
    }

    fn on_ack(&mut self, _now: Instant, ack: &AckEvent) {
        if ack.srtt.is_some() {
            self.srtt = ack.srtt;
        }
        if ack.may_grow_window() {
            let slow_start = self.in_slow_start();
            let ca_window = self.cwnd;
            grow(
                &mut self.cwnd,
                ca_window,
                &mut self.ca_acked,
                slow_start,
                self.mss,
                self.abc_limit,
                &self.options,
                ack,
            );
        }
    }

    fn on_congestion(&mut self, _now: Instant, ev: &CongestionEvent) {
        self.ca_acked = 0;
        match ev.kind {
            CongestionKind::Ecn => {
                let reduced = (self.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
                self.ssthresh = reduced.max(2 * self.mss);
                self.cwnd = self.ssthresh;
            }
            CongestionKind::FastRetransmit => {
                self.ssthresh = loss_ssthresh(ev, self.cwnd);
                self.cwnd = self.ssthresh;
            }
            CongestionKind::Rto { repeated } => {
                if !repeated {
                    self.ssthresh = half_flight(ev.ssthresh_basis, ev.mss);
                }
                self.cwnd = self.mss;
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant, _exit: &RecoveryExit) {
        self.cwnd = self.ssthresh;
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["alpha", "marked_fraction", "windows", "slow_start"]
    }
    fn metrics(&self, out: &mut [f64]) {
        out[0] = self.alpha;
        out[1] = self.fraction;
        out[2] = self.windows as f64;
        out[3] = self.in_slow_start() as u8 as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcConfig;

    const MSS: u64 = 1000;

    fn dctcp(initial_alpha: f64) -> Dctcp {
        let p = DctcpParams {
            initial_alpha,
            ..DctcpParams::default()
        };
        let start = WindowStart {
            mss: MSS as u32,
            initial_cwnd: 10,
            initial_ssthresh: None,
            abc_limit: 2,
        };
        Dctcp::new(DctcpVariant::Dctcp, &p, &start)
    }

    fn fb(bytes: u64, ece: bool, snd_una: u64, snd_nxt: u64) -> EcnFeedback {
        EcnFeedback {
            bytes_acked: bytes,
            ece,
            snd_una,
            snd_nxt,
        }
    }

    fn ecn_event(flight: u64) -> CongestionEvent {
        CongestionEvent {
            kind: CongestionKind::Ecn,
            flight_size: flight,
            ssthresh_basis: flight,
            in_flight: flight,
            mss: MSS as u32,
        }
    }

    /// RFC 8257 section 3.3: alpha moves by g towards each window's marked
    /// fraction, once per window; within a window it stays.
    #[test]
    fn alpha_follows_each_windows_marked_fraction_with_gain_g() {
        let mut c = dctcp(0.0);
        let t = Instant::ZERO;
        // the first ACK closes the (empty) window before any data: alpha
        // moves to 1/16 of this ACK's fraction (all marked)
        c.on_ecn_feedback(t, &fb(MSS, true, MSS, 10 * MSS));
        assert!((c.alpha() - 1.0 / 16.0).abs() < 1e-12);
        // a window of 10 segments, 3 marked: no change until it ends
        for k in 2..=10 {
            c.on_ecn_feedback(t, &fb(MSS, k <= 4, k * MSS, 20 * MSS));
            assert!((c.alpha() - 1.0 / 16.0).abs() < 1e-12, "{k}");
        }
        c.on_ecn_feedback(t, &fb(MSS, false, 11 * MSS, 21 * MSS));
        let f = 3.0 / 10.0;
        let want = (15.0 / 16.0) * (1.0 / 16.0) + f / 16.0;
        assert!((c.alpha() - want).abs() < 1e-12, "{}", c.alpha());
        // a constant fraction: alpha converges to it
        let mut una = 11 * MSS;
        for _ in 0..400 {
            for k in 0..10 {
                una += MSS;
                c.on_ecn_feedback(t, &fb(MSS, k < 2, una, una + 10 * MSS));
            }
        }
        assert!((c.alpha() - 0.2).abs() < 0.01, "{}", c.alpha());
    }

    /// RFC 8257 section 3.3: a mark cuts cwnd by alpha / 2; with alpha at
    /// its initial 1 that is a halving, with alpha 0.2 a tenth. A loss
    /// halves whatever alpha is (section 3.5).
    #[test]
    fn the_cut_is_proportional_to_alpha_and_a_loss_halves() {
        let mut c = dctcp(1.0);
        c.on_congestion(Instant::ZERO, &ecn_event(10 * MSS));
        assert_eq!((c.cwnd(), c.ssthresh()), (5 * MSS, 5 * MSS));
        let mut c = dctcp(0.2);
        c.on_congestion(Instant::ZERO, &ecn_event(10 * MSS));
        assert_eq!((c.cwnd(), c.ssthresh()), (9 * MSS, 9 * MSS));
        let mut c = dctcp(0.0);
        c.on_congestion(Instant::ZERO, &ecn_event(10 * MSS));
        assert_eq!(c.cwnd(), 10 * MSS, "alpha 0: no cut");
        let mut ev = ecn_event(10 * MSS);
        ev.kind = CongestionKind::FastRetransmit;
        c.on_congestion(Instant::ZERO, &ev);
        assert_eq!((c.cwnd(), c.ssthresh()), (5 * MSS, 5 * MSS));
    }

    #[test]
    fn prague_is_ect1_and_paced_dctcp_is_ect0_and_not() {
        let d = CcConfig::named("dctcp").unwrap().build(1000, 10, None, 2);
        assert_eq!(d.ecn_style(), EcnStyle::Dctcp);
        let mut p = CcConfig::named("prague").unwrap().build(1000, 10, None, 2);
        assert_eq!(p.ecn_style(), EcnStyle::L4s);
        assert!(p.pacing_rate().is_none(), "no RTT yet");
        p.on_established(Instant::ZERO, Some(Duration::from_millis(10)));
        // 10 segments per 10 ms, twice that in slow start: 16 Mbit/s
        assert_eq!(p.pacing_rate(), Some(Rate::from_mbps(16)));
        let mut d = d;
        d.on_established(Instant::ZERO, Some(Duration::from_millis(10)));
        assert!(d.pacing_rate().is_none());
    }

    #[test]
    fn bad_parameters_are_errors_naming_field_and_value() {
        for (text, want) in [
            (r#"{"algorithm": "dctcp", "g": 0}"#, "g: 0 is out of range"),
            (
                r#"{"algorithm": "prague", "g": 1.5}"#,
                "g: 1.5 is out of range",
            ),
            (
                r#"{"algorithm": "dctcp", "initial_alpha": -0.1}"#,
                "initial_alpha: -0.1 is out of range",
            ),
            (r#"{"algorithm": "dctcp", "k": 3}"#, "unknown field `k`"),
        ] {
            let e = serde_json::from_str::<CcConfig>(text)
                .map_err(|e| e.to_string())
                .and_then(|c| c.validate().map(|()| c))
                .unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
        let c: CcConfig =
            serde_json::from_str(r#"{"algorithm": "dctcp", "g": 0.125, "initial_alpha": 0}"#)
                .unwrap();
        assert!(c.validate().is_ok());
    }
}
