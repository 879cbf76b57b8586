//! Conformance tests: each pins one rule of the RFCs the crate follows, found
//! broken by an independent review and fixed (window scaling on SYNs, the
//! negotiated MSS, Karn's backoff, limited transmit in ssthresh, no growth on
//! the ACK that enters recovery, RFC 6675's segment-count IsLost, receiver
//! merging and window updates, no SYN after establishment), plus a scale test.
//! They use only the public API.

use wavelab_tcp::cc::CaState;
use wavelab_tcp::testing::{ms, synack, Harness, IRS, ISS};
use wavelab_tcp::wire::Options;
use wavelab_tcp::{
    ByteSize, CcConfig, Duration, Flags, Instant, Receiver, Segment, Sender, SeqNum, TcpConfig,
    TxKind,
};

const MSS: u64 = 1000;

fn cfg(sack: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        sack,
        ..TcpConfig::default()
    }
}

// ----- RFC 7323: window scaling -------------------------------------------

/// RFC 7323 section 2.2: "The window field in a segment where the SYN bit is
/// set MUST NOT be scaled." The sender shifts the SYN-ACK's window.
#[test]
fn synack_window_is_not_scaled() {
    let h = Harness::with_synack(
        cfg(false),
        "newreno",
        synack(Some(1000), Some(7), false, 20_000),
    );
    assert_eq!(h.tx.send_window(), 20_000);
}

/// The same bug end to end: a receiver with a 100 000-byte buffer (shift 1)
/// advertises 65 535 in its SYN-ACK; the sender reads 131 070 and overruns the
/// receiver with its first flight.
#[test]
fn first_flight_respects_the_synack_window() {
    let c = TcpConfig {
        mss: 1000,
        initial_cwnd: 200,
        rcv_window: ByteSize(100_000),
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c.clone(), algo, ISS);
    let mut rx = Receiver::new(c, IRS);
    tx.write_unlimited();
    let syn = tx.poll_transmit(ms(0)).unwrap();
    rx.handle_segment(ms(0), &syn.segment, None);
    let sa = rx.poll_transmit(ms(0)).unwrap();
    tx.handle_segment(ms(10), &sa.segment);
    // the receiver's buffer fills up: the application reads nothing
    rx.keep_bytes();
    let mut sent = 0u64;
    while let Some(t) = tx.poll_transmit(ms(10)) {
        let mut payload = vec![0u8; t.segment.len as usize];
        tx.payload(t.offset, &mut payload);
        sent += t.segment.len as u64;
        rx.handle_segment(ms(10), &t.segment, Some(&payload));
    }
    assert!(sent <= 100_000, "{sent} B sent into a 100 000 B buffer");
    assert_eq!(rx.stats().out_of_window_segments, 0);
}

/// RFC 7323 section 1.3/2.2: window scaling is in effect only if both SYNs
/// carried the option, and the SYN-ACK may carry it only if the SYN did.
#[test]
fn receiver_does_not_scale_when_the_syn_had_no_window_scale() {
    let c = TcpConfig {
        mss: 1000,
        rcv_window: ByteSize(256 * 1024), // shift 3 if scaling were in effect
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let mut rx = Receiver::new(c, ISS);
    let syn = Segment {
        seq: IRS,
        flags: Flags::SYN,
        window: 65_535,
        options: Options {
            mss: Some(1000),
            window_scale: None,
            ..Options::default()
        },
        ..Segment::default()
    };
    rx.handle_segment(ms(0), &syn, None);
    let sa = rx.poll_transmit(ms(0)).unwrap();
    assert_eq!(
        sa.segment.options.window_scale, None,
        "no WS without the peer's WS"
    );
    let data = Segment {
        seq: IRS + 1,
        ack: ISS + 1,
        flags: Flags::ACK,
        window: 65_535,
        len: 1000,
        options: Options::default(),
    };
    rx.handle_segment(ms(1), &data, None);
    let a = rx.poll_transmit(ms(1)).unwrap();
    // unscaled: min(256 KiB, 65 535); the peer would read 32 768 as 32 768 bytes
    assert_eq!(a.segment.window, 65_535);
}

// ----- MSS -------------------------------------------------------------------

/// RFC 5681 / RFC 6928: SMSS is the negotiated send MSS. The algorithm is built
/// with the configured MSS and never learns the peer's smaller one: the
/// initial window is 14 600 B = 27 segments of 536 B (RFC 6928 allows
/// min(10 * 536, max(2 * 536, 14 600)) = 10 segments), and the loss window
/// after a timeout is 1460 B (almost three segments) instead of one segment.
#[test]
fn congestion_window_uses_the_negotiated_mss() {
    let c = TcpConfig {
        mss: 1460,
        sack: false,
        ..TcpConfig::default()
    };
    let mut h = Harness::with_synack(c, "newreno", synack(Some(536), None, false, 65_535));
    assert_eq!(h.tx.mss(), 536);
    let first = h.sent();
    assert!(
        first.len() <= 10,
        "initial window of {} segments of 536 B",
        first.len()
    );
    h.at(100 + 1_000);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.cwnd(), 536, "loss window is one (negotiated) segment");
}

