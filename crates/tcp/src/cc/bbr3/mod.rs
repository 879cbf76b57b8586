//! BBRv3, as specified by draft-ietf-ccwg-bbr-06 (Cardwell, Swett and
//! Beshay, IETF CCWG, July 2026), implemented from the draft's prose and
//! pseudo-code. Section numbers below are the draft's.
//!
//! BBRv3 keeps BBR v1's model (the maximum delivery rate and the minimum
//! RTT) and adds loss bounds on two time scales: a long-term one,
//! `inflight_longterm`, cut to what was in flight (at least `beta` = 0.7 of
//! the target) when a bandwidth probe lost more than `loss_thresh` = 2 % of
//! it, and a short-term one, `bw_shortterm` / `inflight_shortterm`, lowered
//! by `beta` each round with loss while not probing (section 5.5.10). The
//! states ([`State`], section 5.1) are Startup (pacing gain 2.77, cwnd gain
//! 2), Drain (0.5) until in flight is down to one BDP, ProbeBW's DOWN (0.9)
//! -> CRUISE (1.0) -> REFILL (1.0, one round) -> UP (1.25, cwnd gain 2.25)
//! cycle, and ProbeRTT (cwnd at half a BDP for 200 ms and a round) when
//! the 5 s `probe_rtt_min_delay` expires. The max-bandwidth filter spans
//! two ProbeBW cycles (section 5.5.6); min_rtt lives 10 s (section 5.5.7).
//!
//! How the sender's hooks drive it:
//!
//! * [`CongestionControl::on_ack`] records the bytes in flight after the
//!   ACK, whether the window limited the sender, and the ACK's newly lost
//!   bytes (`NoteLoss`, section 5.5.10.2).
//! * [`CongestionControl::on_rate_sample`] runs `UpdateOnACK` (section
//!   5.2.3): the loss check of `HandleLostPacket`, `UpdateModelAndState`,
//!   then `UpdateControlParameters`.
//! * [`CongestionControl::on_congestion`] and [`CongestionControl::on_state`]
//!   save and restore the window around loss recovery (section 5.6.4.4).
//! * [`CongestionControl::on_undo`] runs `HandleSpuriousLossDetection`
//!   (section 5.5.11.2); [`CongestionControl::on_app_limited`] runs
//!   `HandleRestartFromIdle` (section 5.4.1).
//!
//! Choices where the draft leaves room, and where wavelab differs:
//!
//! * **Loss per packet.** The draft runs `HandleLostPacket` for each packet
//!   marked lost, with that packet's `tx_in_flight` and `lost` stamps, and
//!   estimates with `InflightAtLoss` the flight at which the loss rate
//!   crossed 2 %. wavelab's sender reports losses per ACK, so the check
//!   runs on each rate sample whose packet saw losses since it was sent
//!   (`RS.lost` against `RS.tx_in_flight`), as Linux's
//!   `bbr_adapt_upper_bounds` also does (google/bbr, v3 branch,
//!   net/ipv4/tcp_bbr.c); the cut is to `RS.tx_in_flight`. Losses the
//!   sender marks at a retransmission timeout are not in `C.lost`.
//! * **Startup's loss exit** (section 5.3.1.3) counts loss *events* (ACKs
//!   that marked losses) in the round instead of discontiguous lost
//!   ranges, as Linux's `loss_events_in_round`.
//! * **SACK** is assumed until a duplicate ACK delivers nothing (the sign
//!   of a connection without SACK); from then on any loss counts as too
//!   high (`IsInflightTooHigh`).
//! * **Randomness** (`PickProbeWait`, section 5.3.3.8) comes from a
//!   SplitMix64 generator seeded by the `seed` parameter and the instant
//!   the connection opened: repeatable, and different between flows that
//!   open at different instants.
//! * **Send quantum**: the sender sends single segments (no TSO); the
//!   draft's offload budget (three quanta of `pacing_rate` × 1 ms, at least
//!   2 segments each) is kept as a floor under the window.
//! * **ECN**: the draft specifies no ECN response but requires CE marks to
//!   count as congestion (section 3.7). With `tcp.ecn` on, an ECN-Echo is
//!   noted as a loss in the round, which lowers the short-term bounds
//!   outside the probing states; it does not cut `inflight_longterm`
//!   (Linux's v3 ECN response with its `ecn_alpha` is not implemented).
//! * **Pacing** counts payload bytes, as BBR v1's (see
//!   [`crate::cc::bbr`]): at gain 1 the wire carries MSS / (MSS + headers)
//!   of the bandwidth estimate, less the 1 % pacing margin.

