//! The sans-IO TCP sender: the active opener of a connection that carries data
//! in one direction.
//!
//! The driver feeds it segments ([`Sender::handle_segment`]) and timeouts
//! ([`Sender::handle_timeout`]), then drains [`Sender::poll_transmit`] until it
//! returns `None` and sleeps until [`Sender::poll_timeout`]. The sender never
//! reads a clock: every entry point takes `now`.
//!
//! Reliability is the sender's: the retransmission queue and SACK scoreboard
//! ([`scoreboard`]), RTT and RTO (RFC 6298), loss detection and repair
//! ([`recovery`]). The congestion-control algorithm decides how much and when.
//!
//! A RST and a SYN from the peer follow RFC 5961 ([`crate::challenge`]): in
//! SYN-SENT a RST counts only if it acknowledges the SYN; once established,
//! only a RST at exactly RCV.NXT resets the connection, one elsewhere in the
//! receive window and every SYN (a retransmitted SYN-ACK too) get a
//! challenge ACK.

mod ecn;
mod prr;
mod rack;
mod recovery;
pub(crate) mod scoreboard;
mod stream;
mod timer_wheel;
mod tlp;
mod undo;

pub use stream::SendBuffer;
pub use tlp::TLP_MAX_ACK_DELAY;

use crate::cc::{
    CaState, Cc, CongestionControl, Notification, PathInfo, SendGate, SenderRequest, SentInfo,
    WindowOptions,
};
use crate::challenge::{rst_verdict, ChallengeAcks, RstVerdict};
use crate::config::{LostRetransmissions, RtoRearm, TcpConfig};
use crate::rate::RateSampler;
use crate::rtt::{Flight, RttEstimator};
use crate::seq::SeqNum;
use crate::time::{Duration, Instant, Rate};
use crate::wire::{Ecn, Flags, Options, Segment, Timestamps};
use crate::{Transmit, TxKind};
use scoreboard::{Scoreboard, SentSeg, FIN};

/// Connection state of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    /// SYN sent (or about to be), waiting for the SYN-ACK.
    SynSent,
    /// Transferring data.
    Established,
    /// Everything, including the FIN, was acknowledged; or the peer reset.
    Closed,
}

/// Counters of one sender.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Segments retransmitted.
    pub retransmissions: u64,
    /// New payload bytes sent (each byte once).
    pub bytes_sent: u64,
    /// Payload bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Fast retransmits (entries into loss recovery by duplicate ACKs or SACK).
    pub fast_retransmits: u64,
    /// Retransmission-timer expiries with data outstanding.
    pub rto_expiries: u64,
    /// SYN retransmissions.
    pub syn_retransmissions: u64,
    /// ACK segments received.
    pub acks_received: u64,
    /// Duplicate ACKs received.
    pub dupacks_received: u64,
    /// DSACK blocks received.
    pub dsacks_received: u64,
    /// Retransmissions that DSACK showed to be unnecessary.
    pub spurious_retransmissions: u64,
    /// ACKs ignored because they acknowledged data never sent.
    pub invalid_acks: u64,
    /// Challenge ACKs sent (RFC 5961: a RST in the window but not at RCV.NXT,
    /// or a SYN once established).
    pub challenge_acks: u64,
    /// RST segments that reset nothing (outside the window, challenged, or
    /// not acknowledging the SYN).
    pub resets_ignored: u64,
    /// Tail loss probes sent (RFC 8985 section 7; `tcp.tlp`).
    pub loss_probes: u64,
    /// Losses a tail loss probe repaired alone (the window was reduced as
    /// for a fast recovery, RFC 8985 section 7.4.2).
    pub tlp_recoveries: u64,
    /// Window reductions undone as spurious (`tcp.undo`, `tcp.frto`).
    pub undos: u64,
    /// Timeouts F-RTO found spurious (RFC 5682 section 3, step 3b).
    pub spurious_rtos: u64,
    /// ACKs received with ECN-Echo set, on a connection that negotiated ECN.
    pub ecn_echoes: u64,
    /// Window reductions made for ECN-Echo (at most one per window of data,
    /// RFC 3168 section 6.1.2).
    pub ecn_reductions: u64,
    /// When the connection became established.
    pub established_at: Option<Instant>,
    /// When the last byte (and the FIN) was acknowledged.
    pub completed_at: Option<Instant>,
}

/// A snapshot of the sender's state, for tracing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderSnapshot {
    /// Connection state.
    pub state: SenderState,
    /// Recovery state.
    pub ca_state: CaState,
    /// Congestion window (bytes).
    pub cwnd: u64,
    /// Slow-start threshold (bytes; `u64::MAX` when unset).
    pub ssthresh: u64,
    /// Pipe: bytes believed in flight.
    pub in_flight: u64,
    /// Bytes sent and not cumulatively acknowledged.
    pub outstanding: u64,
    /// Bytes SACKed above `snd_una`.
    pub sacked: u64,
    /// Bytes marked lost and not yet repaired.
    pub lost: u64,
    /// Cumulatively acknowledged payload bytes.
    pub bytes_acked: u64,
    /// Highest stream offset sent.
    pub snd_nxt: u64,
    /// Smoothed RTT.
    pub srtt: Option<Duration>,
    /// RTT variation.
    pub rttvar: Duration,
    /// Latest RTT sample.
    pub latest_rtt: Option<Duration>,
    /// Minimum RTT.
    pub min_rtt: Option<Duration>,
    /// Current retransmission timeout (with backoff).
    pub rto: Duration,
    /// The peer's receive window (bytes).
    pub snd_wnd: u64,
    /// Pacing rate, if the algorithm paces.
    pub pacing_rate: Option<Rate>,
}