/// A peer announcing MSS 0 (or any tiny value) is not clamped: the sender emits
/// zero-length "data" segments forever and `poll_transmit` never returns None.
#[test]
fn zero_mss_option_does_not_spin() {
    let mut h = Harness::with_synack(cfg(false), "newreno", synack(Some(0), None, false, 65_535));
    let mut n = 0;
    while let Some(t) = h.tx.poll_transmit(h.now) {
        assert!(
            !(t.kind == TxKind::Data
                && t.segment.len == 0
                && !t.segment.flags.contains(Flags::FIN)),
            "empty data segment sent (mss = {})",
            h.tx.mss()
        );
        n += 1;
        assert!(n < 1000, "poll_transmit never returns None");
    }
}

// ----- RFC 5681 / RFC 3042 ----------------------------------------------------

/// RFC 5681 section 3.2 step 2: "When [RFC3042] is in use, additional data sent
/// in limited transmit MUST NOT be included in this calculation" (of
/// ssthresh = max(FlightSize / 2, 2 SMSS)).
#[test]
fn ssthresh_excludes_limited_transmit_segments() {
    let mut c = cfg(false);
    c.limited_transmit = true;
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent().len(), 10);
    h.at(200);
    h.ack(0, &[]);
    h.ack(0, &[]);
    assert_eq!(h.sent().len(), 2, "two limited-transmit segments");
    h.ack(0, &[]);
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    assert_eq!(
        h.ssthresh(),
        5 * MSS,
        "FlightSize before limited transmit was 10 MSS"
    );
}

/// The window must not grow on the very ACK that starts a loss recovery: the
/// algorithm is told the state *before* the ACK, so an ACK that advances
/// snd_una and, through SACK, reveals a loss first sets cwnd = ssthresh and
/// then adds growth on top (Linux decides growth on the state after the ACK).
#[test]
fn no_window_growth_on_the_ack_that_enters_recovery() {
    let mut c = cfg(true);
    c.initial_cwnd = 20;
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent().len(), 20);
    h.at(200);
    // segments 0-9 arrive, 10 is lost, 11-19 arrive: one (stretch) ACK
    h.ack(10 * MSS, &[(11 * MSS, 20 * MSS)]);
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    assert_eq!(h.ssthresh(), 5 * MSS);
    assert_eq!(
        h.cwnd(),
        h.ssthresh(),
        "cwnd = ssthresh on entering recovery"
    );
}

/// Same with Tahoe and SACK: the fast retransmit sets cwnd to one segment, then
/// the same ACK slow-starts it to three.
#[test]
fn tahoe_loss_window_is_one_segment_even_when_the_ack_advances() {
    let mut c = cfg(true);
    c.initial_cwnd = 20;
    let mut h = Harness::new(c, "tahoe");
    assert_eq!(h.sent().len(), 20);
    h.at(200);
    h.ack(10 * MSS, &[(11 * MSS, 20 * MSS)]);
    assert_eq!(h.tx.ca_state(), CaState::Loss);
    assert_eq!(h.cwnd(), MSS);
}

// ----- RFC 6298 ----------------------------------------------------------------