mod control;
pub mod filters;
mod model;
mod params;
mod state;
#[cfg(test)]
mod tests;

pub use params::Bbr3Params;
pub use state::State;

use super::{
    AckEvent, CaState, CongestionControl, CongestionEvent, CongestionKind, SenderRequest, SentInfo,
    UndoEvent, WindowStart,
};
use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};
use state::Machine;

/// BBRv3. The state lives in a box so that [`crate::Cc`] stays small.
#[derive(Clone, Debug)]
pub struct Bbr3 {
    m: Box<Machine>,
}

/// Names of [`Bbr3`]'s metrics: `bw` and `max_bw` (bit/s of payload),
/// `min_rtt` (s, NaN before the first sample), `state` ([`State::code`]),
/// `pacing_gain`, `cwnd_gain`, `inflight_longterm` and `inflight_shortterm`
/// (bytes, NaN while unset), `bw_shortterm` (bit/s, NaN while unset),
/// `round_count`, `full_bw_reached` (0/1) and `cycle_count`.
pub const METRICS: &[&str] = &[
    "bw",
    "max_bw",
    "min_rtt",
    "state",
    "pacing_gain",
    "cwnd_gain",
    "inflight_longterm",
    "inflight_shortterm",
    "bw_shortterm",
    "round_count",
    "full_bw_reached",
    "cycle_count",
];