/// The sending endpoint of a connection. Cloning copies its state at this
/// instant (see [`Cc`]'s `Clone`: check [`Sender::can_clone`] first).
#[derive(Clone, Debug)]
pub struct Sender {
    cfg: TcpConfig,
    cc: Cc,
    state: SenderState,
    iss: SeqNum,
    irs: SeqNum,
    mss: u32,
    sack_ok: bool,
    ts_ok: bool,
    /// The peer's window-scale shift.
    snd_wscale: u8,
    /// Our window-scale shift (0 unless both SYNs carried the option).
    rcv_wscale: u8,
    /// Timestamp to echo (TS.Recent).
    ts_recent: u32,

    buf: SendBuffer,
    snd_una: u64,
    snd_nxt: u64,
    fin_sent: bool,
    snd_wnd: u64,

    sb: Scoreboard,
    rtt: RttEstimator,
    rate: RateSampler,

    ca_state: CaState,
    /// Recovery point: recovery ends when `snd_una` reaches it.
    recover: u64,
    /// The highest offset sent (exclusive) at the last loss event (fast
    /// retransmit or timeout), RFC 6582's `recover` plus one; `None` before
    /// the first. See [`Sender::past_recovery_guard`].
    fr_guard: Option<u64>,
    dupacks: u32,
    /// The duplicate-ACK threshold in use (the configured one unless the
    /// algorithm asked for another, [`SenderRequest::DupThresh`]).
    dupthresh: u32,
    /// Retransmissions allowed regardless of the window (one per loss event).
    forced_rtx: u32,
    /// `snd_una` when the algorithm last had the first unacknowledged
    /// segment retransmitted ([`SenderRequest::RetransmitFirstUnacked`]):
    /// while that retransmission is in flight, the head is repaired, not a
    /// loss that starts a recovery.
    requested_head: Option<u64>,
    partial_acks: u32,
    /// Bytes sent under limited transmit since the last advancing ACK (RFC 5681
    /// excludes them from the FlightSize that sets ssthresh).
    limited_transmit_bytes: u64,
    /// `snd_una` at the last timeout, to detect a repeated timeout (RFC 5681 3.1).
    rto_head: Option<u64>,
    cwnd_limited: bool,
    /// Proportional Rate Reduction's state during a SACK fast recovery.
    prr: Option<prr::Prr>,
    /// What the last reduction saved, for `tcp.undo` and F-RTO.
    undo: Option<undo::UndoState>,
    /// Timestamp clock (ms) of the first retransmission since the last
    /// reduction (Linux's `retrans_stamp`), for the timestamp undo.
    retrans_stamp: Option<u32>,
    /// F-RTO is watching the current timeout (RFC 5682, `tp->frto`).
    frto: bool,
    /// F-RTO step 2b: the transmissions after this ACK are new data.
    frto_new_data: bool,
    /// Both SYNs agreed on ECN (RFC 3168 section 6.1.1).
    ecn_ok: bool,
    /// The window was reduced: the next new data segment carries CWR (RFC
    /// 3168 section 6.1.2).
    cwr_pending: bool,
    /// `snd_nxt` at the last window reduction (ECN-Echo, fast retransmit or
    /// timeout): an ECN-Echo counts only once `snd_una` is past it, so the
    /// window is reduced once per window of data (RFC 3168 section 6.1.2).
    reduced_until: Option<u64>,

    rto_deadline: Option<Instant>,
    /// With `tcp.timer_hz`: the RTO deadline last seen and when the timer
    /// wheel fires it ([`timer_wheel`]).
    rto_fires: Option<(Instant, Instant)>,
    /// The same for the probe timeout.
    pto_fires: Option<(Instant, Instant)>,
    /// The timer wheel's jiffies counter at time 0, as a duration.
    timer_phase: Duration,
    /// Tail loss probe state, when `tcp.tlp` is on (boxed: most connections
    /// run without it).
    tlp: Option<Box<tlp::TlpState>>,
    syn_pending: bool,
    syn_sent_at: Option<Instant>,
    syn_retransmitted: bool,
    ack_pending: bool,
    pacer_next: Instant,
    pacer_blocked: bool,
    /// Segments the pacing burst begun at `burst_at` may still send at that
    /// instant (`tcp.tso`; always 0 with single-segment pacing).
    burst_left: u64,
    burst_at: Instant,
    round_sent: u32,
    challenges: ChallengeAcks,
    stats: SenderStats,
}

