//! ETCP, the cross-layer assisted TCP for vertical handoffs of Daniel and
//! Kojo, "The Performance of Multiple TCP Flows with Vertical Handoff"
//! (MobiWac 2009), section 3: TCP with SACK (the sender's RFC 6675 recovery
//! and the NewReno window of [`super::reno`]) that acts on the handoff
//! notifications of [`super::notification`] (the old and new access link's
//! rate and one-way delay, and N, the number of flows on the new link).
//!
//! **ETCPv1** (`cc = "etcpv1"`) is the paper's Figures 1-3 with N from the
//! notification; **ETCPv0** (`cc = "etcpv0"`), its single-flow predecessor
//! ([6, 9]), is the same with N = 1. At a handoff notice, as the sender
//! hands it over:
//!
//! * **Minimum RTO** (section 3.1): the RTO floor becomes
//!   [`EtcpParams::minrto_factor`] x (2 x the new access link's delay + one
//!   packet's transmission time on it), never below the connection's
//!   `min_rto` ([`SenderRequest::MinRto`]), and the running timer is re-armed
//!   at once so that the floor takes effect.
//! * **Window** (Figure 1, section 3.2), outside RTO recovery: if FlightSize
//!   exceeds 1.5 x BDP_new / N (the old link at least 8 times faster than the
//!   new one) or 2 x BDP_new / N (otherwise), cwnd = ssthresh =
//!   max(2, BDP_new / N) segments. BDP_new is the new access link's rate
//!   times twice its delay, in 1500-byte packets ([`bdp`]). Figure 3's form
//!   of the rule is [`ReductionRule::Figure3`].
//! * **RTO recovery** (Figure 2, section 3.3): in the Loss state, the first
//!   unacknowledged segment is retransmitted at once
//!   ([`SenderRequest::RetransmitFirstUnacked`]) instead of waiting for the
//!   backed-off timer, ssthresh = max(2, BDP_new / N), and if the delay
//!   changes significantly the RTT variables start afresh as for a new
//!   connection ([`SenderRequest::ResetRtt`]); the timer is re-armed from
//!   the retransmission.
//! * **Reordering** (Figure 3, section 3.4, after [7]), outside loss
//!   recovery and when the window was not reduced: if the new link is more
//!   than 3 times faster, dupthresh = max(BW_new / BW_old, 3)
//!   ([`SenderRequest::DupThresh`]), so the sender marks nothing lost and
//!   starts no recovery of its own below it. At the point where regular TCP
//!   would fast-retransmit (more than 2 segments SACKed, or 3 duplicate
//!   ACKs), ETCP retransmits the first unacknowledged segment, saves cwnd in
//!   cwnd_prev and halves the window as a fast retransmit does, but then
//!   sends a new segment for every segment that leaves the network (the pipe
//!   stays where it was at the fast retransmit) instead of repairing holes,
//!   until everything sent before the handoff is acknowledged (the episode
//!   ends, dupthresh back to the connection's) or the sender's own loss
//!   detection fires at the raised dupthresh: then normal fast recovery
//!   takes over (dupthresh restored, holes repaired, no undo). A DSACK that
//!   shows the retransmission unnecessary, while normal recovery has not
//!   taken over, sets cwnd = min(cwnd_prev, BDP_new / N) if cwnd is below it
//!   and ssthresh = max(cwnd_prev, BDP_new / N); the episode still ends only
//!   when everything sent before the handoff is acknowledged (section 3.4's
//!   prose; [`EtcpParams::dsack_ends_defence`] ends it at the DSACK, the
//!   flattened Figure 3's reading).
//! * **RTT** (sections 3.1, 3.5): the first RTT sample of a segment sent
//!   after the notice is compared with SRTT at the notice; if they differ by
//!   [`EtcpParams::delay_change`] (2) or more and the new one exceeds the
//!   minimum RTO, the RTT variables are initialised from it as from a first
//!   measurement (RFC 6298 (2.2)).
//!
//! Everything else is TCP with SACK: the window grows and shrinks as
//! NewReno's, and the sender repairs losses with RFC 6675. Without a
//! notification ETCP is exactly "regular TCP" (`cc = "newreno"` with SACK).
//! A notice without the rates or delays it needs is ignored. Where the paper
//! defers to [6, 7, 9] (the minimum RTO, the exact reordering algorithm,
//! "a significant change in delay"), the choices are
//! [`EtcpParams`]' and are explained in docs/algorithms/etcp.md; no code was
//! taken from any implementation.

