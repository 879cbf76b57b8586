//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016; and
//! draft-cardwell-iccrg-bbr-congestion-control-00, July 2017), implemented
//! from the draft's prose and pseudo-code. Section names below are the
//! draft's.
//!
//! BBR models the path by two numbers, the bottleneck bandwidth BtlBw (the
//! maximum delivery rate over the last 10 round trips, [`MaxBwFilter`]) and
//! the round-trip propagation time RTprop (the minimum RTT, expiring after
//! 10 s, [`MinRttFilter`]), and sends at `pacing_gain` × BtlBw with at most
//! `cwnd_gain` × BtlBw × RTprop in flight. A state machine ([`Mode`]) sets
//! the gains: STARTUP (2/ln 2 for both) until three rounds bring less than
//! 25 % more bandwidth, DRAIN (pacing 1/2.885) until in flight is down to one
//! BDP, PROBE_BW (pacing gains 1.25, 0.75, then 1 for six phases of one RTprop
//! each, cwnd gain 2), and PROBE_RTT (4 segments for 200 ms and a round)
//! whenever RTprop was not refreshed for 10 s.
//!
//! How the sender's hooks drive it:
//!
//! * [`CongestionControl::on_rate_sample`] (one per ACK that delivered data)
//!   runs the draft's `BBRUpdateOnACK`: model, state machine, then pacing rate
//!   and cwnd. Round trips are counted from the sample's `prior_delivered`
//!   against the next-round marker and `total_delivered`.
//! * [`CongestionControl::on_ack`] comes first for the same ACK: it records the
//!   bytes in flight after the ACK (the draft's `packets_in_flight`) and the
//!   first SRTT; for an ACK that delivered nothing (no sample follows) it
//!   applies the loss-recovery window rules alone.
//! * [`CongestionControl::on_congestion`] and [`CongestionControl::on_state`]:
//!   "Modulating cwnd in Loss Recovery" (below).
//! * [`CongestionControl::on_app_limited`] and
//!   [`CongestionControl::on_packet_sent`]: "Restarting From Idle".
//!
//! Choices where the sources leave room, and omissions:
//!
//! * **Loss**: BBR v1 does not reduce its window multiplicatively.
//!   [`CongestionControl::ssthresh`] is `u64::MAX` (no slow-start threshold).
//!   Entering fast recovery saves cwnd and sets cwnd = in flight + max(newly
//!   delivered, 1 segment) with packet conservation (cwnd ≥ in flight +
//!   delivered) for the first round trip; every ACK deducts newly lost
//!   bytes; leaving recovery restores the saved window. Entering and leaving
//!   are judged as Linux judges them: the state at the end of each ACK
//!   against the state at the end of the previous one, so a recovery that
//!   ends and starts again on one ACK is one recovery (see
//!   `Machine::on_ack_state`). A timeout saves cwnd, sets it to one segment
//!   and ends packet conservation; the window then grows by what is
//!   delivered, and the saved window returns when the sender leaves the
//!   Loss state.
//! * **Filters**: the bandwidth filter is an exact maximum over the window's
//!   rounds instead of Nichols' three-sample approximation (see
//!   [`filters`]); the min RTT follows the draft (lower or equal samples
//!   refresh it, any sample replaces it once it is older than 10 s).
//! * **RTT samples** for RTprop are the rate sample's `rtt` (the newest
//!   packet the ACK covers, as the draft's `packet.rtt`); the sampler gives
//!   none when that packet was retransmitted (Karn): an ACK of the original
//!   arriving just after a retransmission would otherwise look like a
//!   1 ms RTT on a 104 ms path (we saw it starve a flow for 10 s). With
//!   timestamps the sender then fills in the RTT of the ACK's echo, as
//!   Linux's `tcp_ack_update_rtt` does.
//! * **A PROBE_RTT without RTT samples** (every ACK covered retransmitted
//!   data) still restarts RTprop's lifetime, but the next sample replaces
//!   the estimate whatever its value ([`MinRttFilter::refresh`]); the draft
//!   keeps the stale value for another 10 s, which after a handover to a
//!   longer path left BBR sizing its window by the old path's RTT.
//! * **Initial pacing rate**: 2.885 × initial window / the handshake's RTT
//!   (`on_established`), or the draft's 1 ms (`initial_rtt`) if the SYN was
//!   retransmitted, until the first SRTT.
//! * **Without SACK** the sender's sampler counts each duplicate ACK as one
//!   delivered segment (as Linux's emulated SACK). That is not enough after a
//!   timeout: go-back-N repair crawls at the loss window, then one cumulative
//!   ACK delivers data buffered since long before. Without SACK, samples of
//!   ACKs in Recovery or Loss, and of packets sent before the recovery's last
//!   ACK, do not update BtlBw (see `Machine::bw_sample_usable`).
//! * **PROBE_BW's random start phase** (draft "Gain Cycle Randomization") is
//!   drawn from a hash of the time and the delivered count: deterministic,
//!   yet different between flows.
//! * **PROBE_RTT's app-limited mark** is asked of the sender
//!   ([`SenderRequest::MarkAppLimited`]) on every ACK in PROBE_RTT.
//! * **cwnd = `cwnd_gain` × BDP** with no send-quantum allowance (the draft's
//!   `3 × send_quantum`): wavelab has no TSO and sends single segments; the
//!   floor is 4 segments. The send quantum itself is omitted for the same
//!   reason unless `tcp.tso = "linux"` asks for Linux's TSO bursts
//!   ([`crate::Tso`]): then [`CongestionControl::send_quantum`] is
//!   `bbr_tso_segs_goal`. `tcp.bbr_quantum = "linux"` (the linux profile) adds Linux's
//!   `bbr_quantization_budget` to every in-flight target instead (see
//!   [`crate::BbrQuantum`]): on a 2 Mbit/s path it is six segments, a
//!   standing queue in PROBE_BW that keeps PROBE_BW's RTT samples above
//!   RTprop, so that PROBE_RTT comes every 10 s as in Linux.
//! * **Header overhead**: the pacing rate is `pacing_gain` × BtlBw as the
//!   draft says, and BtlBw is measured in payload bytes (the sampler counts
//!   delivered payload: 10 Mbit/s of 1500-byte packets is 9.73 Mbit/s),
//!   while the sender's pacer spaces packets by their IP size. At gain 1 the
//!   wire therefore carries MSS / (MSS + headers) of the bottleneck rate
//!   (97.3 % with 1460-byte segments); the 1.25 phase still fills the link
//!   and refreshes BtlBw. Linux's BBR v1 has the same property (its pacing
//!   rate counts MSS-sized packets, its pacer whole packets).
//! * **Undo** of a reduction found spurious ([`CongestionControl::on_undo`])
//!   leaves cwnd as it is (BBR's own exit from recovery restores the saved
//!   window) and restarts STARTUP's full-pipe count, as Linux's
//!   `bbr_undo_cwnd` (net/ipv4/tcp_bbr.c, 6.18): the slow-down was spurious,
//!   so the rounds without growth that it caused do not count.
//! * **Rounds** are counted only on samples with a rate (see
//!   `Machine::update_round`).
//! * No ECN, no path-change handling (the default hooks).