impl Sender {
    /// A sender that will open the connection with initial sequence number `iss`
    /// on its first [`Sender::poll_transmit`]. `cfg` must be valid
    /// ([`TcpConfig::validate`]); `cc` is usually built by
    /// [`crate::CcConfig::build`].
    pub fn new(cfg: TcpConfig, mut cc: Cc, iss: SeqNum) -> Self {
        debug_assert!(cfg.validate().is_ok());
        cc.set_options(&WindowOptions::from(&cfg));
        let rtt = RttEstimator::with_flavour(cfg.rto, cfg.initial_rto, cfg.min_rto, cfg.max_rto);
        let rate = if cc.uses_rate_samples() {
            RateSampler::new()
        } else {
            RateSampler::off()
        };
        Sender {
            mss: cfg.mss,
            cc,
            state: SenderState::SynSent,
            iss,
            irs: SeqNum(0),
            sack_ok: false,
            ts_ok: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            ts_recent: 0,
            buf: SendBuffer::default(),
            snd_una: 0,
            snd_nxt: 0,
            fin_sent: false,
            snd_wnd: 65_535,
            sb: Scoreboard::new(cfg.lost_retransmissions == LostRetransmissions::Rack),
            rtt,
            rate,
            ca_state: CaState::Open,
            recover: 0,
            fr_guard: None,
            dupacks: 0,
            dupthresh: cfg.dupthresh,
            forced_rtx: 0,
            requested_head: None,
            partial_acks: 0,
            limited_transmit_bytes: 0,
            rto_head: None,
            cwnd_limited: true,
            prr: None,
            undo: None,
            retrans_stamp: None,
            frto: false,
            frto_new_data: false,
            ecn_ok: false,
            cwr_pending: false,
            reduced_until: None,
            rto_deadline: None,
            rto_fires: None,
            pto_fires: None,
            timer_phase: Duration::ZERO,
            tlp: cfg.tlp.then(Box::default),
            syn_pending: true,
            syn_sent_at: None,
            syn_retransmitted: false,
            ack_pending: false,
            pacer_next: Instant::ZERO,
            pacer_blocked: false,
            burst_left: 0,
            burst_at: Instant::ZERO,
            round_sent: 0,
            challenges: ChallengeAcks::default(),
            stats: SenderStats::default(),
            cfg,
        }
    }

    // ----- application side -------------------------------------------------

    /// Queues real bytes for transmission; returns how many were accepted (all).
    pub fn write(&mut self, data: &[u8]) -> usize {
        self.buf.write(data)
    }

    /// Makes `len` more bytes of a virtual stream available (no payload is
    /// stored; [`Sender::payload`] fills a deterministic pattern).
    pub fn write_virtual(&mut self, len: u64) {
        self.buf.write_virtual(len);
    }

    /// Makes the virtual stream unlimited (a bulk transfer).
    pub fn write_unlimited(&mut self) {
        self.buf.write_virtual(u64::MAX);
    }

    /// No more data will be written: a FIN follows the last byte.
    pub fn close(&mut self) {
        self.buf.close();
    }

    /// Ends the stream at what has been sent so far (the application stops
    /// writing now) and sends the FIN.
    pub fn finish_now(&mut self) {
        self.buf.truncate(self.data_sent());
        self.buf.close();
    }

    /// Copies the payload of the segment starting at stream offset `offset` into
    /// `out` (real bytes, or the virtual stream's pattern `offset % 251`).
    pub fn payload(&self, offset: u64, out: &mut [u8]) {
        self.buf.read_at(offset, out);
    }

    // ----- driver side -------------------------------------------------------

    /// The earliest instant the sender wants [`Sender::handle_timeout`] called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut t = self.rto_due();
        if let Some(pto) = self.pto_due() {
            t = Some(t.map_or(pto, |d| d.min(pto)));
        }
        // the pacer matters only while data can be sent (a connection that
        // closed with its pacer blocked must not wake at the stale deadline)
        if self.pacer_blocked && self.state == SenderState::Established {
            t = Some(t.map_or(self.pacer_next, |d| d.min(self.pacer_next)));
        }
        if self.state == SenderState::Established {
            if let Some(c) = self.cc.timer() {
                t = Some(t.map_or(c, |d| d.min(c)));
            }
        }
        t
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        // the probe timeout first: it never fires after the RTO's expiry,
        // and it re-arms the RTO (RFC 8985 section 7.3)
        if self.pto_due().is_some_and(|d| d <= now) {
            self.on_pto(now);
        }
        if self.rto_due().is_some_and(|d| d <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        if self.cc.timer().is_some_and(|t| t <= now) {
            self.cc.on_timer(now);
        }
        self.apply_requests(now);
        self.note_timers(now);
    }

    /// When the retransmission timer fires: its deadline, or with
    /// `tcp.timer_hz` the timer wheel's bucket for it.
    fn rto_due(&self) -> Option<Instant> {
        wheel_due(self.rto_deadline, self.rto_fires)
    }

    /// When the probe timer fires, as [`Sender::rto_due`].
    fn pto_due(&self) -> Option<Instant> {
        wheel_due(self.tlp.as_ref().and_then(|t| t.pto), self.pto_fires)
    }

