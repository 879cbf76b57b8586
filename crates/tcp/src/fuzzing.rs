//! The bodies of the fuzz targets (`fuzz/`, run with cargo-fuzz) and of the
//! property tests over arbitrary bytes that stand in for them where no
//! fuzzer runs (`tests/fuzz_bytes.rs`): each takes raw bytes and panics on a
//! broken invariant.
//!
//! * [`wire_roundtrip`]: [`Segment::decode`] of any bytes never panics, and a
//!   decoded header encodes to bytes that decode to the same segment.
//! * [`sender_fed`]: a connected [`Sender`] (every algorithm and variant, SACK,
//!   timestamps, delayed ACKs, RACK, limited transmit as the first byte says)
//!   fed raw TCP headers from the peer, and the passing of time.
//! * [`receiver_fed`]: a [`Receiver`], from its SYN on, fed raw headers with
//!   payload (real bytes or a virtual length), and the passing of time.
//!
//! The endpoint targets read the input as a script. Byte 0 chooses the
//! configuration, byte 1 the algorithm, then a raw header gives the options
//! of the handshake. Then each step starts with a control byte `c`:
//! `c % 8 == 0` lets `u16` milliseconds pass (the endpoint's due timers
//! run); otherwise a length byte `n` and `n` bytes follow, decoded as a TCP
//! header (with the rest as payload) and delivered `c % 8` times. Bits of `c`
//! place the numbers near what the endpoint expects, so that the fuzzer
//! reaches the window without guessing 32-bit values: `0x08` takes the
//! sequence number, `0x10` the acknowledgment number and `0x20` the SACK
//! blocks as signed 16-bit offsets from the expected values; `0x40` reads a
//! `u16` payload length (the segment's payload is then virtual).
//!
//! After every step [`SenderWatch`] and [`ReceiverWatch`] check what no peer
//! may break (shared with `tests/hostile.rs`): nothing acknowledged or
//! delivered goes back, nothing beyond what was sent is acknowledged or
//! retransmitted, `poll_transmit` ends, and no timer is left due after time
//! passed.

use crate::config::{
    LostRetransmissions, PartialAckTimer, ReceiverProfile, RecoveryReduction, SsthreshBasis,
    TcpConfig,
};
use crate::seq::SeqNum;
use crate::testing::{every_algorithm, ms, Harness, IRS, ISS};
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Options, SackBlock, SackBlocks, Segment, Timestamps};
use crate::{Receiver, Sender, Transmit, TxKind};

/// The most steps a script runs (longer inputs are cut there).
pub const MAX_STEPS: usize = 400;

/// Reads a script: bytes, then zeros once they run out (so every input is a
/// script), with `done` telling when the input ended.
#[derive(Debug)]
pub struct Script<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Script<'a> {
    /// A script over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Script { data, at: 0 }
    }
    /// True once every byte was read.
    pub fn done(&self) -> bool {
        self.at >= self.data.len()
    }
    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    /// The next two bytes, big-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.u8(), self.u8()])
    }
    /// The next `n` bytes (fewer at the end of the input).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let start = self.at.min(self.data.len());
        let end = (self.at + n).min(self.data.len());
        self.at += n;
        &self.data[start..end]
    }
}

/// `Segment::decode` never panics; what it decodes encodes and decodes back
/// to the same segment (unless its options exceed the 40 bytes a header has,
/// which `encode` must refuse without writing anything).
pub fn wire_roundtrip(data: &[u8]) {
    let Ok((sp, dp, seg, hlen)) = Segment::decode(data) else {
        return;
    };
    assert!((20..=60).contains(&hlen) && hlen <= data.len());
    assert_eq!(seg.len as usize, data.len() - hlen);
    let mut out = Vec::new();
    match seg.encode(sp, dp, &mut out) {
        Ok(()) => {
            assert_eq!(out.len(), seg.header_len());
            out.extend_from_slice(&data[hlen..]);
            let (sp2, dp2, again, hlen2) =
                Segment::decode(&out).expect("an encoded header decodes");
            assert_eq!((sp2, dp2, hlen2), (sp, dp, seg.header_len()));
            assert_eq!(again, seg);
        }
        Err(_) => {
            assert!(out.is_empty(), "a refused encode wrote bytes");
            assert!(seg.options.encoded_len() > crate::wire::MAX_OPTIONS_LEN);
        }
    }
}

