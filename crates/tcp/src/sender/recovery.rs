//! ACK processing, loss detection and loss recovery.
//!
//! * Duplicate ACKs (RFC 5681 section 2) or, with SACK, RFC 6675's `IsLost`
//!   start a fast retransmit once the cumulative ACK has passed the previous
//!   recovery point (RFC 6582's `recover`, also set by a timeout): without
//!   SACK it must cover more than `recover` (RFC 6582 section 3.2 step 1),
//!   with SACK reach it (RFC 6675 section 5.1).
//! * Without SACK the repair follows the algorithm's [`RecoveryStyle`]:
//!   Tahoe goes back to `snd_una` in slow start, Reno leaves fast recovery on the
//!   first new ACK, NewReno retransmits the next hole on each partial ACK and
//!   leaves at the recovery point (RFC 6582). The dup-ACK window inflation of
//!   RFC 5681 is implemented as Linux does it: each duplicate ACK counts as one
//!   segment that left the network, reducing the pipe; a partial ACK removes
//!   the segments it covers minus one (RFC 6582's "deflate by the amount acked,
//!   add back one MSS").
//! * With SACK, RFC 6675: the scoreboard marks holes lost, `NextSeg` picks them,
//!   and recovery ends at the recovery point; what each ACK releases is
//!   PRR's (RFC 6937, [`super::prr`]) by default, or whatever keeps
//!   `pipe < cwnd` (RFC 6675 section 5, `tcp.recovery_reduction =
//!   "rfc6675"`).
//! * ssthresh at a loss event comes from `tcp.ssthresh_basis`
//!   ([`crate::config::SsthreshBasis`]); reductions found spurious are undone
//!   and timeouts checked by F-RTO ([`super::undo`]).
//! * A retransmission timeout marks everything un-SACKed lost and restarts
//!   from `snd_una` with the algorithm's loss window (RFC 5681 section 3.1,
//!   RFC 6298 section 5).

use super::scoreboard::Acked;
use super::undo::UndoState;
use super::{prr::Prr, Sender};
use crate::cc::{
    AckEvent, CaState, CongestionControl, CongestionEvent, CongestionKind, EcnFeedback,
    RecoveryExit, RecoveryStyle, UndoEvent,
};
use crate::config::{PartialAckTimer, RecoveryReduction, RtoSsthresh, SsthreshBasis};
use crate::time::{Duration, Instant};
use crate::wire::{Flags, SackBlock, Segment};

