//! Sender behaviour against hand-written ACK sequences: each test plays the
//! receiver's part segment by segment and checks the sender's exact reaction.

use crate::cc::CaState;
use crate::config::TcpConfig;
use crate::testing::{Harness, ACK_WINDOW, IRS, ISS};
use crate::time::{Duration, Instant};
use crate::wire::{Flags, Options, Segment};
use crate::{CcConfig, Sender, SeqNum, TxKind};

const MSS: u64 = 1000;

fn cfg(sack: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        sack,
        ..TcpConfig::default()
    }
}

fn new_data(range: std::ops::Range<u64>) -> Vec<(u64, bool)> {
    range.map(|i| (i * MSS, false)).collect()
}

#[test]
fn handshake_sends_initial_window_and_measures_syn_rtt() {
    let mut h = Harness::new(cfg(false), "newreno");
    assert_eq!(h.sent(), new_data(0..10));
    assert_eq!(h.tx.rtt().srtt(), Some(Duration::from_millis(100)));
    assert!(!h.tx.sack_enabled());
}

#[test]
fn slow_start_grows_one_mss_per_acked_segment() {
    let mut h = Harness::new(cfg(false), "newreno");
    h.sent();
    h.at(200);
    h.ack(MSS, &[]);
    assert_eq!(h.cwnd(), 11 * MSS);
    // one ACK frees one segment and grows cwnd by one: two new segments
    assert_eq!(h.sent(), new_data(10..12));
}

#[test]
fn reno_halves_on_three_dupacks_inflates_and_deflates() {
    let mut h = Harness::new(cfg(false), "reno");
    assert_eq!(h.sent().len(), 10);
    h.at(200);
    // segment 0 lost: segments 1.. arrive and each produces a duplicate ACK
    h.ack(0, &[]);
    h.ack(0, &[]);
    assert!(h.sent().is_empty(), "no limited transmit by default");
    assert_eq!(h.tx.ca_state(), CaState::Disorder);
    h.ack(0, &[]);
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    assert_eq!(h.ssthresh(), 5 * MSS, "ssthresh = FlightSize / 2");
    assert_eq!(h.cwnd(), 5 * MSS);
    assert_eq!(
        h.sent(),
        vec![(0, true)],
        "fast retransmit of the lost segment"
    );
    // Inflation: cwnd + 3 MSS + 1 MSS per further dupack; new data once the
    // inflated window exceeds FlightSize (10 segments): after the 6th dupack.
    h.ack(0, &[]);
    h.ack(0, &[]);
    assert!(h.sent().is_empty());
    h.ack(0, &[]);
    assert_eq!(h.sent(), new_data(10..11));
    h.ack(0, &[]);
    assert_eq!(h.sent(), new_data(11..12));
    // The retransmission is acknowledged: Reno deflates to ssthresh and leaves.
    h.at(300);
    h.ack(10 * MSS, &[]);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), 5 * MSS);
}

#[test]
fn newreno_stays_in_recovery_on_partial_acks_and_leaves_at_recovery_point() {
    let mut h = Harness::new(cfg(false), "newreno");
    h.sent();
    h.at(200);
    // segments 0 and 4 lost; 1-3 and 5-9 arrive: 8 duplicate ACKs
    for _ in 0..3 {
        h.ack(0, &[]);
    }
    assert_eq!(h.sent(), vec![(0, true)]);
    for _ in 0..5 {
        h.ack(0, &[]);
    }
    // inflated window ssthresh 5 + 8 dupacks = 13 > 10 outstanding: 3 new segments
    assert_eq!(h.sent(), new_data(10..13));
    // The retransmission of 0 arrives: the receiver has 0-3, ACKs 4000 (partial).
    h.at(300);
    h.ack(4 * MSS, &[]);
    assert_eq!(
        h.tx.ca_state(),
        CaState::Recovery,
        "partial ACK keeps NewReno in recovery"
    );
    // RFC 6582: retransmit the first unacknowledged segment at once; deflate by
    // the 4 segments acked, add back one: in flight are 10-12 and the
    // retransmission, so one new segment fits in ssthresh = 5.
    assert_eq!(h.sent(), vec![(4 * MSS, true), (13 * MSS, false)]);
    // ACK of everything sent before recovery started (the recovery point)
    h.at(400);
    h.ack(10 * MSS, &[]);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    // exit: cwnd = min(ssthresh, FlightSize + MSS), 4 segments outstanding
    assert_eq!(h.cwnd(), 5 * MSS);
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(h.tx.stats().retransmissions, 2);
}

/// Three holes (0, 4 and 7) in a window of 10; returns the retransmission
/// deadline after the first and after the second partial ACK.
fn deadlines_after_partial_acks(timer: crate::PartialAckTimer) -> (Instant, Instant) {
    let mut h = Harness::new(
        TcpConfig {
            partial_ack_timer: timer,
            ..cfg(false)
        },
        "newreno",
    );
    h.sent();
    h.at(200);
    for _ in 0..7 {
        h.ack(0, &[]);
    }
    h.at(300);
    h.ack(4 * MSS, &[]); // first partial ACK
    let first = h.tx.poll_timeout().unwrap();
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    h.at(500);
    h.ack(7 * MSS, &[]); // second partial ACK
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    (first, h.tx.poll_timeout().unwrap())
}

