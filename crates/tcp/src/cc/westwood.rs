//! Westwood+ (Mascolo, Casetti, Gerla, Sanadidi, Wang, "TCP Westwood:
//! bandwidth estimation for enhanced transport over wireless links", MobiCom
//! 2001; Mascolo, Grieco, Ferorelli, Camarda, Piscitelli, "Performance
//! evaluation of Westwood+ TCP congestion control", Performance Evaluation
//! 2004).
//!
//! Reno's probing (slow start and one segment per RTT, with RFC 3465 byte
//! counting, exactly as `reno.rs`), but after a loss the window is set from an
//! end-to-end estimate of the bandwidth the connection was using instead of
//! being halved:
//!
//! * three duplicate ACKs: `ssthresh = BWE * RTTmin` (whole segments, at least
//!   2), and `cwnd = ssthresh` if cwnd is larger;
//! * a timeout: the same ssthresh and `cwnd = 1` segment.
//!
//! The estimate (Westwood+'s, not the original Westwood's per-ACK one, which
//! ACK compression aliases): once per RTT a sample `b_k = d_k / Δ_k` of the
//! bytes `d_k` acknowledged over the interval `Δ_k`, then the low-pass filter
//! `BWE_k = γ BWE_(k-1) + (1 - γ) b_k`, γ = 0.9 in the paper (ns-3.44's
//! `TcpWestwoodPlus` applies the same 0.9 to the mean of the last two
//! samples, Linux's `tcp_westwood` two cascaded stages of gain 7/8; both are
//! [`WestwoodFilter`] options). Choices where the papers leave room:
//!
//! * **Clock**: a sample closes on the first ACK at least
//!   `max(SRTT, min_sample_interval)` after the previous one (no timer); the
//!   first ACK only starts the clock (what it acknowledges left before it).
//!   `min_sample_interval` (50 ms) keeps samples from covering a handful of
//!   ACKs on short paths.
//! * **Counting**: `d_k` sums `AckEvent::bytes_delivered` (cumulatively ACKed
//!   plus newly SACKed bytes, each counted once, so SACK does not distort it).
//!   Without SACK a duplicate ACK counts one MSS, as the papers' ACK counting
//!   does, and the cumulative ACK that ends the run of duplicates counts only
//!   what exceeds the MSSs credited already.
//! * **Filter start**: the first sample initialises the estimate (as the
//!   authors' later Linux revision does; with γ = 0.9 a filter started at zero
//!   takes some 20 RTTs to approach the rate).
//! * **RTTmin**: the smallest RTT sample of the connection (Karn's rule
//!   applied). `reset_rtt_min_on_timeout` (off by default, as in the 2004
//!   paper) forgets it after a timeout so a path whose delay grew (a handover)
//!   is measured again, as the authors' 2006 revision does.
//! * **No estimate yet** (a loss in the first RTT): ssthresh falls back to
//!   Reno's max(FlightSize / 2, 2 MSS).
//! * **Recovery**: NewReno (RFC 6582) or RFC 6675 with SACK; on exit the window
//!   is the ssthresh set at the loss (with RFC 6582's burst guard
//!   min(ssthresh, FlightSize + MSS) without SACK).
//! * A repeated timeout of the same segment recomputes the same ssthresh (no
//!   ACK has changed the estimate meanwhile).

use super::{
    half_flight, loss_ssthresh, AckEvent, CongestionControl, CongestionEvent, CongestionKind,
    RecoveryExit, RecoveryStyle, UndoEvent, WindowOptions, WindowStart,
};
use crate::time::{Duration, Instant};
use serde::{Deserialize, Serialize};

/// The low-pass filter the bandwidth samples go through: the paper's, or a
/// peer's (`filter`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WestwoodFilter {
    /// Mascolo et al. 2004: `BWE_k = γ BWE_(k-1) + (1 - γ) b_k`, a
    /// time-invariant first-order filter, γ = `filter_gain` (0.9).
    #[default]
    Ewma,
    /// ns-3.44's `TcpWestwoodPlus` (its `"Tustin"` filter type, carried over
    /// from the original Westwood's discretisation): `BWE_k = γ BWE_(k-1) +
    /// (1 - γ) (b_k + b_(k-1)) / 2`, γ = `filter_gain`, started from zero.
    Tustin,
    /// Linux's `tcp_westwood` (unchanged since 2.6): two such stages in
    /// cascade, each of gain 7/8, `filter_gain` unused: `x_k = 7/8 x_(k-1) +
    /// 1/8 b_k`, `BWE_k = 7/8 BWE_(k-1) + 1/8 x_k`, both started at the
    /// first sample.
    Linux,
}

