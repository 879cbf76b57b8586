//! CUBIC (RFC 9438), optionally with HyStart++ (RFC 9406) in the initial slow
//! start.
//!
//! Windows are kept in segments as `f64` (RFC 9438 section 4.1 works in
//! segments; fractions of a segment accumulate exactly) and reported in bytes.
//! The rules, by section of RFC 9438:
//!
//! * 4.2: in congestion avoidance the window follows
//!   `W_cubic(t) = C (t - K)^3 + W_max`, `K = cbrt((W_max - cwnd_epoch) / C)`,
//!   moving toward `target = W_cubic(t + RTT)` (clamped to `[cwnd, 1.5 cwnd]`)
//!   by `(target - cwnd) / cwnd` per segment acknowledged (byte counting, as
//!   section 4.1 allows, so delayed ACKs do not halve the growth). `t` starts at
//!   the first ACK that grows the window in congestion avoidance (after slow
//!   start or after the fast recovery that followed a reduction) and does not
//!   advance while the application, not the window, limits the sender (4.2,
//!   5.8).
//! * 4.3: the Reno-friendly estimate `W_est` grows by
//!   `alpha_cubic * segments_acked / cwnd` (`alpha_cubic = 3 (1 - beta) / (1 + beta)`,
//!   1 once `W_est >= cwnd_prior`); when `W_cubic(t) < W_est` the window is
//!   `W_est`.
//! * 4.6: on a fast retransmit `ssthresh = cwnd = max(cwnd * beta, 2)`. Figure
//!   5 uses the flight size; the RFC allows cwnd in its place when the window
//!   cannot grow while the application leaves it unused, which the sender
//!   guarantees (`AckEvent::cwnd_limited`). The two agree at a fast retransmit
//!   of a bulk transfer; they differ at a timeout that ends a SACK recovery,
//!   where `snd_nxt - snd_una` counts everything SACKed during the recovery
//!   (several windows after a slow-start overshoot): 0.7 of that gave an
//!   ssthresh of 804 segments on a 174-segment path in the standard scenario,
//!   and a cycle of overshoots and timeouts (23 timeouts, 79 % utilisation,
//!   against 1 timeout and 100 % with cwnd).
//! * 4.7: fast convergence lowers `W_max` to `cwnd (1 + beta) / 2` when a loss
//!   comes before the previous `W_max` was regained.
//! * 4.8: after a timeout `cwnd = 1` segment, `ssthresh = max(cwnd * beta, 2)`
//!   as in 4.6 (held when the same segment times out again, RFC 5681 section
//!   3.1), and the first congestion avoidance that follows uses `K = 0`,
//!   `W_max = W_est = cwnd_epoch`.
//! * 4.9.2: the state before a fast retransmit is saved and restored when DSACK
//!   shows the event was spurious: every retransmission it caused came back as
//!   a duplicate (RFC 3708's rule), and only if `cwnd < cwnd_prior`. Spurious
//!   timeouts (4.9.1, a MAY) are not undone.
//! * 4.10: slow start is RFC 5681's with byte counting (RFC 3465, L from the
//!   connection's `abc_limit`, `abc_limit_after_rto` after a timeout), or
//!   HyStart++ (RFC 9406) for the initial slow start (`hystart = true` or
//!   `"hystart++"`), or classic HyStart (Ha and Rhee, "Taming the
//!   elephants", Computer Networks 2011) in every slow start, with Linux's
//!   constants (`"linux"`, net/ipv4/tcp_cubic.c) or ns-3.44's (`"ns3"`,
//!   `TcpCubic::HystartUpdate`). Without a `hystart` parameter the
//!   connection's `tcp.hystart` decides (the linux profile: `"linux"`).
//!
//! Fast recovery itself is unchanged (4.2): NewReno or RFC 6675, whichever the
//! sender uses; on exit the window is the reduced one (RFC 6582's
//! `min(ssthresh, FlightSize + MSS)` without SACK), unless an undo restored
//! the old one meanwhile.

use super::{
    AckEvent, CaState, CongestionControl, CongestionEvent, CongestionKind, RecoveryExit, SentInfo,
    UndoEvent, WindowOptions, WindowStart,
};
use crate::config::Hystart;
use crate::time::{Duration, Instant};
use serde::{Deserialize, Serialize};

/// Parameters of CUBIC (RFC 9438 section 4.1.1). Defaults are the RFC's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicParams {
    /// C in segments / s^3 (default 0.4, RFC 9438 section 5.1).
    pub c: f64,
    /// beta_cubic, the multiplicative decrease factor (default 0.7, section 4.6).
    pub beta: f64,
    /// Fast convergence (default true, section 4.7).
    pub fast_convergence: bool,
    /// The Reno-friendly region (default true, section 4.3).
    pub reno_friendly: bool,
    /// The hybrid slow start: `false` (RFC 5681 slow start, as the Reno
    /// family), `true` or `"hystart++"` (HyStart++, RFC 9406, in the initial
    /// slow start), `"linux"` or `"ns3"` (classic HyStart with those stacks'
    /// constants, in every slow start). Unset (the default), the
    /// connection's `tcp.hystart` applies.
    #[serde(
        deserialize_with = "hystart_param",
        skip_serializing_if = "Option::is_none"
    )]
    pub hystart: Option<Hystart>,
}

/// CUBIC's `hystart` parameter: a boolean (`true` is HyStart++, as before
/// the classic variants existed) or a mode's name.
fn hystart_param<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Hystart>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Flag(bool),
        Mode(Hystart),
    }
    Ok(Some(
        match Written::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "expected true, false, \"hystart++\", \"linux\", \"ns3\" or \"off\"",
            )
        })? {
            Written::Flag(true) => Hystart::HystartPlusPlus,
            Written::Flag(false) => Hystart::Off,
            Written::Mode(m) => m,
        },
    ))
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            hystart: None,
        }
    }
}

impl CubicParams {
    /// Checks the values; the message names the field and the bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.c.is_finite() && self.c > 0.0 && self.c <= 100.0) {
            return Err(format!(
                "c: {} is out of range; it must be above 0 and at most 100 segments/s^3 (RFC 9438: 0.4)",
                self.c
            ));
        }
        if !(self.beta.is_finite() && self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!(
                "beta: {} is out of range; it must be above 0 and below 1 (RFC 9438: 0.7)",
                self.beta
            ));
        }
        Ok(())
    }
}

// RFC 9406 section 4.3: the recommended constants.
/// Lower bound of the delay increase that ends slow start.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// Upper bound of the delay increase that ends slow start.
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// The threshold is the last round's minimum RTT divided by this.
const MIN_RTT_DIVISOR: u64 = 8;
/// RTT samples a round needs before its minimum is judged.
const N_RTT_SAMPLE: u32 = 8;
/// Conservative Slow Start grows at this fraction of slow start's rate.
const CSS_GROWTH_DIVISOR: f64 = 4.0;
/// Rounds of Conservative Slow Start before congestion avoidance.
const CSS_ROUNDS: u32 = 5;

