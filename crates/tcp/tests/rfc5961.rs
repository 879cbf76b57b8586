//! RFC 5961 in exchanges between a real sender and a real receiver: a blind
//! attacker who injects RST and SYN segments at in-window sequence numbers
//! cannot break a transfer (each forgery costs one challenge ACK, which the
//! real peer takes as an ordinary ACK), while a peer that really lost its
//! connection answers the challenge with a RST at exactly RCV.NXT and so
//! resets it (sections 3.2 and 4.2).

use wavelab_tcp::wire::{Flags, Segment};
use wavelab_tcp::{
    CcConfig, Instant, Receiver, ReceiverState, Sender, SenderState, SeqNum, TcpConfig, Transmit,
};

const TX_ISS: SeqNum = SeqNum(u32::MAX - 3_000); // the data crosses the 32-bit wrap
const RX_ISS: SeqNum = SeqNum(4_000_000);
const SIZE: u64 = 300_000;

fn ms(t: u64) -> Instant {
    Instant::from_nanos(t * 1_000_000)
}

fn pair() -> (Sender, Receiver) {
    let cfg = TcpConfig {
        mss: 1000,
        ..TcpConfig::default()
    };
    let cc =
        CcConfig::named("newreno")
            .unwrap()
            .build(cfg.mss, cfg.initial_cwnd, None, cfg.abc_limit);
    let mut tx = Sender::new(cfg.clone(), cc, TX_ISS);
    tx.write(&pattern(SIZE));
    tx.close();
    let mut rx = Receiver::new(cfg, RX_ISS);
    rx.keep_bytes();
    (tx, rx)
}

/// The bytes of the transfer.
fn pattern(n: u64) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 253) as u8).collect()
}

/// What the attacker injects, and when (in rounds of the exchange).
#[derive(Clone, Copy, Debug)]
enum Forgery {
    /// A RST to the receiver, `ahead` bytes beyond what it expects next.
    RstToReceiver { ahead: u32 },
    /// A RST to the sender, `ahead` bytes beyond IRS + 1.
    RstToSender { ahead: u32 },
    /// A SYN to the receiver at this sequence number.
    SynToReceiver(SeqNum),
    /// A SYN-ACK to the sender at this sequence number.
    SynToSender(SeqNum),
}

/// Runs the transfer over a lossless, 10 ms channel, injecting `forgeries`
/// (one per round, from round 3 on). Returns the bytes the receiver read and
/// both endpoints.
fn transfer(forgeries: &[Forgery]) -> (Vec<u8>, Sender, Receiver) {
    let (mut tx, mut rx) = pair();
    let mut read = Vec::new();
    let mut now = 0;
    let mut forged = forgeries.iter();
    for round in 0..2_000 {
        let to_rx: Vec<Transmit> = std::iter::from_fn(|| tx.poll_transmit(ms(now))).collect();
        now += 10;
        for t in &to_rx {
            let p = tx_payload(&tx, t);
            rx.handle_segment(ms(now), &t.segment, Some(&p));
        }
        if round >= 3 {
            match forged.next() {
                Some(Forgery::RstToReceiver { ahead }) => {
                    let seq = SeqNum::from_offset(TX_ISS + 1, rx.delivered()) + *ahead;
                    rx.handle_segment(ms(now), &forged_segment(seq, Flags::RST), None);
                }
                Some(Forgery::SynToReceiver(seq)) => {
                    rx.handle_segment(ms(now), &forged_segment(*seq, Flags::SYN), None);
                }
                Some(Forgery::RstToSender { ahead }) => {
                    tx.handle_segment(ms(now), &forged_segment(RX_ISS + 1 + *ahead, Flags::RST));
                }
                Some(Forgery::SynToSender(seq)) => {
                    let f = Flags::SYN.with(Flags::ACK);
                    tx.handle_segment(ms(now), &forged_segment(*seq, f));
                }
                None => {}
            }
        }
        let mut buf = [0u8; 65_536];
        loop {
            let n = rx.read(&mut buf);
            if n == 0 {
                break;
            }
            read.extend_from_slice(&buf[..n]);
        }
        if let Some(d) = rx.poll_timeout() {
            if d <= ms(now) {
                rx.handle_timeout(ms(now));
            }
        }
        let to_tx: Vec<Transmit> = std::iter::from_fn(|| rx.poll_transmit(ms(now))).collect();
        now += 10;
        for t in &to_tx {
            tx.handle_segment(ms(now), &t.segment);
        }
        if let Some(d) = tx.poll_timeout() {
            if d <= ms(now) {
                tx.handle_timeout(ms(now));
            }
        }
        if tx.state() == SenderState::Closed && to_rx.is_empty() && to_tx.is_empty() {
            break;
        }
    }
    (read, tx, rx)
}