    /// With `tcp.timer_hz`, places each timer whose deadline changed since
    /// the last call in the timer wheel, as armed at `now`; called at the
    /// end of every entry point that takes the time.
    #[inline(always)]
    fn note_timers(&mut self, now: Instant) {
        let (hz, phase) = (self.cfg.timer_hz, self.timer_phase);
        if hz == 0 {
            return;
        }
        let fire = |d: Instant| timer_wheel::fire_at(hz, now + phase, d + phase) - phase;
        let place = |d: Option<Instant>, seen: Option<(Instant, Instant)>| match d {
            Some(d) if seen.map(|s| s.0) != Some(d) => Some((d, fire(d))),
            Some(_) => seen,
            None => None,
        };
        self.rto_fires = place(self.rto_deadline, self.rto_fires);
        self.pto_fires = place(self.tlp.as_ref().and_then(|t| t.pto), self.pto_fires);
    }

    /// Carries out what the algorithm asked of the sender.
    #[inline(always)]
    fn apply_requests(&mut self, now: Instant) {
        while let Some(r) = self.cc.poll_request() {
            match r {
                SenderRequest::RttSample(d) => {
                    let flight = self.flight(self.sb.outstanding());
                    self.rtt.on_sample(d, flight);
                    self.rtt.reset_backoff();
                }
                SenderRequest::MarkAppLimited => self.rate.on_app_limited(self.sb.in_flight()),
                other => self.cross_layer_request(now, other),
            }
        }
    }

    /// Carries out a cross-layer algorithm's request (rare: kept out of the
    /// per-ACK path).
    #[cold]
    #[inline(never)]
    fn cross_layer_request(&mut self, now: Instant, r: SenderRequest) {
        match r {
            SenderRequest::DupThresh(n) => {
                self.dupthresh = n.unwrap_or(self.cfg.dupthresh).max(1);
            }
            SenderRequest::DupThreshAbove(extra) => {
                self.dupthresh = self.cfg.dupthresh.saturating_add(extra).max(1);
            }
            SenderRequest::ResetRtt => self.rtt.reset(),
            SenderRequest::MinRto(d) => self.rtt.set_min_rto(d.max(self.cfg.min_rto)),
            SenderRequest::RestartRtoTimer => {
                if self.rto_deadline.is_some() {
                    self.rto_deadline = Some(now + self.rtt.rto());
                }
            }
            SenderRequest::RetransmitFirstUnacked => {
                if self.state == SenderState::Established && self.sb.retransmit_head() {
                    self.forced_rtx = self.forced_rtx.max(1);
                    self.requested_head = Some(self.snd_una);
                }
            }
            SenderRequest::RttSample(_) | SenderRequest::MarkAppLimited => {
                unreachable!("handled on the fast path")
            }
        }
    }

