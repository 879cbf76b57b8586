//! The sans-IO TCP receiver: the passive end of a one-directional connection.
//!
//! It accepts the SYN, reassembles data, and acknowledges it:
//! * cumulative ACKs; an immediate ACK (a duplicate ACK) for out-of-order
//!   data and for a segment that fills a gap (RFC 5681 section 4.2);
//! * delayed ACKs: off, or an ACK once two full-sized segments are unacknowledged
//!   or when the delay timer fires (default 200 ms); with `tcp.receiver =
//!   "linux"`, Linux's quick-ACK mode and adaptive ACK timer instead
//!   ([`linux_ack`]);
//! * SACK blocks (RFC 2018: the first block holds the segment that triggered the
//!   ACK, then the most recently reported blocks) and DSACK (RFC 2883: a
//!   duplicate is reported in the first block);
//! * a receive window of the configured size, scaled (RFC 7323);
//! * RFC 5961's rules for RST and SYN ([`crate::challenge`]): a RST resets
//!   only at exactly RCV.NXT (in SYN-RECEIVED it returns to LISTEN, RFC 793),
//!   one elsewhere in the window and any SYN after the handshake are answered
//!   by a challenge ACK; a RST in LISTEN is ignored.
//!
//! Payload bytes are optional: a simulation passes `None` and only the delivered
//! count advances; a real driver passes the bytes and reads them back in order.

mod linux_ack;

use crate::challenge::{rst_verdict, ChallengeAcks, RstVerdict};
use crate::config::{ReceiverProfile, TcpConfig};
use crate::ranges::RangeSet;
use crate::sender::ts_clock;
use crate::seq::SeqNum;
use crate::time::Instant;
use crate::wire::{Ecn, Flags, Options, SackBlock, SackBlocks, Segment, Timestamps};
use crate::{Transmit, TxKind};
use std::collections::{BTreeMap, VecDeque};

/// Connection state of the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiverState {
    /// Waiting for a SYN.
    Listen,
    /// SYN-ACK sent, waiting for the handshake's ACK or the first data.
    SynReceived,
    /// Receiving data.
    Established,
    /// The FIN arrived and everything before it was delivered.
    Finished,
    /// Reset by the peer.
    Closed,
}

/// Counters of one receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Segments received (all kinds).
    pub segments_received: u64,
    /// Segments that carried data.
    pub data_segments: u64,
    /// Payload bytes received, duplicates included.
    pub bytes_received: u64,
    /// Data segments entirely already received.
    pub duplicate_segments: u64,
    /// Data segments that arrived above a hole.
    pub out_of_order_segments: u64,
    /// Segments outside the receive window (dropped).
    pub out_of_window_segments: u64,
    /// ACKs sent (the SYN-ACK excluded).
    pub acks_sent: u64,
    /// ACKs that carried a DSACK block.
    pub dsacks_sent: u64,
    /// Challenge ACKs sent (RFC 5961: a RST in the window but not at RCV.NXT,
    /// or a SYN after the handshake).
    pub challenge_acks: u64,
    /// RST segments that reset nothing (outside the window, challenged, or
    /// in LISTEN).
    pub resets_ignored: u64,
    /// Data segments in the window that arrived marked CE, on a connection
    /// that negotiated ECN.
    pub ce_received: u64,
    /// ACKs sent with ECN-Echo set.
    pub ece_acks_sent: u64,
    /// When the FIN was received in order.
    pub finished_at: Option<Instant>,
}

/// Reassembly of real payload bytes.
#[derive(Clone, Debug, Default)]
struct ByteStore {
    /// In-order bytes not yet read by the application.
    ready: VecDeque<u8>,
    /// Offset of the next byte to append to `ready`.
    pos: u64,
    /// Received segments not yet in order, by offset.
    pending: BTreeMap<u64, Vec<u8>>,
}