#[test]
fn impatient_newreno_restarts_the_timer_only_on_the_first_partial_ack() {
    let (first, second) = deadlines_after_partial_acks(crate::PartialAckTimer::Impatient);
    assert_eq!(
        second, first,
        "the second partial ACK leaves the timer alone"
    );
}

#[test]
fn slow_but_steady_newreno_restarts_the_timer_on_every_partial_ack() {
    let (first, second) = deadlines_after_partial_acks(crate::PartialAckTimer::SlowButSteady);
    assert_eq!(
        second,
        first + Duration::from_millis(200),
        "restarted 200 ms later"
    );
}

#[test]
fn reno_leaves_recovery_on_partial_ack_and_halves_again() {
    let mut h = Harness::new(cfg(false), "reno");
    h.sent();
    h.at(200);
    for _ in 0..8 {
        h.ack(0, &[]);
    }
    h.sent();
    h.at(300);
    h.ack(4 * MSS, &[]);
    assert_eq!(
        h.tx.ca_state(),
        CaState::Open,
        "Reno ends recovery on the first new ACK"
    );
    assert!(
        h.sent().iter().all(|&(_, rtx)| !rtx),
        "no retransmission on the partial ACK"
    );
    // three more duplicate ACKs for the second hole: a second window reduction
    for _ in 0..3 {
        h.ack(4 * MSS, &[]);
    }
    assert_eq!(h.tx.stats().fast_retransmits, 2);
    assert_eq!(h.sent().first(), Some(&(4 * MSS, true)));
}

#[test]
fn tahoe_returns_to_slow_start_from_snd_una() {
    let mut h = Harness::new(cfg(false), "tahoe");
    h.sent();
    h.at(200);
    for _ in 0..3 {
        h.ack(0, &[]);
    }
    assert_eq!(h.tx.ca_state(), CaState::Loss);
    assert_eq!(h.cwnd(), MSS, "cwnd back to one segment");
    assert_eq!(h.ssthresh(), 5 * MSS);
    assert_eq!(h.sent(), vec![(0, true)]);
    h.ack(0, &[]);
    assert!(
        h.sent().is_empty(),
        "further dupacks do nothing (go-back-N)"
    );
    // The retransmission is acknowledged (receiver had 1..10 too: ACK 10 000
    // would end it, but say only 0-1 were held): slow start resends from snd_una.
    h.at(300);
    h.ack(2 * MSS, &[]);
    assert_eq!(h.cwnd(), 2 * MSS, "slow start");
    assert_eq!(h.sent(), vec![(2 * MSS, true), (3 * MSS, true)]);
}

/// The first peer-agreement fix (the DCNET L2 run where Tahoe locked into cwnd 3,
/// ssthresh 2): segments 0-3 of a window of 10 are lost. Go-back-N resends
/// 4, 5 and 6 too, which the receiver already holds; once the retransmission
/// of 3 brings the cumulative ACK to the recovery point, their three
/// duplicate ACKs sit exactly at it. RFC 6582 section 3.2 step 1 lets a new
/// fast retransmit start only when the ACK covers more than `recover` (the
/// highest sequence number sent): `ack - 1 > recover`, as ns-2's
/// `highest_ack_ > recover_`. So no second fast retransmit, and ssthresh stays.
#[test]
fn tahoe_does_not_fast_retransmit_on_dupacks_at_the_recovery_point() {
    let mut h = Harness::new(cfg(false), "tahoe");
    assert_eq!(h.sent(), new_data(0..10));
    h.at(200);
    for _ in 4..10 {
        h.ack(0, &[]);
    }
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(h.ssthresh(), 5 * MSS);
    assert_eq!(h.sent(), vec![(0, true)]);
    // go-back-N in slow start: each ACK of one retransmission releases two
    let mut resent = vec![];
    for (t, ack) in [(300, 1), (400, 2), (500, 3)] {
        h.at(t);
        h.ack(ack * MSS, &[]);
        resent.extend(h.sent());
    }
    assert_eq!(
        resent,
        [1, 2, 3, 4, 5, 6].map(|i| (i * MSS, true)).to_vec(),
        "slow start from snd_una resends what the receiver holds"
    );
    // the retransmission of 3 arrives: the receiver has everything sent
    h.at(600);
    h.ack(10 * MSS, &[]);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    let new = h.sent();
    assert!(new.iter().all(|&(off, rtx)| off >= 10 * MSS && !rtx));
    // the duplicates of 4, 5 and 6 each produce an ACK at the recovery point
    for _ in 4..=6 {
        h.ack(10 * MSS, &[]);
    }
    assert_eq!(
        h.tx.stats().fast_retransmits,
        1,
        "ACKs at the recovery point start no new recovery"
    );
    assert_eq!(h.ssthresh(), 5 * MSS);
    assert!(h.sent().iter().all(|&(_, rtx)| !rtx), "nothing resent");
    // a loss among the new segments is still found: three duplicates above
    // the recovery point
    h.at(700);
    h.ack(11 * MSS, &[]);
    h.sent();
    for _ in 0..3 {
        h.ack(11 * MSS, &[]);
    }
    assert_eq!(h.tx.stats().fast_retransmits, 2);
    assert_eq!(h.sent().first(), Some(&(11 * MSS, true)));
}