/// Parameters of Westwood+.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WestwoodParams {
    /// γ, the weight of the previous estimate in the low-pass filter
    /// (default 0.9, the value of Mascolo et al. 2004 and ns-3.44).
    pub filter_gain: f64,
    /// Which low-pass filter (default `"ewma"`, the paper's).
    pub filter: WestwoodFilter,
    /// Shortest interval between two bandwidth samples (default `"50ms"`);
    /// samples are otherwise one smoothed RTT apart.
    pub min_sample_interval: Duration,
    /// Forget RTTmin after a retransmission timeout (default false).
    pub reset_rtt_min_on_timeout: bool,
}

impl Default for WestwoodParams {
    fn default() -> Self {
        WestwoodParams {
            filter_gain: 0.9,
            filter: WestwoodFilter::Ewma,
            min_sample_interval: Duration::from_millis(50),
            reset_rtt_min_on_timeout: false,
        }
    }
}

impl WestwoodParams {
    /// Checks the values; the message names the field and the bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.filter_gain.is_finite() && (0.0..1.0).contains(&self.filter_gain)) {
            return Err(format!(
                "filter_gain: {} is out of range; it must be at least 0 and below 1 (the paper: 0.9)",
                self.filter_gain
            ));
        }
        if self.min_sample_interval > Duration::from_secs(10) {
            return Err(format!(
                "min_sample_interval: {} is out of range; it must be at most 10s",
                self.min_sample_interval
            ));
        }
        Ok(())
    }
}

/// The Westwood+ window.
#[derive(Clone, Debug)]
pub struct Westwood {
    params: WestwoodParams,
    mss: u64,
    initial_segments: u64,
    abc_limit: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged since the last additive increase (RFC 3465).
    ca_acked: u64,
    /// Start of the current bandwidth sample.
    sample_start: Option<Instant>,
    /// Bytes delivered since `sample_start`.
    sample_bytes: u64,
    /// MSSs credited to duplicate ACKs and not yet cumulatively acknowledged.
    dup_credit: u64,
    /// The latest raw sample, bytes per second.
    bw_sample: Option<f64>,
    /// Linux's first filter stage (its `bw_ns_est`), bytes per second.
    first_stage: f64,
    /// The filtered estimate, bytes per second.
    bwe: Option<f64>,
    rtt_min: Option<Duration>,
    options: WindowOptions,
}

impl Westwood {
    /// A window starting at `start.initial_cwnd` segments.
    pub fn new(params: &WestwoodParams, start: &WindowStart) -> Self {
        let mss = start.mss as u64;
        Westwood {
            params: params.clone(),
            mss,
            initial_segments: start.initial_cwnd as u64,
            abc_limit: start.abc_limit as u64,
            cwnd: start.initial_cwnd as u64 * mss,
            ssthresh: start.initial_ssthresh.unwrap_or(u64::MAX),
            ca_acked: 0,
            sample_start: None,
            sample_bytes: 0,
            dup_credit: 0,
            bw_sample: None,
            first_stage: 0.0,
            bwe: None,
            rtt_min: None,
            options: WindowOptions::default(),
        }
    }

    /// True while cwnd is below ssthresh.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// The bandwidth estimate in bytes per second, once there is one.
    pub fn bwe(&self) -> Option<f64> {
        self.bwe
    }

    /// Bytes this ACK contributes to the bandwidth sample (the papers' ACK
    /// counting, see the module comment).
    fn delivered(&mut self, ack: &AckEvent) -> u64 {
        if ack.dupack && ack.bytes_delivered == 0 {
            // A duplicate ACK without SACK information: a segment left.
            self.dup_credit += ack.mss as u64;
            return ack.mss as u64;
        }
        let credited = self.dup_credit.min(ack.bytes_delivered);
        self.dup_credit -= credited;
        ack.bytes_delivered - credited
    }

    /// Adds to the sample and closes it once per RTT (see the module comment).
    fn sample(&mut self, now: Instant, ack: &AckEvent) {
        let bytes = self.delivered(ack);
        let Some(start) = self.sample_start else {
            self.sample_start = Some(now);
            return;
        };
        self.sample_bytes += bytes;
        let Some(rtt) = ack.srtt.or(ack.min_rtt) else {
            return;
        };
        let elapsed = now.saturating_since(start);
        if elapsed.is_zero() || elapsed < rtt.max(self.params.min_sample_interval) {
            return;
        }
        let b = self.sample_bytes as f64 / elapsed.as_secs_f64();
        self.bwe = Some(self.filter(b));
        self.bw_sample = Some(b);
        self.sample_bytes = 0;
        self.sample_start = Some(now);
    }