impl ByteStore {
    fn insert(&mut self, off: u64, bytes: &[u8]) {
        if off + bytes.len() as u64 <= self.pos || bytes.is_empty() {
            return;
        }
        let e = self.pending.entry(off).or_default();
        if bytes.len() > e.len() {
            *e = bytes.to_vec();
        }
    }
    /// Moves every contiguous byte below `upto` into `ready`.
    fn advance(&mut self, upto: u64) {
        while let Some((&k, _)) = self.pending.first_key_value() {
            if k > self.pos || self.pos >= upto {
                break;
            }
            let v = self.pending.remove(&k).expect("key exists");
            let end = k + v.len() as u64;
            if end > self.pos {
                self.ready.extend(&v[(self.pos - k) as usize..]);
                self.pos = end;
            }
        }
    }
}

/// The receiving endpoint of a connection.
#[derive(Clone, Debug)]
pub struct Receiver {
    cfg: TcpConfig,
    state: ReceiverState,
    iss: SeqNum,
    irs: SeqNum,
    mss: u32,
    sack_ok: bool,
    ts_ok: bool,
    ts_recent: u32,
    last_ack_sent: u64,
    /// Our window-scale shift (0 unless the SYN carried the option).
    rcv_wscale: u8,
    /// Right edge of the window in the last ACK sent.
    advertised_edge: u64,

    /// Next expected stream offset (includes the FIN once received).
    rcv_nxt: u64,
    ooo: RangeSet,
    /// Most recently reported SACK blocks, newest first (kept only when SACK
    /// is on: nothing else reads them).
    recent: Vec<(u64, u64)>,
    fin_at: Option<u64>,
    dsack: Option<(u64, u64)>,

    unacked_bytes: u64,
    delack_deadline: Option<Instant>,
    ack_now: bool,
    synack_pending: bool,
    /// The SYN offered window scaling.
    scaling: bool,
    challenges: ChallengeAcks,
    /// When the (first) SYN-ACK went out, for the handshake's RTT sample.
    synack_sent: Option<Instant>,
    synack_retransmitted: bool,
    /// Linux's ACK engine, with `tcp.receiver = "linux"`.
    linux: Option<linux_ack::LinuxAck>,
    /// The SYN was an ECN-setup SYN and ECN is on: the SYN-ACK accepts it
    /// (RFC 3168 section 6.1.1).
    ecn_ok: bool,
    /// A CE mark arrived since the last CWR: every ACK carries ECN-Echo
    /// (RFC 3168 section 6.1.3). With the per-packet echo, the CE state of
    /// the last data segment (RFC 8257 section 3.2's DCTCP.CE).
    ece: bool,
    /// Echo each data segment's CE state (RFC 8257 section 3.2) instead of
    /// latching ECN-Echo until CWR.
    per_packet_echo: bool,
    /// An ACK made before a data segment was taken in (the per-packet
    /// echo's immediate ACK when the CE state changes), sent first.
    early_ack: Option<Transmit>,

    bytes: Option<ByteStore>,
    stats: ReceiverStats,
}

impl Receiver {
    /// A listening receiver that will answer a SYN with initial sequence number
    /// `iss`. `cfg` must be valid.
    pub fn new(cfg: TcpConfig, iss: SeqNum) -> Self {
        debug_assert!(cfg.validate().is_ok());
        Receiver {
            mss: cfg.mss,
            cfg,
            state: ReceiverState::Listen,
            iss,
            irs: SeqNum(0),
            sack_ok: false,
            ts_ok: false,
            ts_recent: 0,
            last_ack_sent: 0,
            rcv_wscale: 0,
            advertised_edge: 0,
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            recent: Vec::with_capacity(4),
            fin_at: None,
            dsack: None,
            unacked_bytes: 0,
            delack_deadline: None,
            ack_now: false,
            synack_pending: false,
            scaling: false,
            challenges: ChallengeAcks::default(),
            synack_sent: None,
            synack_retransmitted: false,
            linux: None,
            ecn_ok: false,
            ece: false,
            per_packet_echo: false,
            early_ack: None,
            bytes: None,
            stats: ReceiverStats::default(),
        }
    }

    /// Keep received payload bytes for [`Receiver::read`] (a real driver). Without
    /// this only the delivered count advances.
    pub fn keep_bytes(&mut self) {
        self.bytes.get_or_insert_with(ByteStore::default);
    }

