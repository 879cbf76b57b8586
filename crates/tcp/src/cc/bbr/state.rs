//! The path model and the state machine of BBR v1: draft sections "BBR Network
//! Path Model" and "State Machine" (STARTUP, DRAIN, PROBE_BW, PROBE_RTT),
//! run once per delivery-rate sample as the draft's `BBRUpdateModelAndState`.

use super::filters::{MaxBwFilter, MinRttFilter};
use super::params::BbrParams;
use crate::cc::{CaState, WindowStart};
use crate::config::{BbrQuantum, Tso};
use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};

/// BBR's operating mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Exponential search for the bottleneck bandwidth (gains `high_gain`).
    Startup,
    /// Drains the queue STARTUP built (pacing gain 1 / `high_gain`).
    Drain,
    /// Steady state: the pacing-gain cycle around the estimated bandwidth.
    ProbeBw,
    /// A window of `probe_rtt_cwnd` segments for `probe_rtt_duration` and a
    /// round, to measure the propagation delay again.
    ProbeRtt,
}

impl Mode {
    /// Numeric code of the `mode` metric: STARTUP 0, DRAIN 1, PROBE_BW 2, PROBE_RTT 3.
    pub fn code(self) -> u8 {
        self as u8
    }
    /// Name as in the draft.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "startup",
            Mode::Drain => "drain",
            Mode::ProbeBw => "probe_bw",
            Mode::ProbeRtt => "probe_rtt",
        }
    }
}

/// PROBE_BW's pacing gains, one phase per min RTT (draft, "ProbeBW"): probe
/// for more bandwidth, drain the queue that made, cruise for six phases.
pub const PROBE_BW_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

/// All of BBR's state. `Bbr` boxes it so that the `Cc` enum stays small.
#[derive(Clone, Debug)]
pub(super) struct Machine {
    pub(super) p: BbrParams,
    pub(super) mss: u64,
    /// Initial window in segments.
    pub(super) initial_cwnd: u64,
    /// The allowance above a bandwidth-delay product (`tcp.bbr_quantum`).
    pub(super) quantum: BbrQuantum,
    /// Whether paced data leaves in Linux's TSO bursts (`tcp.tso`).
    pub(super) tso: Tso,

    // ----- the model
    /// BBR.BtlBw samples, bit/s of payload.
    pub(super) bw: MaxBwFilter,
    pub(super) rtprop: MinRttFilter,
    pub(super) rtprop_expired: bool,
    /// Connection-wide delivered bytes as of the latest sample (C.delivered).
    pub(super) delivered: u64,
    pub(super) round_count: u64,
    /// The bandwidth filter's clock: round trips that could measure the path
    /// (all of them with SACK; without, those outside `bw_sample_usable`'s
    /// exclusions), so that a long repair does not age the estimate out.
    pub(super) bw_round_count: u64,
    pub(super) next_round_delivered: u64,
    pub(super) round_start: bool,
    pub(super) filled_pipe: bool,
    pub(super) full_bw: u64,
    pub(super) full_bw_count: u32,

    // ----- the state machine
    pub(super) mode: Mode,
    pub(super) pacing_gain: f64,
    pub(super) cwnd_gain: f64,
    pub(super) cycle_index: usize,
    pub(super) cycle_stamp: Instant,
    pub(super) probe_rtt_done_stamp: Option<Instant>,
    pub(super) probe_rtt_round_done: bool,
    /// An RTT sample arrived during the current PROBE_RTT.
    pub(super) probe_rtt_sampled: bool,
    /// PROBE_RTT asks the sender to mark the connection application-limited
    /// (draft "ProbeRTT": `C.app_limited = C.delivered + packets_in_flight`).
    pub(super) request_app_limited: bool,
    pub(super) idle_restart: bool,