    /// The new estimate for a sample `b` ([`WestwoodFilter`]).
    fn filter(&mut self, b: f64) -> f64 {
        let g = self.params.filter_gain;
        match (self.params.filter, self.bwe) {
            (WestwoodFilter::Ewma, None) => b,
            (WestwoodFilter::Ewma, Some(e)) => g * e + (1.0 - g) * b,
            (WestwoodFilter::Tustin, e) => {
                let previous = self.bw_sample.unwrap_or(0.0);
                g * e.unwrap_or(0.0) + (1.0 - g) * (b + previous) / 2.0
            }
            (WestwoodFilter::Linux, None) => {
                self.first_stage = b;
                b
            }
            (WestwoodFilter::Linux, Some(e)) => {
                self.first_stage = (7.0 * self.first_stage + b) / 8.0;
                (7.0 * e + self.first_stage) / 8.0
            }
        }
    }

    /// ssthresh = BWE * RTTmin in whole segments, at least 2; Reno's halving
    /// of the event's basis before there is an estimate (at a fast
    /// retransmit the basis counts at most the window, as Reno's).
    fn bwe_ssthresh(&self, ev: &CongestionEvent) -> u64 {
        match (self.bwe, self.rtt_min, ev.kind) {
            (Some(bwe), Some(rtt), _) => {
                let segments = (bwe * rtt.as_secs_f64() / self.mss as f64).floor() as u64;
                segments.max(2) * self.mss
            }
            (_, _, CongestionKind::Rto { .. }) => half_flight(ev.ssthresh_basis, ev.mss),
            _ => loss_ssthresh(ev, self.cwnd),
        }
    }
}