/// The configuration byte of a script.
fn config(bits: u8) -> TcpConfig {
    let sack = bits & 0x01 != 0;
    TcpConfig {
        mss: 1000,
        sack,
        timestamps: bits & 0x02 != 0,
        delayed_ack: (bits & 0x04 != 0).then_some(Duration::from_millis(200)),
        lost_retransmissions: if sack && bits & 0x08 != 0 {
            LostRetransmissions::Rack
        } else {
            LostRetransmissions::Rto
        },
        limited_transmit: bits & 0x10 != 0,
        partial_ack_timer: if bits & 0x20 != 0 {
            PartialAckTimer::SlowButSteady
        } else {
            PartialAckTimer::Impatient
        },
        // Linux's F-RTO, undo, receiver and ssthresh
        frto: bits & 0x40 != 0,
        undo: bits & 0x40 != 0,
        receiver: if bits & 0x40 != 0 {
            ReceiverProfile::Linux
        } else {
            ReceiverProfile::Rfc
        },
        ssthresh_basis: if bits & 0x40 != 0 {
            SsthreshBasis::Cwnd
        } else {
            SsthreshBasis::Pipe
        },
        // RFC 6675's recovery in place of PRR
        recovery_reduction: if bits & 0x80 != 0 {
            RecoveryReduction::Rfc6675
        } else {
            RecoveryReduction::Prr
        },
        ..TcpConfig::default()
    }
}

/// `base` moved by the low 16 bits of `raw`, read as a signed offset.
fn near(base: SeqNum, raw: SeqNum) -> SeqNum {
    SeqNum(base.0.wrapping_add(raw.0 as u16 as i16 as i32 as u32))
}

/// One step of a script.
enum Step<'a> {
    Wait(u64),
    Segment {
        seg: Segment,
        payload: &'a [u8],
        times: u8,
    },
    Garbage,
}

/// Reads the next step; `seq_base` and `ack_base` are where the endpoint
/// expects the peer's sequence and acknowledgment numbers.
fn step<'a>(s: &mut Script<'a>, seq_base: SeqNum, ack_base: SeqNum) -> Step<'a> {
    let c = s.u8();
    if c % 8 == 0 {
        return Step::Wait(u64::from(s.u16()).max(1));
    }
    let n = s.u8() as usize;
    let raw = s.bytes(n);
    let len_override = (c & 0x40 != 0).then(|| s.u16());
    let Ok((_, _, mut seg, hlen)) = Segment::decode(raw) else {
        return Step::Garbage;
    };
    if c & 0x08 != 0 {
        seg.seq = near(seq_base, seg.seq);
    }
    if c & 0x10 != 0 {
        seg.ack = near(ack_base, seg.ack);
    }
    if c & 0x20 != 0 {
        let mut sack = SackBlocks::default();
        for b in seg.options.sack.as_slice() {
            sack.push(SackBlock {
                left: near(ack_base, b.left),
                right: near(ack_base, b.right),
            });
        }
        seg.options.sack = sack;
    }
    if let Some(len) = len_override {
        seg.len = u32::from(len);
    }
    Step::Segment {
        seg,
        payload: &raw[hlen..],
        times: c % 8,
    }
}

/// Everything an endpoint sends now; it must stop offering segments.
pub fn drain(mut poll: impl FnMut() -> Option<Transmit>) -> Vec<Transmit> {
    let mut out = Vec::new();
    while let Some(t) = poll() {
        out.push(t);
        assert!(out.len() < 10_000, "poll_transmit never returns None");
    }
    out
}

/// What a sender must keep whatever its peer sends.
#[derive(Debug, Default)]
pub struct SenderWatch {
    acked: u64,
}