/// RFC 6298 section 5 (after 5.7) and RFC 9293 MUST-19 / Karn: the backed-off RTO
/// is kept until a valid RTT sample "collapses" it; an ACK of retransmitted
/// data gives no sample and must not clear the backoff.
#[test]
fn backoff_is_kept_until_a_valid_rtt_sample() {
    let mut c = cfg(false);
    c.initial_cwnd = 2;
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent().len(), 2);
    h.at(1_100);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), vec![(0, true)]);
    assert_eq!(h.tx.rtt().rto(), Duration::from_secs(2));
    h.at(1_500);
    h.ack(MSS, &[]); // covers the retransmitted segment: ambiguous, no sample
    assert_eq!(h.tx.rtt().srtt(), Some(Duration::from_millis(100)));
    assert_eq!(h.tx.rtt().rto(), Duration::from_secs(2), "backoff kept");
}

/// The consequence: when the path RTT jumps above the RTO, every timeout's
/// retransmission is acknowledged (ambiguously), the backoff is cleared, the
/// next segment times out again after the unbacked RTO, and the sender never
/// takes a valid RTT sample: spurious timeouts forever.
#[test]
fn rtt_above_rto_is_eventually_learned() {
    let c = TcpConfig {
        mss: 1000,
        initial_cwnd: 1,
        sack: false,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c.clone(), algo, ISS);
    let mut rx = Receiver::new(c, IRS);
    tx.write_unlimited();
    // one-way delay 50 ms, then 1.5 s from t = 1 s (RTT 3 s > RTO 1 s)
    let delay = |t: Instant| {
        if t < ms(1_000) {
            Duration::from_millis(50)
        } else {
            Duration::from_millis(1_500)
        }
    };
    let mut to_rx: std::collections::VecDeque<(Instant, Segment)> = Default::default();
    let mut to_tx: std::collections::VecDeque<(Instant, Segment)> = Default::default();
    let mut now = Instant::ZERO;
    let end = ms(120_000);
    while now < end {
        while let Some(t) = tx.poll_transmit(now) {
            to_rx.push_back((now + delay(now), t.segment));
        }
        while let Some(t) = rx.poll_transmit(now) {
            to_tx.push_back((now + delay(now), t.segment));
        }
        let next = [
            to_rx.front().map(|x| x.0),
            to_tx.front().map(|x| x.0),
            tx.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap();
        now = next;
        if to_rx.front().is_some_and(|x| x.0 <= now) {
            let (_, s) = to_rx.pop_front().unwrap();
            rx.handle_segment(now, &s, None);
        } else if to_tx.front().is_some_and(|x| x.0 <= now) {
            let (_, s) = to_tx.pop_front().unwrap();
            tx.handle_segment(now, &s);
        } else {
            tx.handle_timeout(now);
        }
    }
    let srtt = tx.rtt().srtt().unwrap();
    assert!(
        srtt >= Duration::from_secs(1),
        "after 2 minutes on a 3 s path: srtt {srtt}, {} timeouts, {} B delivered",
        tx.stats().rto_expiries,
        rx.delivered()
    );
}

// ----- connection setup -------------------------------------------------------

/// The SYN timer fires (a SYN retransmission is queued) and the SYN-ACK arrives
/// before the driver polls: the sender, now established, still emits a SYN and
/// re-arms the retransmission timer for it.
#[test]
fn no_syn_after_the_connection_is_established() {
    let c = cfg(false);
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c, algo, ISS);
    tx.write_virtual(500);
    tx.close();
    assert_eq!(tx.poll_transmit(ms(0)).unwrap().kind, TxKind::Syn);
    tx.handle_timeout(ms(1_000));
    tx.handle_segment(ms(1_000), &synack(Some(1000), None, false, 65_535));
    let mut kinds = Vec::new();
    while let Some(t) = tx.poll_transmit(ms(1_000)) {
        kinds.push(t.kind);
    }
    assert!(!kinds.contains(&TxKind::Syn), "sent {kinds:?}");
}

// ----- RFC 6675 IsLost ------------------------------------------------------