mod control;
pub mod filters;
mod params;
mod state;
#[cfg(test)]
mod tests;

pub use filters::{MaxBwFilter, MinRttFilter};
pub use params::{BbrParams, DEFAULT_HIGH_GAIN, MAX_BW_WINDOW_ROUNDS};
pub use state::{Mode, PROBE_BW_GAINS};

use super::{
    AckEvent, CaState, CongestionControl, CongestionEvent, CongestionKind, SenderRequest, SentInfo,
    UndoEvent, WindowOptions, WindowStart,
};
use crate::config::Tso;
use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};
use state::Machine;

/// BBR v1. The state lives in a box so that [`crate::Cc`] stays small.
#[derive(Clone, Debug)]
pub struct Bbr {
    m: Box<Machine>,
}

/// Names of [`Bbr`]'s metrics: `btl_bw` (bit/s of payload, NaN before the
/// first sample), `rt_prop` (s, NaN before the first sample), `mode`
/// ([`Mode::code`]: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT),
/// `pacing_gain`, `cwnd_gain`, `round_count`, `full_pipe` (0/1) and
/// `cycle_index` (the PROBE_BW phase 0..=7, NaN in other modes).
pub const METRICS: &[&str] = &[
    "btl_bw",
    "rt_prop",
    "mode",
    "pacing_gain",
    "cwnd_gain",
    "round_count",
    "full_pipe",
    "cycle_index",
];