    // ----- the control parameters
    pub(super) pacing_rate: Rate,
    pub(super) has_seen_rtt: bool,
    pub(super) cwnd: u64,
    pub(super) prior_cwnd: u64,
    pub(super) packet_conservation: bool,
    /// Packet conservation ends when a packet sent after this delivered count
    /// is acknowledged; `None` until the first sample of the recovery.
    pub(super) conservation_end: Option<u64>,
    /// The sender's recovery state, from `on_state`.
    pub(super) ca_state: CaState,
    /// The recovery state as of the end of the last ACK (or `Loss` from the
    /// timeout on): what each ACK's state is compared with, as Linux does.
    pub(super) prev_ca_state: CaState,
    /// Bytes in flight, from the latest ACK or transmission.
    pub(super) in_flight: u64,
    /// Recovery state while the ACK being processed arrived (`on_ack` comes
    /// before `on_rate_sample`).
    pub(super) ack_state: CaState,
    /// A duplicate ACK SACKed nothing: the connection runs without SACK.
    pub(super) sack_missing: bool,
    /// Without SACK, bandwidth samples of packets sent before this delivered
    /// count are distorted by a loss recovery (see `bw_sample_usable`).
    pub(super) distorted_until: u64,
}

impl Machine {
    /// Draft "Initialization Steps": STARTUP, empty filters, the initial
    /// window and the initial pacing rate (with `initial_rtt` until an RTT is
    /// measured).
    pub(super) fn new(p: &BbrParams, start: &WindowStart) -> Self {
        let mss = start.mss.max(1) as u64;
        let initial_cwnd = start.initial_cwnd.max(1) as u64;
        let mut m = Machine {
            p: p.clone(),
            mss,
            initial_cwnd,
            quantum: BbrQuantum::None,
            tso: Tso::None,
            bw: MaxBwFilter::new(p.bw_window_rounds),
            rtprop: MinRttFilter::new(p.min_rtt_window),
            rtprop_expired: false,
            delivered: 0,
            round_count: 0,
            bw_round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0,
            full_bw_count: 0,
            mode: Mode::Startup,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            cycle_index: 0,
            cycle_stamp: Instant::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            probe_rtt_sampled: false,
            request_app_limited: false,
            ack_state: CaState::Open,
            sack_missing: false,
            distorted_until: 0,
            idle_restart: false,
            pacing_rate: Rate::ZERO,
            has_seen_rtt: false,
            cwnd: initial_cwnd * mss,
            prior_cwnd: 0,
            packet_conservation: false,
            conservation_end: None,
            ca_state: CaState::Open,
            prev_ca_state: CaState::Open,
            in_flight: 0,
        };
        m.pacing_rate = m.initial_pacing_rate(p.initial_rtt);
        m
    }

    /// BBR.BtlBw in bit/s of payload (0 before the first rate).
    pub(super) fn btl_bw(&self) -> u64 {
        self.bw.get().unwrap_or(0)
    }

    /// BtlBw × RTprop in bytes, once both are known.
    pub(super) fn bdp(&self) -> Option<u64> {
        let rtt = self.rtprop.get()?;
        let bw = self.bw.get()?;
        Some(Rate::from_bps(bw).bytes_in(rtt))
    }

    /// Draft `BBRInflight(gain)`: `gain` × BDP in bytes, the initial window
    /// while the model is empty. The draft's send-quantum allowance (`3 ×
    /// send_quantum`) is omitted by default: wavelab sends single segments,
    /// no TSO. With `tcp.bbr_quantum = "linux"` it is Linux's
    /// `bbr_inflight` instead: the product in whole segments (rounded up, as
    /// `bbr_bdp`) with [`Machine::quantization_budget`].
    pub(super) fn inflight(&self, gain: f64) -> u64 {
        match (self.bdp(), self.quantum) {
            (Some(bdp), BbrQuantum::None) => (bdp as f64 * gain) as u64,
            (Some(bdp), BbrQuantum::Linux) => {
                let segments = (bdp as f64 * gain / self.mss as f64).ceil() as u64;
                self.quantization_budget(segments) * self.mss
            }
            (None, _) => self.initial_cwnd * self.mss,
        }
    }