/// HyStart++ state (RFC 9406 section 4.2).
#[derive(Clone, Debug, Default)]
struct HyStart {
    /// `Some(rounds completed)` while in Conservative Slow Start.
    css_rounds: Option<u32>,
    /// windowEnd: the round ends when this offset is acknowledged.
    window_end: Option<u64>,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    css_baseline_min_rtt: Option<Duration>,
}

/// What HyStart++ decided on an ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
enum HyStep {
    /// Grow by the slow-start increase divided by this (1 or CSS_GROWTH_DIVISOR).
    Grow(f64),
    /// CSS_ROUNDS rounds of CSS are over: enter congestion avoidance.
    Exit,
}

impl HyStart {
    fn on_ack(&mut self, ack: &AckEvent) -> HyStep {
        // A round ends when its last segment is acknowledged; the next one
        // starts then and lasts until what is sent by now is acknowledged.
        if self.window_end.is_none_or(|end| ack.snd_una >= end) {
            if self.window_end.is_some() {
                if let Some(rounds) = self.css_rounds.as_mut() {
                    *rounds += 1;
                    if *rounds >= CSS_ROUNDS {
                        return HyStep::Exit;
                    }
                }
            }
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            self.window_end = Some(ack.snd_nxt);
        }
        if let Some(rtt) = ack.rtt {
            self.current_round_min_rtt =
                Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
            self.rtt_sample_count += 1;
        }
        // Judge a round once it has N_RTT_SAMPLE samples.
        let judged = self
            .current_round_min_rtt
            .filter(|_| self.rtt_sample_count >= N_RTT_SAMPLE);
        if let Some(cur) = judged {
            if self.css_rounds.is_none() {
                if let Some(last) = self.last_round_min_rtt {
                    let thresh = Duration::from_nanos(last.as_nanos() / MIN_RTT_DIVISOR)
                        .clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if cur >= last + thresh {
                        // Delay increased: leave slow start for CSS.
                        self.css_baseline_min_rtt = Some(cur);
                        self.css_rounds = Some(0);
                    }
                }
            } else if self.css_baseline_min_rtt.is_some_and(|base| cur < base) {
                // The delay increase was spurious: resume slow start.
                self.css_baseline_min_rtt = None;
                self.css_rounds = None;
            }
        }
        match self.css_rounds {
            Some(_) => HyStep::Grow(CSS_GROWTH_DIVISOR),
            None => HyStep::Grow(1.0),
        }
    }
}

// Classic HyStart (Ha and Rhee 2011), as Linux 6.x's tcp_cubic.c runs it.
/// Slow start below this window (segments) is never ended by HyStart
/// (`hystart_low_window`).
const CLASSIC_LOW_WINDOW: f64 = 16.0;
/// ACKs at most this far apart belong to one train (`hystart_ack_delta_us`).
const CLASSIC_ACK_DELTA: Duration = Duration::from_millis(2);
/// RTT samples a round takes before its minimum is judged
/// (`HYSTART_MIN_SAMPLES`).
const CLASSIC_MIN_SAMPLES: u32 = 8;
/// The delay threshold's bounds in Linux (`HYSTART_DELAY_MIN`, `_MAX`).
const CLASSIC_DELAY_MIN: Duration = Duration::from_millis(4);
const LINUX_DELAY_MAX: Duration = Duration::from_millis(16);
/// ns-3.44's upper bound (`HyStartDelayMax`).
const NS3_DELAY_MAX: Duration = Duration::from_millis(1000);
/// Linux's ACK-train cushion for TSO/GRO (`hystart_ack_delay`): the time to
/// send four 64 KiB GSO packets at the pacing rate, at most 1 ms.
const LINUX_ACK_DELAY_MAX: Duration = Duration::from_millis(1);
const GSO_MAX_SIZE: f64 = 65_536.0;

/// Classic HyStart's state: the current round and the delay floor.
#[derive(Clone, Debug)]
struct ClassicHystart {
    ns3: bool,
    /// The exit point was found (until a timeout resets it).
    found: bool,
    round_start: Instant,
    last_ack: Instant,
    /// The round ends once `snd_una` passes this offset.
    end_seq: Option<u64>,
    /// The round's minimum RTT.
    curr_rtt: Option<Duration>,
    sample_cnt: u32,
    /// The smallest RTT seen since the connection started or the last
    /// timeout (`delay_min`).
    delay_min: Option<Duration>,
}

impl ClassicHystart {
    fn new(ns3: bool) -> Self {
        ClassicHystart {
            ns3,
            found: false,
            round_start: Instant::ZERO,
            last_ack: Instant::ZERO,
            end_seq: None,
            curr_rtt: None,
            sample_cnt: 0,
            delay_min: None,
        }
    }

    /// A new round starts at `now` and lasts until what is sent by now is
    /// acknowledged (`bictcp_hystart_reset`).
    fn start_round(&mut self, now: Instant, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// A timeout: everything is learned again (`bictcp_reset` in
    /// `cubictcp_state`, Linux; `CubicReset`, ns-3).
    fn reset(&mut self) {
        *self = ClassicHystart::new(self.ns3);
    }

    /// An ACK with RTT sample `rtt` during slow start at window `cwnd`
    /// (segments): true if slow start must end now (`hystart_update`).
    fn exit_now(&mut self, now: Instant, ack: &AckEvent, rtt: Duration, cwnd: f64) -> bool {
        let rtt = rtt.max(Duration::from_nanos(1_000));
        let delay_min = *self
            .delay_min
            .insert(self.delay_min.map_or(rtt, |d| d.min(rtt)));
        if self.found {
            return false;
        }
        if self.end_seq.is_none_or(|end| ack.snd_una > end) {
            self.start_round(now, ack.snd_nxt);
        }
        if cwnd < CLASSIC_LOW_WINDOW {
            return false;
        }
        // The ACK train: ACKs closely spaced since the round started, for
        // longer than half the minimum RTT (Linux, unpaced) or all of it (ns-3).
        if now.saturating_since(self.last_ack) <= CLASSIC_ACK_DELTA {
            self.last_ack = now;
            let threshold = if self.ns3 {
                delay_min
            } else {
                let ack_delay = ack
                    .srtt
                    .filter(|s| !s.is_zero())
                    .map_or(Duration::ZERO, |srtt| {
                        // Linux's pacing rate in slow start: 2 cwnd / SRTT
                        let rate = 2.0 * cwnd * ack.mss as f64 / srtt.as_secs_f64();
                        Duration::from_secs_f64(4.0 * GSO_MAX_SIZE / rate)
                    })
                    .min(LINUX_ACK_DELAY_MAX);
                (delay_min + ack_delay) / 2
            };
            if now.saturating_since(self.round_start) > threshold {
                self.found = true;
                return true;
            }
        }
        // The delay increase: the round's minimum RTT above the floor by
        // more than the threshold, once the round has enough samples.
        let (thresh, max) = if self.ns3 {
            (delay_min, NS3_DELAY_MAX)
        } else {
            (delay_min / 8, LINUX_DELAY_MAX)
        };
        let thresh = thresh.clamp(CLASSIC_DELAY_MIN, max);
        if self.ns3 {
            // ns-3 takes the minimum of the round's first samples only
            if self.sample_cnt < CLASSIC_MIN_SAMPLES {
                self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
                self.sample_cnt += 1;
                return false;
            }
        } else {
            self.curr_rtt = Some(self.curr_rtt.map_or(rtt, |c| c.min(rtt)));
            if self.sample_cnt < CLASSIC_MIN_SAMPLES {
                self.sample_cnt += 1;
                return false;
            }
        }
        if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
            self.found = true;
            return true;
        }
        false
    }
}