/// The same guard after a timeout: segments 0-3 are lost and the ACKs of
/// 4-9 too, so the timer fires; go-back-N resends 4, 5 and 6, which the
/// receiver holds, and their duplicate ACKs at the recovery point must not
/// start a fast retransmit (RFC 6582 section 6 describes this case: without
/// SACK the sender cannot tell them from a new loss).
#[test]
fn dupacks_at_the_recovery_point_after_a_timeout_start_no_fast_retransmit() {
    let mut h = Harness::new(cfg(false), "newreno");
    assert_eq!(h.sent(), new_data(0..10));
    h.at(1_100);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), vec![(0, true)]);
    let mut resent = vec![];
    for (t, ack) in [(1_200, 1), (1_300, 2), (1_400, 3)] {
        h.at(t);
        h.ack(ack * MSS, &[]);
        resent.extend(h.sent());
    }
    assert_eq!(resent, [1, 2, 3, 4, 5, 6].map(|i| (i * MSS, true)).to_vec());
    h.at(1_500);
    h.ack(10 * MSS, &[]);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    h.sent();
    for _ in 4..=6 {
        h.ack(10 * MSS, &[]);
    }
    assert_eq!(h.tx.stats().fast_retransmits, 0);
    assert!(h.sent().iter().all(|&(_, rtx)| !rtx), "nothing resent");
}

#[test]
fn rto_doubles_on_each_expiry_and_resets_on_new_data() {
    let mut c = cfg(false);
    c.initial_cwnd = 2;
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent(), new_data(0..2));
    // srtt 100 ms from the SYN: RTO = max(min_rto 1 s, 300 ms) = 1 s
    assert_eq!(
        h.tx.poll_timeout(),
        Some(Instant::from_nanos(1_100_000_000))
    );
    let mut expiry = 1_100u64;
    for (k, rto_after) in [2_000u64, 4_000, 8_000].into_iter().enumerate() {
        h.at(expiry);
        h.tx.handle_timeout(h.now);
        assert_eq!(h.tx.stats().rto_expiries, k as u64 + 1);
        assert_eq!(h.sent(), vec![(0, true)], "retransmit from snd_una");
        assert_eq!(h.cwnd(), MSS);
        // ssthresh set by the first timeout (FlightSize 2 MSS -> floor 2 MSS) and
        // held by the repeats
        assert_eq!(h.ssthresh(), 2 * MSS);
        assert_eq!(
            h.tx.poll_timeout(),
            Some(h.now + Duration::from_millis(rto_after))
        );
        expiry += rto_after;
    }
    assert_eq!(h.tx.ca_state(), CaState::Loss);
    // ACKs of retransmitted data give no RTT sample (Karn), so the backed-off
    // RTO stays (RFC 6298 section 5).
    h.at(expiry - 7_900);
    h.ack(MSS, &[]);
    assert_eq!(h.tx.rtt().backoff_count(), 3);
    assert_eq!(h.tx.poll_timeout(), Some(h.now + Duration::from_secs(8)));
    assert_eq!(h.sent(), vec![(MSS, true), (2 * MSS, false)]);
    h.at(expiry - 7_800);
    h.ack(2 * MSS, &[]);
    assert_eq!(h.tx.rtt().backoff_count(), 3);
    // cwnd = ssthresh = 2 MSS (congestion avoidance), one segment outstanding
    assert_eq!(h.sent(), vec![(3 * MSS, false)]);
    // New data acknowledged: a valid sample, and the RTO is its base again.
    h.ack(3 * MSS, &[]);
    assert_eq!(h.tx.rtt().backoff_count(), 0);
    assert_eq!(h.tx.rtt().latest(), Some(Duration::from_millis(100)));
    assert_eq!(h.tx.rtt().rto(), Duration::from_secs(1));
    assert_eq!(h.tx.poll_timeout(), Some(h.now + Duration::from_secs(1)));
}

#[test]
fn repeated_timeout_holds_ssthresh_with_larger_flight() {
    // RFC 5681 3.1: the second timeout of the same segment must not recompute
    // ssthresh from the (now tiny) FlightSize.
    let mut h = Harness::new(cfg(false), "newreno");
    h.sent();
    h.at(1_100);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.ssthresh(), 5 * MSS);
    h.sent();
    h.at(3_100);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.ssthresh(), 5 * MSS);
}