impl Sender {
    pub(super) fn on_ack(&mut self, now: Instant, seg: &Segment) {
        self.stats.acks_received += 1;
        // An allowance beyond the window lasts only for the transmissions that
        // immediately follow the event that granted it.
        self.forced_rtx = 0;
        self.frto_new_data = false;
        let base = self.iss + 1;
        let ack = seg.ack.to_offset(base, self.snd_una);
        if ack > self.snd_nxt {
            self.stats.invalid_acks += 1;
            return;
        }
        if ack < self.snd_una {
            return; // an old, reordered ACK
        }
        if self.ts_ok {
            if let Some(ts) = seg.options.timestamps {
                if ts.val.wrapping_sub(self.ts_recent) as i32 >= 0 {
                    self.ts_recent = ts.val;
                }
            }
        }
        let window = (seg.window as u64) << self.snd_wscale;
        let prior_una = self.snd_una;
        let prior_in_flight = self.sb.in_flight();
        let prior_outstanding = self.sb.outstanding();
        let state_before = self.ca_state;
        let had_outstanding = !self.sb.is_empty();

        let advanced = ack > prior_una;
        if self.sack_ok {
            self.sb.begin_ack(self.rtt.min_rtt());
        }
        let acked = if advanced {
            let a = self.sb.ack(ack, now, &mut self.rate);
            self.snd_una = ack;
            self.buf.release(ack);
            a
        } else {
            Acked::default()
        };
        let (newly_sacked, rack_lost) = if self.sack_ok {
            let sacked = self.process_sack_blocks(now, seg.options.sack.as_slice(), ack);
            // RFC 8985's reordering window is zero in recovery, or once
            // DupThresh segments are SACKed
            let quick = matches!(self.ca_state, CaState::Recovery | CaState::Loss)
                || self.sb.sacked_bytes() >= self.dupthresh as u64 * self.mss as u64;
            let lost = self.sb.detect_lost_retransmissions(now)
                + self.sb.detect_lost_originals(now, quick);
            (sacked, lost)
        } else {
            (0, 0)
        };
        let classic_dup = !advanced
            && had_outstanding
            && seg.len == 0
            && !seg.flags.contains(Flags::FIN)
            && window == self.snd_wnd;
        let dupack = classic_dup && (!self.sack_ok || newly_sacked > 0);
        self.snd_wnd = window;
        if dupack {
            self.stats.dupacks_received += 1;
            if !self.sack_ok {
                // a segment left the network: count it for the rate sampler
                let out = self.sb.outstanding();
                self.rate.on_emulated_delivery(self.mss as u64, out);
            }
        }

        // With RACK, as in Linux: when Karn's rule leaves the cumulative ACK
        // without a sample, the segments it newly SACKed give one.
        let rtt_sample = self
            .rtt_sample(now, seg, advanced, &acked)
            .or_else(|| self.sb.sack_rtt(now));
        let own_samples = !self.cc.takes_rtt_samples();
        if let Some(r) = rtt_sample.filter(|_| own_samples) {
            // one sample per ACK: RFC 7323 Appendix G counts them against
            // the flight they came from
            let flight = self.flight(prior_outstanding);
            self.rtt.on_ack_sample(r, flight);
            // Karn: the backed-off RTO stays until a valid sample arrives
            // (RFC 6298 section 5, after (5.7)).
            self.rtt.reset_backoff();
        }
        if advanced {
            self.rto_head = None;
        }

        let recoveries_before = self.stats.fast_retransmits;
        let ecr = seg.options.timestamps.filter(|_| self.ts_ok).map(|t| t.ecr);
        let news = AckNews {
            advanced,
            dupack,
            acked: &acked,
            newly_sacked,
            ecr,
        };
        let newly_lost = self.update_recovery(now, &news) + rack_lost;
        // RFC 3168 section 6.1.2: an ECN-Echo ACK never grows the window,
        // and reduces it once per window of data. With the per-packet echo
        // (RFC 8257 section 3.2) the algorithm sees every ACK's echo first,
        // and an echo stops growth only on the ACK that reduced.
        let ece = self.ecn_ok && seg.flags.contains(Flags::ECE);
        let per_packet = self.cc.ecn_style().per_packet_echo();
        if self.ecn_ok && per_packet && (ece || acked.delivered + newly_sacked > 0) {
            let fb = EcnFeedback {
                bytes_acked: acked.delivered + newly_sacked,
                ece,
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
            };
            self.cc.on_ecn_feedback(now, &fb);
        }
        let mut ecn_reduced = false;
        if ece {
            self.stats.ecn_echoes += 1;
            ecn_reduced = self.on_ecn_echo(now);
        }
        let ece_holds = if per_packet { ecn_reduced } else { ece };
        if self.ca_state == CaState::Recovery {
            let (pipe, ssthresh, mss) = (self.sb.in_flight(), self.cc.ssthresh(), self.mss as u64);
            if let Some(p) = self.prr.as_mut() {
                let safe = advanced && newly_lost == 0;
                p.on_ack(acked.delivered + newly_sacked, pipe, ssthresh, mss, safe);
            }
        }
        let tlp_repaired =
            self.tlp.is_some() && self.tlp_on_ack(now, ack, advanced, !seg.options.sack.is_empty());
        if advanced {
            self.limited_transmit_bytes = 0;
        }

        let ev = AckEvent {
            mss: self.mss,
            bytes_acked: acked.bytes,
            bytes_delivered: acked.delivered + newly_sacked,
            prior_in_flight,
            in_flight: self.sb.in_flight(),
            bytes_lost: newly_lost,
            rtt: rtt_sample,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            state: state_before,
            dupack,
            cwnd_limited: self.cwnd_limited,
            window_reduced: self.stats.fast_retransmits != recoveries_before
                || tlp_repaired
                || ece_holds,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        };
        self.cc.on_ack(now, &ev);
        if let Some(mut rs) = self
            .rate
            .finish(self.rtt.min_rtt(), newly_lost, prior_in_flight)
        {
            // As Linux (tcp_ack_update_rtt): when Karn's rule leaves the
            // sample without an RTT, an ACK of new data with a timestamp
            // echo gives it one. Without this, a repair after a handover
            // (every segment retransmitted) kept BBR's RTprop at the old
            // path's RTT.
            if rs.rtt.is_none() && advanced {
                rs.rtt = self.ts_rtt(now, seg);
            }
            self.cc.on_rate_sample(now, &rs);
        }
        self.apply_requests(now);

        if self.sb.is_empty() {
            self.rto_deadline = None;
        } else if advanced && self.restart_timer_on_ack() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if advanced && self.tlp.is_some() {
            self.arm_pto(now, true);
        }
        if acked.fin {
            self.state = super::SenderState::Closed;
            self.stats.completed_at = Some(now);
            self.rto_deadline = None;
        }
    }