/// The variables RFC 9438 section 4.9.2 saves before a reduction.
#[derive(Clone, Copy, Debug)]
struct Undo {
    cwnd: f64,
    cwnd_prior: Option<f64>,
    ssthresh: f64,
    w_max: Option<f64>,
    k: f64,
    epoch_start: Option<Instant>,
    cwnd_epoch: f64,
    w_est: f64,
}

/// The CUBIC window.
#[derive(Clone, Debug)]
pub struct Cubic {
    params: CubicParams,
    /// alpha_cubic = 3 (1 - beta) / (1 + beta) (section 4.3).
    alpha_cubic: f64,
    mss: u64,
    abc_limit: f64,
    initial_ssthresh: Option<u64>,
    /// Congestion window in segments.
    cwnd: f64,
    /// Slow-start threshold in segments (infinite when unset).
    ssthresh: f64,
    /// W_max; `None` until a congestion event, and again after a timeout: the
    /// next epoch then takes `W_max = cwnd_epoch`, `K = 0` (sections 4.8, 4.10).
    w_max: Option<f64>,
    /// cwnd_prior: the window when ssthresh was last set.
    cwnd_prior: Option<f64>,
    /// K in seconds.
    k: f64,
    /// t_epoch, shifted forward over application-limited periods.
    epoch_start: Option<Instant>,
    cwnd_epoch: f64,
    w_est: f64,
    /// Since when the application has left the window unused.
    app_limited_since: Option<Instant>,
    /// State saved at the last fast retransmit, for section 4.9.2.
    undo: Option<Undo>,
    /// Retransmissions since that fast retransmit, and how many DSACK showed
    /// were unnecessary.
    retransmissions: u32,
    spurious: u32,
    /// The last reduction was undone (its recovery must not reduce again).
    undone: bool,
    /// Present while HyStart++ runs the initial slow start.
    hystart: Option<HyStart>,
    /// Classic HyStart, when chosen.
    classic: Option<ClassicHystart>,
    /// The hybrid slow start in use (the parameter's, else the connection's).
    mode: Hystart,
    /// RFC 3465's L after a timeout, in segments.
    abc_limit_after_rto: f64,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl Cubic {
    /// A window starting at `start.initial_cwnd` segments.
    pub fn new(params: &CubicParams, start: &WindowStart) -> Self {
        let beta = params.beta;
        let mut c = Cubic {
            params: params.clone(),
            alpha_cubic: 3.0 * (1.0 - beta) / (1.0 + beta),
            mss: start.mss as u64,
            abc_limit: start.abc_limit as f64,
            initial_ssthresh: start.initial_ssthresh,
            cwnd: start.initial_cwnd as f64,
            ssthresh: f64::INFINITY,
            w_max: None,
            cwnd_prior: None,
            k: 0.0,
            epoch_start: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            app_limited_since: None,
            undo: None,
            retransmissions: 0,
            spurious: 0,
            undone: false,
            hystart: None,
            classic: None,
            mode: Hystart::Off,
            abc_limit_after_rto: 1.0,
        };
        c.set_initial_ssthresh();
        c.set_mode(params.hystart.unwrap_or_default());
        c
    }

    fn set_mode(&mut self, mode: Hystart) {
        self.mode = mode;
        // RFC 9406 section 4.2: HyStart++ only for the initial slow start,
        // whose ssthresh is unlimited.
        self.hystart = (mode == Hystart::HystartPlusPlus && self.initial_ssthresh.is_none())
            .then(HyStart::default);
        self.classic = match mode {
            Hystart::Linux => Some(ClassicHystart::new(false)),
            Hystart::Ns3 => Some(ClassicHystart::new(true)),
            Hystart::Off | Hystart::HystartPlusPlus => None,
        };
    }

    fn set_initial_ssthresh(&mut self) {
        self.ssthresh = self
            .initial_ssthresh
            .map_or(f64::INFINITY, |b| b as f64 / self.mss as f64);
    }

    /// True while cwnd is below ssthresh.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// W_cubic(t) in segments (RFC 9438 Figure 1).
    fn w_cubic(&self, t: f64) -> f64 {
        self.params.c * (t - self.k).powi(3) + self.w_max.unwrap_or(self.cwnd)
    }

    /// The first ACK of a congestion avoidance stage (section 4.2).
    fn start_epoch(&mut self, now: Instant) {
        self.epoch_start = Some(now);
        self.cwnd_epoch = self.cwnd;
        // Section 4.3: W_est starts at cwnd_epoch.
        self.w_est = self.cwnd;
        // Sections 4.8 and 4.10: without a W_max (after a timeout, or a slow
        // start that ended without loss), W_max = cwnd_epoch and K = 0.
        let w_max = *self.w_max.get_or_insert(self.cwnd);
        self.cwnd_prior.get_or_insert(self.cwnd);
        // Figure 2; a negative K (cwnd_epoch above W_max) keeps W(0) = cwnd_epoch.
        self.k = ((w_max - self.cwnd_epoch) / self.params.c).cbrt();
    }

    fn congestion_avoidance(&mut self, now: Instant, ack: &AckEvent) {
        if self.epoch_start.is_none() {
            self.start_epoch(now);
        }
        let epoch = self.epoch_start.expect("set above");
        let segments_acked = ack.bytes_acked as f64 / self.mss as f64;
        let t = secs(now.saturating_since(epoch));
        // Section 4.3, Figure 4; alpha becomes 1 once W_est reaches cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior.unwrap_or(f64::INFINITY) {
            1.0
        } else {
            self.alpha_cubic
        };
        self.w_est += alpha * segments_acked / self.cwnd;
        if self.params.reno_friendly && self.w_cubic(t) < self.w_est {
            // Reno-friendly region: cwnd = W_est (never shrinking on an ACK).
            self.cwnd = self.cwnd.max(self.w_est);
            return;
        }
        // Concave and convex regions (4.4, 4.5): toward W_cubic(t + RTT).
        let rtt = ack.srtt.or(ack.min_rtt).map_or(0.0, secs);
        let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
        let step = (target - self.cwnd) / self.cwnd * segments_acked;
        self.cwnd = (self.cwnd + step).min(target);
    }