/// `tcp.rto_ssthresh`: when a timeout holds ssthresh. Three timeouts: the
/// same segment timing out twice, a timeout during a fast recovery, and a
/// timeout in the Loss state after `snd_una` advanced.
#[test]
fn rto_ssthresh_rules_of_the_rfc_linux_and_ns3() {
    use crate::RtoSsthresh::{Linux, Ns3, Rfc5681};
    let with = |rule| TcpConfig {
        rto_ssthresh: rule,
        ..cfg(false)
    };
    // (1) the first segment times out twice
    for (rule, second) in [(Rfc5681, 5), (Linux, 5), (Ns3, 2)] {
        let mut h = Harness::new(with(rule), "newreno");
        h.sent();
        h.at(1_100);
        h.tx.handle_timeout(h.now);
        assert_eq!(h.ssthresh(), 5 * MSS, "{rule:?}: half of 10 segments");
        assert_eq!(h.sent(), vec![(0, true)]);
        h.at(3_100);
        h.tx.handle_timeout(h.now);
        // ns-3 recomputes from what is in flight: the one retransmission
        assert_eq!(h.ssthresh(), second * MSS, "{rule:?}: repeated timeout");
    }
    // (2) a timeout during a fast recovery, with 13 segments outstanding
    for (rule, after) in [(Rfc5681, 6_500), (Linux, 5_000), (Ns3, 2_500)] {
        let mut h = Harness::new(with(rule), "newreno");
        h.sent();
        h.at(200);
        for _ in 0..8 {
            h.ack(0, &[]);
        }
        assert_eq!(h.sent().len(), 4, "{rule:?}: the retransmission and 3 new");
        assert_eq!(h.ssthresh(), 5 * MSS);
        h.at(1_100);
        h.tx.handle_timeout(h.now);
        // RFC 5681: FlightSize 13 / 2; Linux keeps the recovery's ssthresh;
        // ns-3 halves the pipe (13 - 8 duplicate ACKs)
        assert_eq!(h.ssthresh(), after, "{rule:?}: timeout in recovery");
    }
    // (3) a timeout in the Loss state after snd_una advanced: all reduce
    for (rule, after) in [(Rfc5681, 4_500), (Linux, 4_500), (Ns3, 2_000)] {
        let mut h = Harness::new(with(rule), "newreno");
        h.sent();
        h.at(1_100);
        h.tx.handle_timeout(h.now);
        h.sent();
        h.at(1_200);
        h.ack(MSS, &[]);
        assert_eq!(h.sent().len(), 2);
        // (the backed-off timer, restarted by the ACK: 1.2 s + 2 s)
        h.now = h.tx.poll_timeout().unwrap();
        assert_eq!(h.now, crate::testing::ms(3_200));
        h.tx.handle_timeout(h.now);
        assert_eq!(h.tx.stats().rto_expiries, 2);
        assert_eq!(h.ssthresh(), after, "{rule:?}: timeout after an advance");
    }
}

#[test]
fn sack_recovery_retransmits_only_the_holes() {
    let mut c = cfg(true);
    c.initial_cwnd = 20;
    let mut h = Harness::new(c, "newreno");
    assert!(h.tx.sack_enabled());
    assert_eq!(h.sent().len(), 20);
    h.at(200);
    // holes at segments 3, 7 and 12; everything else arrives in order
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    let mut retransmitted = Vec::new();
    let mut recovery_point = None;
    for seg in 0..20u64 {
        if [3, 7, 12].contains(&seg) {
            continue;
        }
        let cum = if seg < 3 { (seg + 1) * MSS } else { 3 * MSS };
        if seg > 3 {
            // merge into the block list as a receiver would (newest first)
            let start = if seg > 12 {
                13
            } else if seg > 7 {
                8
            } else {
                4
            };
            blocks.retain(|b| b.0 != start * MSS);
            blocks.insert(0, (start * MSS, (seg + 1) * MSS));
        }
        let before = h.tx.snapshot().snd_nxt;
        h.ack(cum, &blocks);
        if h.tx.stats().fast_retransmits == 1 && recovery_point.is_none() {
            recovery_point = Some(before);
        }
        let sent = h.sent();
        if (4..6).contains(&seg) {
            assert!(
                sent.is_empty(),
                "no new data before recovery: FlightSize bounds the window"
            );
        }
        retransmitted.extend(sent.into_iter().filter(|s| s.1).map(|s| s.0));
    }
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(retransmitted, vec![3 * MSS, 7 * MSS, 12 * MSS]);
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    // all holes repaired: an ACK up to the recovery point ends recovery with
    // cwnd = ssthresh (RFC 6675)
    h.at(300);
    let recovery_point = recovery_point.unwrap();
    h.ack(recovery_point - 2 * MSS, &[]);
    assert_eq!(
        h.tx.ca_state(),
        CaState::Recovery,
        "below the recovery point"
    );
    h.ack(recovery_point, &[]);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    assert_eq!(h.cwnd(), h.ssthresh());
}

#[test]
fn dsack_of_a_retransmission_counts_as_spurious() {
    let mut h = Harness::new(cfg(true), "newreno");
    h.sent();
    h.at(1_100);
    h.tx.handle_timeout(h.now); // spurious timeout: the data was merely late
    assert_eq!(h.sent(), vec![(0, true)]);
    h.at(1_150);
    h.ack(10 * MSS, &[]);
    // the retransmission arrives as a duplicate: DSACK below the cumulative ACK
    h.ack(10 * MSS, &[(0, MSS)]);
    assert_eq!(h.tx.stats().dsacks_received, 1);
    assert_eq!(h.tx.stats().spurious_retransmissions, 1);
}

