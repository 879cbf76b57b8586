//! Receiver behaviour against hand-written data segments.

use crate::config::TcpConfig;
use crate::seq::SeqNum;
use crate::time::Instant;
use crate::wire::{Flags, Options, Segment};
use crate::{Receiver, ReceiverState, Transmit, TxKind};

const MSS: u32 = 1000;
const IRS: SeqNum = SeqNum(u32::MAX - 2_500); // data crosses the 32-bit wrap
const ISS: SeqNum = SeqNum(9);

fn t(ms: u64) -> Instant {
    Instant::from_nanos(ms * 1_000_000)
}

fn connected(cfg: TcpConfig) -> Receiver {
    connected_with(cfg, None)
}

/// A receiver after a SYN that offers SACK, window scaling and, if given,
/// timestamps.
fn connected_with(cfg: TcpConfig, timestamps: Option<crate::wire::Timestamps>) -> Receiver {
    let sack = cfg.sack;
    let mut rx = Receiver::new(cfg, ISS);
    let syn = Segment {
        seq: IRS,
        flags: Flags::SYN,
        window: 65_535,
        options: Options {
            mss: Some(MSS as u16),
            sack_permitted: true,
            window_scale: Some(7),
            timestamps,
            ..Options::default()
        },
        ..Segment::default()
    };
    rx.handle_segment(t(0), &syn, None);
    let synack = rx.poll_transmit(t(0)).unwrap();
    assert_eq!(synack.kind, TxKind::SynAck);
    assert_eq!(synack.segment.ack, IRS + 1);
    assert_eq!(synack.segment.options.sack_permitted, sack);
    rx
}

fn data(off: u64, len: u32, fin: bool) -> Segment {
    let mut flags = Flags::ACK;
    if fin {
        flags = flags.with(Flags::FIN);
    }
    Segment {
        seq: SeqNum::from_offset(IRS + 1, off),
        ack: ISS + 1,
        flags,
        window: 512,
        len,
        options: Options::default(),
    }
}

/// (ack offset, SACK blocks as offsets) of an ACK.
fn decode(t: &Transmit) -> (u64, Vec<(u64, u64)>) {
    let base = IRS + 1;
    let ack = t.segment.ack.to_offset(base, 0);
    let blocks = t
        .segment
        .options
        .sack
        .as_slice()
        .iter()
        .map(|b| (b.left.to_offset(base, 0), b.right.to_offset(base, 0)))
        .collect();
    (ack, blocks)
}

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS,
        ..TcpConfig::default()
    }
}

#[test]
fn delayed_ack_every_second_full_segment_or_after_the_delay() {
    let mut rx = connected(cfg());
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    assert!(rx.poll_transmit(t(10)).is_none());
    assert_eq!(rx.poll_timeout(), Some(t(210)));
    rx.handle_segment(t(11), &data(1000, MSS, false), None);
    let a = rx.poll_transmit(t(11)).unwrap();
    assert_eq!(decode(&a), (2000, vec![]));
    assert_eq!(rx.poll_timeout(), None);
    rx.handle_segment(t(12), &data(2000, MSS, false), None);
    assert!(rx.poll_transmit(t(12)).is_none());
    rx.handle_timeout(t(212));
    assert_eq!(decode(&rx.poll_transmit(t(212)).unwrap()), (3000, vec![]));
    assert_eq!(rx.state(), ReceiverState::Established);
}

#[test]
fn no_delay_when_delayed_acks_are_off() {
    let mut rx = connected(TcpConfig {
        delayed_ack: None,
        ..cfg()
    });
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    assert_eq!(decode(&rx.poll_transmit(t(10)).unwrap()), (1000, vec![]));
}

#[test]
fn out_of_order_data_gets_an_immediate_duplicate_ack_with_sack_blocks() {
    let mut rx = connected(cfg());
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    rx.handle_segment(t(11), &data(2000, MSS, false), None);
    assert_eq!(
        decode(&rx.poll_transmit(t(11)).unwrap()),
        (1000, vec![(2000, 3000)])
    );
    rx.handle_segment(t(12), &data(5000, MSS, false), None);
    // the newest block first, then the previously reported one
    assert_eq!(
        decode(&rx.poll_transmit(t(12)).unwrap()),
        (1000, vec![(5000, 6000), (2000, 3000)])
    );
    rx.handle_segment(t(13), &data(3000, MSS, false), None);
    assert_eq!(
        decode(&rx.poll_transmit(t(13)).unwrap()),
        (1000, vec![(2000, 4000), (5000, 6000)])
    );
    // the hole is filled: immediate cumulative ACK, remaining block reported
    rx.handle_segment(t(14), &data(1000, MSS, false), None);
    assert_eq!(
        decode(&rx.poll_transmit(t(14)).unwrap()),
        (4000, vec![(5000, 6000)])
    );
    assert_eq!(rx.delivered(), 4000);
    assert_eq!(rx.stats().out_of_order_segments, 3);
}