mod params;
#[cfg(test)]
mod tests;

pub use params::{EtcpParams, ReductionRule};

use super::reno::{Reno, RenoParams, RenoVariant};
use super::{
    AckEvent, CaState, CongestionControl, CongestionEvent, CongestionKind, HandoffNotice,
    Notification, RecoveryExit, RecoveryStyle, SenderRequest, SentInfo, UndoEvent, WindowOptions,
    WindowStart,
};
use crate::time::{Duration, Instant, Rate};
use std::collections::VecDeque;

/// Bytes of IPv4 and TCP headers around a segment's payload: the paper's
/// packets are 1500 bytes "including the TCP/IP headers".
pub const HEADER_BYTES: u64 = 40;

/// Figure 1: the old link at least this many times faster than the new one
/// makes the reduction threshold 1.5 x BDP_new / N instead of 2 x.
const STEEP_DROP: u64 = 8;
/// Figure 3: a new link more than this many times faster may reorder.
const REORDER_RATIO: u64 = 3;
/// The duplicate threshold of regular TCP (RFC 5681, RFC 6675), which
/// Figure 3 resets to.
const DUPTHRESH: u32 = 3;

/// Which version of the paper's algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// The single-flow enhancements of [6, 9]: N = 1.
    V0,
    /// Section 3's algorithms, with N from the notification.
    V1,
}

/// Where Figure 3's reordering defence stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reordering {
    /// Not active.
    Off,
    /// A handoff to a much faster link: dupthresh raised, the duplicate ACKs
    /// of the reordering awaited.
    Armed,
    /// Fast retransmit done: a new segment for every segment that leaves the
    /// network, the pipe held at `pipe` bytes.
    Recovering {
        /// The pipe at the fast retransmit.
        pipe: u64,
    },
    /// Past dupthresh: normal fast recovery took over (Figure 3's
    /// return_fastrecovery = 1: no DSACK undo).
    Returned,
}

impl Reordering {
    fn code(self) -> f64 {
        match self {
            Reordering::Off => 0.0,
            Reordering::Armed => 1.0,
            Reordering::Recovering { .. } => 2.0,
            Reordering::Returned => 3.0,
        }
    }
}

/// The new access link's bandwidth-delay product as the paper counts it
/// (section 4.1: "the BDP of both access links is 10 packets" for 200 kbit/s
/// x 2 x 300 ms): its rate times twice its one-way delay, in packets of
/// `mss` + 40 bytes, returned as payload bytes (packets x `mss`).
pub fn bdp(rate: Rate, delay: Duration, mss: u32) -> u64 {
    let wire = rate.bytes_in(delay.saturating_mul(2)) as u128;
    (wire * mss as u128 / (mss as u64 + HEADER_BYTES) as u128) as u64
}

/// A first RTT sample awaited from data sent after a handoff (section 3.5).
#[derive(Clone, Copy, Debug)]
struct RttProbe {
    /// Segments starting at or above this stream offset were sent after the
    /// notice.
    after: u64,
    /// SRTT at the notice.
    old: Duration,
}

/// ETCPv0 or ETCPv1.
#[derive(Clone, Debug)]
pub struct Etcp {
    version: Version,
    p: EtcpParams,
    base: Reno,
    mss: u64,
    state: CaState,
    snd_una: u64,
    snd_nxt: u64,
    srtt: Option<Duration>,
    /// BDP_new / N of the last handoff, in bytes.
    share: Option<u64>,
    /// Stream offset below which everything was sent before the last handoff
    /// notice, until it is all acknowledged (Figure 3's cwnd_reduction lasts
    /// as long).
    before_handoff: Option<u64>,
    /// Figure 1 reduced the window at the last notice.
    cwnd_reduced: bool,
    reordering: Reordering,
    /// The duplicate threshold ETCP asked for (3 when it asked for none).
    dupthresh: u32,
    /// cwnd before the reordering fast retransmit, for the DSACK undo.
    cwnd_prev: Option<u64>,
    /// Duplicate ACKs since the cumulative ACK last advanced.
    dupacks: u32,
    /// Bytes SACKed above the cumulative ACK, from the last ACK (FlightSize
    /// minus the pipe, while nothing is marked lost).
    sacked: u64,
    probe: Option<RttProbe>,
    /// The RTO floor ETCP asked for at the last notice.
    min_rto: Option<Duration>,
    requests: VecDeque<SenderRequest>,
}