#[test]
fn limited_transmit_sends_one_new_segment_per_early_dupack() {
    let mut c = cfg(false);
    c.limited_transmit = true;
    let mut h = Harness::new(c, "newreno");
    h.sent();
    h.at(200);
    h.ack(0, &[]);
    assert_eq!(h.sent(), new_data(10..11));
    h.ack(0, &[]);
    assert_eq!(h.sent(), new_data(11..12));
    h.ack(0, &[]);
    assert_eq!(h.sent(), vec![(0, true)]);
}

#[test]
fn acks_for_unsent_data_are_ignored() {
    let mut h = Harness::new(cfg(false), "newreno");
    h.sent();
    h.ack(50 * MSS, &[]);
    assert_eq!(h.tx.stats().invalid_acks, 1);
    assert_eq!(h.tx.bytes_acked(), 0);
}

#[test]
fn finite_transfer_ends_with_fin_and_completes() {
    let mut c = cfg(false);
    c.initial_cwnd = 4;
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c, algo, ISS);
    tx.write_virtual(2_500);
    tx.close();
    let mut h = Harness {
        tx,
        now: Instant::ZERO,
    };
    h.drain();
    h.at(100);
    let synack = Segment {
        seq: IRS,
        ack: ISS + 1,
        flags: Flags::SYN.with(Flags::ACK),
        window: ACK_WINDOW,
        len: 0,
        options: Options {
            mss: Some(MSS as u16),
            ..Options::default()
        },
    };
    h.tx.handle_segment(h.now, &synack);
    let segs = h.drain();
    assert_eq!(segs.len(), 3);
    assert_eq!(segs[2].segment.len, 500);
    assert!(segs[2].segment.flags.contains(Flags::FIN));
    h.at(200);
    h.ack(2_501, &[]); // data plus the FIN
    assert_eq!(h.tx.stats().completed_at, Some(h.now));
    assert_eq!(h.tx.bytes_acked(), 2_500);
    assert_eq!(h.tx.poll_timeout(), None);
}

#[test]
fn syn_timeout_backs_off_and_data_starts_with_three_second_rto() {
    let c = cfg(false);
    let algo = CcConfig::default().build(c.mss, c.initial_cwnd, None, c.abc_limit);
    let mut tx = Sender::new(c, algo, ISS);
    tx.write_unlimited();
    assert_eq!(tx.poll_transmit(Instant::ZERO).unwrap().kind, TxKind::Syn);
    let t1 = tx.poll_timeout().unwrap();
    assert_eq!(t1, Instant::from_nanos(1_000_000_000));
    tx.handle_timeout(t1);
    assert_eq!(tx.poll_transmit(t1).unwrap().kind, TxKind::Syn);
    assert_eq!(tx.stats().syn_retransmissions, 1);
    let synack = Segment {
        seq: IRS,
        ack: ISS + 1,
        flags: Flags::SYN.with(Flags::ACK),
        window: 65_535,
        len: 0,
        options: Options::default(),
    };
    let t2 = Instant::from_nanos(1_200_000_000);
    tx.handle_segment(t2, &synack);
    assert_eq!(
        tx.rtt().srtt(),
        None,
        "Karn: no sample from a retransmitted SYN"
    );
    assert_eq!(tx.rtt().rto(), Duration::from_secs(3));
    assert_eq!(tx.mss(), 536, "no MSS option: RFC 1122 default");
}

/// A SACK sender (NewReno) finding losses by `mode`, with its initial window
/// of 20 segments sent at 100 ms.
fn window_of_20(mode: crate::LostRetransmissions) -> Harness {
    let mut c = cfg(true);
    c.initial_cwnd = 20;
    c.lost_retransmissions = mode;
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent().len(), 20);
    h
}

/// Segments 3 and 7 are lost; 3 is retransmitted at 200 ms, 7 at 250 ms;
/// at 350 ms a SACK shows 7's retransmission arrived and 3's did not.
/// Returns the retransmissions sent at 350 ms.
fn retransmissions_after_a_lost_retransmission(mode: crate::LostRetransmissions) -> Vec<u64> {
    let mut h = window_of_20(mode);
    h.at(200);
    for seg in 1..=3 {
        h.ack(seg * MSS, &[]);
    }
    let mut rtx = vec![];
    for top in 5..=7 {
        h.ack(3 * MSS, &[(4 * MSS, top * MSS)]);
        rtx.extend(h.sent().into_iter().filter(|s| s.1).map(|s| s.0));
    }
    assert_eq!(rtx, vec![3 * MSS], "fast retransmit of segment 3");
    h.at(250);
    for top in 9..=18 {
        h.ack(3 * MSS, &[(8 * MSS, top * MSS), (4 * MSS, 7 * MSS)]);
        rtx.extend(h.sent().into_iter().filter(|s| s.1).map(|s| s.0));
    }
    assert_eq!(rtx, vec![3 * MSS, 7 * MSS], "segment 7 repaired at 250 ms");
    h.at(350);
    // (the new segments sent during the repair arrived too)
    h.ack(3 * MSS, &[(4 * MSS, 26 * MSS)]);
    assert_eq!(h.tx.stats().rto_expiries, 0);
    h.sent().into_iter().filter(|s| s.1).map(|s| s.0).collect()
}