    /// Linux's `bbr_quantization_budget` (net/ipv4/tcp_bbr.c, 6.18), in
    /// segments: three times `bbr_tso_segs_goal` more, rounded up to an even
    /// count ("reduce delayed ACKs"), and 2 more in PROBE_BW's probing phase
    /// ("ensure gain cycling gets inflight above BDP even for small BDPs").
    fn quantization_budget(&self, segments: u64) -> u64 {
        let mut cwnd = segments + 3 * self.tso_segs_goal();
        cwnd += cwnd % 2;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// Linux's `bbr_tso_segs_goal`: the whole segments of 1/1024 s at the
    /// pacing rate (`sk_pacing_shift` = 10), at least `bbr_min_tso_segs` (1
    /// below a pacing rate of 1.2 Mbit/s, `bbr_min_tso_rate`, else 2), at
    /// most 127. Linux also caps the bytes at the GSO size (about 64 KB),
    /// which binds only above about 530 Mbit/s of pacing with segments over
    /// 516 bytes; that cap is left out.
    pub(super) fn tso_segs_goal(&self) -> u64 {
        let bytes_per_sec = self.pacing_rate.as_bps() / 8;
        let min_segs = if self.pacing_rate.as_bps() < 1_200_000 {
            1
        } else {
            2
        };
        ((bytes_per_sec >> 10) / self.mss).clamp(min_segs, 127)
    }

    /// Draft `BBRUpdateModelAndState`; `rtt` is the sample's RTT (none when
    /// the newest packet acknowledged was retransmitted: Karn).
    pub(super) fn update_model_and_state(
        &mut self,
        now: Instant,
        rs: &RateSample,
        rtt: Option<Duration>,
    ) {
        let app_limited = rs.app_limited;
        let usable = self.bw_sample_usable(rs);
        self.update_round(rs);
        if usable {
            if self.round_start {
                self.bw_round_count += 1;
            }
            self.update_btl_bw(rs, app_limited);
        }
        self.check_cycle_phase(now, rs);
        self.check_full_pipe(app_limited);
        self.check_drain(now);
        // Draft "Updating the BBR.RTprop Min Filter".
        self.rtprop_expired = self.rtprop.is_expired(now);
        if let Some(rtt) = rtt {
            self.rtprop.update(now, rtt);
            self.probe_rtt_sampled |= self.mode == Mode::ProbeRtt;
        }
        self.check_probe_rtt(now, rs);
    }

    /// Without SACK, ACKs that arrive while the sender recovers (Recovery or
    /// Loss) measure the repair, not the path: a cumulative ACK delivers at
    /// once data that arrived long before (after the standard scenario's
    /// startup overshoot, 1 MB in 0.1 s: 73 Mbit/s on a 10 Mbit/s link), and a
    /// go-back-N repair crawls at the loss window (0.2 Mbit/s samples, which
    /// walked the 10-round filter down to that for 9 s). The sender cannot
    /// tell what arrived without a scoreboard, so these samples, and those of
    /// packets sent before the recovery's last ACK, do not reach BtlBw. With
    /// SACK, data is counted when it arrives and every sample is used.
    fn bw_sample_usable(&mut self, rs: &RateSample) -> bool {
        if !self.sack_missing {
            return true;
        }
        let in_recovery = matches!(self.ack_state, CaState::Recovery | CaState::Loss);
        let usable = !in_recovery && rs.prior_delivered >= self.distorted_until;
        if in_recovery {
            self.distorted_until = rs.total_delivered;
        }
        usable
    }

    /// Draft "Tracking Time for the BBR.BtlBw Max Filter": a round ends when a
    /// packet sent after the previous round's end is acknowledged.
    ///
    /// Only a sample with a rate counts (its interval at least the minimum
    /// RTT), as in Linux's `bbr_update_bw` (net/ipv4/tcp_bbr.c, 6.18), which
    /// returns before the round check on a sample `tcp_rate_gen` marked
    /// invalid for an interval below `tcp_min_rtt`. Such a sample is typically
    /// the ACK of an original transmission arriving just after its
    /// retransmission: the sampler credits the retransmission, sent after the
    /// last round started, so each such ACK would end a "round" of a few
    /// milliseconds. A go-back-N repair after a timeout that F-RTO undid
    /// ended one per ACK and aged the bandwidth filter's 10 rounds out in
    /// 20 ms (2.23 MB/s of pacing fell to 116 kB/s).
    fn update_round(&mut self, rs: &RateSample) {
        self.delivered = rs.total_delivered;
        self.round_start = rs.rate.is_some() && rs.prior_delivered >= self.next_round_delivered;
        if self.round_start {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
        }
    }

    /// Draft "Updating the BBR.BtlBw Max Filter": app-limited samples count
    /// only if they raise the estimate.
    fn update_btl_bw(&mut self, rs: &RateSample, app_limited: bool) {
        if let Some(rate) = rs.rate {
            let bw = rate.as_bps();
            if bw >= self.btl_bw() || !app_limited {
                self.bw.update(self.bw_round_count, bw);
            }
        }
    }

    /// Draft "Estimating When Startup has Filled the Pipe": three rounds in a
    /// row without 25 % growth of BtlBw (non-app-limited round starts only).
    fn check_full_pipe(&mut self, app_limited: bool) {
        if self.filled_pipe || !self.round_start || app_limited {
            return;
        }
        let bw = self.btl_bw();
        if bw as f64 >= self.full_bw as f64 * self.p.full_bw_growth {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        if self.full_bw_count >= self.p.full_bw_rounds {
            self.filled_pipe = true;
        }
    }

    /// Draft "Drain": leave STARTUP once the pipe is full; leave DRAIN once
    /// in flight is down to one BDP.
    fn check_drain(&mut self, now: Instant) {
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / self.p.high_gain;
            self.cwnd_gain = self.p.high_gain;
        }
        if self.mode == Mode::Drain && self.in_flight <= self.inflight(1.0) {
            self.enter_probe_bw(now);
        }
    }

    pub(super) fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.p.high_gain;
        self.cwnd_gain = self.p.high_gain;
    }