impl Etcp {
    /// ETCP of `version` with these parameters.
    pub fn new(version: Version, params: &EtcpParams, start: &WindowStart) -> Self {
        Etcp {
            version,
            p: params.clone(),
            base: Reno::new(RenoVariant::NewReno, &RenoParams::default(), start),
            mss: start.mss as u64,
            state: CaState::Open,
            snd_una: 0,
            snd_nxt: 0,
            srtt: None,
            share: None,
            before_handoff: None,
            cwnd_reduced: false,
            reordering: Reordering::Off,
            dupthresh: DUPTHRESH,
            cwnd_prev: None,
            dupacks: 0,
            sacked: 0,
            probe: None,
            min_rto: None,
            requests: VecDeque::new(),
        }
    }

    /// ETCPv0 or ETCPv1.
    pub fn version(&self) -> Version {
        self.version
    }
    /// Where the reordering defence stands.
    pub fn reordering(&self) -> Reordering {
        self.reordering
    }
    /// The duplicate threshold ETCP asked the sender for.
    pub fn dupthresh(&self) -> u32 {
        self.dupthresh
    }
    /// cwnd saved at the reordering fast retransmit, for the DSACK undo.
    pub fn cwnd_prev(&self) -> Option<u64> {
        self.cwnd_prev
    }
    /// BDP_new / N of the last handoff (bytes).
    pub fn share(&self) -> Option<u64> {
        self.share
    }
    /// The RTO floor asked for at the last handoff.
    pub fn min_rto(&self) -> Option<Duration> {
        self.min_rto
    }

    /// The window a handoff sets: max(2, BDP_new / N) segments.
    fn handoff_window(&self, share: u64) -> u64 {
        share.max(2 * self.mss)
    }

    fn on_handoff(&mut self, h: &HandoffNotice) {
        let (Some(old_rate), Some(old_delay), Some(new_rate), Some(new_delay)) =
            (h.old.rate, h.old.delay, h.new.rate, h.new.delay)
        else {
            return;
        };
        let n = match self.version {
            Version::V0 => 1,
            Version::V1 => h.flows.max(1) as u64,
        };
        let mss = self.mss as u32;
        let share = bdp(new_rate, new_delay, mss) / n;
        self.share = Some(share);
        // a new handoff ends what the last one started
        self.end_reordering();
        self.cwnd_prev = None;
        self.cwnd_reduced = false;

        // section 3.1: the minimum RTO from the new access link, at once
        let mut min_rto = None;
        if self.p.minrto_factor > 0.0 {
            let packet = new_rate.tx_time(self.mss + HEADER_BYTES);
            let access = new_delay.saturating_mul(2) + packet;
            let m = Duration::from_secs_f64(access.as_secs_f64() * self.p.minrto_factor);
            min_rto = Some(m);
            self.requests.push_back(SenderRequest::MinRto(m));
            self.requests.push_back(SenderRequest::RestartRtoTimer);
        }
        self.min_rto = min_rto;

        // Figure 2's "significant change in delay", judged at the notice:
        // SRTT with the old access link's round trip exchanged for the new
        // one's, against SRTT, by section 3.5's factor
        let changed = self.srtt.is_some_and(|old| {
            let rest = old.saturating_sub(old_delay.saturating_mul(2));
            self.differs(old, rest + new_delay.saturating_mul(2))
        });

        if self.state == CaState::Loss {
            // Figure 2
            self.base.set_ssthresh(self.handoff_window(share));
            if changed {
                self.requests.push_back(SenderRequest::ResetRtt);
            }
            self.requests
                .push_back(SenderRequest::RetransmitFirstUnacked);
            self.requests.push_back(SenderRequest::RestartRtoTimer);
            self.probe = None;
            return;
        }

        // section 3.5: the RTT variables from the first sample of new data
        self.probe = self.srtt.map(|old| RttProbe {
            after: self.snd_nxt,
            old,
        });
        self.before_handoff = Some(self.snd_nxt);

        // Figure 1 (or Figure 3's form of it)
        let flight = self.snd_nxt - self.snd_una;
        let (old_bw, new_bw) = (old_rate.as_bps(), new_rate.as_bps());
        let reduce = match self.p.reduction {
            ReductionRule::Figure1 => {
                let limit = if old_bw >= STEEP_DROP * new_bw {
                    share * 3 / 2
                } else {
                    2 * share
                };
                flight > limit
            }
            ReductionRule::Figure3 => {
                let old_bdp = bdp(old_rate, old_delay, mss) / n;
                flight > 2 * share && old_bdp > share && new_bw < STEEP_DROP * old_bw
            }
        };
        if reduce {
            let w = self.handoff_window(share);
            self.base.set_window(w, w);
            self.cwnd_reduced = true;
        }

        // Figure 3: a much faster new link reorders
        let in_recovery = matches!(self.state, CaState::Recovery | CaState::Loss);
        if self.p.reordering
            && !in_recovery
            && !self.cwnd_reduced
            && new_bw > REORDER_RATIO * old_bw
        {
            let ratio = (new_bw / old_bw.max(1)).min(u32::MAX as u64) as u32;
            self.dupthresh = ratio.max(DUPTHRESH);
            self.reordering = Reordering::Armed;
            self.requests
                .push_back(SenderRequest::DupThresh(Some(self.dupthresh)));
        }
    }