impl Bbr3 {
    /// BBRv3 in Startup with the initial window of `start`. `params` must
    /// be valid ([`Bbr3Params::validate`]).
    pub fn new(params: &Bbr3Params, start: &WindowStart) -> Self {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        Bbr3 {
            m: Box::new(Machine::new(params, start)),
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Bbr3Params {
        &self.m.p
    }
    /// The current state.
    pub fn state(&self) -> State {
        self.m.state
    }
    /// `BBR.bw`: the bandwidth the model allows (payload), if any.
    pub fn bw(&self) -> Option<Rate> {
        (self.m.bw > 0.0).then(|| Rate::from_bps((self.m.bw * 8.0) as u64))
    }
    /// `BBR.max_bw`: the two-cycle maximum delivery rate (payload), if any.
    pub fn max_bw(&self) -> Option<Rate> {
        let b = self.m.max_bw.get();
        (b > 0.0).then(|| Rate::from_bps((b * 8.0) as u64))
    }
    /// `BBR.min_rtt`.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.m.min_rtt
    }
    /// `BBR.bdp` in bytes (0 before the model has both estimates).
    pub fn bdp(&self) -> u64 {
        self.m.bdp()
    }
    /// `BBR.inflight_longterm` in bytes (`None` while unset).
    pub fn inflight_longterm(&self) -> Option<u64> {
        (self.m.inflight_longterm != u64::MAX).then_some(self.m.inflight_longterm)
    }
    /// `BBR.inflight_shortterm` in bytes (`None` while unset).
    pub fn inflight_shortterm(&self) -> Option<u64> {
        (self.m.inflight_shortterm != u64::MAX).then_some(self.m.inflight_shortterm)
    }
    /// `BBR.bw_shortterm` (`None` while unset).
    pub fn bw_shortterm(&self) -> Option<Rate> {
        self.m
            .bw_shortterm
            .is_finite()
            .then(|| Rate::from_bps((self.m.bw_shortterm * 8.0) as u64))
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
    /// True once Startup found the pipe full (by bandwidth or by loss).
    pub fn full_bw_reached(&self) -> bool {
        self.m.full_bw_reached
    }
    /// ProbeBW cycles the max-bandwidth filter has advanced through.
    pub fn cycle_count(&self) -> u64 {
        self.m.cycle_count
    }
    /// The wall-clock wait before the next bandwidth probe, drawn on
    /// entering ProbeBW_DOWN.
    pub fn probe_wait(&self) -> Duration {
        self.m.bw_probe_wait
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }
    fn cwnd(&self) -> u64 {
        self.m.cwnd
    }
    /// BBRv3 has no slow-start threshold: `u64::MAX`.
    fn ssthresh(&self) -> u64 {
        u64::MAX
    }
    /// BBR sets its own window through a recovery (section 5.6.4.4).
    fn proportional_reduction(&self) -> bool {
        false
    }
    fn pacing_rate(&self) -> Option<Rate> {
        Some(self.m.pacing_rate)
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

    fn on_established(&mut self, now: Instant, rtt: Option<Duration>) {
        self.m.on_established(now);
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

    fn on_app_limited(&mut self, now: Instant) {
        self.m.on_app_limited(now);
    }

    fn on_ack(&mut self, _now: Instant, ack: &AckEvent) {
        let m = &mut self.m;
        if std::mem::take(&mut m.pending_loss) {
            // the previous ACK's losses, with no rate sample to wait for
            m.note_loss();
        }
        m.in_flight = ack.in_flight;
        m.cwnd_limited = ack.cwnd_limited;
        if ack.dupack && ack.bytes_delivered == 0 {
            m.has_sack = false;
        }
        if let Some(srtt) = ack.srtt {
            m.on_first_rtt(srtt);
        }
        m.pending_loss = ack.bytes_lost > 0;
    }

    fn on_rate_sample(&mut self, now: Instant, rs: &RateSample) {
        let m = &mut self.m;
        m.delivered = rs.total_delivered;
        if std::mem::take(&mut m.pending_loss) {
            m.note_loss();
        }
        m.check_loss_too_high(now, rs);
        m.update_model_and_state(now, rs);
        m.update_control(rs);
    }

    fn on_congestion(&mut self, _now: Instant, ev: &CongestionEvent) {
        match ev.kind {
            CongestionKind::FastRetransmit => self.m.on_enter_fast_recovery(),
            CongestionKind::Rto { .. } => self.m.on_enter_rto(),
            // CE marks count as congestion (section 3.7)
            CongestionKind::Ecn => self.m.note_loss(),
        }
    }

    fn on_state(&mut self, _now: Instant, state: CaState) {
        self.m.on_state(state);
    }

    fn on_undo(&mut self, _now: Instant, _undo: &UndoEvent) {
        self.m.handle_spurious_loss();
    }

    fn metric_names(&self) -> &'static [&'static str] {
        METRICS
    }

    fn metrics(&self, out: &mut [f64]) {
        let m = &self.m;
        let nan_if = |unset: bool, v: f64| if unset { f64::NAN } else { v };
        out[0] = nan_if(m.bw <= 0.0, m.bw * 8.0);
        out[1] = nan_if(m.max_bw.get() <= 0.0, m.max_bw.get() * 8.0);
        out[2] = m.min_rtt.map_or(f64::NAN, |d| d.as_secs_f64());
        out[3] = m.state.code() as f64;
        out[4] = m.pacing_gain;
        out[5] = m.cwnd_gain;
        out[6] = nan_if(m.inflight_longterm == u64::MAX, m.inflight_longterm as f64);
        out[7] = nan_if(
            m.inflight_shortterm == u64::MAX,
            m.inflight_shortterm as f64,
        );
        out[8] = nan_if(!m.bw_shortterm.is_finite(), m.bw_shortterm * 8.0);
        out[9] = m.round_count as f64;
        out[10] = m.full_bw_reached as u8 as f64;
        out[11] = m.cycle_count as f64;
    }
}