#[test]
fn rack_resends_a_retransmission_that_a_later_one_overtook() {
    let rack = crate::LostRetransmissions::Rack;
    assert_eq!(
        retransmissions_after_a_lost_retransmission(rack),
        vec![3 * MSS]
    );
}

#[test]
fn without_rack_a_lost_retransmission_waits_for_the_timeout() {
    let rto = crate::LostRetransmissions::Rto;
    assert!(retransmissions_after_a_lost_retransmission(rto).is_empty());
}

#[test]
fn with_rack_a_duplicate_ack_gives_an_rtt_sample_from_what_it_sacks() {
    for (mode, latest) in [
        (crate::LostRetransmissions::Rack, 200),
        (crate::LostRetransmissions::Rto, 100),
    ] {
        let mut h = window_of_20(mode);
        h.at(200);
        h.ack(MSS, &[]);
        assert_eq!(h.tx.rtt().latest(), Some(Duration::from_millis(100)));
        // segment 2 is missing; a duplicate ACK SACKs segment 5
        h.at(300);
        h.ack(MSS, &[(4 * MSS, 5 * MSS)]);
        assert_eq!(
            h.tx.rtt().latest(),
            Some(Duration::from_millis(latest)),
            "{mode:?}"
        );
    }
}

#[test]
fn with_rack_one_sack_above_a_hole_in_recovery_marks_it_lost() {
    for (mode, marked) in [
        (crate::LostRetransmissions::Rack, 1),
        (crate::LostRetransmissions::Rto, 0),
    ] {
        let mut h = window_of_20(mode);
        h.at(200);
        h.ack(MSS, &[]);
        // the segment at MSS is lost: three duplicate ACKs start recovery
        for top in 3..=5 {
            h.ack(MSS, &[(2 * MSS, top * MSS)]);
        }
        let rtx: Vec<u64> = h.sent().into_iter().filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(rtx, vec![MSS], "{mode:?}: fast retransmit");
        let lost = h.tx.snapshot().lost;
        // the segment at 9 MSS is missing too, and one sent with it arrived:
        // RFC 6675 needs three SACKed segments above it, RACK (in recovery,
        // no reordering seen) only that one
        h.ack(MSS, &[(2 * MSS, 9 * MSS), (10 * MSS, 11 * MSS)]);
        assert_eq!(
            h.tx.snapshot().lost,
            lost + marked * MSS,
            "{mode:?}: the segment at 9 MSS marked lost"
        );
    }
}

fn peer_rst(seq: crate::SeqNum, ack: Option<crate::SeqNum>) -> Segment {
    Segment {
        seq,
        ack: ack.unwrap_or_default(),
        flags: if ack.is_some() {
            Flags::RST.with(Flags::ACK)
        } else {
            Flags::RST
        },
        ..Segment::default()
    }
}

/// RFC 5961 section 3.2 on an established sender (RCV.NXT = IRS + 1, the
/// receiver sends no data): a RST inside the window but not at RCV.NXT gets
/// a challenge ACK `<SEQ=SND.NXT><ACK=RCV.NXT>` and resets nothing; one
/// outside the window is dropped silently; one at RCV.NXT resets.
#[test]
fn an_established_sender_resets_only_on_a_rst_at_rcv_nxt() {
    let mut h = Harness::new(
        TcpConfig {
            mss: MSS as u32,
            ..TcpConfig::default()
        },
        "newreno",
    );
    h.tx.close(); // stop the stream after the initial window
    h.sent();
    h.at(150);
    h.tx.handle_segment(h.now, &peer_rst(IRS + 2, None));
    assert_eq!(h.tx.state(), crate::SenderState::Established);
    let out = h.drain();
    assert_eq!(out.len(), 1, "one challenge ACK: {out:?}");
    let c = out[0].segment;
    assert_eq!((out[0].kind, c.flags), (TxKind::Ack, Flags::ACK));
    assert_eq!(c.seq, ISS + 1 + 10 * MSS as u32, "SEQ = SND.NXT");
    assert_eq!(c.ack, IRS + 1, "ACK = RCV.NXT");
    for seq in [IRS, IRS + 1 + (1 << 30), IRS - 70_000] {
        h.tx.handle_segment(h.now, &peer_rst(seq, None));
        assert!(h.drain().is_empty(), "RST at {seq}");
    }
    assert_eq!(h.tx.stats().challenge_acks, 1);
    assert_eq!(h.tx.stats().resets_ignored, 4);
    // the connection goes on: an ACK releases new data
    h.at(200);
    h.ack(MSS, &[]);
    assert_eq!(h.tx.bytes_acked(), MSS);
    h.tx.handle_segment(h.now, &peer_rst(IRS + 1, None));
    assert_eq!(h.tx.state(), crate::SenderState::Closed);
    assert!(h.drain().is_empty());
    assert_eq!(h.tx.poll_timeout(), None, "no timer after a reset");
}

