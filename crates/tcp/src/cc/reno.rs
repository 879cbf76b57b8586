//! Tahoe, Reno and NewReno (RFC 5681, RFC 6582): slow start and additive
//! increase with byte counting (RFC 3465), multiplicative decrease to
//! max(FlightSize / 2, 2 MSS). The three differ in how the sender repairs a loss
//! found by duplicate ACKs, which they declare through
//! [`CongestionControl::recovery_style`]:
//!
//! * Tahoe: fast retransmit, then cwnd = 1 MSS and slow start from `snd_una`
//!   (go-back-N), as after a timeout;
//! * Reno: fast recovery with cwnd = ssthresh, ended by the first new ACK;
//! * NewReno: fast recovery until the recovery point; on exit
//!   cwnd = min(ssthresh, max(FlightSize, MSS) + MSS) (RFC 6582 option 1).
//!
//! The dup-ACK window inflation of RFC 5681 is done by the sender, which counts
//! each duplicate ACK as a segment that left the network (the same arithmetic),
//! so the window reported here is the algorithm's, without inflation.

use super::{
    half_flight, loss_ssthresh, AckEvent, CaState, CongestionControl, CongestionEvent,
    CongestionKind, RecoveryExit, RecoveryStyle, UndoEvent, WindowOptions, WindowStart,
};
use crate::time::Instant;
use serde::{Deserialize, Serialize};

/// Which member of the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenoVariant {
    /// TCP Tahoe.
    Tahoe,
    /// TCP Reno.
    Reno,
    /// TCP NewReno.
    NewReno,
}

/// Parameters of the Reno family (none beyond the connection's window settings).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenoParams {}

impl RenoParams {
    /// Nothing to check: the Reno family has no parameters.
    pub fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// The Reno-family window.
#[derive(Clone, Debug)]
pub struct Reno {
    variant: RenoVariant,
    mss: u64,
    initial_segments: u64,
    abc_limit: u64,
    cwnd: u64,
    ssthresh: u64,
    /// Bytes acknowledged since the last additive increase (RFC 3465).
    ca_acked: u64,
    options: WindowOptions,
    /// A Multipath TCP connection's coupled window rule
    /// ([`crate::mptcp::coupled`]); `None` for an uncoupled connection.
    coupled: Option<Coupled>,
}

/// A coupled subflow's window rule, set by its Multipath TCP connection
/// after every event ([`crate::mptcp::coupled`]): how many bytes must be
/// acknowledged in congestion avoidance for the window to change by one
/// MSS, whether it shrinks rather than grows (OLIA's negative term), and
/// BALIA's decrease.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coupled {
    /// Bytes acknowledged per MSS of change.
    pub per_mss: u64,
    /// The window shrinks by the MSS (not below two) instead of growing.
    pub shrink: bool,
    /// After a loss found by duplicate ACKs or ECN, ssthresh is this
    /// fraction of FlightSize (BALIA); `None`: Reno's half.
    pub beta: Option<f64>,
}

impl Reno {
    /// A window starting at `start.initial_cwnd` segments.
    pub fn new(variant: RenoVariant, _params: &RenoParams, start: &WindowStart) -> Self {
        let mss = start.mss as u64;
        Reno {
            variant,
            mss,
            initial_segments: start.initial_cwnd as u64,
            abc_limit: start.abc_limit as u64,
            cwnd: start.initial_cwnd as u64 * mss,
            ssthresh: start.initial_ssthresh.unwrap_or(u64::MAX),
            ca_acked: 0,
            options: WindowOptions::default(),
            coupled: None,
        }
    }

    /// Which member of the family this is.
    pub fn variant(&self) -> RenoVariant {
        self.variant
    }

    /// True while cwnd is below ssthresh.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Sets both windows (bytes): what a cross-layer algorithm built on this
    /// window does: ETCP ([`super::etcp`]) at a handoff, WSC-TCP
    /// ([`super::wsc`]) for its best-start window.
    pub(crate) fn set_window(&mut self, cwnd: u64, ssthresh: u64) {
        self.cwnd = cwnd;
        self.ssthresh = ssthresh;
        self.ca_acked = 0;
    }