    fn slow_start(&mut self, ack: &AckEvent) {
        // RFC 5681 equation 2 with RFC 3465's limit L (1 after a timeout,
        // unless the connection says otherwise).
        let limit = if ack.state == CaState::Loss {
            self.abc_limit_after_rto
        } else {
            self.abc_limit
        };
        let mut increase = (ack.bytes_acked as f64 / self.mss as f64).min(limit);
        if let Some(hs) = self.hystart.as_mut() {
            match hs.on_ack(ack) {
                HyStep::Grow(divisor) => increase /= divisor,
                HyStep::Exit => {
                    // RFC 9406: "enter congestion avoidance by setting the
                    // ssthresh to the current cwnd"; RFC 9438 section 4.10:
                    // cwnd_prior = cwnd, and the epoch uses K = 0.
                    self.hystart = None;
                    self.ssthresh = self.cwnd;
                    self.cwnd_prior = Some(self.cwnd);
                    self.w_max = None;
                    return;
                }
            }
        }
        self.cwnd += increase;
    }

    fn save_undo(&mut self) {
        self.undo = Some(Undo {
            cwnd: self.cwnd,
            cwnd_prior: self.cwnd_prior,
            ssthresh: self.ssthresh,
            w_max: self.w_max,
            k: self.k,
            epoch_start: self.epoch_start,
            cwnd_epoch: self.cwnd_epoch,
            w_est: self.w_est,
        });
        self.retransmissions = 0;
        self.spurious = 0;
        self.undone = false;
    }
}

impl CongestionControl for Cubic {
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> u64 {
        (self.cwnd * self.mss as f64) as u64
    }
    fn ssthresh(&self) -> u64 {
        if self.ssthresh.is_finite() {
            (self.ssthresh * self.mss as f64) as u64
        } else {
            u64::MAX
        }
    }