    /// Draft "Gain Cycle Randomization": start in any phase but the draining
    /// 0.75 one.
    fn enter_probe_bw(&mut self, now: Instant) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = self.p.cwnd_gain;
        let n = PROBE_BW_GAINS.len();
        let r =
            (splitmix64(now.as_nanos() ^ self.delivered.rotate_left(32)) % (n as u64 - 1)) as usize;
        self.cycle_index = n - 1 - r;
        self.advance_cycle_phase(now);
    }

    fn check_cycle_phase(&mut self, now: Instant, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(now, rs) {
            self.advance_cycle_phase(now);
        }
    }

    fn advance_cycle_phase(&mut self, now: Instant) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PROBE_BW_GAINS.len();
        self.pacing_gain = PROBE_BW_GAINS[self.cycle_index];
    }

    /// Draft `BBRIsNextCyclePhase`: a phase lasts one RTprop; the probing phase
    /// longer, until in flight reaches its gain × BDP or a loss; the draining
    /// phase shorter, once in flight is down to one BDP.
    fn is_next_cycle_phase(&self, now: Instant, rs: &RateSample) -> bool {
        let full_length = self
            .rtprop
            .get()
            .is_some_and(|rt| now.saturating_since(self.cycle_stamp) > rt);
        let gain = PROBE_BW_GAINS[self.cycle_index];
        if gain > 1.0 {
            full_length && (rs.newly_lost > 0 || rs.prior_in_flight >= self.inflight(gain))
        } else if gain < 1.0 {
            full_length || rs.prior_in_flight <= self.inflight(1.0)
        } else {
            full_length
        }
    }

    /// Draft `BBRCheckProbeRTT`. The window is saved before the mode changes,
    /// so that it is the window of PROBE_BW (the draft's order would take the
    /// larger of it and a stale `prior_cwnd`).
    fn check_probe_rtt(&mut self, now: Instant, rs: &RateSample) {
        if self.mode != Mode::ProbeRtt && self.rtprop_expired && !self.idle_restart {
            self.prior_cwnd = self.save_cwnd();
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.probe_rtt_done_stamp = None;
            self.probe_rtt_sampled = false;
        }
        if self.mode == Mode::ProbeRtt {
            self.handle_probe_rtt(now, rs);
        }
        self.idle_restart = false;
    }

    /// Draft `BBRHandleProbeRTT`: once in flight is down to the minimal
    /// window, hold it for `probe_rtt_duration` and at least one round.
    fn handle_probe_rtt(&mut self, now: Instant, rs: &RateSample) {
        self.request_app_limited = true;
        match self.probe_rtt_done_stamp {
            None if self.in_flight <= self.min_pipe_cwnd() => {
                self.probe_rtt_done_stamp = Some(now + self.p.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = rs.total_delivered;
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    // a PROBE_RTT without an RTT sample measured nothing:
                    // the next sample replaces the stale estimate
                    self.rtprop.refresh(now, self.probe_rtt_sampled);
                    self.restore_cwnd();
                    if self.filled_pipe {
                        self.enter_probe_bw(now);
                    } else {
                        self.enter_startup();
                    }
                }
            }
            None => {}
        }
    }
}

/// SplitMix64's output function: a deterministic stand-in for the draft's
/// random phase choice (the sans-IO core draws no random numbers).
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