    /// Couples this window to the other subflows of a Multipath TCP
    /// connection (`None` uncouples it): congestion avoidance then changes
    /// the window by one MSS per `per_mss` acknowledged bytes, and BALIA's
    /// `beta` sets the decrease. Slow start, recovery and timeouts stay
    /// Reno's.
    pub(crate) fn set_coupled(&mut self, rule: Option<Coupled>) {
        self.coupled = rule;
    }

    /// Sets ssthresh (bytes).
    pub(crate) fn set_ssthresh(&mut self, ssthresh: u64) {
        self.ssthresh = ssthresh;
    }
}

/// Reno's growth of `cwnd` on an ACK that may grow it
/// ([`AckEvent::may_grow_window`]): in slow start RFC 5681 equation 2 with
/// RFC 3465's limit L (`abc_limit`; `options.abc_limit_after_rto` in the
/// slow start that follows a timeout, 1 by RFC 3465 section 2.3); in
/// congestion avoidance RFC 3465 byte counting, one MSS per cwnd bytes
/// acknowledged (`ca_acked` counts them), or with `options.ca_per_ack`
/// MSS * MSS / cwnd per ACK (RFC 5681 equation 3, ns-3's
/// `TcpNewReno::CongestionAvoidance`, at least one byte). Westwood+ grows its
/// window the same way. `ca_window` is the window whose worth of
/// acknowledged bytes adds one MSS in congestion avoidance: `cwnd` for a
/// single-path connection, a coupled Multipath TCP subflow's `per_mss`
/// ([`Reno::set_coupled`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow(
    cwnd: &mut u64,
    ca_window: u64,
    ca_acked: &mut u64,
    slow_start: bool,
    mss: u64,
    abc_limit: u64,
    options: &WindowOptions,
    ack: &AckEvent,
) {
    if slow_start {
        let limit = if ack.state == CaState::Loss {
            options.abc_limit_after_rto as u64
        } else {
            abc_limit
        };
        *cwnd += ack.bytes_acked.min(limit * mss);
    } else if options.ca_per_ack {
        *cwnd += (mss * mss / ca_window.max(1)).max(1);
    } else {
        let per_mss = ca_window.max(1);
        *ca_acked += ack.bytes_acked;
        if *ca_acked >= per_mss {
            *ca_acked -= per_mss;
            *cwnd += mss;
        }
    }
}

/// Linux's undo of a window reduction (`tcp_undo_cwnd_reduction` with
/// `tcp_reno_undo_cwnd`, net/ipv4/tcp_input.c and tcp_cong.c, 6.18): the
/// larger of each value and its value before the reduction.
pub(crate) fn undo_window(cwnd: &mut u64, ssthresh: &mut u64, undo: &UndoEvent) {
    *cwnd = (*cwnd).max(undo.prior_cwnd);
    *ssthresh = (*ssthresh).max(undo.prior_ssthresh);
}