    /// True if two RTTs differ by the factor of section 3.5 or more.
    fn differs(&self, a: Duration, b: Duration) -> bool {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        hi.as_secs_f64() >= self.p.delay_change * lo.as_secs_f64()
    }

    /// Ends the reordering defence: the connection's dupthresh again.
    fn end_reordering(&mut self) {
        if self.reordering != Reordering::Off {
            self.reordering = Reordering::Off;
            if self.dupthresh != DUPTHRESH {
                self.requests.push_back(SenderRequest::DupThresh(None));
            }
            self.dupthresh = DUPTHRESH;
        }
    }

    /// The fast retransmit of Figure 3 while the defence is armed: the first
    /// unacknowledged segment, cwnd saved, the window halved as a fast
    /// retransmit halves it; the pipe then stays where it is.
    fn reordering_fast_retransmit(&mut self, now: Instant, ack: &AckEvent) {
        self.cwnd_prev = Some(self.base.cwnd());
        self.base.on_congestion(
            now,
            &CongestionEvent {
                kind: CongestionKind::FastRetransmit,
                flight_size: ack.snd_nxt - ack.snd_una,
                ssthresh_basis: ack.snd_nxt - ack.snd_una,
                in_flight: ack.in_flight,
                mss: ack.mss,
            },
        );
        self.reordering = Reordering::Recovering {
            pipe: ack.in_flight,
        };
        self.requests
            .push_back(SenderRequest::RetransmitFirstUnacked);
    }

    /// Section 3.5: the first sample of data sent after the notice.
    fn check_rtt(&mut self, ack: &AckEvent) {
        let (Some(p), Some(r)) = (self.probe, ack.rtt) else {
            return;
        };
        // the oldest segment this ACK newly covers starts at the old snd_una
        if ack.bytes_acked == 0 || ack.snd_una - ack.bytes_acked < p.after {
            return;
        }
        self.probe = None;
        if self.differs(p.old, r) && self.min_rto.is_none_or(|m| r > m) {
            self.requests.push_back(SenderRequest::ResetRtt);
            self.requests.push_back(SenderRequest::RttSample(r));
        }
    }
}