/// Without SACK the receiver still reassembles and acknowledges out-of-order
/// data at once, but its ACKs carry no blocks (and it keeps no list of them).
#[test]
fn without_sack_out_of_order_data_gets_plain_duplicate_acks() {
    let mut rx = connected(TcpConfig {
        sack: false,
        ..cfg()
    });
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    for (ms, off) in [(11, 2000), (12, 5000), (13, 3000)] {
        rx.handle_segment(t(ms), &data(off, MSS, false), None);
        assert_eq!(decode(&rx.poll_transmit(t(ms)).unwrap()), (1000, vec![]));
    }
    rx.handle_segment(t(14), &data(1000, MSS, false), None);
    assert_eq!(decode(&rx.poll_transmit(t(14)).unwrap()), (4000, vec![]));
    rx.handle_segment(t(15), &data(4000, MSS, false), None);
    assert_eq!(decode(&rx.poll_transmit(t(15)).unwrap()), (6000, vec![]));
    assert_eq!(rx.delivered(), 6000);
    assert_eq!(rx.stats().out_of_order_segments, 3);
}

#[test]
fn duplicates_are_reported_with_dsack() {
    let mut rx = connected(cfg());
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    rx.handle_segment(t(11), &data(1000, MSS, false), None);
    rx.poll_transmit(t(11)).unwrap();
    rx.handle_segment(t(12), &data(0, MSS, false), None);
    assert_eq!(
        decode(&rx.poll_transmit(t(12)).unwrap()),
        (2000, vec![(0, 1000)])
    );
    // a duplicate above a hole: DSACK first, then the block it lies in (RFC 2883)
    rx.handle_segment(t(13), &data(3000, MSS, false), None);
    rx.poll_transmit(t(13)).unwrap();
    rx.handle_segment(t(14), &data(3000, MSS, false), None);
    assert_eq!(
        decode(&rx.poll_transmit(t(14)).unwrap()),
        (2000, vec![(3000, 4000), (3000, 4000)])
    );
    assert_eq!(rx.stats().duplicate_segments, 2);
    assert_eq!(rx.stats().dsacks_sent, 2);
}

#[test]
fn fin_is_acknowledged_and_finishes() {
    let mut rx = connected(cfg());
    rx.handle_segment(t(10), &data(0, 500, true), None);
    let (ack, _) = decode(&rx.poll_transmit(t(10)).unwrap());
    assert_eq!(ack, 501, "the FIN takes one sequence number");
    assert_eq!(rx.state(), ReceiverState::Finished);
    assert_eq!(rx.delivered(), 500);
    assert_eq!(rx.stats().finished_at, Some(t(10)));
}

#[test]
fn real_bytes_are_reassembled_in_order() {
    let mut rx = connected(cfg());
    rx.keep_bytes();
    let msg: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 256) as u8).collect();
    rx.handle_segment(t(1), &data(2000, MSS, false), Some(&msg[2000..]));
    rx.handle_segment(t(2), &data(1000, MSS, false), Some(&msg[1000..2000]));
    rx.handle_segment(t(3), &data(1000, MSS, false), Some(&msg[1000..2000]));
    let mut out = vec![0u8; 4000];
    assert_eq!(rx.read(&mut out), 0, "nothing in order yet");
    rx.handle_segment(t(4), &data(0, MSS, false), Some(&msg[..1000]));
    assert_eq!(rx.read(&mut out), 3000);
    assert_eq!(&out[..3000], &msg[..]);
}

#[test]
fn data_beyond_the_window_is_dropped() {
    let mut rx = connected(TcpConfig {
        rcv_window: crate::ByteSize(4000),
        ..cfg()
    });
    rx.handle_segment(t(1), &data(4000, MSS, false), None);
    assert_eq!(rx.stats().out_of_window_segments, 1);
    assert_eq!(decode(&rx.poll_transmit(t(1)).unwrap()), (0, vec![]));
}

fn rst(off: u64) -> Segment {
    Segment {
        seq: SeqNum::from_offset(IRS + 1, off),
        flags: Flags::RST,
        ..Segment::default()
    }
}