/// RFC 6675 IsLost(SeqNum) is true when "either DupThresh discontiguous SACKed
/// sequences have arrived above 'SeqNum' or more than (DupThresh - 1) * SMSS
/// bytes ... have been SACKed". Only the byte test is implemented, so with
/// short segments (an application writing 300 B at a time) a second hole with
/// three separately SACKed segments above it is never marked lost and waits
/// for the retransmission timeout.
#[test]
fn is_lost_counts_sacked_segments_not_only_bytes() {
    const L: u64 = 300;
    let mut h = Harness::with_stream(
        cfg(true),
        "newreno",
        synack(Some(MSS as u16), Some(7), true, 65_535),
        false,
    );
    for i in 0..12 {
        h.tx.write_virtual(L);
        assert_eq!(h.sent(), vec![(i * L, false)]);
    }
    h.at(200);
    let seg = |i: u64| (i * L, (i + 1) * L);
    // segments 0, 4, 6 and 8 lost
    h.ack(0, &[seg(1)]);
    h.ack(0, &[(L, 3 * L)]);
    h.ack(0, &[(L, 4 * L)]);
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    let mut rtx: Vec<u64> = h.sent().into_iter().filter(|s| s.1).map(|s| s.0).collect();
    assert_eq!(rtx, vec![0]);
    h.ack(0, &[seg(5), (L, 4 * L)]);
    h.ack(0, &[seg(7), seg(5), (L, 4 * L)]);
    h.ack(0, &[seg(9), seg(7), seg(5), (L, 4 * L)]);
    h.ack(0, &[(9 * L, 11 * L), seg(7), seg(5), (L, 4 * L)]);
    h.ack(0, &[(9 * L, 12 * L), seg(7), seg(5), (L, 4 * L)]);
    rtx.extend(h.sent().into_iter().filter(|s| s.1).map(|s| s.0));
    // three discontiguous SACKed sequences (5, 7, 9-11) lie above segment 4
    assert!(
        rtx.contains(&(4 * L)),
        "segment 4 not retransmitted: {rtx:?}"
    );
}

// ----- receive window -------------------------------------------------------

/// A slow reader closes the receive window; when the application then reads,
/// the receiver never announces the reopened window (RFC 9293 3.8.6.2.2 /
/// RFC 1122 4.2.3.3: send a window update once the window opens by
/// min(RCV.BUFF / 2, MSS)). Without zero-window probing in the sender (a
/// documented simplification), nothing ever moves again: both ends are idle
/// with data left to send and no timer armed.
#[test]
fn reading_reopens_a_closed_window() {
    let c = TcpConfig {
        mss: 1000,
        rcv_window: ByteSize(4000),
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c.clone(), algo, ISS);
    let mut rx = Receiver::new(c, IRS);
    rx.keep_bytes();
    tx.write_virtual(10_000);
    tx.close();
    let now = ms(0);
    let mut app = vec![0u8; 100_000];
    let mut read = 0;
    for round in 0..20 {
        loop {
            let mut moved = false;
            while let Some(t) = tx.poll_transmit(now) {
                let mut p = vec![0u8; t.segment.len as usize];
                tx.payload(t.offset, &mut p);
                rx.handle_segment(now, &t.segment, Some(&p));
                moved = true;
            }
            while let Some(t) = rx.poll_transmit(now) {
                tx.handle_segment(now, &t.segment);
                moved = true;
            }
            if !moved {
                break;
            }
        }
        if round == 0 {
            assert_eq!(
                tx.send_window(),
                0,
                "the reader has not read: window closed"
            );
        }
        // the application reads everything it can now
        read += rx.read(&mut app[read..]);
    }
    assert_eq!(
        read,
        10_000,
        "transfer stalled: sender idle, timer {:?}",
        tx.poll_timeout()
    );
}

// ----- scale -------------------------------------------------------------------