    /// RFC 6298 (5.3) restarts the timer on every ACK of new data; NewReno
    /// without SACK does so only for the first partial ACK of a recovery in
    /// RFC 6582's "Impatient" variant (the default), so that many losses end in
    /// a timeout, and on every one in its "Slow-but-Steady" variant.
    fn restart_timer_on_ack(&self) -> bool {
        self.cfg.partial_ack_timer == PartialAckTimer::SlowButSteady
            || !(self.ca_state == CaState::Recovery && !self.sack_ok && self.partial_acks > 1)
    }

    fn rtt_sample(
        &self,
        now: Instant,
        seg: &Segment,
        advanced: bool,
        acked: &Acked,
    ) -> Option<Duration> {
        if !advanced {
            return None;
        }
        if let Some(r) = self.ts_rtt(now, seg) {
            return Some(r);
        }
        // Karn's rule: no sample when the ACK covers retransmitted data.
        if acked.retransmitted {
            return None;
        }
        acked.oldest_clean_send.map(|t| now - t)
    }

    /// The RTT that the ACK's timestamp echo measures (RFC 7323 section
    /// 4.1), if timestamps are on; only for an ACK that advances `snd_una`
    /// (the caller's test: RFC 7323 section 4.1's RTTM rule).
    fn ts_rtt(&self, now: Instant, seg: &Segment) -> Option<Duration> {
        let ts = seg.options.timestamps.filter(|_| self.ts_ok)?;
        let ms = super::ts_clock(now).wrapping_sub(ts.ecr);
        // An echo from the future (or zero, "no echo") is no sample.
        (ts.ecr != 0 && ms < 1 << 31).then(|| Duration::from_millis(ms as u64))
    }

    fn process_sack_blocks(&mut self, now: Instant, blocks: &[SackBlock], ack: u64) -> u64 {
        let base = self.iss + 1;
        let mut newly = 0;
        for (i, b) in blocks.iter().enumerate() {
            let s = b.left.to_offset(base, self.snd_una);
            let e = b.right.to_offset(base, self.snd_una);
            if s >= e || e > self.snd_nxt {
                continue; // invalid block: ignore it
            }
            // RFC 2883 section 4: a first block below the cumulative ACK, or
            // inside the second block, reports a duplicate.
            let inside_second = blocks.get(1).is_some_and(|b2| {
                let s2 = b2.left.to_offset(base, self.snd_una);
                let e2 = b2.right.to_offset(base, self.snd_una);
                s2 <= s && e <= e2
            });
            if i == 0 && (e <= ack || inside_second) {
                self.stats.dsacks_received += 1;
                if self.tlp.is_some() {
                    self.tlp_on_dsack(s, e);
                }
                if self.sb.was_retransmitted(s, e) {
                    self.stats.spurious_retransmissions += 1;
                    self.cc.on_spurious(now);
                }
                if let Some(u) = self.undo.as_mut() {
                    u.on_dsack(e, (e - s).div_ceil(self.mss as u64));
                }
                continue;
            }
            let s = s.max(self.snd_una);
            if s < e {
                newly += self.sb.sack(s, e, now, &mut self.rate);
            }
        }
        newly
    }

    pub(super) fn set_state(&mut self, now: Instant, s: CaState) {
        if self.ca_state != s {
            self.ca_state = s;
            self.cc.on_state(now, s);
        }
    }