/// RFC 5961 section 3.2: only a RST at exactly RCV.NXT resets; one inside
/// the window is answered by a challenge ACK `<SEQ=SND.NXT><ACK=RCV.NXT>`
/// and dropped; one outside it is dropped silently.
#[test]
fn a_rst_resets_only_at_rcv_nxt_and_is_challenged_elsewhere_in_the_window() {
    let mut rx = connected(TcpConfig {
        delayed_ack: None,
        ..cfg()
    });
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    rx.poll_transmit(t(10)).unwrap();
    // in the window, not at RCV.NXT = 1000
    rx.handle_segment(t(11), &rst(1001), None);
    assert_eq!(rx.state(), ReceiverState::Established);
    let c = rx.poll_transmit(t(11)).expect("a challenge ACK");
    assert_eq!((c.kind, c.segment.flags), (TxKind::Ack, Flags::ACK));
    assert_eq!(c.segment.seq, ISS + 1, "SEQ = SND.NXT");
    assert_eq!(decode(&c), (1000, vec![]), "ACK = RCV.NXT");
    // below RCV.NXT, and beyond the window: dropped without an answer
    for off in [999, 1000 + cfg().rcv_window.0, 1 << 31] {
        rx.handle_segment(t(12), &rst(off), None);
        assert!(rx.poll_transmit(t(12)).is_none(), "RST at {off}");
        assert_eq!(rx.state(), ReceiverState::Established);
    }
    // data goes on
    rx.handle_segment(t(13), &data(1000, MSS, false), None);
    assert_eq!(decode(&rx.poll_transmit(t(13)).unwrap()), (2000, vec![]));
    assert_eq!(rx.stats().challenge_acks, 1);
    assert_eq!(rx.stats().resets_ignored, 4);
    // the peer's answer to a challenge, at exactly RCV.NXT, resets
    rx.handle_segment(t(14), &rst(2000), None);
    assert_eq!(rx.state(), ReceiverState::Closed);
    assert!(rx.poll_transmit(t(14)).is_none());
}

/// RFC 5961 section 4.2: after the handshake a SYN, at any sequence number
/// (the original one too), gets a challenge ACK, never a SYN-ACK, and
/// changes nothing.
#[test]
fn a_syn_after_the_handshake_gets_a_challenge_ack() {
    let mut rx = connected(TcpConfig {
        delayed_ack: None,
        ..cfg()
    });
    rx.handle_segment(t(10), &data(0, MSS, false), None);
    rx.poll_transmit(t(10)).unwrap();
    for (ms, seq) in [(11, IRS), (12, IRS + 500), (13, SeqNum(12345))] {
        let syn = Segment {
            seq,
            flags: Flags::SYN,
            options: Options {
                mss: Some(100),
                window_scale: Some(0),
                ..Options::default()
            },
            ..Segment::default()
        };
        rx.handle_segment(t(ms), &syn, None);
        let c = rx.poll_transmit(t(ms)).expect("a challenge ACK");
        assert_eq!((c.kind, c.segment.flags), (TxKind::Ack, Flags::ACK));
        assert_eq!(decode(&c), (1000, vec![]));
        assert!(rx.poll_transmit(t(ms)).is_none());
    }
    assert_eq!(rx.state(), ReceiverState::Established);
    rx.handle_segment(t(14), &data(1000, MSS, false), None);
    assert_eq!(decode(&rx.poll_transmit(t(14)).unwrap()), (2000, vec![]));
}

/// RFC 5961 section 7: at most 10 challenge ACKs in 5 seconds, so a flood
/// of forged RSTs does not become a flood of ACKs.
#[test]
fn challenge_acks_are_throttled() {
    let mut rx = connected(cfg());
    rx.handle_segment(t(5), &data(0, MSS, false), None);
    let mut answered = 0;
    for k in 0..100 {
        rx.handle_segment(t(10 + k), &rst(1001 + k), None);
        answered += std::iter::from_fn(|| rx.poll_transmit(t(10 + k))).count();
    }
    assert_eq!(answered, 10);
    rx.handle_segment(t(5_010), &rst(1007), None);
    assert!(rx.poll_transmit(t(5_010)).is_some(), "a new period");
    assert_eq!(rx.state(), ReceiverState::Established);
}