/// Regression test for per-ACK cost: 40 000 segments in flight, every other one
/// lost, SACK recovery through a real receiver. Linear work overall; a
/// quadratic path would take minutes.
#[test]
fn forty_thousand_segments_in_flight_with_every_other_lost() {
    let n = 40_000u64;
    let c = TcpConfig {
        mss: 1000,
        initial_cwnd: n as u32 + 1,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c.clone(), algo, ISS);
    let mut rx = Receiver::new(c, IRS);
    tx.write_virtual(n * 1000);
    tx.close();
    let syn = tx.poll_transmit(ms(0)).unwrap();
    rx.handle_segment(ms(0), &syn.segment, None);
    let sa = rx.poll_transmit(ms(0)).unwrap();
    tx.handle_segment(ms(10), &sa.segment);
    // a window update with the scaled window (64 MiB >> 10), as the first ACK
    // would carry it: the SYN-ACK's own window field is unscaled
    let update = Segment {
        seq: IRS + 1,
        ack: ISS + 1,
        flags: Flags::ACK,
        window: 65_535,
        len: 0,
        options: Options::default(),
    };
    tx.handle_segment(ms(10), &update);
    let start = std::time::Instant::now();
    let mut flight = Vec::new();
    while let Some(t) = tx.poll_transmit(ms(10)) {
        flight.push(t.segment);
    }
    assert_eq!(flight.len() as u64, n);
    let mut acks = Vec::new();
    for (i, s) in flight.iter().enumerate() {
        if i % 2 == 1 {
            rx.handle_segment(ms(20), s, None);
            while let Some(a) = rx.poll_transmit(ms(20)) {
                acks.push(a.segment);
            }
        }
    }
    let mut t = 30;
    while tx.stats().completed_at.is_none() {
        let mut rtx = Vec::new();
        if acks.is_empty() {
            // the last holes have too few SACKed segments above them: timeout
            let d = tx.poll_timeout().expect("timer armed");
            t = t.max(d.as_nanos() / 1_000_000);
            tx.handle_timeout(ms(t));
            while let Some(x) = tx.poll_transmit(ms(t)) {
                rtx.push(x.segment);
            }
        }
        for a in acks.drain(..) {
            tx.handle_segment(ms(t), &a);
            while let Some(x) = tx.poll_transmit(ms(t)) {
                rtx.push(x.segment);
            }
        }
        t += 10;
        for s in rtx {
            rx.handle_segment(ms(t), &s, None);
            while let Some(a) = rx.poll_transmit(ms(t)) {
                acks.push(a.segment);
            }
        }
        t += 10;
    }
    assert_eq!(rx.delivered(), n * 1000);
    assert!(tx.stats().rto_expiries <= 1);
    assert_eq!(tx.stats().retransmissions, n / 2, "each hole exactly once");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

/// RFC 6691 / RFC 9293 section 3.7.1: the MSS option excludes options, and "the
/// sender MUST reduce the TCP data length to account for any IP or TCP options
/// that it is including in the packets that it sends". With timestamps, full
/// segments carry 1460 B of payload plus the 12-byte option: 1512-byte packets
/// on a 1500-byte path.
#[test]
fn timestamps_option_fits_in_the_mtu() {
    let c = TcpConfig {
        mss: 1460,
        timestamps: true,
        ..TcpConfig::default()
    };
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c.clone(), algo, ISS);
    let mut rx = Receiver::new(c, IRS);
    tx.write_unlimited();
    let syn = tx.poll_transmit(ms(5)).unwrap();
    rx.handle_segment(ms(5), &syn.segment, None);
    let sa = rx.poll_transmit(ms(5)).unwrap();
    tx.handle_segment(ms(10), &sa.segment);
    let t = tx.poll_transmit(ms(10)).unwrap();
    assert!(t.segment.options.timestamps.is_some());
    assert!(
        t.segment.ip_len() <= 1500,
        "{}-byte packet",
        t.segment.ip_len()
    );
}

/// RFC 9293 (3.10.7.4, "segment text"): a retransmission may be repackaged (Linux
/// collapses retransmissions), so one in-order segment can cover several
/// out-of-order ranges. The receiver merges only the first one: here it holds
/// every byte below 5000 but acknowledges 4500.
#[test]
fn receiver_merges_every_out_of_order_range_a_segment_reaches() {
    let c = TcpConfig {
        mss: 1000,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let mut rx = Receiver::new(c, ISS);
    let syn = Segment {
        seq: IRS,
        flags: Flags::SYN,
        window: 65_535,
        options: Options {
            mss: Some(1000),
            sack_permitted: true,
            window_scale: Some(7),
            ..Options::default()
        },
        ..Segment::default()
    };
    rx.handle_segment(ms(0), &syn, None);
    rx.poll_transmit(ms(0)).unwrap();
    let data = |off: u64, len: u32| Segment {
        seq: SeqNum::from_offset(IRS + 1, off),
        ack: ISS + 1,
        flags: Flags::ACK,
        window: 512,
        len,
        options: Options::default(),
    };
    rx.handle_segment(ms(1), &data(2000, 1000), None);
    rx.handle_segment(ms(2), &data(4000, 1000), None);
    while rx.poll_transmit(ms(2)).is_some() {}
    // a repackaged retransmission of 0..4500
    rx.handle_segment(ms(3), &data(0, 4500), None);
    let a = rx.poll_transmit(ms(3)).unwrap();
    assert_eq!(a.segment.ack, SeqNum::from_offset(IRS + 1, 5000));
    assert_eq!(rx.delivered(), 5000);
}