impl CongestionControl for Etcp {
    fn name(&self) -> &'static str {
        match self.version {
            Version::V0 => "etcpv0",
            Version::V1 => "etcpv1",
        }
    }
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn cwnd(&self) -> u64 {
        match self.reordering {
            // the pipe held at its level: what leaves the network is replaced
            // (the sender bounds FlightSize, which counts SACKed bytes, outside
            // its own recovery)
            Reordering::Recovering { pipe } => pipe.max(self.base.cwnd()) + self.sacked,
            _ => self.base.cwnd(),
        }
    }
    fn ssthresh(&self) -> u64 {
        self.base.ssthresh()
    }
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }
    fn set_mss(&mut self, mss: u32) {
        self.mss = mss as u64;
        self.base.set_mss(mss);
    }
    fn set_options(&mut self, options: &WindowOptions) {
        self.base.set_options(options);
    }
    fn on_undo(&mut self, now: Instant, undo: &UndoEvent) {
        self.base.on_undo(now, undo);
    }
    fn on_established(&mut self, _now: Instant, rtt: Option<Duration>) {
        self.srtt = rtt;
    }
    fn poll_request(&mut self) -> Option<SenderRequest> {
        self.requests.pop_front()
    }
    fn on_packet_sent(&mut self, _now: Instant, info: &SentInfo) {
        if !info.retransmission {
            self.snd_nxt = self.snd_nxt.max(info.offset + info.len as u64);
        }
    }
    fn on_ack(&mut self, now: Instant, ack: &AckEvent) {
        self.snd_una = ack.snd_una;
        self.snd_nxt = self.snd_nxt.max(ack.snd_nxt);
        self.srtt = ack.srtt;
        self.sacked = (ack.snd_nxt - ack.snd_una).saturating_sub(ack.in_flight);
        if ack.bytes_acked > 0 {
            self.dupacks = 0;
        } else if ack.dupack {
            self.dupacks += 1;
        }
        self.check_rtt(ack);
        if self.before_handoff.is_some_and(|m| ack.snd_una >= m) {
            // everything sent before the handoff is acknowledged
            self.before_handoff = None;
            self.cwnd_reduced = false;
            if matches!(
                self.reordering,
                Reordering::Armed | Reordering::Recovering { .. }
            ) {
                self.end_reordering();
            }
        }
        // where regular TCP would fast-retransmit: IsLost's byte rule with
        // DupThresh 3, or three duplicate ACKs
        let regular_fr =
            self.sacked > (DUPTHRESH as u64 - 1) * self.mss || self.dupacks >= DUPTHRESH;
        match self.reordering {
            Reordering::Armed
                if regular_fr && matches!(ack.state, CaState::Open | CaState::Disorder) =>
            {
                self.reordering_fast_retransmit(now, ack);
                return;
            }
            // no growth during a fast recovery
            Reordering::Recovering { .. } => return,
            _ => {}
        }
        self.base.on_ack(now, ack);
    }
    fn on_congestion(&mut self, now: Instant, ev: &CongestionEvent) {
        match (ev.kind, self.reordering) {
            (CongestionKind::FastRetransmit, Reordering::Recovering { .. }) => {
                // more duplicate ACKs than dupthresh: normal fast recovery
                // (the window was halved at the reordering fast retransmit)
                self.end_reordering();
                self.reordering = Reordering::Returned;
            }
            (CongestionKind::FastRetransmit, Reordering::Armed) => {
                self.cwnd_prev = Some(self.base.cwnd());
                self.end_reordering();
                self.reordering = Reordering::Returned;
                self.base.on_congestion(now, ev);
            }
            _ => {
                self.end_reordering();
                if matches!(ev.kind, CongestionKind::Rto { .. }) {
                    self.cwnd_prev = None;
                }
                self.base.on_congestion(now, ev);
            }
        }
    }
    fn on_recovery_exit(&mut self, now: Instant, exit: &RecoveryExit) {
        self.base.on_recovery_exit(now, exit);
    }
    fn on_state(&mut self, _now: Instant, state: CaState) {
        self.state = state;
    }
    fn on_spurious(&mut self, _now: Instant) {
        // Figure 3: DSACK shows the retransmission after the handoff
        // unnecessary, and normal fast recovery has not taken over
        let (Some(prev), Some(share)) = (self.cwnd_prev, self.share) else {
            return;
        };
        if self.reordering == Reordering::Returned {
            return;
        }
        let cwnd = self.base.cwnd();
        let target = prev.min(share);
        if cwnd < target {
            self.base.set_window(target, prev.max(share));
        }
        self.cwnd_prev = None;
        if self.p.dsack_ends_defence {
            self.end_reordering();
        }
        // else the defence lasts until everything sent before the handoff
        // is acknowledged (section 3.4; `on_ack`)
    }
    fn on_notification(&mut self, _now: Instant, n: &Notification) {
        if let Notification::Handoff(h) = n {
            self.on_handoff(h);
        }
    }
    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "slow_start",
            "reordering",
            "dupthresh",
            "cwnd_prev",
            "min_rto",
        ]
    }
    fn metrics(&self, out: &mut [f64]) {
        out[0] = self.base.in_slow_start() as u8 as f64;
        out[1] = self.reordering.code();
        out[2] = self.dupthresh as f64;
        out[3] = self.cwnd_prev.map_or(f64::NAN, |c| c as f64);
        out[4] = self.min_rto.map_or(f64::NAN, Duration::as_secs_f64);
    }
}