/// RFC 793: a RST in LISTEN is ignored; one that matches in SYN-RECEIVED
/// returns a passively opened connection to LISTEN, from where a new SYN
/// opens it again.
#[test]
fn a_rst_in_listen_is_ignored_and_in_syn_received_returns_to_listen() {
    let mut rx = Receiver::new(cfg(), ISS);
    rx.handle_segment(t(0), &rst(0), None);
    assert_eq!(rx.state(), ReceiverState::Listen);
    let mut rx = connected(cfg());
    assert_eq!(rx.state(), ReceiverState::SynReceived);
    rx.handle_segment(t(1), &rst(5), None);
    assert_eq!(
        rx.state(),
        ReceiverState::SynReceived,
        "challenged, not reset"
    );
    assert_eq!(rx.poll_transmit(t(1)).unwrap().kind, TxKind::Ack);
    rx.handle_segment(t(2), &rst(0), None);
    assert_eq!(rx.state(), ReceiverState::Listen);
    let syn = Segment {
        seq: IRS + 7,
        flags: Flags::SYN,
        ..Segment::default()
    };
    rx.handle_segment(t(3), &syn, None);
    let synack = rx.poll_transmit(t(3)).unwrap();
    assert_eq!((synack.kind, synack.segment.ack), (TxKind::SynAck, IRS + 8));
    assert_eq!(rx.stats().segments_received, 4, "the counters are kept");
}

/// RFC 9293 section 3.10.7.4 (fifth check): a segment without the ACK bit is
/// dropped. Before, data without it was taken in during SYN-RECEIVED, and a
/// RST that then returned the connection to LISTEN made the delivered count
/// go back (found by the receiver fuzz target).
#[test]
fn segments_without_the_ack_bit_are_dropped() {
    let mut rx = connected(cfg());
    let mut bare = data(0, MSS, false);
    bare.flags = Flags(0);
    rx.handle_segment(t(1), &bare, None);
    assert_eq!(rx.delivered(), 0);
    assert_eq!(rx.state(), ReceiverState::SynReceived);
    rx.handle_segment(t(2), &rst(0), None);
    assert_eq!(rx.state(), ReceiverState::Listen);
    assert_eq!(rx.delivered(), 0);
    let mut rx = connected(cfg());
    rx.handle_segment(t(3), &data(0, MSS, false), None);
    bare.seq = SeqNum::from_offset(IRS + 1, 1000);
    rx.handle_segment(t(4), &bare, None);
    assert_eq!(rx.delivered(), 1000, "established: still dropped");
}

/// The first FIN sets the end of the stream: data beyond it is not taken in,
/// and a FIN below data already received is ignored. Before, a FIN at 6 then
/// data up to 7 made 7 bytes readable while 6 counted as delivered (found by
/// the receiver fuzz target).
#[test]
fn nothing_is_received_beyond_the_fin() {
    let mut rx = connected(cfg());
    rx.keep_bytes();
    let msg = [7u8; 20];
    rx.handle_segment(t(1), &data(6, 0, true), None);
    rx.handle_segment(t(2), &data(0, 7, false), Some(&msg[..7]));
    assert_eq!(rx.delivered(), 6);
    assert_eq!(rx.state(), ReceiverState::Finished);
    let mut out = [0u8; 20];
    assert_eq!(rx.read(&mut out), 6);
    // a second FIN elsewhere changes nothing
    rx.handle_segment(t(3), &data(0, 12, true), Some(&msg[..12]));
    assert_eq!((rx.delivered(), rx.read(&mut out)), (6, 0));
    // a FIN below data already held out of order is ignored
    let mut rx = connected(cfg());
    rx.handle_segment(t(1), &data(1000, 500, false), None);
    rx.handle_segment(t(2), &data(0, 200, true), None);
    assert_eq!(rx.state(), ReceiverState::Established);
    rx.handle_segment(t(3), &data(200, 1300, true), None);
    assert_eq!(
        (rx.delivered(), rx.state()),
        (1500, ReceiverState::Finished)
    );
}

/// A receiver with `ecn` on after a SYN with `syn_flags` added (delayed
/// ACKs off), and its SYN-ACK's flags.
fn ecn_connected(ecn: bool, syn_flags: Flags) -> (Receiver, Flags) {
    let mut rx = Receiver::new(
        TcpConfig {
            ecn,
            delayed_ack: None,
            ..cfg()
        },
        ISS,
    );
    let syn = Segment {
        seq: IRS,
        flags: Flags::SYN.with(syn_flags),
        window: 65_535,
        ..Segment::default()
    };
    rx.handle_segment(t(0), &syn, None);
    let synack = rx.poll_transmit(t(0)).unwrap();
    assert_eq!(synack.ecn, crate::Ecn::NotEct, "a SYN-ACK is never ECT");
    (rx, synack.segment.flags)
}