impl CongestionControl for Reno {
    fn uses_rate_samples(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        match self.variant {
            RenoVariant::Tahoe => "tahoe",
            RenoVariant::Reno => "reno",
            RenoVariant::NewReno => "newreno",
        }
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn recovery_style(&self) -> RecoveryStyle {
        match self.variant {
            RenoVariant::Tahoe => RecoveryStyle::GoBackN,
            RenoVariant::Reno => RecoveryStyle::Reno,
            RenoVariant::NewReno => RecoveryStyle::NewReno,
        }
    }

    fn set_mss(&mut self, mss: u32) {
        self.mss = mss as u64;
        self.cwnd = self.initial_segments * self.mss;
    }

    fn set_options(&mut self, options: &WindowOptions) {
        self.options = *options;
    }

    fn on_undo(&mut self, _now: Instant, undo: &UndoEvent) {
        undo_window(&mut self.cwnd, &mut self.ssthresh, undo);
        self.ca_acked = 0;
    }

    fn on_ack(&mut self, _now: Instant, ack: &AckEvent) {
        if ack.may_grow_window() {
            let slow_start = self.in_slow_start();
            let rule = self.coupled.filter(|_| !slow_start);
            if let Some(Coupled {
                per_mss,
                shrink: true,
                ..
            }) = rule
            {
                // OLIA's negative term: one MSS less per `per_mss` bytes
                self.ca_acked += ack.bytes_acked;
                if self.ca_acked >= per_mss {
                    self.ca_acked -= per_mss;
                    self.cwnd = self.cwnd.saturating_sub(self.mss).max(2 * self.mss);
                }
                return;
            }
            let ca_window = rule.map_or(self.cwnd, |r| r.per_mss);
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
            CongestionKind::FastRetransmit | CongestionKind::Ecn => {
                self.ssthresh = match self.coupled.and_then(|c| c.beta) {
                    // BALIA's decrease (Peng et al. 2016, section VI)
                    Some(beta) => ((ev.ssthresh_basis.min(self.cwnd) as f64 * beta) as u64)
                        .max(2 * ev.mss as u64),
                    None => loss_ssthresh(ev, self.cwnd),
                };
                self.cwnd = match self.variant {
                    RenoVariant::Tahoe => self.mss,
                    _ => self.ssthresh,
                };
            }
            CongestionKind::Rto { repeated } => {
                if !repeated {
                    self.ssthresh = half_flight(ev.ssthresh_basis, ev.mss);
                }
                // RFC 5681: the loss window is one segment.
                self.cwnd = self.mss;
            }
        }
    }

    fn on_recovery_exit(&mut self, _now: Instant, exit: &RecoveryExit) {
        let mss = exit.mss as u64;
        self.cwnd = match self.variant {
            // RFC 6582 option 1 guards against a burst when little is outstanding;
            // RFC 6675 recovery ends with cwnd = ssthresh.
            RenoVariant::NewReno if !exit.sack => {
                self.ssthresh.min(exit.flight_size.max(mss) + mss)
            }
            _ => self.ssthresh,
        };
    }

    fn metric_names(&self) -> &'static [&'static str] {
        &["slow_start", "ca_acked"]
    }
    fn metrics(&self, out: &mut [f64]) {
        out[0] = self.in_slow_start() as u8 as f64;
        out[1] = self.ca_acked as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::acked;

    fn start() -> WindowStart {
        WindowStart {
            mss: 1000,
            initial_cwnd: 1,
            initial_ssthresh: None,
            abc_limit: 2,
        }
    }

    fn ack(bytes: u64) -> AckEvent {
        acked(1000, bytes).build()
    }

    #[test]
    fn slow_start_doubles_per_round_and_respects_abc_limit() {
        let mut r = Reno::new(RenoVariant::NewReno, &RenoParams::default(), &start());
        r.on_ack(Instant::ZERO, &ack(1000));
        assert_eq!(r.cwnd(), 2000);
        r.on_ack(Instant::ZERO, &ack(5000)); // stretch ACK: at most L = 2 MSS
        assert_eq!(r.cwnd(), 4000);
    }

    #[test]
    fn congestion_avoidance_adds_one_mss_per_window() {
        let mut r = Reno::new(RenoVariant::Reno, &RenoParams::default(), &start());
        r.ssthresh = 4000;
        r.cwnd = 4000;
        for _ in 0..3 {
            r.on_ack(Instant::ZERO, &ack(1000));
        }
        assert_eq!(r.cwnd(), 4000);
        r.on_ack(Instant::ZERO, &ack(1000));
        assert_eq!(r.cwnd(), 5000);
    }

    #[test]
    fn no_growth_when_application_limited_or_in_recovery() {
        let mut r = Reno::new(RenoVariant::NewReno, &RenoParams::default(), &start());
        let mut a = ack(1000);
        a.cwnd_limited = false;
        r.on_ack(Instant::ZERO, &a);
        a.cwnd_limited = true;
        a.state = CaState::Recovery;
        r.on_ack(Instant::ZERO, &a);
        assert_eq!(r.cwnd(), 1000);
    }

    #[test]
    fn responses_to_loss() {
        let ev = |kind| CongestionEvent {
            kind,
            flight_size: 20_000,
            ssthresh_basis: 20_000,
            in_flight: 20_000,
            mss: 1000,
        };
        let mut reno = Reno::new(RenoVariant::Reno, &RenoParams::default(), &start());
        reno.cwnd = 20_000;
        reno.on_congestion(Instant::ZERO, &ev(CongestionKind::FastRetransmit));
        assert_eq!((reno.cwnd(), reno.ssthresh()), (10_000, 10_000));

        let mut tahoe = Reno::new(RenoVariant::Tahoe, &RenoParams::default(), &start());
        tahoe.cwnd = 20_000;
        tahoe.on_congestion(Instant::ZERO, &ev(CongestionKind::FastRetransmit));
        assert_eq!((tahoe.cwnd(), tahoe.ssthresh()), (1000, 10_000));

        let mut nr = Reno::new(RenoVariant::NewReno, &RenoParams::default(), &start());
        nr.on_congestion(Instant::ZERO, &ev(CongestionKind::Rto { repeated: false }));
        assert_eq!((nr.cwnd(), nr.ssthresh()), (1000, 10_000));
        // The same segment times out again with a smaller flight: ssthresh held.
        let mut again = ev(CongestionKind::Rto { repeated: true });
        again.flight_size = 2000;
        again.ssthresh_basis = 2000;
        nr.on_congestion(Instant::ZERO, &again);
        assert_eq!((nr.cwnd(), nr.ssthresh()), (1000, 10_000));
        // NewReno's exit: min(ssthresh, max(FlightSize, MSS) + MSS)
        let exit = |sack| RecoveryExit {
            flight_size: 3000,
            mss: 1000,
            sack,
        };
        nr.on_recovery_exit(Instant::ZERO, &exit(false));
        assert_eq!(nr.cwnd(), 4000);
        nr.on_recovery_exit(Instant::ZERO, &exit(true));
        assert_eq!(nr.cwnd(), 10_000);
    }

    /// A fast retransmit always reduces the window, whatever the basis says
    /// (SACKed data counted in FlightSize made a new recovery raise cwnd
    /// ninefold): the basis counts at most the window.
    #[test]
    fn a_loss_never_raises_the_window() {
        let mut r = Reno::new(RenoVariant::NewReno, &RenoParams::default(), &start());
        r.cwnd = 144_000;
        let ev = CongestionEvent {
            kind: CongestionKind::FastRetransmit,
            flight_size: 2_600_000,
            ssthresh_basis: 2_600_000,
            in_flight: 100_000,
            mss: 1000,
        };
        r.on_congestion(Instant::ZERO, &ev);
        assert_eq!((r.cwnd(), r.ssthresh()), (72_000, 72_000));
        // and the undo restores what came before, never lowering anything
        r.on_undo(
            Instant::ZERO,
            &UndoEvent {
                prior_cwnd: 200_000,
                prior_ssthresh: u64::MAX,
                mss: 1000,
            },
        );
        assert_eq!((r.cwnd(), r.ssthresh()), (200_000, u64::MAX));
    }

    /// ns-3's `TcpNewReno`: MSS * MSS / cwnd per ACK, however much it
    /// acknowledges; and the slow start after a timeout with L from the
    /// options.
    #[test]
    fn per_ack_growth_and_the_limit_after_a_timeout_follow_the_options() {
        let mut r = Reno::new(RenoVariant::NewReno, &RenoParams::default(), &start());
        r.set_options(&WindowOptions {
            ca_per_ack: true,
            abc_limit_after_rto: 3,
            ..WindowOptions::default()
        });
        r.ssthresh = 4000;
        r.cwnd = 4000;
        r.on_ack(Instant::ZERO, &ack(2000));
        assert_eq!(r.cwnd(), 4250, "1000 * 1000 / 4000 per ACK");
        r.on_ack(Instant::ZERO, &ack(1000));
        assert_eq!(r.cwnd(), 4250 + 235);
        r.ssthresh = u64::MAX;
        let mut a = ack(5000);
        a.state = CaState::Loss;
        r.on_ack(Instant::ZERO, &a);
        assert_eq!(r.cwnd(), 4485 + 3000, "L = 3 after a timeout");
    }
}