    /// Reads in-order bytes (only when [`Receiver::keep_bytes`] was called).
    /// When reading opens the window by min(buffer / 2, MSS) beyond what was
    /// last advertised, a window update is queued (RFC 1122 section 4.2.3.3);
    /// poll [`Receiver::poll_transmit`] afterwards.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let Some(b) = &mut self.bytes else { return 0 };
        let n = out.len().min(b.ready.len());
        for (o, v) in out.iter_mut().zip(b.ready.drain(..n)) {
            *o = v;
        }
        let step = (self.cfg.rcv_window.0 / 2).min(self.mss as u64);
        if n > 0 && self.rcv_nxt + self.window_bytes() >= self.advertised_edge + step {
            self.ack_now = true;
        }
        n
    }

    /// Connection state.
    pub fn state(&self) -> ReceiverState {
        self.state
    }
    /// Counters.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
    /// Echoes each data segment's CE state, as a DCTCP receiver does (RFC
    /// 8257 section 3.2), instead of RFC 3168's ECN-Echo latched until CWR,
    /// and accepts an ECN-setup SYN whatever `tcp.ecn` says. The driver
    /// calls this when the connection's congestion control asks for it
    /// ([`crate::cc::EcnStyle::per_packet_echo`]): DCTCP runs on both
    /// endpoints (RFC 8257 section 1). Call before the SYN arrives.
    pub fn set_per_packet_echo(&mut self) {
        self.per_packet_echo = true;
    }

    /// True if ECN was negotiated (RFC 3168 section 6.1.1).
    pub fn ecn_enabled(&self) -> bool {
        self.ecn_ok
    }
    /// Payload bytes delivered in order.
    pub fn delivered(&self) -> u64 {
        match self.fin_at {
            Some(f) if self.rcv_nxt > f => f,
            _ => self.rcv_nxt,
        }
    }
    /// Bytes received above a hole and held for reassembly.
    pub fn out_of_order_bytes(&self) -> u64 {
        self.ooo.covered()
    }

    /// The earliest instant the receiver wants [`Receiver::handle_timeout`] called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.delack_deadline
    }

    /// Runs the delayed-ACK timer.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.ack_now = true;
            if let Some(l) = self.linux.as_mut() {
                l.on_timer_expired(self.cfg.delayed_ack);
            }
        }
    }

    /// The next segment to send (a SYN-ACK or an ACK), if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        if let Some(t) = self.early_ack.take() {
            return Some(t);
        }
        if self.synack_pending {
            self.synack_pending = false;
            // a retransmitted SYN-ACK gives no RTT sample (Karn)
            self.synack_retransmitted |= self.synack_sent.is_some();
            self.synack_sent = Some(now);
            return Some(self.make_synack(now));
        }
        if self.ack_now {
            self.ack_now = false;
            return Some(self.make_ack(now));
        }
        None
    }

    /// RFC 9293 section 3.10.7.4's acceptability test: whether a
    /// segment at stream offset `off` occupying `seg_len` sequence numbers
    /// overlaps the receive window. A segment wholly below `RCV.NXT` (an old
    /// duplicate) is not acceptable.
    fn acceptable(&self, off: u64, seg_len: u64) -> bool {
        let (nxt, wnd) = (self.rcv_nxt, self.window_bytes());
        match (seg_len, wnd) {
            (0, 0) => off == nxt,
            (0, _) => nxt <= off && off < nxt + wnd,
            (_, 0) => false,
            _ => off < nxt + wnd && off + seg_len > nxt,
        }
    }

    fn window_bytes(&self) -> u64 {
        let buffered = self.bytes.as_ref().map_or(0, |b| b.ready.len() as u64);
        self.cfg.rcv_window.0.saturating_sub(buffered)
    }

    fn make_synack(&self, now: Instant) -> Transmit {
        Transmit {
            segment: Segment {
                seq: self.iss,
                ack: self.irs + 1,
                // an ECN-setup SYN-ACK: ECE set, CWR clear (RFC 3168
                // section 6.1.1)
                flags: if self.ecn_ok {
                    Flags::SYN.with(Flags::ACK).with(Flags::ECE)
                } else {
                    Flags::SYN.with(Flags::ACK)
                },
                window: self.cfg.rcv_window.0.min(65_535) as u16,
                len: 0,
                options: Options {
                    mss: Some(self.cfg.mss.min(65_535) as u16),
                    window_scale: self.scaling.then_some(self.rcv_wscale),
                    sack_permitted: self.sack_ok,
                    timestamps: self.ts_ok.then(|| Timestamps {
                        val: ts_clock(now),
                        ecr: self.ts_recent,
                    }),
                    ..Options::default()
                },
            },
            kind: TxKind::SynAck,
            offset: 0,
            ecn: Ecn::NotEct,
        }
    }

    fn make_ack(&mut self, now: Instant) -> Transmit {
        let base = self.irs + 1;
        let mut sack = SackBlocks::default();
        if self.sack_ok {
            let max = if self.ts_ok { 3 } else { 4 };
            if let Some((s, e)) = self.dsack.take() {
                sack.push(block(base, s, e));
                self.stats.dsacks_sent += 1;
            }
            for &(s, e) in &self.recent {
                if sack.len() >= max {
                    break;
                }
                sack.push(block(base, s, e));
            }
        }
        self.dsack = None;
        if let Some(l) = self.linux.as_mut() {
            // tcp_dec_quickack_mode: an ACK of received data uses up a quick ACK
            if self.unacked_bytes > 0 || self.last_ack_sent != self.rcv_nxt {
                l.on_ack_sent();
            }
        }
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        self.stats.acks_sent += 1;
        let mut flags = Flags::ACK;
        if self.ece {
            flags = flags.with(Flags::ECE);
            self.stats.ece_acks_sent += 1;
        }
        let window = (self.window_bytes() >> self.rcv_wscale).min(65_535) as u16;
        self.advertised_edge = self.rcv_nxt + ((window as u64) << self.rcv_wscale);
        Transmit {
            segment: Segment {
                seq: self.iss + 1,
                ack: SeqNum::from_offset(base, self.rcv_nxt),
                flags,
                window,
                len: 0,
                options: Options {
                    timestamps: self.ts_ok.then(|| Timestamps {
                        val: ts_clock(now),
                        ecr: self.ts_recent,
                    }),
                    sack,
                    ..Options::default()
                },
            },
            kind: TxKind::Ack,
            offset: self.rcv_nxt,
            // a pure ACK is Not-ECT (RFC 3168 section 6.1.4)
            ecn: Ecn::NotEct,
        }
    }

    /// Processes a segment from the sender; `payload` holds its bytes when the
    /// driver carries real data. Its IP header's ECN field is taken as
    /// Not-ECT ([`Receiver::handle_segment_ecn`] gives it).
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment, payload: Option<&[u8]>) {
        self.handle_segment_ecn(now, seg, payload, Ecn::NotEct);
    }

    /// [`Receiver::handle_segment`] for a segment whose IP header carried
    /// the ECN field `ecn`.
    pub fn handle_segment_ecn(
        &mut self,
        now: Instant,
        seg: &Segment,
        payload: Option<&[u8]>,
        ecn: Ecn,
    ) {
        self.stats.segments_received += 1;
        if seg.flags.contains(Flags::RST) {
            self.on_rst(now, seg);
            return;
        }
        if seg.flags.contains(Flags::SYN) {
            self.on_syn(now, seg);
            return;
        }
        match self.state {
            ReceiverState::Listen | ReceiverState::Closed => return,
            // RFC 9293 section 3.10.7.4, fifth check: a segment without the
            // ACK bit is dropped (a data segment too: in SYN-RECEIVED it
            // would be taken in before the handshake is complete)
            _ if !seg.flags.contains(Flags::ACK) => return,
            ReceiverState::SynReceived => {
                self.state = ReceiverState::Established;
                if self.cfg.receiver == ReceiverProfile::Linux {
                    let rtt = (!self.synack_retransmitted)
                        .then(|| self.synack_sent.map(|t| now.saturating_since(t)))
                        .flatten();
                    self.linux = Some(linux_ack::LinuxAck::new(rtt));
                }
            }
            _ => {}
        }
        let has_fin = seg.flags.contains(Flags::FIN);
        if seg.len == 0 && !has_fin {
            return; // a pure ACK
        }
        let base = self.irs + 1;
        let off = seg.seq.to_offset(base, self.rcv_nxt);
        if self.ecn_ok && self.per_packet_echo {
            self.echo_ce_state(now, seg, off, ecn);
        } else if self.ecn_ok {
            self.echo_ce(seg, off, ecn);
        }
        if self.ts_ok {
            if let Some(ts) = seg.options.timestamps {
                // RFC 7323 section 4.3: update TS.Recent from segments at or below
                // the last ACK sent, so TSecr echoes the earliest unacknowledged one;
                // section 5.3 (R2 before R3): only from a segment the window
                // accepts. An old duplicate is answered with the earlier
                // TS.Recent, as Linux's tcp_validate_incoming does.
                let seg_len = seg.len as u64 + has_fin as u64;
                if self.acceptable(off, seg_len)
                    && off <= self.last_ack_sent
                    && ts.val.wrapping_sub(self.ts_recent) as i32 >= 0
                {
                    self.ts_recent = ts.val;
                }
            }
        }
        if seg.len > 0 {
            self.on_data(now, off, seg.len, payload);
        }
        if has_fin {
            let fin = off + seg.len as u64;
            // the first FIN sets the end of the stream, unless data beyond
            // it was already received (a peer that contradicts itself)
            let received = self
                .ooo
                .last()
                .map_or(self.rcv_nxt, |(_, e)| e.max(self.rcv_nxt));
            if self.fin_at.is_none() && fin >= received {
                self.fin_at = Some(fin);
            }
            if self.fin_at.is_some_and(|f| f != self.rcv_nxt) {
                // A FIN above a hole, or a retransmitted FIN already
                // acknowledged: acknowledge at once.
                self.ack_now = true;
            }
        }
        if self.fin_at == Some(self.rcv_nxt) && self.state != ReceiverState::Finished {
            self.rcv_nxt += 1;
            self.state = ReceiverState::Finished;
            self.stats.finished_at = Some(now);
            self.ack_now = true;
        }
    }

    /// RFC 5961 section 3.2; RFC 793: a RST in LISTEN is ignored, one that
    /// resets a passively opened connection in SYN-RECEIVED returns it to
    /// LISTEN.
    fn on_rst(&mut self, now: Instant, seg: &Segment) {
        let verdict = match self.state {
            ReceiverState::Listen | ReceiverState::Closed => RstVerdict::Drop,
            _ => rst_verdict(
                seg.seq,
                SeqNum::from_offset(self.irs + 1, self.rcv_nxt),
                self.window_bytes(),
            ),
        };
        match verdict {
            RstVerdict::Reset if self.state == ReceiverState::SynReceived => self.relisten(),
            RstVerdict::Reset => self.state = ReceiverState::Closed,
            RstVerdict::Challenge => {
                self.stats.resets_ignored += 1;
                self.challenge_ack(now);
            }
            RstVerdict::Drop => self.stats.resets_ignored += 1,
        }
    }

    /// Back to LISTEN, as new, keeping the counters and the choice to keep
    /// payload bytes.
    fn relisten(&mut self) {
        let stats = std::mem::take(&mut self.stats);
        let challenges = self.challenges;
        let keep_bytes = self.bytes.is_some();
        *self = Receiver::new(self.cfg.clone(), self.iss);
        self.stats = stats;
        self.challenges = challenges;
        if keep_bytes {
            self.keep_bytes();
        }
    }

    /// Queues a challenge ACK (`<SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>`) unless
    /// RFC 5961 section 7's throttle holds it back.
    fn challenge_ack(&mut self, now: Instant) {
        if self.challenges.allow(now) {
            self.stats.challenge_acks += 1;
            self.ack_now = true;
        }
    }

    fn on_syn(&mut self, now: Instant, seg: &Segment) {
        if matches!(
            self.state,
            ReceiverState::Established | ReceiverState::Finished
        ) {
            // RFC 5961 section 4.2: whatever its sequence number, a SYN on a
            // synchronized connection gets a challenge ACK and is dropped.
            self.challenge_ack(now);
            return;
        }
        let fresh = self.state == ReceiverState::Listen;
        let retransmitted = self.state == ReceiverState::SynReceived && seg.seq == self.irs;
        if fresh {
            self.irs = seg.seq;
            let o = &seg.options;
            self.sack_ok = self.cfg.sack && o.sack_permitted;
            self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
            // an ECN-setup SYN has ECE and CWR set (RFC 3168 section 6.1.1)
            self.ecn_ok = (self.cfg.ecn || self.per_packet_echo)
                && seg.flags.contains(Flags::ECE)
                && seg.flags.contains(Flags::CWR);
            // The peer's data segments carry at most this much payload.
            self.mss = crate::sender::effective_mss(self.cfg.mss, o.mss, self.ts_ok);
            // RFC 7323: scale only if the SYN offered it; then answer with ours.
            self.scaling = o.window_scale.is_some();
            self.rcv_wscale = if self.scaling {
                self.cfg.window_shift()
            } else {
                0
            };
            if let Some(ts) = o.timestamps {
                self.ts_recent = ts.val;
            }
            self.state = ReceiverState::SynReceived;
        }
        if fresh || retransmitted {
            self.synack_pending = true;
        }
    }

    /// RFC 3168 section 6.1.3: CWR ends the echo, then a CE mark on a data
    /// segment in the window starts it again (section 6.1.5: a mark outside
    /// the window is ignored).
    fn echo_ce(&mut self, seg: &Segment, off: u64, ecn: Ecn) {
        if seg.flags.contains(Flags::CWR) {
            self.ece = false;
        }
        let end = off + seg.len as u64;
        let in_window = end > self.rcv_nxt && off < self.rcv_nxt + self.window_bytes();
        if ecn == Ecn::Ce && seg.len > 0 && in_window {
            self.stats.ce_received += 1;
            self.ece = true;
        }
    }

    /// RFC 8257 section 3.2: every ACK echoes the CE state of the data
    /// segments it acknowledges. When a data segment's CE state differs
    /// from the last one's and an ACK is being delayed for earlier data,
    /// that ACK goes out at once with the old state; then the state
    /// changes. CWR is ignored; a segment wholly outside the window leaves
    /// the state as it is (RFC 3168 section 6.1.5).
    fn echo_ce_state(&mut self, now: Instant, seg: &Segment, off: u64, ecn: Ecn) {
        let end = off + seg.len as u64;
        let in_window = end > self.rcv_nxt && off < self.rcv_nxt + self.window_bytes();
        if seg.len == 0 || !in_window {
            return;
        }
        let ce = ecn == Ecn::Ce;
        if ce {
            self.stats.ce_received += 1;
        }
        if ce != self.ece {
            if self.unacked_bytes > 0 {
                self.early_ack = Some(self.make_ack(now));
            }
            self.ece = ce;
        }
    }

    fn on_data(&mut self, now: Instant, off: u64, len: u32, payload: Option<&[u8]>) {
        self.stats.data_segments += 1;
        self.stats.bytes_received += len as u64;
        let mut end = off + len as u64;
        // nothing is taken in beyond the window, nor beyond a FIN received
        let right_edge = (self.rcv_nxt + self.window_bytes()).min(self.fin_at.unwrap_or(u64::MAX));
        if off >= right_edge {
            self.stats.out_of_window_segments += 1;
            self.ack_now = true;
            return;
        }
        end = end.min(right_edge);
        if let (Some(store), Some(p)) = (&mut self.bytes, payload) {
            let n = ((end - off) as usize).min(p.len());
            store.insert(off, &p[..n]);
        }
        if end <= self.rcv_nxt {
            // Entirely old: a duplicate (a spurious retransmission, or a
            // duplicated packet). Report it (DSACK) at once.
            self.stats.duplicate_segments += 1;
            let window = self.window_bytes();
            if let Some(l) = self.linux.as_mut() {
                // tcp_send_dupack: the sender lost an ACK, quick ACKs follow
                l.enter_quickack_mode(window, self.mss);
            }
            if self.cfg.dsack {
                self.dsack = Some((off, end));
            }
            self.ack_now = true;
            return;
        }
        if off <= self.rcv_nxt {
            if off < self.rcv_nxt && self.cfg.dsack {
                self.dsack = Some((off, self.rcv_nxt));
            }
            let had_hole = !self.ooo.is_empty();
            self.rcv_nxt = end;
            // Absorb every held range the segment reached (a repackaged
            // retransmission can span several).
            while let Some((s, e)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.ooo.remove_below(self.rcv_nxt);
            }
            self.refresh_recent();
            let data_end = self.data_end(self.rcv_nxt);
            if let Some(store) = &mut self.bytes {
                store.advance(data_end);
            }
            self.unacked_bytes += end - off;
            let window = self.window_bytes();
            if let Some(l) = self.linux.as_mut() {
                l.on_data(now, window, self.mss, self.cfg.delayed_ack);
            }
            if had_hole || self.dsack.is_some() {
                self.ack_now = true; // the segment filled (part of) a gap
            } else {
                self.delayed_ack_policy(now);
            }
        } else {
            let newly = self.ooo.insert(off, end);
            if newly == 0 {
                self.stats.duplicate_segments += 1;
                if self.cfg.dsack {
                    self.dsack = Some((off, end));
                }
            } else {
                self.stats.out_of_order_segments += 1;
            }
            self.report_block(off);
            self.ack_now = true;
        }
    }

    /// Offset where data ends (the FIN is not a byte).
    fn data_end(&self, upto: u64) -> u64 {
        self.fin_at.map_or(upto, |f| upto.min(f))
    }

    fn delayed_ack_policy(&mut self, now: Instant) {
        if let (Some(l), Some(max)) = (self.linux.as_ref(), self.cfg.delayed_ack) {
            // __tcp_ack_snd_check: more than one full segment unacknowledged,
            // or quick-ACK mode, acknowledges at once; else the ACK timer
            if self.unacked_bytes > self.mss as u64 || l.quick() {
                self.ack_now = true;
                return;
            }
            match l.delayed_ack_deadline(now, self.delack_deadline, max) {
                Some(deadline) => self.delack_deadline = Some(deadline),
                None => self.ack_now = true,
            }
            return;
        }
        match self.cfg.delayed_ack {
            None => self.ack_now = true,
            Some(delay) => {
                if self.unacked_bytes >= 2 * self.mss as u64 {
                    self.ack_now = true;
                } else if self.delack_deadline.is_none() {
                    self.delack_deadline = Some(now + delay);
                }
            }
        }
    }

    /// Puts the block containing `off` first, then the previously reported ones.
    fn report_block(&mut self, off: u64) {
        if !self.sack_ok {
            return;
        }
        let Some(cur) = self.ooo.range_containing(off) else {
            return;
        };
        let mut next = Vec::with_capacity(4);
        next.push(cur);
        for &(s, _) in &self.recent {
            if let Some(r) = self.ooo.range_containing(s) {
                if !next.contains(&r) && next.len() < 4 {
                    next.push(r);
                }
            }
        }
        self.recent = next;
    }

    /// Drops blocks now below `rcv_nxt` and refreshes merged ones.
    fn refresh_recent(&mut self) {
        // In place (this runs for every in-order segment): keep, in order,
        // the distinct ranges that still hold each reported block's start.
        let mut kept = 0;
        for i in 0..self.recent.len() {
            let (s, _) = self.recent[i];
            if let Some(r) = self.ooo.range_containing(s.max(self.rcv_nxt)) {
                if !self.recent[..kept].contains(&r) {
                    self.recent[kept] = r;
                    kept += 1;
                }
            }
        }
        self.recent.truncate(kept);
    }
}

fn block(base: SeqNum, s: u64, e: u64) -> SackBlock {
    SackBlock {
        left: SeqNum::from_offset(base, s),
        right: SeqNum::from_offset(base, e),
    }
}

#[cfg(test)]
mod tests;