impl CongestionControl for Westwood {
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "westwood"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }

    fn set_mss(&mut self, mss: u32) {
        self.mss = mss as u64;
        self.cwnd = self.initial_segments * self.mss;
    }

    fn set_options(&mut self, options: &WindowOptions) {
        self.options = *options;
    }

    fn on_undo(&mut self, _now: Instant, undo: &UndoEvent) {
        super::reno::undo_window(&mut self.cwnd, &mut self.ssthresh, undo);
        self.ca_acked = 0;
    }

    fn on_ack(&mut self, now: Instant, ack: &AckEvent) {
        if let Some(r) = ack.rtt {
            self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
        }
        // Every ACK feeds the estimate, in recovery too.
        self.sample(now, ack);

        // Reno's growth (reno.rs).
        if ack.may_grow_window() {
            let slow_start = self.in_slow_start();
            let ca_window = self.cwnd;
            super::reno::grow(
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
        self.ssthresh = self.bwe_ssthresh(ev);
        match ev.kind {
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                self.cwnd = self.cwnd.min(self.ssthresh);
            }
            CongestionKind::Rto { .. } => {
                self.cwnd = self.mss;
                if self.params.reset_rtt_min_on_timeout {
                    self.rtt_min = None;
                }
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant, exit: &RecoveryExit) {
        let mss = exit.mss as u64;
        self.cwnd = if exit.sack {
            self.ssthresh
        } else {
            // RFC 6582 option 1 guards against a burst when little is outstanding.
            self.ssthresh.min(exit.flight_size.max(mss) + mss)
        };
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["bwe", "bw_sample", "rtt_min", "slow_start"]
    }
    fn metrics(&self, out: &mut [f64]) {
        // Rates in bit/s, times in seconds.
        out[0] = self.bwe.map_or(f64::NAN, |b| b * 8.0);
        out[1] = self.bw_sample.map_or(f64::NAN, |b| b * 8.0);
        out[2] = self.rtt_min.map_or(f64::NAN, |r| r.as_secs_f64());
        out[3] = self.in_slow_start() as u8 as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CaState;
    use crate::testing::acked;

    const MSS: u32 = 1000;

    fn start(initial_cwnd: u32) -> WindowStart {
        WindowStart {
            mss: MSS,
            initial_cwnd,
            initial_ssthresh: None,
            abc_limit: 2,
        }
    }

    fn at_us(us: u64) -> Instant {
        Instant::from_nanos(us * 1000)
    }

    fn ack(bytes: u64) -> AckEvent {
        acked(MSS, bytes).rtt(Duration::from_millis(100)).build()
    }

    fn dupack() -> AckEvent {
        acked(MSS, 0)
            .rtt(Duration::from_millis(100))
            .dupack()
            .build()
    }

    fn event(kind: CongestionKind) -> CongestionEvent {
        CongestionEvent {
            kind,
            flight_size: 100_000,
            ssthresh_basis: 100_000,
            in_flight: 100_000,
            mss: MSS,
        }
    }

    /// The filter of the module comment, applied to a list of samples.
    fn filtered(samples: &[f64]) -> f64 {
        let mut e = samples[0];
        for &b in &samples[1..] {
            e = 0.9 * e + 0.1 * b;
        }
        e
    }

    /// One second of a 1000-byte ACK every millisecond (1 MB/s), then one
    /// second of one every 2 ms (0.5 MB/s); SRTT 100 ms, one RTT sample of
    /// 80 ms. Returns the samples the once-per-RTT clock must have taken.
    fn known_pattern(w: &mut Westwood) -> Vec<f64> {
        for t in 1..=1000u64 {
            let mut a = ack(1000);
            if t == 500 {
                a.rtt = Some(Duration::from_millis(80));
            }
            w.on_ack(at_us(t * 1000), &a);
        }
        for t in (1002..=2000u64).step_by(2) {
            w.on_ack(at_us(t * 1000), &ack(1000));
        }
        // The clock starts at the first ACK (1 ms) and closes a sample on the
        // first ACK 100 ms or more after the previous close: 101, ..., 901 ms
        // (100 kB each), 1002 ms (ACKs 902..=1000 and 1002: 100 kB in 101 ms),
        // then 1102, ..., 1902 ms (50 kB each).
        let mut samples = vec![1e6; 9];
        samples.push(100_000.0 / 0.101);
        samples.extend([5e5; 9]);
        samples
    }

    /// The three filters on the same samples, written out: the paper's
    /// EWMA, ns-3's mean of the last two samples from zero, Linux's two
    /// stages of 7/8.
    #[test]
    fn the_filters_of_the_paper_ns3_and_linux() {
        let run = |filter| {
            let params = WestwoodParams {
                filter,
                ..WestwoodParams::default()
            };
            let mut w = Westwood::new(&params, &start(10));
            let samples = known_pattern(&mut w);
            (w.bwe().unwrap(), samples)
        };
        let (ewma, samples) = run(WestwoodFilter::Ewma);
        assert!((ewma - filtered(&samples)).abs() < 1e-6);
        let (tustin, _) = run(WestwoodFilter::Tustin);
        let mut e = 0.0;
        let mut previous = 0.0;
        for &b in &samples {
            e = 0.9 * e + 0.1 * (b + previous) / 2.0;
            previous = b;
        }
        assert!((tustin - e).abs() < 1e-6, "{tustin} vs {e}");
        let (linux, _) = run(WestwoodFilter::Linux);
        let (mut x, mut y) = (samples[0], samples[0]);
        for &b in &samples[1..] {
            x = (7.0 * x + b) / 8.0;
            y = (7.0 * y + x) / 8.0;
        }
        assert!((linux - y).abs() < 1e-6, "{linux} vs {y}");
        // after nine samples at 1 MB/s and ten near 0.5 MB/s the slower
        // filters still remember more of the first rate
        eprintln!("BWE: ewma {ewma:.0}, tustin {tustin:.0}, linux {linux:.0} B/s");
        assert!(linux > ewma);
    }

    #[test]
    fn ssthresh_after_three_dupacks_is_bwe_times_rtt_min() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        w.cwnd = 200_000;
        w.ssthresh = 150_000;
        let samples = known_pattern(&mut w);
        let bwe = filtered(&samples);
        assert!(
            (w.bwe().unwrap() - bwe).abs() < 1e-6,
            "{:?} vs {bwe}",
            w.bwe()
        );
        assert_eq!(w.bw_sample, Some(5e5));
        assert_eq!(w.rtt_min, Some(Duration::from_millis(80)));
        // Three duplicate ACKs less than an RTT after the last sample.
        for us in [2_000_100, 2_000_200, 2_000_300] {
            w.on_ack(at_us(us), &dupack());
        }
        assert!((w.bwe().unwrap() - bwe).abs() < 1e-6, "no new sample yet");
        w.on_congestion(at_us(2_000_300), &event(CongestionKind::FastRetransmit));
        let expected = (bwe * 0.080 / 1000.0).floor() as u64 * 1000;
        eprintln!(
            "BWE {:.0} B/s x RTTmin 80 ms: ssthresh {} B",
            bwe,
            w.ssthresh()
        );
        assert_eq!(expected, 55_000); // 693 kB/s x 80 ms = 55.4 segments
        assert_eq!((w.ssthresh(), w.cwnd()), (expected, expected));
    }

    #[test]
    fn timeout_sets_one_segment_with_the_same_ssthresh() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        let bwe = filtered(&known_pattern(&mut w));
        let expected = (bwe * 0.080 / 1000.0).floor() as u64 * 1000;
        w.on_congestion(
            at_us(2_500_000),
            &event(CongestionKind::Rto { repeated: false }),
        );
        assert_eq!((w.ssthresh(), w.cwnd()), (expected, 1000));
        w.on_congestion(
            at_us(5_000_000),
            &event(CongestionKind::Rto { repeated: true }),
        );
        assert_eq!((w.ssthresh(), w.cwnd()), (expected, 1000));
        assert_eq!(w.rtt_min, Some(Duration::from_millis(80)));
        // The authors' 2006 option: RTTmin is measured again after a timeout.
        let p = WestwoodParams {
            reset_rtt_min_on_timeout: true,
            ..WestwoodParams::default()
        };
        let mut w = Westwood::new(&p, &start(10));
        known_pattern(&mut w);
        w.on_congestion(
            at_us(2_500_000),
            &event(CongestionKind::Rto { repeated: false }),
        );
        assert_eq!(
            w.ssthresh(),
            expected,
            "computed before RTTmin is forgotten"
        );
        assert_eq!(w.rtt_min, None);
        w.on_ack(at_us(3_000_000), &ack(1000));
        assert_eq!(w.rtt_min, Some(Duration::from_millis(100)));
    }

    #[test]
    fn small_estimates_floor_at_two_segments_and_no_estimate_halves() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        w.on_congestion(Instant::ZERO, &event(CongestionKind::FastRetransmit));
        // half the basis, which counts at most the window (10 000)
        assert_eq!((w.ssthresh(), w.cwnd()), (5000, 5000));
        w.on_congestion(
            Instant::ZERO,
            &event(CongestionKind::Rto { repeated: false }),
        );
        assert_eq!(
            (w.ssthresh(), w.cwnd()),
            (50_000, 1000),
            "a timeout halves the basis"
        );
        w.cwnd = 10_000;
        w.bwe = Some(1000.0);
        w.rtt_min = Some(Duration::from_millis(100));
        w.on_congestion(Instant::ZERO, &event(CongestionKind::FastRetransmit));
        assert_eq!((w.ssthresh(), w.cwnd()), (2000, 2000));
    }

    #[test]
    fn duplicate_acks_count_one_segment_each_without_sack() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        for _ in 0..3 {
            assert_eq!(w.delivered(&dupack()), 1000);
        }
        // The cumulative ACK covering 5 segments counts the 2 not credited.
        assert_eq!(w.delivered(&ack(5000)), 2000);
        assert_eq!(w.delivered(&ack(1000)), 1000);
        // With SACK a duplicate ACK carries what it delivered: no credit.
        let mut sack_dup = dupack();
        sack_dup.bytes_delivered = 1460;
        assert_eq!(w.delivered(&sack_dup), 1460);
        assert_eq!(w.delivered(&ack(3000)), 3000);
        // Over a loss episode the credits add up to what was delivered.
        let mut total = 0;
        for _ in 0..7 {
            total += w.delivered(&dupack());
        }
        total += w.delivered(&ack(4000)); // partial ACK
        total += w.delivered(&ack(6000)); // the rest
        assert_eq!(total, 10_000);
    }

    #[test]
    fn the_estimate_keeps_running_during_recovery() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        let bwe = filtered(&known_pattern(&mut w));
        // Duplicate ACKs (no SACK), one per ms, in fast recovery.
        let mut a = dupack();
        a.state = CaState::Recovery;
        for t in 2001..=2101u64 {
            w.on_ack(at_us(t * 1000), &a);
        }
        // A sample closes at 2002 ms, 100 ms after the last: the ACKs at
        // 1904, 1906, ..., 2000 ms and the duplicates at 2001 and 2002 ms, 49 +
        // 2 segments; the next would close at 2102 ms.
        let expected = 0.9 * bwe + 0.1 * (51_000.0 / 0.1);
        assert!(
            (w.bwe().unwrap() - expected).abs() < 1e-6,
            "{:?} vs {expected}",
            w.bwe()
        );
    }

    #[test]
    fn recovery_exit_sets_the_window_to_ssthresh() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        known_pattern(&mut w);
        // A window below BWE x RTTmin is not lowered by the loss ...
        w.cwnd = 20_000;
        w.on_congestion(Instant::ZERO, &event(CongestionKind::FastRetransmit));
        assert_eq!((w.ssthresh(), w.cwnd()), (55_000, 20_000));
        // ... and recovery ends with cwnd = ssthresh (RFC 6675) ...
        let exit = |sack, flight_size| RecoveryExit {
            flight_size,
            mss: MSS,
            sack,
        };
        w.on_recovery_exit(Instant::ZERO, &exit(true, 0));
        assert_eq!(w.cwnd(), 55_000);
        // ... or min(ssthresh, FlightSize + MSS) without SACK (RFC 6582).
        w.on_recovery_exit(Instant::ZERO, &exit(false, 3000));
        assert_eq!(w.cwnd(), 4000);
        w.on_recovery_exit(Instant::ZERO, &exit(false, 90_000));
        assert_eq!(w.cwnd(), 55_000);
    }

    #[test]
    fn growth_is_reno() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(1));
        w.on_ack(Instant::ZERO, &ack(1000));
        assert_eq!(w.cwnd(), 2000);
        w.on_ack(Instant::ZERO, &ack(5000)); // stretch ACK: at most L = 2 MSS
        assert_eq!(w.cwnd(), 4000);
        let mut a = ack(1000);
        a.state = CaState::Loss; // L = 1 after a timeout
        w.on_ack(Instant::ZERO, &ack(5000));
        w.on_ack(
            Instant::ZERO,
            &AckEvent {
                bytes_acked: 3000,
                ..a
            },
        );
        assert_eq!(w.cwnd(), 7000);
        w.ssthresh = 7000;
        for _ in 0..6 {
            w.on_ack(Instant::ZERO, &ack(1000));
        }
        assert_eq!(w.cwnd(), 7000);
        w.on_ack(Instant::ZERO, &ack(1000));
        assert_eq!(w.cwnd(), 8000, "one MSS per window in congestion avoidance");
        for (field, value) in [(0, false), (1, true), (2, true), (3, true)] {
            let mut a = ack(100_000);
            match field {
                0 => a.cwnd_limited = value,
                1 => a.state = CaState::Recovery,
                2 => a.window_reduced = value,
                _ => a.bytes_acked = 0,
            }
            w.on_ack(Instant::ZERO, &a);
        }
        assert_eq!(w.cwnd(), 8000, "no growth");
        w.set_mss(500);
        assert_eq!(w.cwnd(), 500);
    }

    #[test]
    fn metrics_are_in_bits_per_second_and_seconds() {
        let mut w = Westwood::new(&WestwoodParams::default(), &start(10));
        let mut out = [0.0; 4];
        w.metrics(&mut out);
        assert!(out[0].is_nan() && out[1].is_nan() && out[2].is_nan());
        let bwe = filtered(&known_pattern(&mut w));
        w.metrics(&mut out);
        assert!((out[0] - bwe * 8.0).abs() < 1e-3);
        assert_eq!((out[1], out[2]), (4e6, 0.08));
        assert_eq!(w.metric_names().len(), out.len());
    }

    #[test]
    fn params_are_checked_and_parsed() {
        assert!(WestwoodParams::default().validate().is_ok());
        let e = WestwoodParams {
            filter_gain: 1.0,
            ..WestwoodParams::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("filter_gain: 1 is out of range"), "{e}");
        let e = WestwoodParams {
            min_sample_interval: Duration::from_secs(11),
            ..WestwoodParams::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.starts_with("min_sample_interval: "), "{e}");
        let p: WestwoodParams =
            serde_json::from_str(r#"{"min_sample_interval": "20ms", "filter_gain": 0.8}"#).unwrap();
        assert_eq!(p.min_sample_interval, Duration::from_millis(20));
        assert_eq!(p.filter_gain, 0.8);
        assert!(serde_json::from_str::<WestwoodParams>(r#"{"min_sample_interval": 20}"#).is_err());
        assert!(serde_json::from_str::<WestwoodParams>(r#"{"gain": 0.8}"#).is_err());
    }
}