    /// The next segment to put on the wire, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let t = self.next_transmit(now);
        self.note_timers(now);
        t
    }

    fn next_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if self.syn_pending {
            self.syn_pending = false;
            return Some(self.make_syn(now));
        }
        if self.state != SenderState::Established {
            return None;
        }
        if let Some(t) = self.next_data(now) {
            self.ack_pending = false;
            self.round_sent += 1;
            return Some(t);
        }
        if self.ack_pending {
            self.ack_pending = false;
            return Some(self.make_pure_ack(now));
        }
        if self.round_sent > 0 {
            let n = self.round_sent;
            self.round_sent = 0;
            self.cc.on_send_round(now, n);
        }
        None
    }

    /// A path change reported by the driver (handover); passed to the
    /// algorithm, whose requests are then carried out.
    pub fn handle_path_change(&mut self, now: Instant, path: &PathInfo) {
        self.cc.on_path_change(now, path);
        self.apply_requests(now);
        self.note_timers(now);
    }

    /// A cross-layer notification ([`Notification`]); passed to the
    /// algorithm, whose requests are then carried out (a retransmission it
    /// asks for comes out of the next [`Sender::poll_transmit`]). A link
    /// report's `offset` is set from its `seq` first.
    pub fn handle_notification(&mut self, now: Instant, n: &Notification) {
        let mut n = *n;
        if let Notification::LinkReport(r) | Notification::LinkDrop(r) = &mut n {
            r.offset = self.offset_of(r.seq);
        }
        self.cc.on_notification(now, &n);
        self.apply_requests(now);
        self.note_timers(now);
    }

    /// The sending host's record of past sessions on this connection's
    /// path, offered to the algorithm before the connection opens
    /// ([`crate::CongestionControl::on_path_history`]); its requests are
    /// then carried out.
    pub fn set_path_history(&mut self, now: Instant, past: &[crate::cc::SessionRecord]) {
        self.cc.on_path_history(now, past);
        self.apply_requests(now);
        self.note_timers(now);
    }

    /// What this session adds to the host's record of past sessions on its
    /// path ([`crate::CongestionControl::session_record`]), if its algorithm
    /// keeps one.
    pub fn session_record(&self) -> Option<crate::cc::SessionRecord> {
        self.cc.session_record()
    }

    /// Where the host's timer wheel stands at time 0 (with `tcp.timer_hz`):
    /// its jiffies counter, as the time since the counter was 0. A real
    /// host's is arbitrary, and it decides whether a backed-off timer
    /// fires just before or just after an instant such as the end of an
    /// outage; a simulation draws it per flow from the scenario's seed.
    pub fn set_timer_phase(&mut self, phase: Duration) {
        self.timer_phase = phase;
    }

    /// The initial sequence number (its SYN's).
    pub fn initial_seq(&self) -> SeqNum {
        self.iss
    }

    /// The stream offset of wire sequence number `seq` (the one nearest to
    /// the cumulative ACK point).
    pub fn offset_of(&self, seq: SeqNum) -> u64 {
        seq.to_offset(self.iss + 1, self.snd_una)
    }

    /// The duplicate-ACK threshold in use.
    pub fn dupthresh(&self) -> u32 {
        self.dupthresh
    }

    // ----- inspection --------------------------------------------------------

    /// Connection state.
    pub fn state(&self) -> SenderState {
        self.state
    }
    /// Recovery state.
    pub fn ca_state(&self) -> CaState {
        self.ca_state
    }
    /// Counters.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// The congestion-control algorithm.
    pub fn cc(&self) -> &Cc {
        &self.cc
    }
    /// True if the sender can be cloned: its algorithm is a built-in one or
    /// a user one that gives a [`crate::cc::CongestionControl::clone_box`].
    pub fn can_clone(&self) -> bool {
        self.cc.can_clone()
    }
    /// The congestion-control algorithm, to set up a state in unit tests
    /// and for a Multipath TCP connection to couple its subflows' windows
    /// ([`crate::mptcp::coupled`]).
    pub(crate) fn cc_mut(&mut self) -> &mut Cc {
        &mut self.cc
    }
    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// Negotiated MSS.
    pub fn mss(&self) -> u32 {
        self.mss
    }
    /// True if SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    /// True if ECN was negotiated (RFC 3168 section 6.1.1).
    pub fn ecn_enabled(&self) -> bool {
        self.ecn_ok
    }
    /// Pipe: bytes believed in flight.
    pub fn in_flight(&self) -> u64 {
        self.sb.in_flight()
    }
    /// Payload bytes cumulatively acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.min(self.buf.end())
    }
    /// Payload bytes handed to the network at least once.
    pub fn data_sent(&self) -> u64 {
        self.snd_nxt - self.fin_sent as u64
    }
    /// Payload bytes written and not yet sent once (what waits in the send
    /// buffer; `u64::MAX`-ish for an unlimited stream).
    pub fn queued(&self) -> u64 {
        self.buf.end().saturating_sub(self.data_sent())
    }
    /// The RTT estimator.
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The peer's receive window in bytes.
    pub fn send_window(&self) -> u64 {
        self.snd_wnd
    }
    /// The state at this moment, for tracing.
    pub fn snapshot(&self) -> SenderSnapshot {
        SenderSnapshot {
            state: self.state,
            ca_state: self.ca_state,
            cwnd: self.cc.cwnd(),
            ssthresh: self.cc.ssthresh(),
            in_flight: self.sb.in_flight(),
            outstanding: self.sb.outstanding(),
            sacked: self.sb.sacked_bytes(),
            lost: self.sb.lost_bytes(),
            bytes_acked: self.bytes_acked(),
            snd_nxt: self.snd_nxt,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            latest_rtt: self.rtt.latest(),
            min_rtt: self.rtt.min_rtt(),
            rto: self.rtt.rto(),
            snd_wnd: self.snd_wnd,
            pacing_rate: self.cc.pacing_rate(),
        }
    }

    /// The flight an RTT sample belongs to, with `flight_size` bytes
    /// outstanding (for RFC 7323 Appendix G and Linux's RTO rounds).
    fn flight(&self, flight_size: u64) -> Flight {
        Flight {
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            flight_size,
            mss: self.mss,
        }
    }

    // ----- segment construction ---------------------------------------------

    fn ts_option(&self, now: Instant) -> Option<Timestamps> {
        self.ts_ok.then(|| Timestamps {
            val: ts_clock(now),
            ecr: self.ts_recent,
        })
    }

    fn own_window_field(&self) -> u16 {
        (self.cfg.rcv_window.0 >> self.rcv_wscale).min(65_535) as u16
    }

    fn make_syn(&mut self, now: Instant) -> Transmit {
        self.syn_sent_at = Some(now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        // an ECN-setup SYN has ECE and CWR set (RFC 3168 section 6.1.1)
        let flags = if self.wants_ecn() {
            Flags::SYN.with(Flags::ECE).with(Flags::CWR)
        } else {
            Flags::SYN
        };
        let seg = Segment {
            seq: self.iss,
            ack: SeqNum(0),
            flags,
            window: self.cfg.rcv_window.0.min(65_535) as u16,
            len: 0,
            options: Options {
                mss: Some(self.cfg.mss.min(65_535) as u16),
                window_scale: Some(self.cfg.window_shift()),
                sack_permitted: self.cfg.sack,
                timestamps: self.cfg.timestamps.then(|| Timestamps {
                    val: ts_clock(now),
                    ecr: 0,
                }),
                ..Options::default()
            },
        };
        Transmit {
            segment: seg,
            kind: TxKind::Syn,
            offset: 0,
            ecn: Ecn::NotEct,
        }
    }

    fn make_pure_ack(&self, now: Instant) -> Transmit {
        Transmit {
            segment: Segment {
                seq: SeqNum::from_offset(self.iss + 1, self.snd_nxt),
                ack: self.irs + 1,
                flags: Flags::ACK,
                window: self.own_window_field(),
                len: 0,
                options: Options {
                    timestamps: self.ts_option(now),
                    ..Options::default()
                },
            },
            kind: TxKind::Ack,
            offset: self.snd_nxt,
            ecn: Ecn::NotEct,
        }
    }

    fn data_segment(&mut self, now: Instant, seg: &SentSeg, kind: TxKind) -> Transmit {
        let mut flags = Flags::ACK;
        if seg.has(FIN) {
            flags = flags.with(Flags::FIN);
        }
        // RFC 3168 section 6.1.2: new data carries ECT(0) (ECT(1) for an
        // L4S algorithm), and the first new data segment after a reduction
        // CWR; section 6.1.5: a retransmission carries neither
        let mut ecn = Ecn::NotEct;
        if self.ecn_ok && kind == TxKind::Data {
            ecn = self.data_ecn();
            if self.cwr_pending {
                self.cwr_pending = false;
                flags = flags.with(Flags::CWR);
            }
        }
        Transmit {
            segment: Segment {
                seq: SeqNum::from_offset(self.iss + 1, seg.start),
                ack: self.irs + 1,
                flags,
                window: self.own_window_field(),
                len: seg.payload_len(),
                options: Options {
                    timestamps: self.ts_option(now),
                    ..Options::default()
                },
            },
            kind,
            offset: seg.start,
            ecn,
        }
    }

    // ----- transmission ------------------------------------------------------

    fn pacing_active(&self) -> bool {
        self.cc.pacing_rate().is_some()
    }

    /// True while the pacing burst begun at this instant may send more
    /// (`tcp.tso = "linux"`): Linux sends a TSO packet of several segments
    /// at once and only then waits for the pacing timer.
    fn in_burst(&self, now: Instant) -> bool {
        self.burst_left > 0 && now == self.burst_at
    }

    /// Picks the next data segment: a retransmission (RFC 6675 NextSeg rule 1)
    /// before new data (rule 2), within the window, the gate and the pacer.
    fn next_data(&mut self, now: Instant) -> Option<Transmit> {
        self.pacer_blocked = false;
        // (the clock test first: it is one comparison, and false whenever
        // the algorithm does not pace)
        if now < self.pacer_next && self.pacing_active() && !self.in_burst(now) {
            self.pacer_blocked = true;
            return None;
        }
        if self.tlp.as_ref().is_some_and(|t| t.due) {
            if let Some(t) = self.send_probe(now) {
                return Some(t);
            }
        }
        let gate = self.cc.send_gate(now);
        if gate == SendGate::Closed || gate == (SendGate::Quota { segments: 0 }) {
            return None;
        }
        let cwnd = self.cc.cwnd();
        let pipe = self.sb.in_flight();
        // PRR paces a SACK fast recovery (prr.rs): its budget, not cwnd - pipe
        let prr = self.prr.filter(|_| self.ca_state == CaState::Recovery);
        // F-RTO step 2b sends new data in place of retransmissions
        if !self.frto_new_data {
            if let Some(idx) = self.sb.next_retransmit() {
                let len = self.sb.seg(idx).len as u64;
                let fits = prr.map_or(pipe + len <= cwnd, |p| p.allows(len));
                if fits || self.forced_rtx > 0 {
                    self.forced_rtx = self.forced_rtx.saturating_sub(1);
                    return Some(self.retransmit(now, idx));
                }
                self.cwnd_limited = true;
                return None;
            }
        }
        let available = self.buf.end().saturating_sub(self.data_sent());
        let fin_due = self.buf.closed() && !self.fin_sent;
        if available == 0 && !fin_due {
            if self.frto_new_data {
                return self.frto_give_up(now);
            }
            if pipe < cwnd {
                self.cwnd_limited = false;
                self.rate.on_app_limited(pipe);
                self.cc.on_app_limited(now);
            }
            return None;
        }
        let len = available.min(self.mss as u64) as u32;
        let fin = self.buf.closed() && self.data_sent() + len as u64 == self.buf.end();
        let seq_len = len as u64 + fin as u64;
        if self.snd_nxt + seq_len > self.snd_una + self.snd_wnd.max(1) {
            // Receiver-window limited (zero-window probing is not modelled).
            self.cwnd_limited = false;
            if self.frto_new_data {
                return self.frto_give_up(now);
            }
            return None;
        }
        // Before loss recovery the window bounds FlightSize (RFC 5681, with
        // RFC 3042's allowance); during recovery it bounds the pipe (RFC 6675).
        let used = match self.ca_state {
            CaState::Recovery | CaState::Loss => pipe,
            _ => self.sb.outstanding(),
        };
        let fits = prr.map_or(used + seq_len <= cwnd, |p| p.allows(seq_len));
        if !fits {
            if self.frto_new_data {
                return self.frto_give_up(now);
            }
            if prr.is_some() || !self.limited_transmit_allows(seq_len, cwnd) {
                self.cwnd_limited = true;
                return None;
            }
            self.limited_transmit_bytes += seq_len;
        }
        Some(self.send_new(now, len, fin))
    }

    /// F-RTO could send no new data after the first ACK of a timeout's
    /// repair: if none went out on this ACK at all, it falls back to the
    /// conventional recovery (Linux's `tcp_xmit_recovery`) and retransmits.
    fn frto_give_up(&mut self, now: Instant) -> Option<Transmit> {
        self.frto_new_data = false;
        if self.snd_nxt > self.recover {
            return None; // new data went out: F-RTO waits for its ACK
        }
        self.frto = false;
        self.next_data(now)
    }

    /// RFC 3042: on the first and second duplicate ACK, one new segment each,
    /// while FlightSize stays within cwnd + 2 MSS.
    fn limited_transmit_allows(&self, seq_len: u64, cwnd: u64) -> bool {
        self.cfg.limited_transmit
            && matches!(self.ca_state, CaState::Open | CaState::Disorder)
            && (1..self.dupthresh).contains(&self.dupacks)
            && self.sb.outstanding() + seq_len
                <= cwnd + self.dupacks.min(2) as u64 * self.mss as u64
    }

    fn after_send(&mut self, now: Instant, ip_len: u64, info: SentInfo) {
        self.stats.segments_sent += 1;
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        if let Some(rate) = self.cc.pacing_rate() {
            // a send through an open pacer begins a burst of the
            // algorithm's send quantum; the pacer then waits for all of it
            // (Linux's `tcp_update_skb_after_send` charges a TSO packet's
            // whole length)
            if now >= self.pacer_next {
                self.burst_left = self.cc.send_quantum().max(1);
                self.burst_at = now;
            }
            self.burst_left = self.burst_left.saturating_sub(1);
            self.pacer_next = self.pacer_next.max(now) + rate.tx_time(ip_len);
        }
        self.cc.on_packet_sent(now, &info);
    }

    fn send_new(&mut self, now: Instant, len: u32, fin: bool) -> Transmit {
        let stamp = self
            .rate
            .on_send(now, self.sb.outstanding(), self.sb.in_flight());
        let seg = SentSeg {
            start: self.snd_nxt,
            len: len + fin as u32,
            flags: if fin { FIN } else { 0 },
            tx_count: 1,
            stamp,
        };
        self.sb.push(seg);
        self.snd_nxt += seg.len as u64;
        self.on_recovery_send(seg.len as u64);
        self.fin_sent |= fin;
        self.stats.bytes_sent += len as u64;
        let t = self.data_segment(now, &seg, TxKind::Data);
        let info = SentInfo {
            offset: seg.start,
            len,
            retransmission: false,
            in_flight: self.sb.in_flight(),
        };
        self.after_send(now, t.segment.ip_len() as u64, info);
        if self.tlp.is_some() {
            // RFC 8985 section 7.2 (a probe's own send disarms it again)
            self.arm_pto(now, false);
        }
        t
    }

    fn retransmit(&mut self, now: Instant, idx: usize) -> Transmit {
        let stamp = self
            .rate
            .on_send(now, self.sb.outstanding(), self.sb.in_flight());
        self.sb.on_retransmit(idx, stamp);
        let seg = *self.sb.seg(idx);
        self.stats.retransmissions += 1;
        self.on_recovery_send(seg.len as u64);
        if let Some(u) = self.undo.as_mut() {
            u.on_retransmit();
        }
        self.retrans_stamp.get_or_insert(ts_clock(now));
        self.stats.bytes_retransmitted += seg.payload_len() as u64;
        let t = self.data_segment(now, &seg, TxKind::Retransmission);
        let info = SentInfo {
            offset: seg.start,
            len: seg.payload_len(),
            retransmission: true,
            in_flight: self.sb.in_flight(),
        };
        self.after_send(now, t.segment.ip_len() as u64, info);
        if idx == 0 && self.cfg.rto_rearm == RtoRearm::Linux {
            // tcp_xmit_retransmit_queue: resending the oldest outstanding
            // segment restarts the RTO from now
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        t
    }

    /// Counts a transmission against PRR's budget during a fast recovery.
    fn on_recovery_send(&mut self, len: u64) {
        if self.ca_state == CaState::Recovery {
            if let Some(p) = self.prr.as_mut() {
                p.on_send(len);
            }
        }
    }

    // ----- input ------------------------------------------------------------

    /// Processes a segment from the receiver.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment) {
        self.on_segment(now, seg);
        self.note_timers(now);
    }

    fn on_segment(&mut self, now: Instant, seg: &Segment) {
        if seg.flags.contains(Flags::RST) {
            self.on_rst(now, seg);
            return;
        }
        match self.state {
            SenderState::SynSent => {
                if seg.flags.contains(Flags::SYN.with(Flags::ACK)) && seg.ack == self.iss + 1 {
                    self.establish(now, seg);
                }
                return;
            }
            SenderState::Closed => return,
            SenderState::Established => {}
        }
        if seg.flags.contains(Flags::SYN) {
            // RFC 5961 section 4.2: a challenge ACK, whatever the sequence
            // number. It also answers a retransmitted SYN-ACK whose ACK was
            // lost, as RFC 793 asks.
            self.challenge_ack(now);
            return;
        }
        if !seg.flags.contains(Flags::ACK) {
            return;
        }
        self.on_ack(now, seg);
    }

    /// RFC 5961 section 3.2.
    fn on_rst(&mut self, now: Instant, seg: &Segment) {
        let verdict = match self.state {
            // the RST is acceptable if its ACK field acknowledges the SYN
            SenderState::SynSent => {
                if seg.flags.contains(Flags::ACK) && seg.ack == self.iss + 1 {
                    RstVerdict::Reset
                } else {
                    RstVerdict::Drop
                }
            }
            SenderState::Established => {
                let rcv_wnd = (self.own_window_field() as u64) << self.rcv_wscale;
                rst_verdict(seg.seq, self.irs + 1, rcv_wnd)
            }
            SenderState::Closed => RstVerdict::Drop,
        };
        match verdict {
            RstVerdict::Reset => {
                self.state = SenderState::Closed;
                self.rto_deadline = None;
                self.syn_pending = false;
            }
            RstVerdict::Challenge => {
                self.stats.resets_ignored += 1;
                self.challenge_ack(now);
            }
            RstVerdict::Drop => self.stats.resets_ignored += 1,
        }
    }

    /// Queues a challenge ACK (`<SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>`, or a
    /// data segment, which carries the same ACK) unless RFC 5961 section 7's
    /// throttle holds it back.
    fn challenge_ack(&mut self, now: Instant) {
        if self.challenges.allow(now) {
            self.stats.challenge_acks += 1;
            self.ack_pending = true;
        }
    }

    fn establish(&mut self, now: Instant, seg: &Segment) {
        self.state = SenderState::Established;
        self.stats.established_at = Some(now);
        self.syn_pending = false;
        self.irs = seg.seq;
        let o = &seg.options;
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        if let Some(ts) = o.timestamps {
            self.ts_recent = ts.val;
        }
        // an ECN-setup SYN-ACK has ECE set and CWR clear (RFC 3168 section
        // 6.1.1); any other is the peer's refusal
        self.ecn_ok =
            self.wants_ecn() && seg.flags.contains(Flags::ECE) && !seg.flags.contains(Flags::CWR);
        self.mss = effective_mss(self.cfg.mss, o.mss, self.ts_ok);
        self.cc.set_mss(self.mss);
        // Window scaling applies only if both SYNs carried the option, and the
        // window field of a SYN is never scaled (RFC 7323 section 2.2).
        match o.window_scale {
            Some(ws) => {
                self.snd_wscale = ws.min(14);
                self.rcv_wscale = self.cfg.window_shift();
            }
            None => {
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
        self.snd_wnd = seg.window as u64;
        if self.syn_retransmitted {
            // RFC 6298 (5.7) and Karn: no sample; start data with RTO >= 3 s.
            self.rtt.raise_initial_rto(Duration::from_secs(3));
        } else if let Some(t) = self.syn_sent_at {
            let flight = self.flight(0);
            self.rtt.on_sample(now - t, flight);
        }
        self.rtt.reset_backoff();
        self.rto_deadline = None;
        let handshake_rtt = (!self.syn_retransmitted)
            .then(|| self.rtt.latest())
            .flatten();
        self.cc.on_established(now, handshake_rtt);
        self.ack_pending = true; // replaced by the first data segment if any
    }

    fn on_rto(&mut self, now: Instant) {
        if self.state == SenderState::SynSent {
            self.stats.syn_retransmissions += 1;
            self.syn_retransmitted = true;
            self.rtt.back_off();
            self.rto_deadline = Some(now + self.rtt.rto());
            self.syn_pending = true;
            return;
        }
        if self.sb.is_empty() || self.state != SenderState::Established {
            return;
        }
        self.stats.rto_expiries += 1;
        self.enter_loss(now);
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.pacer_next = now;
    }
}

/// The payload bytes per segment: the smaller of our MSS and the peer's (RFC
/// 1122's 536 when it sent none; never below 64), less the timestamp option's
/// 12 bytes when timestamps are on (RFC 6691: the MSS excludes TCP options).
pub(crate) fn effective_mss(ours: u32, peer: Option<u16>, timestamps: bool) -> u32 {
    let mss = ours.min(peer.map_or(536, u32::from)).max(64);
    if timestamps {
        mss - 12
    } else {
        mss
    }
}

/// The RFC 7323 timestamp clock: milliseconds since the driver's origin.
pub(crate) fn ts_clock(now: Instant) -> u32 {
    (now.as_nanos() / 1_000_000) as u32
}

/// A timer's firing instant: its deadline, or the wheel's bucket for it
/// when one was computed for that deadline.
fn wheel_due(deadline: Option<Instant>, fires: Option<(Instant, Instant)>) -> Option<Instant> {
    let d = deadline?;
    Some(fires.filter(|f| f.0 == d).map_or(d, |f| f.1))
}

#[cfg(test)]
mod tests;