fn tx_payload(tx: &Sender, t: &Transmit) -> Vec<u8> {
    let mut p = vec![0u8; t.segment.len as usize];
    tx.payload(t.offset, &mut p);
    p
}

fn forged_segment(seq: SeqNum, flags: Flags) -> Segment {
    Segment {
        seq,
        flags,
        window: 65_535,
        ..Segment::default()
    }
}

#[test]
fn a_clean_transfer_completes() {
    let (read, tx, rx) = transfer(&[]);
    assert_eq!(read, pattern(SIZE));
    assert!(tx.stats().completed_at.is_some());
    assert_eq!(rx.state(), ReceiverState::Finished);
}

/// Forged RSTs inside both windows (but never at RCV.NXT) and forged SYNs:
/// under RFC 793's rule the first one would have killed the connection.
#[test]
fn blind_in_window_rsts_and_syns_do_not_break_a_transfer() {
    let forgeries = [
        Forgery::RstToReceiver { ahead: 1 },
        Forgery::RstToSender { ahead: 1 },
        Forgery::SynToReceiver(TX_ISS),
        Forgery::RstToReceiver { ahead: 5_000 },
        Forgery::SynToSender(RX_ISS),
        Forgery::RstToSender { ahead: 60_000 },
        Forgery::SynToReceiver(SeqNum(77)),
        Forgery::RstToReceiver { ahead: 1 << 20 },
    ];
    let (read, tx, rx) = transfer(&forgeries);
    assert_eq!(read, pattern(SIZE), "every byte, in order, once");
    assert!(tx.stats().completed_at.is_some(), "the transfer completed");
    assert_eq!(rx.state(), ReceiverState::Finished);
    assert_eq!(tx.stats().challenge_acks, 3);
    assert_eq!(rx.stats().challenge_acks, 5);
    assert_eq!(tx.stats().resets_ignored, 2);
    assert_eq!(rx.stats().resets_ignored, 3);
}

/// The other side of section 3.2: a peer whose connection is really gone
/// sends a RST with a sequence number the receiver does not expect; the
/// receiver challenges it; the peer, without a connection, answers the
/// challenge ACK with a RST at SEG.ACK (RFC 793's reset for a segment to a
/// closed port), which is exactly RCV.NXT and resets the receiver.
#[test]
fn a_peer_that_really_reset_confirms_it_through_the_challenge() {
    let (mut tx, mut rx) = pair();
    let mut now = 0;
    // 5 round trips of data
    for _ in 0..5 {
        let out: Vec<Transmit> = std::iter::from_fn(|| tx.poll_transmit(ms(now))).collect();
        now += 10;
        for t in &out {
            rx.handle_segment(ms(now), &t.segment, Some(&tx_payload(&tx, t)));
        }
        let back: Vec<Transmit> = std::iter::from_fn(|| rx.poll_transmit(ms(now))).collect();
        now += 10;
        for t in &back {
            tx.handle_segment(ms(now), &t.segment);
        }
    }
    assert!(rx.delivered() > 0);
    // the sending host restarts: its RST carries a stale sequence number,
    // inside the receiver's window
    let stale = SeqNum::from_offset(TX_ISS + 1, rx.delivered()) + 1_000;
    rx.handle_segment(ms(now), &forged_segment(stale, Flags::RST), None);
    assert_eq!(rx.state(), ReceiverState::Established);
    let challenge = rx.poll_transmit(ms(now)).expect("a challenge ACK");
    assert_eq!(challenge.segment.flags, Flags::ACK);
    // the restarted host has no connection: RST with SEQ = SEG.ACK
    let answer = forged_segment(challenge.segment.ack, Flags::RST);
    rx.handle_segment(ms(now + 10), &answer, None);
    assert_eq!(rx.state(), ReceiverState::Closed);
    assert!(rx.poll_transmit(ms(now + 10)).is_none());
}