impl Bbr {
    /// BBR in STARTUP with the initial window of `start` (its ssthresh and
    /// ABC limit do not apply). `params` must be valid ([`BbrParams::validate`]).
    pub fn new(params: &BbrParams, start: &WindowStart) -> Self {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        Bbr {
            m: Box::new(Machine::new(params, start)),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &BbrParams {
        &self.m.p
    }
    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.m.mode
    }
    /// BBR.BtlBw: the bottleneck-bandwidth estimate (payload), if any sample had a rate.
    pub fn btl_bw(&self) -> Option<Rate> {
        self.m.bw.get().map(Rate::from_bps)
    }
    /// BBR.RTprop: the round-trip propagation-time estimate.
    pub fn rt_prop(&self) -> Option<Duration> {
        self.m.rtprop.get()
    }
    /// The estimated bandwidth-delay product in bytes.
    pub fn bdp(&self) -> Option<u64> {
        self.m.bdp()
    }
    /// The window the algorithm steers toward: `cwnd_gain` × BDP (the initial
    /// window before the model has both estimates).
    pub fn target_cwnd(&self) -> u64 {
        self.m.inflight(self.m.cwnd_gain)
    }
    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.m.pacing_gain
    }
    /// The current cwnd gain.
    pub fn cwnd_gain(&self) -> f64 {
        self.m.cwnd_gain
    }
    /// Packet-timed round trips counted so far.
    pub fn round_count(&self) -> u64 {
        self.m.round_count
    }
    /// True once STARTUP found the pipe full.
    pub fn filled_pipe(&self) -> bool {
        self.m.filled_pipe
    }
    /// The PROBE_BW phase (index into [`PROBE_BW_GAINS`]), in PROBE_BW only.
    pub fn cycle_index(&self) -> Option<usize> {
        (self.m.mode == Mode::ProbeBw).then_some(self.m.cycle_index)
    }
    /// True during the packet-conservation round of a fast recovery.
    pub fn packet_conservation(&self) -> bool {
        self.m.packet_conservation
    }
    /// The window saved on entering loss recovery or PROBE_RTT.
    pub fn prior_cwnd(&self) -> u64 {
        self.m.prior_cwnd
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn cwnd(&self) -> u64 {
        self.m.cwnd
    }
    /// BBR v1 has no slow-start threshold: `u64::MAX`.
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    /// BBR sets its own window through a recovery (packet conservation,
    /// section 4.2.3 of the draft), as Linux's `bbr_main` does instead of
    /// `tcp_cwnd_reduction`.
    fn proportional_reduction(&self) -> bool {
        false
    }
    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.m.pacing_rate)
    }

    /// With `tcp.tso = "linux"`, Linux's TSO burst of a BBR flow:
    /// `tcp_tso_segs` with BBR's `min_tso_segs`, the segments
    /// `bbr_tso_segs_goal` also counts.
    fn send_quantum(&self) -> u64 {
        match self.m.tso {
            Tso::None => 1,
            Tso::Linux => self.m.tso_segs_goal(),
        }
    }

    /// `tcp.bbr_quantum`: the allowance above the bandwidth-delay product;
    /// `tcp.tso`: whether paced data leaves in Linux's TSO bursts.
    fn set_options(&mut self, options: &WindowOptions) {
        self.m.quantum = options.bbr_quantum;
        self.m.tso = options.tso;
    }

    fn set_mss(&mut self, mss: u32) {
        let m = &mut self.m;
        m.mss = mss.max(1) as u64;
        if m.delivered == 0 {
            m.cwnd = m.initial_cwnd * m.mss;
            if !m.has_seen_rtt {
                m.pacing_rate = m.initial_pacing_rate(m.p.initial_rtt);
            }
        }
    }

    fn on_established(&mut self, _now: Instant, rtt: Option<Duration>) {
        if let Some(rtt) = rtt {
            self.m.on_first_rtt(rtt);
        }
    }

    fn poll_request(&mut self) -> Option<SenderRequest> {
        std::mem::take(&mut self.m.request_app_limited).then_some(SenderRequest::MarkAppLimited)
    }

    fn on_packet_sent(&mut self, _now: Instant, info: &SentInfo) {
        self.m.in_flight = info.in_flight;
    }

    fn on_app_limited(&mut self, _now: Instant) {
        self.m.on_app_limited();
    }

    fn on_ack(&mut self, _now: Instant, ack: &AckEvent) {
        let m = &mut self.m;
        m.in_flight = ack.in_flight;
        m.ack_state = ack.state;
        m.sack_missing |= ack.dupack && ack.bytes_delivered == 0;
        if let Some(srtt) = ack.srtt {
            m.on_first_rtt(srtt);
        }
        m.on_ack_state(ack.bytes_delivered);
        if ack.bytes_delivered == 0 {
            // No rate sample follows: only the loss-recovery rules apply.
            m.set_cwnd(0, ack.bytes_lost);
        }
    }

    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample) {
        let m = &mut self.m;
        m.update_model_and_state(now, rs, rs.rtt);
        m.update_control(rs);
    }

    fn on_congestion(&mut self, _now: Instant, ev: &CongestionEvent) {
        match ev.kind {
            CongestionKind::FastRetransmit => self.m.on_fast_retransmit(),
            CongestionKind::Rto { .. } => self.m.on_enter_rto(),
            // BBR v1 does not react to ECN.
            CongestionKind::Ecn => {}
        }
    }

    fn on_state(&mut self, _now: Instant, state: CaState) {
        self.m.on_state(state);
    }

    /// Linux's `bbr_undo_cwnd`: the window stays (BBR never reduced it
    /// multiplicatively), the full-pipe detection starts over.
    fn on_undo(&mut self, _now: Instant, _undo: &UndoEvent) {
        self.m.full_bw = 0;
        self.m.full_bw_count = 0;
    }

    fn metric_names(&self) -> &'static [&'static str] {
        METRICS
    }

    fn metrics(&self, out: &mut [f64]) {
        let m = &self.m;
        out[0] = m.bw.get().map_or(f64::NAN, |b| b as f64);
        out[1] = m.rtprop.get().map_or(f64::NAN, |d| d.as_secs_f64());
        out[2] = m.mode.code() as f64;
        out[3] = m.pacing_gain;
        out[4] = m.cwnd_gain;
        out[5] = m.round_count as f64;
        out[6] = m.filled_pipe as u8 as f64;
        out[7] = self.cycle_index().map_or(f64::NAN, |i| i as f64);
    }
}