    fn set_mss(&mut self, mss: u32) {
        // Called before any data is sent: the window stays initial_cwnd
        // segments; the initial ssthresh (bytes) is converted again.
        self.mss = mss as u64;
        self.set_initial_ssthresh();
    }

    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        if info.retransmission {
            self.retransmissions += 1;
            return;
        }
        // New data after an application-limited period: t must not include it
        // (RFC 9438 sections 4.2 and 5.8), so the epoch moves forward.
        if let Some(since) = self.app_limited_since.take() {
            if let Some(epoch) = self.epoch_start {
                self.epoch_start = Some(epoch + now.saturating_since(since.max(epoch)));
            }
        }
    }

    fn on_app_limited(&mut self, now: Instant) {
        self.app_limited_since.get_or_insert(now);
    }

    fn on_ack(&mut self, now: Instant, ack: &AckEvent) {
        // Growth only on ACKs of new data (section 4.2, "new ACK"), never during
        // fast recovery (RFC 5681 section 3.2), nor while the application
        // rather than the window limits the sender (section 5.8).
        if let (Some(classic), Some(rtt)) = (self.classic.as_mut(), ack.rtt) {
            // Linux judges every ACK's sample before the window grows on it
            // (`pkts_acked` comes before `cong_avoid`); the exit sets
            // ssthresh = cwnd.
            if self.cwnd < self.ssthresh && classic.exit_now(now, ack, rtt, self.cwnd) {
                self.ssthresh = self.cwnd;
            }
        }
        if !ack.may_grow_window() {
            return;
        }
        if self.in_slow_start() {
            self.slow_start(ack);
        } else {
            self.congestion_avoidance(now, ack);
        }
    }

    fn on_congestion(&mut self, _now: Instant, ev: &CongestionEvent) {
        let beta = self.params.beta;
        // RFC 9406: a loss ends HyStart++; later slow starts are RFC 5681's.
        self.hystart = None;
        match ev.kind {
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                self.save_undo();
                self.epoch_start = None;
                // Section 4.7, before the reduction.
                self.w_max = Some(match self.w_max {
                    Some(w) if self.params.fast_convergence && self.cwnd < w => {
                        self.cwnd * (1.0 + beta) / 2.0
                    }
                    _ => self.cwnd,
                });
                // Section 4.6, Figure 5, with cwnd for flight_size (see the
                // module comment).
                self.cwnd_prior = Some(self.cwnd);
                let reduced = self.cwnd * beta;
                let floor = if ev.kind == CongestionKind::Ecn {
                    1.0
                } else {
                    2.0
                };
                self.cwnd = reduced.max(floor);
                self.ssthresh = reduced.max(2.0);
            }
            CongestionKind::Rto { repeated } => {
                // Section 4.9.1 (undo after a spurious timeout) is the
                // sender's (`tcp.frto`, `tcp.undo`, [`Self::on_undo`]).
                self.undo = None;
                if let Some(classic) = self.classic.as_mut() {
                    classic.reset();
                }
                self.undone = false;
                self.epoch_start = None;
                if !repeated {
                    // Section 4.8: ssthresh as in 4.6; held when the same
                    // segment times out again (RFC 5681 section 3.1).
                    self.cwnd_prior = Some(self.cwnd);
                    self.ssthresh = (self.cwnd * beta).max(2.0);
                }
                // The loss window is one segment (RFC 5681); the next epoch
                // starts with K = 0, W_max = cwnd_epoch (section 4.8).
                self.cwnd = 1.0;
                self.w_max = None;
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant, exit: &RecoveryExit) {
        // Fast recovery is unchanged (section 4.2): RFC 6675 ends with
        // cwnd = ssthresh, RFC 6582 (option 1) with min(ssthresh, FlightSize + MSS).
        // A window restored by a spurious-loss undo during the recovery stays.
        if std::mem::take(&mut self.undone) {
            return;
        }
        self.cwnd = if exit.sack {
            self.ssthresh
        } else {
            let flight = exit.flight_size.max(exit.mss as u64) as f64 / self.mss as f64;
            self.ssthresh.min(flight + 1.0)
        };
    }

    fn set_options(&mut self, options: &WindowOptions) {
        self.abc_limit_after_rto = options.abc_limit_after_rto as f64;
        if self.params.hystart.is_none() {
            self.set_mode(options.hystart);
        }
    }

    fn on_undo(&mut self, _now: Instant, undo: &UndoEvent) {
        // Section 4.9: the state saved at the reduction comes back (after a
        // fast retransmit; a timeout saves none), then Linux's undo takes the
        // larger of each window and its value before the reduction.
        if let Some(u) = self.undo.take() {
            self.cwnd_prior = u.cwnd_prior;
            self.w_max = u.w_max;
            self.k = u.k;
            self.epoch_start = u.epoch_start;
            self.cwnd_epoch = u.cwnd_epoch;
            self.w_est = u.w_est;
        }
        let mss = self.mss as f64;
        self.cwnd = self.cwnd.max(undo.prior_cwnd as f64 / mss);
        if undo.prior_ssthresh == u64::MAX {
            self.ssthresh = f64::INFINITY;
        } else {
            self.ssthresh = self.ssthresh.max(undo.prior_ssthresh as f64 / mss);
        }
    }

    fn on_spurious(&mut self, _now: Instant) {
        // Section 4.9.2 with RFC 3708's rule: the event was spurious once every
        // retransmission it caused was reported as a duplicate.
        self.spurious += 1;
        if self.retransmissions == 0 || self.spurious < self.retransmissions {
            return;
        }
        let Some(u) = self.undo.take() else {
            return;
        };
        if self.cwnd < self.cwnd_prior.unwrap_or(0.0) {
            self.cwnd = u.cwnd;
            self.cwnd_prior = u.cwnd_prior;
            self.ssthresh = u.ssthresh;
            self.w_max = u.w_max;
            self.k = u.k;
            self.epoch_start = u.epoch_start;
            self.cwnd_epoch = u.cwnd_epoch;
            self.w_est = u.w_est;
            self.undone = true;
        }
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "cwnd_segments",
            "w_max",
            "k",
            "w_est",
            "epoch_start",
            "hystart_phase",
        ]
    }
    fn metrics(&self, out: &mut [f64]) {
        let in_epoch = self.epoch_start.is_some();
        out[0] = self.cwnd;
        out[1] = self.w_max.unwrap_or(f64::NAN);
        out[2] = if in_epoch { self.k } else { f64::NAN };
        out[3] = if in_epoch { self.w_est } else { f64::NAN };
        out[4] = self.epoch_start.map_or(f64::NAN, |e| e.as_secs_f64());
        // 1: HyStart(++) slow start, 2: Conservative Slow Start, 0: done;
        // NaN: off.
        out[5] = match (self.mode, &self.hystart, &self.classic) {
            (Hystart::Off, _, _) => f64::NAN,
            (Hystart::HystartPlusPlus, None, _) => 0.0,
            (Hystart::HystartPlusPlus, Some(h), _) => {
                if h.css_rounds.is_some() {
                    2.0
                } else {
                    1.0
                }
            }
            (_, _, Some(c)) if !c.found => 1.0,
            _ => 0.0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn ms(t: u64) -> Duration {
        Duration::from_millis(t)
    }

    fn ack(bytes: u64, rtt: Duration) -> AckEvent {
        acked(MSS, bytes).rtt(rtt).build()
    }

    fn event(kind: CongestionKind, flight_segments: f64) -> CongestionEvent {
        CongestionEvent {
            kind,
            flight_size: (flight_segments * MSS as f64) as u64,
            ssthresh_basis: (flight_segments * MSS as f64) as u64,
            in_flight: (flight_segments * MSS as f64) as u64,
            mss: MSS,
        }
    }

    fn loss(flight_segments: f64) -> CongestionEvent {
        event(CongestionKind::FastRetransmit, flight_segments)
    }

    fn exit() -> RecoveryExit {
        RecoveryExit {
            flight_size: 0,
            mss: MSS,
            sack: true,
        }
    }

    /// A window of `w` segments (a full window in flight) that just took a fast
    /// retransmit and left recovery.
    fn after_loss(params: &CubicParams, w: f64) -> Cubic {
        let mut c = Cubic::new(params, &start(10));
        c.cwnd = w;
        c.on_congestion(Instant::ZERO, &loss(w));
        c.on_recovery_exit(Instant::ZERO, &exit());
        c
    }

    /// The ACK clock of a saturated path: one ACK per segment, `cwnd` ACKs
    /// evenly spread over each RTT, until `until`.
    fn run(c: &mut Cubic, now: &mut Instant, rtt: Duration, until: Instant) {
        while *now < until {
            let gap = (rtt.as_nanos() as f64 / c.cwnd) as u64;
            *now += Duration::from_nanos(gap.max(1));
            c.on_ack(*now, &ack(MSS as u64, rtt));
        }
    }

    fn run_for(c: &mut Cubic, now: &mut Instant, rtt: Duration, d: Duration) {
        let until = *now + d;
        run(c, now, rtt, until);
    }

    fn w_cubic(c: f64, k: f64, w_max: f64, t: f64) -> f64 {
        c * (t - k).powi(3) + w_max
    }

    #[test]
    fn window_follows_the_cubic_function_over_a_loss_free_epoch() {
        let p = CubicParams::default();
        let mut c = after_loss(&p, 1000.0);
        // Section 4.6: ssthresh = cwnd = 0.7 x FlightSize; W_max = 1000.
        assert_eq!((c.cwnd(), c.ssthresh()), (700_000, 700_000));
        assert_eq!(c.w_max, Some(1000.0));
        let rtt = ms(100);
        let mut now = Instant::from_nanos(1_000_000_000);
        run_for(&mut c, &mut now, rtt, ms(1));
        let epoch = c
            .epoch_start
            .expect("the first ACK in congestion avoidance starts the epoch");
        // Figure 2: K = cbrt((W_max - cwnd_epoch) / C) = cbrt(300 / 0.4).
        let k = (300.0f64 / 0.4).cbrt();
        assert!((c.k - k).abs() < 1e-9, "K = {} instead of {k}", c.k);
        assert!((k - 9.0856).abs() < 1e-4);
        // t from 1 s to 15 s: concave, plateau at t = K, convex.
        let mut worst: f64 = 0.0;
        for s in 1..=15 {
            run(&mut c, &mut now, rtt, epoch + Duration::from_secs(s));
            let t = now.saturating_since(epoch).as_secs_f64();
            let w = w_cubic(0.4, k, 1000.0, t);
            let err = (c.cwnd - w).abs() / w;
            assert!(
                err < 0.01,
                "t = {t:.2} s: cwnd {:.2} segments, W(t) {w:.2} ({:.2} %)",
                c.cwnd,
                err * 100.0
            );
            worst = worst.max(err);
        }
        eprintln!("largest deviation from W(t): {:.3} %", worst * 100.0);
        // Byte counting: ACKs of two segments (delayed ACKs), half as many,
        // give the same curve.
        let mut d = after_loss(&p, 1000.0);
        let mut now2 = Instant::from_nanos(1_000_000_000);
        let epoch2 = now2;
        for s in 1..=15 {
            let until = epoch2 + Duration::from_secs(s);
            while now2 < until {
                let gap = (2.0 * rtt.as_nanos() as f64 / d.cwnd) as u64;
                now2 += Duration::from_nanos(gap);
                d.on_ack(now2, &ack(2 * MSS as u64, rtt));
            }
            let t = now2.saturating_since(d.epoch_start.unwrap()).as_secs_f64();
            let w = w_cubic(0.4, k, 1000.0, t);
            assert!(
                (d.cwnd - w).abs() / w < 0.01,
                "delayed ACKs, t = {t}: {} vs {w}",
                d.cwnd
            );
        }
        // Far from a straight line: 700 -> 1000 in K, then past W_max
        // (W(15 s) = 1082.7).
        assert!(c.cwnd > 1080.0, "{}", c.cwnd);
        // Reno's estimate stayed below: the cubic function was in charge.
        assert!(c.w_est < 800.0, "{}", c.w_est);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        for (fc, w_max) in [(true, 90.0 * 0.85), (false, 90.0)] {
            let p = CubicParams {
                fast_convergence: fc,
                ..CubicParams::default()
            };
            let mut c = after_loss(&p, 100.0);
            assert_eq!(c.w_max, Some(100.0), "first event: W_max = cwnd");
            // The window regrew to 90 < W_max when the next loss came.
            c.cwnd = 90.0;
            c.on_congestion(Instant::ZERO, &loss(90.0));
            assert!((c.w_max.unwrap() - w_max).abs() < 1e-9, "{:?}", c.w_max);
            assert!((c.cwnd - 63.0).abs() < 1e-9 && (c.ssthresh - 63.0).abs() < 1e-9);
            assert_eq!(c.cwnd_prior, Some(90.0));
            c.on_recovery_exit(Instant::ZERO, &exit());
            c.on_ack(Instant::from_nanos(1), &ack(1000, ms(100)));
            let k = ((w_max - 63.0) / 0.4).cbrt();
            assert!((c.k - k).abs() < 1e-9, "fc {fc}: K {} vs {k}", c.k);
        }
        // A loss above W_max remembers the window itself.
        let mut c = after_loss(&CubicParams::default(), 100.0);
        c.cwnd = 120.0;
        c.on_congestion(Instant::ZERO, &loss(120.0));
        assert_eq!(c.w_max, Some(120.0));
    }

    #[test]
    fn decrease_scales_the_window_with_floors() {
        let mut c = Cubic::new(&CubicParams::default(), &start(10));
        c.cwnd = 120.0;
        // The flight size does not matter (the sender keeps it at cwnd while
        // the window limits; after a SACK recovery it counts SACKed data).
        c.on_congestion(Instant::ZERO, &loss(500.0));
        assert_eq!((c.cwnd(), c.ssthresh()), (84_000, 84_000));
        assert_eq!((c.w_max, c.cwnd_prior), (Some(120.0), Some(120.0)));
        c.cwnd = 2.5;
        c.on_congestion(Instant::ZERO, &loss(1.0));
        assert_eq!((c.cwnd(), c.ssthresh()), (2000, 2000));
        // An ECN echo may go down to one segment.
        c.on_congestion(Instant::ZERO, &event(CongestionKind::Ecn, 1.0));
        assert_eq!((c.cwnd(), c.ssthresh()), (1400, 2000));
        c.on_congestion(Instant::ZERO, &event(CongestionKind::Ecn, 1.0));
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 2000));
    }

    #[test]
    fn reno_friendly_region_rules_at_small_rtt() {
        let rtt = ms(1);
        let alpha = 3.0 * 0.3 / 1.7;
        let mut rf = after_loss(&CubicParams::default(), 100.0);
        let mut pure = after_loss(
            &CubicParams {
                reno_friendly: false,
                ..CubicParams::default()
            },
            100.0,
        );
        let t0 = Instant::from_nanos(1_000_000_000);
        let (mut a, mut b) = (t0, t0);
        run(&mut rf, &mut a, rtt, t0 + ms(20));
        run(&mut pure, &mut b, rtt, t0 + ms(20));
        // 20 RTTs of Reno-like growth at alpha_cubic per RTT (Figure 4) ...
        let reno = 70.0 + 20.0 * alpha;
        assert!(
            (rf.cwnd - reno).abs() / reno < 0.01,
            "cwnd {} vs W_est model {reno}",
            rf.cwnd
        );
        // ... where the cubic function alone barely moved (K = 4.2 s).
        let w = w_cubic(0.4, (30.0f64 / 0.4).cbrt(), 100.0, 0.02);
        assert!(rf.cwnd > w + 9.0, "{} vs W(t) {w}", rf.cwnd);
        assert!((pure.cwnd - w).abs() < 0.5, "{} vs W(t) {w}", pure.cwnd);
        // Once W_est passes cwnd_prior (100), alpha is 1: one segment per RTT.
        run(&mut rf, &mut a, rtt, t0 + ms(80));
        let before = rf.cwnd;
        run(&mut rf, &mut a, rtt, t0 + ms(100));
        let slope = rf.cwnd - before;
        assert!(
            before > 100.0 && (slope - 20.0).abs() < 0.5,
            "{before} +{slope}"
        );
    }

    #[test]
    fn timeout_restarts_the_epoch_with_k_zero() {
        let mut c = after_loss(&CubicParams::default(), 100.0);
        let mut now = Instant::from_nanos(1_000_000_000);
        run_for(&mut c, &mut now, ms(100), Duration::from_secs(2));
        assert!(c.epoch_start.is_some());
        c.cwnd = 80.0;
        c.on_congestion(now, &event(CongestionKind::Rto { repeated: false }, 300.0));
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 56_000));
        assert_eq!((c.epoch_start, c.w_max), (None, None));
        // The same segment times out again: ssthresh is held.
        c.on_congestion(now, &event(CongestionKind::Rto { repeated: true }, 1.0));
        assert_eq!((c.cwnd(), c.ssthresh()), (1000, 56_000));
        // Slow start with L = 1 after a timeout, up to ssthresh.
        let mut a = ack(5000, ms(100));
        a.state = CaState::Loss;
        for _ in 0..55 {
            c.on_ack(now, &a);
        }
        assert_eq!(c.cwnd(), 56_000);
        assert!(c.epoch_start.is_none());
        now += ms(10);
        c.on_ack(now, &ack(1000, ms(100)));
        // Section 4.8: K = 0, W_max = W_est = cwnd_epoch.
        assert_eq!(c.epoch_start, Some(now));
        assert_eq!((c.k, c.w_max, c.cwnd_epoch), (0.0, Some(56.0), 56.0));
        // Convex from there: W(t) = C t^3 + 56.
        let epoch = now;
        run(&mut c, &mut now, ms(100), epoch + Duration::from_secs(5));
        let w = w_cubic(0.4, 0.0, 56.0, 5.0);
        assert!((c.cwnd - w).abs() / w < 0.02, "{} vs {w}", c.cwnd);
    }

    #[test]
    fn target_is_at_most_one_and_a_half_windows() {
        // Section 4.2: a convex curve far ahead of the window (after a
        // timeout, K = 0, with a long RTT) grows it at most 50 % per RTT.
        // (Without the Reno-friendly region, whose alpha = 1 here would also
        // give 3.)
        let p = CubicParams {
            reno_friendly: false,
            ..CubicParams::default()
        };
        let mut c = Cubic::new(&p, &start(2));
        c.ssthresh = 2.0;
        let t0 = Instant::from_nanos(1_000_000_000);
        c.on_ack(t0, &ack(1, Duration::from_secs(2)));
        assert_eq!((c.k, c.w_max), (0.0, Some(2.0)));
        // W(0 + 2 s) = 0.4 x 8 + 2 = 5.2 > 1.5 x 2: the target is 3.
        c.on_ack(t0, &ack(2 * MSS as u64, Duration::from_secs(2)));
        assert!((c.cwnd - 3.0).abs() < 1e-3, "{}", c.cwnd);
        // A stretch ACK of 20 segments: 1.5 x 3, not beyond.
        c.on_ack(t0, &ack(20 * MSS as u64, Duration::from_secs(2)));
        assert!((c.cwnd - 4.5).abs() < 1e-3, "{}", c.cwnd);
    }

    fn state(
        c: &Cubic,
    ) -> (
        f64,
        Option<f64>,
        f64,
        Option<f64>,
        f64,
        Option<Instant>,
        f64,
    ) {
        (
            c.cwnd,
            c.cwnd_prior,
            c.ssthresh,
            c.w_max,
            c.k,
            c.epoch_start,
            c.w_est,
        )
    }

    #[test]
    fn spurious_fast_retransmit_is_undone() {
        let retransmission = SentInfo {
            offset: 0,
            len: MSS,
            retransmission: true,
            in_flight: 0,
        };
        let mut c = after_loss(&CubicParams::default(), 100.0);
        let mut now = Instant::from_nanos(1_000_000_000);
        run_for(&mut c, &mut now, ms(100), Duration::from_secs(3));
        let before = state(&c);
        c.on_congestion(now, &loss(c.cwnd));
        c.on_packet_sent(now, &retransmission);
        assert!(c.cwnd < before.0);
        c.on_spurious(now + ms(100));
        assert_eq!(state(&c), before);
        // The end of the recovery keeps the restored window.
        c.on_recovery_exit(now + ms(200), &exit());
        assert_eq!(state(&c), before);

        // Two retransmissions, one reported as a duplicate: a real loss too.
        let before = state(&c);
        c.on_congestion(now, &loss(c.cwnd));
        c.on_packet_sent(now, &retransmission);
        c.on_packet_sent(now, &retransmission);
        let reduced = state(&c);
        c.on_spurious(now);
        assert_eq!(state(&c), reduced);
        c.on_spurious(now);
        assert_eq!(state(&c), before, "both were unnecessary");
        // Nothing saved any more: a late DSACK changes nothing.
        c.on_spurious(now);
        assert_eq!(state(&c), before);

        // Detected after the window already grew past cwnd_prior: kept (4.9.2).
        c.on_congestion(now, &loss(c.cwnd));
        c.on_packet_sent(now, &retransmission);
        c.cwnd = before.0 + 5.0;
        c.on_spurious(now);
        assert_eq!(c.cwnd, before.0 + 5.0);
        assert!(c.ssthresh < before.0);
    }

    #[test]
    fn application_limited_time_does_not_advance_the_epoch() {
        let mut c = after_loss(&CubicParams::default(), 100.0);
        let mut now = Instant::from_nanos(1_000_000_000);
        run_for(&mut c, &mut now, ms(100), Duration::from_secs(1));
        let epoch = c.epoch_start.unwrap();
        let cwnd = c.cwnd;
        c.on_app_limited(now);
        c.on_app_limited(now + Duration::from_secs(1));
        let mut a = ack(1000, ms(100));
        a.cwnd_limited = false;
        c.on_ack(now + Duration::from_secs(2), &a);
        assert_eq!(c.cwnd, cwnd, "no growth while application-limited");
        let new_data = SentInfo {
            offset: 0,
            len: MSS,
            retransmission: false,
            in_flight: MSS as u64,
        };
        c.on_packet_sent(now + Duration::from_secs(5), &new_data);
        assert_eq!(c.epoch_start, Some(epoch + Duration::from_secs(5)));
        // A retransmission does not end the period; new data without a period
        // changes nothing.
        c.on_packet_sent(now + Duration::from_secs(6), &new_data);
        assert_eq!(c.epoch_start, Some(epoch + Duration::from_secs(5)));
    }

    /// Drives `rounds` HyStart++ rounds with RTT samples `rtt(round)`: one ACK
    /// per segment, the window kept full.
    fn hystart_rounds(c: &mut Cubic, una: &mut u64, rounds: u32, rtt: impl Fn(u32) -> u64) {
        let mut round = 0;
        loop {
            *una += MSS as u64;
            let hs = c.hystart.as_ref();
            if hs.is_none_or(|h| h.window_end.is_none_or(|e| *una >= e)) {
                round += 1;
                if round > rounds {
                    *una -= MSS as u64;
                    return;
                }
            }
            let mut a = ack(MSS as u64, ms(rtt(round)));
            a.snd_una = *una;
            a.snd_nxt = *una + c.cwnd();
            c.on_ack(Instant::ZERO, &a);
        }
    }

    fn phase(c: &Cubic) -> f64 {
        let mut out = [0.0; 6];
        c.metrics(&mut out);
        out[5]
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_delay_increase() {
        let p = CubicParams {
            hystart: Some(Hystart::HystartPlusPlus),
            ..CubicParams::default()
        };
        let mut c = Cubic::new(&p, &start(10));
        let mut una = 0;
        assert_eq!(phase(&c), 1.0);
        hystart_rounds(&mut c, &mut una, 3, |_| 100);
        assert_eq!(phase(&c), 1.0, "constant RTT: still in slow start");
        assert_eq!(c.cwnd, 80.0, "doubling per round");
        // +15 ms > clamp(100 / 8, 4, 16) = 12.5 ms: Conservative Slow Start.
        hystart_rounds(&mut c, &mut una, 1, |_| 115);
        assert_eq!(phase(&c), 2.0);
        // In CSS the window grows a quarter as fast.
        let w = c.cwnd;
        hystart_rounds(&mut c, &mut una, 1, |_| 115);
        assert!(w < c.cwnd && c.cwnd < w * 1.3, "{w} -> {}", c.cwnd);
        // CSS_ROUNDS rounds of CSS: congestion avoidance with ssthresh = cwnd.
        hystart_rounds(&mut c, &mut una, 4, |_| 115);
        assert_eq!(phase(&c), 0.0);
        assert_eq!(c.ssthresh, c.cwnd);
        assert_eq!((c.cwnd_prior, c.w_max), (Some(c.cwnd), None));
        let w = c.cwnd;
        c.on_ack(Instant::ZERO, &ack(1000, ms(115)));
        assert_eq!((c.k, c.w_max), (0.0, Some(w)));

        // A delay increase of 10 ms < 12.5 ms does not end slow start.
        let mut c = Cubic::new(&p, &start(10));
        let mut una = 0;
        hystart_rounds(&mut c, &mut una, 4, |r| if r < 3 { 100 } else { 110 });
        assert_eq!(phase(&c), 1.0);

        // The threshold is clamped to [4 ms, 16 ms]: +20 ms ends slow start
        // after 200 ms rounds (200 / 8 = 25 ms), +3 ms does not after 10 ms
        // rounds (10 / 8 = 1.25 ms), +5 ms does.
        for (base, bump, phase_after) in [(200, 20, 2.0), (10, 3, 1.0), (10, 5, 2.0)] {
            let mut c = Cubic::new(&p, &start(10));
            let mut una = 0;
            hystart_rounds(
                &mut c,
                &mut una,
                3,
                |r| if r < 3 { base } else { base + bump },
            );
            assert_eq!(phase(&c), phase_after, "{base} ms + {bump} ms");
        }

        // The RTT falls back below the CSS baseline: slow start resumes.
        let mut c = Cubic::new(&p, &start(10));
        let mut una = 0;
        hystart_rounds(&mut c, &mut una, 3, |r| if r < 3 { 100 } else { 120 });
        assert_eq!(phase(&c), 2.0);
        hystart_rounds(&mut c, &mut una, 1, |_| 101);
        assert_eq!(phase(&c), 1.0);

        // A loss ends HyStart++ for good.
        c.on_congestion(Instant::ZERO, &loss(c.cwnd));
        assert_eq!(phase(&c), 0.0);
        // Off by default.
        assert!(phase(&Cubic::new(&CubicParams::default(), &start(10))).is_nan());
    }

    #[test]
    fn slow_start_respects_abc_limit_and_mss_change() {
        let mut c = Cubic::new(
            &CubicParams::default(),
            &WindowStart {
                initial_ssthresh: Some(100_000),
                ..start(10)
            },
        );
        c.set_mss(500);
        assert_eq!((c.cwnd(), c.ssthresh()), (5000, 100_000));
        let mut a = ack(5000, ms(100));
        a.mss = 500;
        c.on_ack(Instant::ZERO, &a); // stretch ACK: at most L = 2 segments
        assert_eq!(c.cwnd(), 6000);
        a.cwnd_limited = false;
        c.on_ack(Instant::ZERO, &a);
        a.cwnd_limited = true;
        a.state = CaState::Recovery;
        c.on_ack(Instant::ZERO, &a);
        assert_eq!(c.cwnd(), 6000);
    }

    #[test]
    fn params_are_checked_and_parsed() {
        assert!(CubicParams::default().validate().is_ok());
        let bad = |p: CubicParams| p.validate().unwrap_err();
        let e = bad(CubicParams {
            beta: 1.0,
            ..CubicParams::default()
        });
        assert!(e.starts_with("beta: 1 is out of range"), "{e}");
        let e = bad(CubicParams {
            c: 0.0,
            ..CubicParams::default()
        });
        assert!(e.starts_with("c: 0 is out of range"), "{e}");
        let p: CubicParams = serde_json::from_str(r#"{"beta": 0.5, "hystart": true}"#).unwrap();
        assert_eq!(
            (p.beta, p.c, p.hystart),
            (0.5, 0.4, Some(Hystart::HystartPlusPlus))
        );
        let p: CubicParams = serde_json::from_str(r#"{"hystart": "linux"}"#).unwrap();
        assert_eq!(p.hystart, Some(Hystart::Linux));
        let e = serde_json::from_str::<CubicParams>(r#"{"hystart": "fast"}"#).unwrap_err();
        assert!(e.to_string().contains("\"hystart++\""), "{e}");
        assert!(serde_json::from_str::<CubicParams>(r#"{"gamma": 1}"#).is_err());
    }

    /// Slow start on an ACK clock: round `r` (from 0) brings one ACK per
    /// segment of the window at its start, `gap_us` apart from r seconds on,
    /// each with RTT sample `rtt(r)` ms. Returns the round and ACK index at
    /// which slow start ended, if it did within `rounds` rounds.
    fn classic_rounds(
        c: &mut Cubic,
        rounds: u32,
        gap_us: u64,
        rtt: impl Fn(u32) -> u64,
    ) -> Option<(u32, u64)> {
        let mut una = 0u64;
        for r in 0..rounds {
            let n = c.cwnd as u64;
            // the round ends with its last ACK (what was sent when it began)
            let end = una + n * MSS as u64;
            for i in 0..n {
                una += MSS as u64;
                let a = acked(MSS, MSS as u64).rtt(ms(rtt(r))).seq(una, end).build();
                let t_us = r as u64 * 1_000_000 + i * gap_us;
                c.on_ack(Instant::from_nanos(t_us * 1000), &a);
                if !c.in_slow_start() {
                    return Some((r, i));
                }
            }
        }
        None
    }

    fn classic(mode: Hystart) -> Cubic {
        let p = CubicParams {
            hystart: Some(mode),
            ..CubicParams::default()
        };
        Cubic::new(&p, &start(10))
    }

    /// Linux 6.x's delay detector: once a round has eight samples, a round
    /// minimum above the floor (100 ms) by more than 100 / 8 = 12.5 ms (within
    /// 4-16 ms) ends slow start with ssthresh = cwnd; 12 ms more does not.
    #[test]
    fn classic_hystart_exits_at_the_delay_threshold() {
        let rtt = |late: u64| move |r: u32| if r < 2 { 100 } else { late };
        let mut c = classic(Hystart::Linux);
        // round 2 has 40 ACKs; the ninth sample of the round is judged
        assert_eq!(classic_rounds(&mut c, 4, 5000, rtt(113)), Some((2, 8)));
        assert_eq!(c.ssthresh(), 48 * MSS as u64, "ssthresh = cwnd at the exit");
        let mut c = classic(Hystart::Linux);
        assert_eq!(classic_rounds(&mut c, 4, 5000, rtt(112)), None);
        // ns-3's threshold is the whole floor (clamped to 4-1000 ms)
        let mut c = classic(Hystart::Ns3);
        assert_eq!(classic_rounds(&mut c, 4, 5000, rtt(113)), None);
        let mut c = classic(Hystart::Ns3);
        assert_eq!(classic_rounds(&mut c, 4, 5000, rtt(201)), Some((2, 8)));
    }

    /// The ACK-train detector: ACKs at most 2 ms apart for longer than half
    /// the floor plus Linux's 1 ms cushion (50.5 ms) end slow start; ns-3
    /// waits for the whole floor. A window below 16 segments is never ended.
    #[test]
    fn classic_hystart_exits_on_a_long_ack_train() {
        let mut c = classic(Hystart::Linux);
        // rounds of 10, 20, 40 ACKs 1 ms apart are shorter than 50.5 ms
        assert_eq!(classic_rounds(&mut c, 5, 1000, |_| 100), Some((3, 51)));
        assert_eq!(c.ssthresh(), (80 + 51) * MSS as u64);
        let mut c = classic(Hystart::Ns3);
        assert_eq!(classic_rounds(&mut c, 5, 1000, |_| 100), Some((4, 101)));
        // off: slow start goes on
        let mut c = classic(Hystart::Off);
        assert_eq!(classic_rounds(&mut c, 5, 1000, |_| 100), None);
        // a timeout resets the detector, which runs again in the next slow start
        let mut c = classic(Hystart::Linux);
        assert!(classic_rounds(&mut c, 5, 1000, |_| 100).is_some());
        c.on_congestion(
            Instant::ZERO,
            &event(CongestionKind::Rto { repeated: false }, 100.0),
        );
        assert!(c.classic.as_ref().is_some_and(|h| !h.found));
    }
}