    /// Advances the recovery state machine for one ACK; returns bytes newly
    /// marked lost.
    fn update_recovery(&mut self, now: Instant, news: &AckNews) -> u64 {
        let (advanced, dupack, acked_bytes) = (news.advanced, news.dupack, news.acked.bytes);
        let mss = self.mss as u64;
        let dupthresh = self.dupthresh;
        let sack_threshold = (dupthresh as u64 - 1) * mss;
        let mut newly_lost = 0;
        if advanced {
            self.dupacks = 0;
        }
        if dupack {
            self.dupacks += 1;
        }
        match self.ca_state {
            CaState::Recovery => {
                let reno_exit =
                    advanced && !self.sack_ok && self.cc.recovery_style() == RecoveryStyle::Reno;
                if self.snd_una >= self.recover || reno_exit {
                    // tcp_try_undo_recovery: a reduction found spurious by
                    // timestamps (or DSACK) is undone instead of completed
                    if self.cfg.undo && self.may_undo(news.ecr) {
                        self.undo_reduction(now, false);
                        self.leave_recovery(now);
                    } else {
                        self.exit_recovery(now);
                    }
                } else if advanced {
                    self.partial_acks += 1;
                    if !self.sack_ok {
                        // RFC 6582 partial ACK: retransmit the first unacknowledged
                        // segment at once; deflate by the amount acked, and add back
                        // one MSS if at least one MSS was acked.
                        let add_back = if acked_bytes >= mss { mss } else { 0 };
                        self.sb.dup_emul =
                            (self.sb.dup_emul + add_back).saturating_sub(acked_bytes);
                        newly_lost += self.sb.mark_head_lost();
                        self.forced_rtx = 1;
                    }
                }
                if self.ca_state == CaState::Recovery && self.dsack_undo(now) {
                    // tcp_try_undo_dsack, then tcp_try_to_open; a loss still
                    // marked starts a new recovery at once
                    self.leave_recovery(now);
                    if self.sb.lost_bytes() > 0 {
                        newly_lost += self.enter_recovery(now);
                    }
                }
                if self.ca_state == CaState::Recovery {
                    if self.sack_ok {
                        newly_lost += self.sb.mark_lost_by_sack(sack_threshold, dupthresh);
                    } else if dupack {
                        self.sb.dup_emul += mss;
                        self.sb.cap_dup_emul();
                    }
                }
            }
            CaState::Loss => {
                if !self.process_loss(now, news) && self.sack_ok {
                    newly_lost += self.sb.mark_lost_by_sack(sack_threshold, dupthresh);
                }
            }
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                self.dsack_undo(now);
            }
        }
        if matches!(
            self.ca_state,
            CaState::Open | CaState::Disorder | CaState::Cwr
        ) {
            if self.sack_ok {
                newly_lost += self.sb.mark_lost_by_sack(sack_threshold, dupthresh);
            }
            // a head the algorithm had retransmitted, still in flight, is
            // no loss found by SACK
            let requested =
                self.requested_head == Some(self.snd_una) && self.sb.head_retransmitted();
            let loss =
                self.dupacks >= dupthresh || (self.sack_ok && self.sb.head_lost() && !requested);
            if loss && self.past_recovery_guard() && !self.sb.is_empty() {
                newly_lost += self.enter_recovery(now);
            } else {
                // an ECN-Echo's reduction lasts until the window of data sent
                // before it is acknowledged
                let s = if self.ca_state == CaState::Cwr && !self.reduction_acked() {
                    CaState::Cwr
                } else if self.dupacks > 0 || self.sb.sacked_bytes() > 0 {
                    CaState::Disorder
                } else {
                    CaState::Open
                };
                self.set_state(now, s);
            }
        }
        newly_lost
    }

    /// An ACK in the Loss state (Linux's `tcp_process_loss`): the undo of a
    /// timeout found spurious by timestamps or F-RTO, F-RTO's steps, and the
    /// end of the repair at the recovery point. Returns true if the ACK
    /// needs no loss marking (the state was left, or F-RTO sends new data).
    fn process_loss(&mut self, now: Instant, news: &AckNews) -> bool {
        let recovered = self.snd_una >= self.recover;
        if news.advanced && self.cfg.undo && self.may_undo(news.ecr) {
            self.undo_loss(now);
            return true;
        }
        if self.frto {
            // RFC 5682 section 3.1 step 3b: data sent before the timeout and
            // never retransmitted arrived, so the timeout was spurious
            let original = news.acked.clean_end.or(self.sb.clean_sacked_end);
            if original.is_some_and(|end| end <= self.recover) && self.undo.is_some() {
                self.stats.spurious_rtos += 1;
                self.undo_loss(now);
                return true;
            }
            if self.snd_nxt > self.recover {
                // step 3a: a duplicate ACK, or a SACK of the new data only
                if news.newly_sacked > 0 || news.dupack {
                    self.frto = false;
                }
            } else if news.advanced && !recovered {
                // step 2b: send new data (if any can go) before retransmitting more
                self.recover = self.snd_nxt;
                let more =
                    self.buf.end() > self.data_sent() || (self.buf.closed() && !self.fin_sent);
                if more && self.snd_nxt < self.snd_una + self.snd_wnd {
                    self.frto_new_data = true;
                    return true;
                }
                self.frto = false;
            }
        }
        if recovered {
            if self.cfg.undo && self.may_undo(news.ecr) {
                self.undo_reduction(now, false);
            }
            self.frto = false;
            self.set_state(now, CaState::Open);
            return true;
        }
        false
    }

    /// Linux's `tcp_may_undo`: a reduction is saved, and either DSACK
    /// reported every retransmission since as a duplicate, or this ACK
    /// shows an original transmission arrived (`tcp_packet_delayed`).
    fn may_undo(&self, ecr: Option<u32>) -> bool {
        let Some(u) = self.undo else {
            return false;
        };
        if u.all_retransmissions_duplicated() {
            return true;
        }
        match self.retrans_stamp {
            // an echoed timestamp older than the first retransmission
            Some(stamp) => ecr.is_some_and(|e| e != 0 && (e.wrapping_sub(stamp) as i32) < 0),
            // nothing retransmitted yet: the holes filled themselves
            None => self.sack_ok || self.snd_una < self.recover,
        }
    }

    /// `tcp_try_undo_dsack`: undoes the last reduction if DSACK showed every
    /// retransmission since unneeded (`tcp.undo`). Returns true if it did.
    fn dsack_undo(&mut self, now: Instant) -> bool {
        let all = self
            .undo
            .is_some_and(|u| u.all_retransmissions_duplicated());
        if self.cfg.undo && all {
            self.undo_reduction(now, false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_loss`: the timeout's reduction is undone, its loss
    /// marks forgotten, and the connection is open again.
    fn undo_loss(&mut self, now: Instant) {
        self.undo_reduction(now, true);
        self.frto = false;
        self.rtt.reset_backoff();
        self.set_state(now, CaState::Open);
    }

    /// The algorithm takes back the window from before the last reduction.
    fn undo_reduction(&mut self, now: Instant, unmark_loss: bool) {
        let Some(u) = self.undo.take() else {
            return;
        };
        self.stats.undos += 1;
        self.cc.on_undo(now, &u.prior);
        if unmark_loss {
            self.sb.unmark_lost();
        }
        self.rto_head = None;
        if self.sack_ok {
            // the loss event is taken back: a loss found next starts a
            // recovery at once (Linux's tcp_time_to_recover has no recovery
            // point to wait for with SACK; RFC 6675 section 5.1's guard is
            // against counting the same loss twice)
            self.fr_guard = None;
        }
    }

    /// Ends a fast recovery without its window reduction (after an undo):
    /// `tcp_try_to_open`.
    fn leave_recovery(&mut self, now: Instant) {
        self.dupacks = 0;
        self.partial_acks = 0;
        self.sb.dup_emul = 0;
        self.prr = None;
        let s = if self.sb.sacked_bytes() > 0 || self.sb.lost_bytes() > 0 {
            CaState::Disorder
        } else {
            CaState::Open
        };
        self.set_state(now, s);
    }

    /// The window and ssthresh a reduction replaces (Linux's `prior_cwnd`
    /// and `tcp_current_ssthresh`).
    fn prior_window(&self) -> UndoEvent {
        let (cwnd, ssthresh) = (self.cc.cwnd(), self.cc.ssthresh());
        let prior_ssthresh = if self.ca_state == CaState::Recovery {
            ssthresh
        } else {
            ssthresh.max(cwnd / 2 + cwnd / 4)
        };
        UndoEvent {
            prior_cwnd: cwnd,
            prior_ssthresh,
            mss: self.mss,
        }
    }

    /// Saves a reduction for a later undo (`tcp_init_undo`).
    fn init_undo(&mut self, prior: UndoEvent) {
        if !(self.cfg.undo || self.cfg.frto) {
            return;
        }
        let in_flight = self.sb.retrans_in_flight();
        self.undo = Some(UndoState {
            marker: self.snd_una,
            retrans: (in_flight > 0).then(|| in_flight.div_ceil(self.mss as u64)),
            prior,
        });
    }

    /// What a loss event's ssthresh halves (`tcp.ssthresh_basis`), for a
    /// FlightSize of `flight_size`.
    pub(super) fn ssthresh_basis(&self, flight_size: u64) -> u64 {
        match self.cfg.ssthresh_basis {
            SsthreshBasis::Pipe => flight_size.saturating_sub(self.sb.sacked_bytes()),
            SsthreshBasis::FlightSize => flight_size,
            SsthreshBasis::Cwnd => self.cc.cwnd(),
        }
    }

    /// True if the cumulative ACK point lets a new loss recovery start after
    /// the last one (fast retransmit or timeout), whose highest offset sent
    /// (exclusive) is `fr_guard`:
    ///
    /// * without SACK, RFC 6582 section 3.2 step 1: only when the ACK "covers
    ///   more than recover", i.e. `ack - 1 > recover` with `recover` the
    ///   highest sequence number sent, so `snd_una > fr_guard` (ns-2's
    ///   `highest_ack_ > recover_`; Linux holds a non-SACK connection in its
    ///   recovery state while `snd_una == high_seq`, "to prevent false fast
    ///   retransmits", `tcp_is_non_sack_preventing_reopen`). Duplicate ACKs *at* the recovery point
    ///   are what go-back-N retransmissions of segments the receiver already
    ///   holds produce (Tahoe after every fast retransmit, every variant
    ///   after a timeout); counting them locked Tahoe into ssthresh = 2
    ///   segments on the DCNET L2 path;
    /// * with SACK, RFC 6675 section 5.1: once HighACK (`snd_una - 1`) is at
    ///   least RecoveryPoint (HighData, `fr_guard - 1`), i.e. `snd_una >=
    ///   fr_guard`; DSACK tells duplicates apart, and a duplicate ACK that
    ///   SACKs nothing new is not counted.
    ///
    /// Before the first loss event nothing is guarded (RFC 6582 initialises
    /// `recover` to the ISS, which read literally would keep a loss of the
    /// very first segment from being fast-retransmitted).
    fn past_recovery_guard(&self) -> bool {
        match self.fr_guard {
            None => true,
            Some(g) if self.sack_ok => self.snd_una >= g,
            Some(g) => self.snd_una > g,
        }
    }

    /// Fast retransmit: the algorithm reduces its window, the head is marked lost
    /// and retransmitted at once.
    fn enter_recovery(&mut self, now: Instant) -> u64 {
        let mss = self.mss as u64;
        self.stats.fast_retransmits += 1;
        // RFC 5681 section 3.2 (2): data sent by limited transmit does not
        // count in the FlightSize that sets ssthresh.
        let flight_size = (self.snd_nxt - self.snd_una).saturating_sub(self.limited_transmit_bytes);
        let prior = self.prior_window();
        if self.sb.retrans_in_flight() == 0 {
            // the fast retransmit starts the undo clock (tcp_retrans_stamp_cleanup)
            self.retrans_stamp = None;
        }
        let ev = CongestionEvent {
            kind: CongestionKind::FastRetransmit,
            flight_size,
            ssthresh_basis: self.ssthresh_basis(flight_size),
            in_flight: self.sb.in_flight(),
            mss: self.mss,
        };
        // a loss in the window an ECN-Echo already reduced is repaired
        // without a second reduction (RFC 3168 section 6.1.2: once "in
        // response to a series of dropped and/or CE packets from a single
        // window of data")
        if self.ca_state != CaState::Cwr {
            self.cc.on_congestion(now, &ev);
            self.init_undo(prior);
            self.note_reduction();
        }
        self.reset_tlp();
        self.recover = self.snd_nxt;
        let style = self.cc.recovery_style();
        // Classic Reno has no recovery point: three more dupacks start another
        // fast retransmit (and another window reduction).
        if self.sack_ok || style != RecoveryStyle::Reno {
            self.fr_guard = Some(self.snd_nxt);
        }
        self.forced_rtx = 1;
        self.partial_acks = 0;
        if style == RecoveryStyle::GoBackN {
            let n = self.sb.mark_all_lost();
            self.rate.forget_emulated();
            self.set_state(now, CaState::Loss);
            return n;
        }
        let n = self.sb.mark_head_lost();
        if !self.sack_ok {
            self.sb.dup_emul = self.dupacks as u64 * mss;
            self.sb.cap_dup_emul();
        }
        let prr = self.sack_ok
            && self.cfg.recovery_reduction == RecoveryReduction::Prr
            && self.cc.proportional_reduction();
        self.prr = prr.then(|| Prr::new(prior.prior_cwnd));
        self.set_state(now, CaState::Recovery);
        n
    }

    pub(super) fn exit_recovery(&mut self, now: Instant) {
        self.dupacks = 0;
        self.partial_acks = 0;
        self.sb.dup_emul = 0;
        self.prr = None;
        let exit = RecoveryExit {
            flight_size: self.snd_nxt - self.snd_una,
            mss: self.mss,
            sack: self.sack_ok,
        };
        self.cc.on_recovery_exit(now, &exit);
        self.set_state(now, CaState::Open);
    }

    /// Whether a timeout now holds ssthresh, and the FlightSize it reports
    /// ([`RtoSsthresh`]): RFC 5681 section 3.1 holds it when the segment at
    /// `snd_una` already timed out; Linux when a reduction was made in this
    /// window already; ns-3.44 never, and reports the pipe.
    fn rto_ssthresh_rule(&self) -> (bool, u64) {
        let flight_size = self.snd_nxt - self.snd_una;
        match self.cfg.rto_ssthresh {
            RtoSsthresh::Rfc5681 => (self.rto_head == Some(self.snd_una), flight_size),
            RtoSsthresh::Linux => {
                let reducing = !matches!(self.ca_state, CaState::Open | CaState::Disorder)
                    && self.snd_una < self.recover;
                // in Loss, a timeout's retransmission since the last advance
                let timed_out = self.ca_state == CaState::Loss && self.rto_head.is_some();
                let hold = reducing && (self.ca_state != CaState::Loss || timed_out);
                (hold, flight_size)
            }
            RtoSsthresh::Ns3 => (false, self.sb.in_flight()),
        }
    }

    /// Retransmission timeout: the algorithm takes its loss window; every
    /// un-SACKed segment is presumed lost; repair restarts from `snd_una`.
    pub(super) fn enter_loss(&mut self, now: Instant) {
        let (hold, flight_size) = self.rto_ssthresh_rule();
        let state_before = self.ca_state;
        let repeated = self.rto_head == Some(self.snd_una);
        self.rto_head = Some(self.snd_una);
        let prior = self.prior_window();
        // ns-3's rule reports the pipe, and halves it whatever the basis
        let basis = match self.cfg.rto_ssthresh {
            RtoSsthresh::Ns3 => flight_size,
            _ => self.ssthresh_basis(flight_size),
        };
        let ev = CongestionEvent {
            kind: CongestionKind::Rto { repeated: hold },
            flight_size,
            ssthresh_basis: basis,
            in_flight: self.sb.in_flight(),
            mss: self.mss,
        };
        let fresh = matches!(
            state_before,
            CaState::Open | CaState::Disorder | CaState::Cwr
        );
        if fresh && self.sb.retrans_in_flight() == 0 {
            self.retrans_stamp = None;
        }
        self.cc.on_congestion(now, &ev);
        if !hold {
            self.init_undo(prior);
        }
        self.note_reduction();
        self.prr = None;
        // F-RTO (RFC 5682 section 3.1 step 1, as `tcp_enter_loss`): after a
        // timeout outside a recovery, or a repeated one of the same segment
        self.frto = self.cfg.frto && (fresh || repeated);
        self.reset_tlp();
        self.sb.mark_all_lost();
        self.rate.forget_emulated();
        self.recover = self.snd_nxt;
        self.fr_guard = Some(self.snd_nxt);
        self.dupacks = 0;
        self.partial_acks = 0;
        self.forced_rtx = 1;
        self.set_state(now, CaState::Loss);
    }
}

/// What one ACK brought, for the recovery state machine.
struct AckNews<'a> {
    advanced: bool,
    dupack: bool,
    acked: &'a Acked,
    newly_sacked: u64,
    /// The timestamp it echoes (TSecr), when timestamps are on.
    ecr: Option<u32>,
}