/// RFC 3168 section 6.1.1: only an ECN-setup SYN (ECE and CWR) to a
/// receiver with ECN on gets an ECN-setup SYN-ACK (ECE, no CWR).
#[test]
fn only_an_ecn_setup_syn_gets_an_ecn_setup_synack() {
    let setup = Flags::ECE.with(Flags::CWR);
    for (ecn, syn, agreed) in [
        (true, setup, true),
        (true, Flags::ECE, false),
        (true, Flags(0), false),
        (false, setup, false),
    ] {
        let (rx, flags) = ecn_connected(ecn, syn);
        assert_eq!(rx.ecn_enabled(), agreed, "{ecn} {syn}");
        assert_eq!(flags.contains(Flags::ECE), agreed, "{ecn} {syn}");
        assert!(!flags.contains(Flags::CWR));
    }
}

/// RFC 3168 section 6.1.3: a CE mark sets ECN-Echo on every ACK until a
/// segment with CWR arrives; a CE on the CWR segment itself starts the echo
/// again; a mark on a segment outside the window is ignored (section
/// 6.1.5); ACKs are Not-ECT (section 6.1.4).
#[test]
fn a_ce_mark_is_echoed_until_cwr() {
    use crate::Ecn;
    let (mut rx, _) = ecn_connected(true, Flags::ECE.with(Flags::CWR));
    let ece = |rx: &mut Receiver, seg: Segment, ecn: Ecn| {
        rx.handle_segment_ecn(t(10), &seg, None, ecn);
        let a = rx.poll_transmit(t(10)).unwrap();
        assert_eq!(a.ecn, Ecn::NotEct);
        a.segment.flags.contains(Flags::ECE)
    };
    let cwr = |mut s: Segment| {
        s.flags = s.flags.with(Flags::CWR);
        s
    };
    assert!(!ece(&mut rx, data(0, MSS, false), Ecn::Ect0));
    assert!(ece(&mut rx, data(1000, MSS, false), Ecn::Ce));
    assert!(ece(&mut rx, data(2000, MSS, false), Ecn::Ect0), "held");
    assert!(!ece(&mut rx, cwr(data(3000, MSS, false)), Ecn::Ect0));
    assert!(!ece(&mut rx, data(4000, MSS, false), Ecn::Ect0));
    assert!(ece(&mut rx, cwr(data(5000, MSS, false)), Ecn::Ce));
    assert!(!ece(&mut rx, cwr(data(6000, MSS, false)), Ecn::Ect0));
    // an old segment (a duplicate) marked CE: outside the window
    assert!(!ece(&mut rx, data(1000, MSS, false), Ecn::Ce));
    assert_eq!(rx.stats().ce_received, 2);
    assert_eq!(rx.stats().ece_acks_sent, 3);
    // without ECN agreed a mark is not echoed
    let (mut rx, _) = ecn_connected(true, Flags(0));
    assert!(!ece(&mut rx, data(0, MSS, false), Ecn::Ce));
}

/// A receiver with timestamps on and no delayed ACKs, its TS.Recent from
/// the SYN's TSval of 1.
fn ts_connected() -> Receiver {
    let cfg = TcpConfig {
        timestamps: true,
        delayed_ack: None,
        ..cfg()
    };
    connected_with(cfg, Some(crate::wire::Timestamps { val: 1, ecr: 0 }))
}

fn stamped(off: u64, val: u32) -> Segment {
    let mut s = data(off, MSS, false);
    s.options.timestamps = Some(crate::wire::Timestamps { val, ecr: 1 });
    s
}

fn ecr(t: &Transmit) -> u32 {
    t.segment.options.timestamps.expect("a timestamp").ecr
}

/// RFC 7323 section 5.3: a segment outside the window is rejected (R2)
/// before TS.Recent is updated (R3). The ACK of an old duplicate echoes the
/// timestamp of the segment that last advanced the window, so that the
/// sender's RTT sample from it spans the time the duplicate's first copy
/// waited; a retransmission that fills the hole updates it.
#[test]
fn an_old_duplicate_leaves_ts_recent_as_it_was() {
    let mut rx = ts_connected();
    rx.handle_segment(t(10), &stamped(0, 100), None);
    assert_eq!(ecr(&rx.poll_transmit(t(10)).unwrap()), 100);
    // the same segment again, retransmitted much later: an immediate ACK
    // with the old echo
    rx.handle_segment(t(900), &stamped(0, 900), None);
    let a = rx.poll_transmit(t(900)).unwrap();
    assert_eq!(decode(&a).0, 1000);
    assert_eq!(ecr(&a), 100);
    // a segment that is partly new is accepted: its timestamp is taken
    let mut overlap = stamped(500, 950);
    overlap.len = MSS;
    rx.handle_segment(t(950), &overlap, None);
    let a = rx.poll_transmit(t(950)).unwrap();
    assert_eq!(decode(&a).0, 1500);
    assert_eq!(ecr(&a), 950);
}