impl SenderWatch {
    /// Checks `tx` after a step that made it send `sent`; `waited_until` is
    /// the time a wait step moved to (its due timers ran).
    pub fn check(
        &mut self,
        tx: &Sender,
        sent: &[Transmit],
        waited_until: Option<Instant>,
    ) -> Result<(), String> {
        let acked = tx.bytes_acked();
        if acked < self.acked {
            return Err(format!(
                "the acknowledged count went back from {} to {acked}",
                self.acked
            ));
        }
        self.acked = acked;
        if acked > tx.data_sent() {
            return Err(format!("acknowledged {acked} of {} sent", tx.data_sent()));
        }
        // the scoreboard counts whole segments: an ACK inside a segment
        // leaves all of it in flight (at most one segment, plus the FIN)
        let outstanding = tx.data_sent() - acked;
        if tx.in_flight() > outstanding + u64::from(tx.mss()) + 1 {
            return Err(format!(
                "{} bytes in flight, {outstanding} outstanding",
                tx.in_flight()
            ));
        }
        for t in sent {
            if matches!(t.kind, TxKind::Data | TxKind::Retransmission)
                && t.offset + u64::from(t.segment.len) > tx.data_sent()
            {
                return Err(format!("{t:?} is beyond the {} bytes sent", tx.data_sent()));
            }
        }
        if let Some(now) = waited_until {
            if tx.poll_timeout().is_some_and(|t| t <= now) {
                return Err(format!(
                    "a timer at {:?} is still due at {now:?}",
                    tx.poll_timeout()
                ));
            }
        }
        Ok(())
    }
}

/// What a receiver must keep whatever its peer sends.
#[derive(Debug, Default)]
pub struct ReceiverWatch {
    delivered: u64,
    last_ack: Option<SeqNum>,
}

impl ReceiverWatch {
    /// Checks `rx` (with receive window `rcv_window`) after a step that made
    /// it send `sent`; `waited_until` as for [`SenderWatch::check`].
    pub fn check(
        &mut self,
        rx: &Receiver,
        rcv_window: u64,
        sent: &[Transmit],
        waited_until: Option<Instant>,
    ) -> Result<(), String> {
        for t in sent {
            match t.kind {
                TxKind::Ack => {
                    // cumulative ACKs never go back (a SYN-ACK may start
                    // the connection again with a new base)
                    if let Some(prev) = self.last_ack {
                        if t.segment.ack.0.wrapping_sub(prev.0) >= 1 << 31 {
                            return Err(format!(
                                "ACK went back from {} to {}",
                                prev.0, t.segment.ack.0
                            ));
                        }
                    }
                    self.last_ack = Some(t.segment.ack);
                }
                TxKind::SynAck => self.last_ack = None,
                _ => return Err(format!("a receiver sent {t:?}")),
            }
        }
        if let Some(now) = waited_until {
            if rx.poll_timeout().is_some_and(|t| t <= now) {
                return Err(format!(
                    "a timer at {:?} is still due at {now:?}",
                    rx.poll_timeout()
                ));
            }
        }
        if rx.delivered() < self.delivered {
            return Err("the delivered count went back".into());
        }
        self.delivered = rx.delivered();
        if rx.out_of_order_bytes() > rcv_window + 70_000 {
            return Err(format!(
                "{} bytes held out of order",
                rx.out_of_order_bytes()
            ));
        }
        Ok(())
    }
}

/// A connected sender fed a script (see the module description).
pub fn sender_fed(data: &[u8]) {
    let mut s = Script::new(data);
    let cfg = config(s.u8());
    let algorithms = every_algorithm();
    let algo = &algorithms[s.u8() as usize % algorithms.len()];
    // the SYN-ACK carries whatever options the script's first header holds
    let n = s.u8() as usize;
    let options = Segment::decode(s.bytes(n)).map_or(Options::default(), |(_, _, g, _)| g.options);
    let synack = Segment {
        seq: IRS,
        ack: ISS + 1,
        flags: Flags::SYN.with(Flags::ACK),
        window: 65_535,
        len: 0,
        options,
    };
    let finite = data.first().is_some_and(|b| b & 0x40 != 0);
    let mut h = Harness::with_algorithm(cfg, algo, synack, !finite);
    if finite {
        h.tx.write_virtual(200_000);
        h.tx.close();
    }
    let mut now = 100;
    let mut watch = SenderWatch::default();
    drain(|| h.tx.poll_transmit(ms(now)));
    for _ in 0..MAX_STEPS {
        if s.done() {
            break;
        }
        let ack_base = SeqNum::from_offset(ISS + 1, h.tx.bytes_acked());
        let mut waited = None;
        match step(&mut s, IRS + 1, ack_base) {
            Step::Wait(d) => {
                now += d;
                if h.tx.poll_timeout().is_some_and(|t| t <= ms(now)) {
                    h.tx.handle_timeout(ms(now));
                }
                waited = Some(ms(now));
            }
            Step::Segment { seg, times, .. } => {
                for _ in 0..times {
                    h.tx.handle_segment(ms(now), &seg);
                }
            }
            Step::Garbage => {}
        }
        let sent = drain(|| h.tx.poll_transmit(ms(now)));
        if let Err(e) = watch.check(&h.tx, &sent, waited) {
            panic!("{e}");
        }
        let _ = h.tx.snapshot();
    }
}