/// RFC 5961 section 4.2: once established, a SYN (or SYN-ACK) at any
/// sequence number gets a challenge ACK and changes nothing.
#[test]
fn a_syn_to_an_established_sender_gets_a_challenge_ack() {
    let mut h = Harness::new(cfg(false), "newreno");
    h.sent();
    let window = h.tx.send_window();
    for seq in [IRS, IRS + 5000] {
        let syn = Segment {
            seq,
            ack: ISS + 77,
            flags: Flags::SYN.with(Flags::ACK),
            window: 7,
            options: Options {
                mss: Some(64),
                ..Options::default()
            },
            ..Segment::default()
        };
        h.tx.handle_segment(h.now, &syn);
        let out = h.drain();
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].kind, out[0].segment.ack), (TxKind::Ack, IRS + 1));
    }
    assert_eq!(h.tx.mss(), MSS as u32);
    assert_eq!(h.tx.send_window(), window);
    assert_eq!(h.tx.bytes_acked(), 0);
    assert_eq!(h.tx.stats().challenge_acks, 2);
}

/// RFC 5961 section 3.2 (and RFC 793) in SYN-SENT: a RST is acceptable only
/// if its ACK field acknowledges the SYN.
#[test]
fn in_syn_sent_only_a_rst_acknowledging_the_syn_resets() {
    let cc = CcConfig::named("reno").unwrap().build(1000, 10, None, 2);
    let mut tx = Sender::new(cfg(false), cc, ISS);
    tx.write_unlimited();
    assert_eq!(tx.poll_transmit(Instant::ZERO).unwrap().kind, TxKind::Syn);
    for rst in [
        peer_rst(IRS, None),
        peer_rst(IRS, Some(ISS)),
        peer_rst(IRS, Some(ISS + 2)),
    ] {
        tx.handle_segment(Instant::ZERO, &rst);
        assert_eq!(tx.state(), crate::SenderState::SynSent, "{rst}");
    }
    tx.handle_segment(Instant::ZERO, &peer_rst(SeqNum(0), Some(ISS + 1)));
    assert_eq!(tx.state(), crate::SenderState::Closed);
    // a SYN timeout due afterwards sends nothing
    tx.handle_timeout(Instant::from_nanos(10_000_000_000));
    assert!(tx
        .poll_transmit(Instant::from_nanos(10_000_000_000))
        .is_none());
}

// ----- tail loss probes (RFC 8985 section 7) ------------------------------

/// SACK with RACK-TLP; SRTT is 100 ms from the handshake.
fn tlp_cfg() -> TcpConfig {
    TcpConfig {
        lost_retransmissions: crate::LostRetransmissions::Rack,
        tlp: true,
        ..cfg(true)
    }
}

/// A finite stream of `segments` segments (no FIN yet), sent at 100 ms.
fn tlp_finite(segments: u64) -> Harness {
    let c = tlp_cfg();
    let sa = crate::testing::synack(
        Some(MSS as u16),
        Some(1),
        true,
        crate::testing::SYNACK_WINDOW,
    );
    let mut h = Harness::with_stream(c, "newreno", sa, false);
    h.tx.write_virtual(segments * MSS);
    assert_eq!(h.sent(), new_data(0..segments));
    h
}

/// The tail of a flight is lost (an outage): no ACK comes back. The PTO
/// (2 SRTT after the last ACK) sends one new segment beyond cwnd; its SACK
/// lets RACK mark the whole tail lost and fast recovery starts at once,
/// where the timer would have waited until 1.2 s.
#[test]
fn a_probe_after_the_pto_finds_a_lost_tail_without_a_timeout() {
    for tlp in [true, false] {
        let mut h = Harness::new(TcpConfig { tlp, ..tlp_cfg() }, "newreno");
        h.sent();
        h.at(200);
        h.ack(8 * MSS, &[]); // 8 and 9 lost, and everything sent from here
        let sent = h.sent();
        assert_eq!(sent, new_data(10..20));
        let deadline = h.tx.poll_timeout().unwrap();
        if !tlp {
            assert_eq!(deadline, crate::testing::ms(1_200), "the RTO");
            continue;
        }
        // PTO = 2 SRTT = 200 ms after the last ACK and the last send
        assert_eq!(deadline, crate::testing::ms(400));
        h.at(400);
        h.tx.handle_timeout(h.now);
        assert_eq!(
            h.sent(),
            new_data(20..21),
            "the probe: new data, beyond cwnd"
        );
        assert_eq!(h.tx.stats().loss_probes, 1);
        assert_eq!(h.tx.stats().rto_expiries, 0);
        // the RTO was re-armed from the probe, no further PTO
        assert_eq!(h.tx.poll_timeout(), Some(crate::testing::ms(1_400)));
        // the probe arrives: one SACK, and RACK finds everything sent before
        // it (RACK.rtt 100 ms + a quarter of the min RTT) lost
        h.at(500);
        h.ack(8 * MSS, &[(20 * MSS, 21 * MSS)]);
        assert_eq!(h.tx.stats().fast_retransmits, 1);
        assert_eq!(h.tx.ca_state(), CaState::Recovery);
        let rtx: Vec<u64> = h.sent().into_iter().filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(rtx.first(), Some(&(8 * MSS)));
        assert_eq!(h.tx.stats().rto_expiries, 0);
    }
}

/// Ten segments, the last one lost: the PTO, 2 SRTT + `TLP.max_ack_delay`
/// after the last ACK (one segment in flight), resends the highest segment
/// (there is nothing new to send).
fn probed_tail() -> Harness {
    let mut h = tlp_finite(10);
    h.at(200);
    h.ack(9 * MSS, &[]); // the last segment is lost
    assert!(h.sent().is_empty(), "nothing more to send");
    assert_eq!(h.tx.poll_timeout(), Some(crate::testing::ms(600)));
    h.at(600);
    h.tx.handle_timeout(h.now);
    assert_eq!(h.sent(), vec![(9 * MSS, true)], "the highest segment again");
    assert_eq!(h.tx.stats().loss_probes, 1);
    h
}

/// A single tail loss: the last segment. With nothing new to send the probe
/// resends the highest segment, after 2 SRTT + `TLP.max_ack_delay` (one
/// segment in flight). It repairs the loss; once an ACK covers more than
/// `TLP.end_seq` without a DSACK of the probe, the algorithm reduces its
/// window as for a fast recovery (RFC 8985 section 7.4.2), still without a
/// timeout.
#[test]
fn the_probe_repairs_a_single_tail_loss_without_a_timeout() {
    let mut h = probed_tail();
    h.at(700);
    h.ack(10 * MSS, &[]);
    assert!(h.tx.poll_timeout().is_none(), "everything acknowledged");
    let before = h.ssthresh();
    assert_eq!(
        h.tx.stats().tlp_recoveries,
        0,
        "the ACK stops at TLP.end_seq"
    );
    // more data, and its ACK goes beyond the probe's end: the repair counts
    h.tx.write_virtual(MSS);
    assert_eq!(h.sent(), new_data(10..11));
    h.at(800);
    h.ack(11 * MSS, &[]);
    assert_eq!(h.tx.stats().tlp_recoveries, 1);
    assert_ne!(h.ssthresh(), before);
    // FlightSize when the probe went out was one segment: the floor
    assert_eq!(h.ssthresh(), 2 * MSS);
    assert_eq!(h.cwnd(), 2 * MSS);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    assert_eq!(h.tx.stats().rto_expiries, 0);
    assert_eq!(h.tx.stats().fast_retransmits, 0);
}

/// The probe was not needed (the tail was only late): the receiver reports
/// the probe's copy with a DSACK, and no window reduction follows.
#[test]
fn a_dsack_of_the_probe_means_no_loss_and_no_reduction() {
    let mut h = probed_tail();
    h.at(650);
    h.ack(10 * MSS, &[]); // the original, late
    h.at(700);
    h.ack(10 * MSS, &[(9 * MSS, 10 * MSS)]); // the probe: a duplicate
    h.tx.write_virtual(MSS);
    h.sent();
    h.at(800);
    h.ack(11 * MSS, &[]);
    assert_eq!(h.tx.stats().tlp_recoveries, 0);
    assert_eq!(h.ssthresh(), u64::MAX, "never reduced");
}

/// At most one probe per episode, and none without a new RTT sample: when
/// the probe is lost too, the retransmission timeout takes over.
#[test]
fn a_lost_probe_leaves_the_timeout_to_repair() {
    let mut h = probed_tail();
    // no ACK: the next deadline is the RTO, re-armed at the probe
    let rto = h.tx.poll_timeout().unwrap();
    assert_eq!(rto, crate::testing::ms(1_600));
    h.now = rto;
    h.tx.handle_timeout(h.now);
    assert_eq!(h.tx.stats().rto_expiries, 1);
    assert_eq!(h.tx.stats().loss_probes, 1);
    assert_eq!(h.sent(), vec![(9 * MSS, true)]);
}

/// The PTO is armed only in the Open state with nothing SACKed (RFC 8985
/// section 7.2): a SACK cancels the wait for it.
#[test]
fn no_probe_once_segments_are_sacked() {
    let mut h = tlp_finite(10);
    h.at(200);
    h.ack(5 * MSS, &[]);
    assert_eq!(h.tx.poll_timeout(), Some(crate::testing::ms(400)));
    h.ack(5 * MSS, &[(6 * MSS, 7 * MSS)]);
    assert_eq!(h.tx.ca_state(), CaState::Disorder);
    h.at(400);
    h.tx.handle_timeout(h.now);
    assert!(h.sent().is_empty());
    assert_eq!(h.tx.stats().loss_probes, 0);
}

#[test]
fn tlp_needs_rack_and_sack() {
    let no_rack = TcpConfig {
        tlp: true,
        ..cfg(true)
    };
    assert!(no_rack.validate().unwrap_err().starts_with("tlp: "));
    let no_sack = TcpConfig {
        sack: false,
        ..tlp_cfg()
    };
    assert!(no_sack.validate().unwrap_err().starts_with("tlp: "));
    tlp_cfg().validate().unwrap();
}