/// A receiver fed a script from its SYN on (see the module description).
/// Bit `0x40` of the configuration byte keeps real payload bytes, which the
/// target then reads back.
pub fn receiver_fed(data: &[u8]) {
    let mut s = Script::new(data);
    let bits = s.u8();
    let cfg = config(bits);
    let _ = s.u8(); // (the algorithm byte: a receiver has none)
    let n = s.u8() as usize;
    let options = Segment::decode(s.bytes(n)).map_or(Options::default(), |(_, _, g, _)| g.options);
    let iss = SeqNum(3_000_000_000);
    let peer_iss = SeqNum(u32::MAX - 10_000);
    let rcv_window = cfg.rcv_window.0;
    let mut rx = Receiver::new(cfg.clone(), iss);
    let real_bytes = bits & 0x40 != 0;
    if real_bytes {
        rx.keep_bytes();
    }
    let syn = Segment {
        seq: peer_iss,
        ack: SeqNum(0),
        flags: Flags::SYN,
        window: 65_535,
        len: 0,
        options: Options {
            timestamps: options
                .timestamps
                .or(cfg.timestamps.then_some(Timestamps { val: 1, ecr: 0 })),
            ..options
        },
    };
    let mut now = 0;
    rx.handle_segment(ms(now), &syn, None);
    let mut watch = ReceiverWatch::default();
    let mut read = 0u64;
    let mut buf = [0u8; 4096];
    for _ in 0..MAX_STEPS {
        if s.done() {
            break;
        }
        let seq_base = SeqNum::from_offset(peer_iss + 1, rx.delivered());
        let mut waited = None;
        match step(&mut s, seq_base, iss + 1) {
            Step::Wait(d) => {
                now += d;
                if rx.poll_timeout().is_some_and(|t| t <= ms(now)) {
                    rx.handle_timeout(ms(now));
                }
                waited = Some(ms(now));
            }
            Step::Segment {
                seg,
                payload,
                times,
            } => {
                for _ in 0..times {
                    rx.handle_segment(ms(now), &seg, real_bytes.then_some(payload));
                }
            }
            Step::Garbage => {}
        }
        let sent = drain(|| rx.poll_transmit(ms(now)));
        if let Err(e) = watch.check(&rx, rcv_window, &sent, waited) {
            panic!("{e}");
        }
        loop {
            let got = rx.read(&mut buf) as u64;
            if got == 0 {
                break;
            }
            read += got;
        }
        assert!(
            read <= rx.delivered(),
            "read {read} of {} delivered",
            rx.delivered()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-written script (connect, an ACK at the expected numbers three
    /// times, a second passes) runs through all three targets.
    #[test]
    fn a_hand_written_script_runs() {
        let mut ack = Vec::new();
        Segment {
            flags: Flags::ACK,
            window: 32_767,
            ..Segment::default()
        }
        .encode(5001, 10_000, &mut ack)
        .unwrap();
        let mut script = vec![0x01, 2, 0];
        script.extend([0x13, ack.len() as u8]); // relative ACK, three times
        script.extend(&ack);
        script.extend([0x00, 0x03, 0xe8]); // 1 s passes
        sender_fed(&script);
        wire_roundtrip(&ack);
        receiver_fed(&script);
    }
}
