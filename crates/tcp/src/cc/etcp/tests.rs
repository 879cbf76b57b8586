//! ETCP against hand-written handoff notices and ACK sequences (the
//! synthetic ACK clock of `crate::testing`): the SYN-ACK arrives at 100 ms
//! (SRTT = 100 ms), segments are 1000 bytes, so a packet is 1040 bytes and a
//! link of 1.664 Mbit/s and 50 ms has a BDP of exactly 20 packets
//! (1,664,000 x 0.1 / 8 / 1040). Each test names the rule of MobiWac 2009 it
//! checks.

use super::{bdp, Etcp, EtcpParams, ReductionRule, Reordering};
use crate::cc::{CaState, CcConfig, HandoffNotice, HandoffStyle, Notification, PathInfo};
use crate::config::{RecoveryReduction, SsthreshBasis, TcpConfig};
use crate::testing::{ms, synack, Harness, SYNACK_WINDOW};
use crate::time::{Duration, Rate};
use crate::Cc;

const MSS: u64 = 1000;

/// A link of `kbps` kbit/s and `delay` ms one way.
fn link(kbps: u64, delay: u64) -> PathInfo {
    PathInfo {
        rate: Some(Rate::from_bps(kbps * 1000)),
        delay: Some(Duration::from_millis(delay)),
    }
}

/// 20 packets of BDP.
const SLOW: (u64, u64) = (1664, 50);
/// 25.6 packets of BDP, 32 times SLOW's rate.
const FAST: (u64, u64) = (53_248, 2);

fn handoff(style: HandoffStyle, old: (u64, u64), new: (u64, u64), flows: u32) -> Notification {
    Notification::Handoff(HandoffNotice {
        style,
        old: link(old.0, old.1),
        new: link(new.0, new.1),
        flows,
    })
}

fn mbb(old: (u64, u64), new: (u64, u64), flows: u32) -> Notification {
    handoff(HandoffStyle::MakeBeforeBreak, old, new, flows)
}

fn bbm(old: (u64, u64), new: (u64, u64), flows: u32) -> Notification {
    let style = HandoffStyle::BreakBeforeMake {
        disconnection: Duration::from_secs(1),
    };
    handoff(style, old, new, flows)
}

/// A SACK sender running `algo` whose initial window is `iw` segments,
/// with the SACK recovery of MobiWac 2009's time (RFC 6675 at once, ssthresh
/// from FlightSize), which the paper's regular TCP is.
fn sender(algo: CcConfig, iw: u32) -> Harness {
    let cfg = TcpConfig {
        mss: MSS as u32,
        sack: true,
        initial_cwnd: iw,
        recovery_reduction: RecoveryReduction::Rfc6675,
        ssthresh_basis: SsthreshBasis::FlightSize,
        ..TcpConfig::default()
    };
    let sa = synack(Some(MSS as u16), Some(1), true, SYNACK_WINDOW);
    Harness::with_algorithm(cfg, &algo, sa, true)
}

fn v1(iw: u32) -> Harness {
    sender(CcConfig::Etcpv1(EtcpParams::default()), iw)
}

fn etcp(h: &Harness) -> &Etcp {
    match h.tx.cc() {
        Cc::Etcp(e) => e,
        other => panic!("not etcp: {other:?}"),
    }
}

fn notify(h: &mut Harness, t: u64, n: Notification) {
    h.at(t);
    h.tx.handle_notification(h.now, &n);
}

fn segs(range: std::ops::Range<u64>, rtx: bool) -> Vec<(u64, bool)> {
    range.map(|i| (i * MSS, rtx)).collect()
}

#[test]
fn the_bdp_is_the_access_links_rate_times_twice_its_delay_in_1500_byte_packets() {
    let b = |kbps: u64, d: u64, mss: u32| {
        bdp(Rate::from_bps(kbps * 1000), Duration::from_millis(d), mss)
    };
    assert_eq!(b(SLOW.0, SLOW.1, 1000), 20 * MSS);
    // the paper's access links (1500-byte packets: 1460 bytes of payload)
    let packets = |kbps, d| b(kbps, d, 1460) as f64 / 1460.0;
    for (kbps, d, paper) in [(200, 300, 10.0), (6400, 9, 10.0), (54_000, 2, 18.0)] {
        assert!((packets(kbps, d) - paper).abs() < 0.5, "{kbps}/{d}");
    }
}

/// Figure 1: the window falls to BDP_new / N when the flight exceeds 1.5 x
/// BDP_new / N after a steep drop (old link >= 8 x faster), and 2 x
/// otherwise; ssthresh with it.
#[test]
fn figure_1_cuts_the_window_to_the_new_links_share() {
    // 40 segments in flight; the new link's BDP is 20 packets, 32 x slower
    // than the old one: 40 > 1.5 x 20, so cwnd = ssthresh = 20 (N = 1)
    let mut h = v1(40);
    assert_eq!(h.sent().len(), 40);
    notify(&mut h, 110, mbb(FAST, SLOW, 1));
    assert_eq!((h.cwnd(), h.ssthresh()), (20 * MSS, 20 * MSS));
    // nothing leaves until the flight is below the new window
    h.at(150);
    h.ack(19 * MSS, &[]);
    assert!(h.sent().is_empty(), "21 in flight, window 20");
    // 21 acknowledged: 19 in flight, and congestion avoidance adds one
    h.ack(21 * MSS, &[]);
    assert_eq!(h.cwnd(), 21 * MSS);
    assert_eq!(h.sent(), segs(40..42, false));

    // two flows on the new link: 10 segments each (ETCPv1) ...
    let mut h = v1(40);
    h.sent();
    notify(&mut h, 110, mbb(FAST, SLOW, 2));
    assert_eq!((h.cwnd(), h.ssthresh()), (10 * MSS, 10 * MSS));
    // ... never below 2 segments
    let mut h = v1(40);
    h.sent();
    notify(&mut h, 110, mbb(FAST, SLOW, 64));
    assert_eq!(h.cwnd(), 2 * MSS);
    // ETCPv0 takes no N: the whole BDP
    let mut h = sender(CcConfig::Etcpv0(EtcpParams::default()), 40);
    h.sent();
    notify(&mut h, 110, mbb(FAST, SLOW, 2));
    assert_eq!((h.cwnd(), h.ssthresh()), (20 * MSS, 20 * MSS));

    // a drop of less than 8 x (6.656 -> 1.664 Mbit/s, 4 x): the threshold is
    // 2 x BDP_new = 40 segments, so 40 in flight keep their window and 41
    // do not
    for (iw, cut) in [(40, false), (41, true)] {
        let mut h = v1(iw);
        h.sent();
        notify(&mut h, 110, mbb((6656, 50), SLOW, 1));
        let expect = if cut { 20 * MSS } else { iw as u64 * MSS };
        assert_eq!(h.cwnd(), expect, "{iw} in flight");
    }
    // the same flight on a link whose share is large enough: unchanged
    let mut h = v1(40);
    h.sent();
    notify(&mut h, 110, mbb(SLOW, FAST, 1));
    assert_eq!(h.cwnd(), 40 * MSS);
}

/// Figure 3's form of the reduction: only when the BDP decreases and the new
/// link is less than 8 x faster (here 32 x slower, a 40-segment flight and
/// 2 x 20 = 40 allowed: unchanged, where Figure 1's 1.5 x cuts).
#[test]
fn figure_3s_reduction_rule_is_a_parameter() {
    let params = EtcpParams {
        reduction: ReductionRule::Figure3,
        ..EtcpParams::default()
    };
    let mut h = sender(CcConfig::Etcpv1(params.clone()), 40);
    h.sent();
    notify(&mut h, 110, mbb(FAST, SLOW, 1));
    assert_eq!(h.cwnd(), 40 * MSS);
    let mut h = sender(CcConfig::Etcpv1(params), 41);
    h.sent();
    notify(&mut h, 110, mbb(FAST, SLOW, 1));
    assert_eq!(h.cwnd(), 20 * MSS);
}

/// Figure 2: in RTO recovery (a break-before-make handoff: the timer fired
/// during the disconnection and its retransmission was lost), the
/// notification retransmits the first unacknowledged segment at once, where
/// regular TCP waits for the backed-off timer; ssthresh = max(2, BDP_new /
/// N); the delay changed (2 ms -> 200 ms access: SRTT 99 ms would become
/// 495 ms), so the RTT variables start afresh and the retransmission is
/// timed with the initial RTO.
#[test]
fn figure_2_retransmits_at_the_notification_in_rto_recovery() {
    let run = |algo: CcConfig| {
        let mut h = sender(algo, 10);
        h.sent();
        h.at(150);
        h.ack(2 * MSS, &[]);
        h.sent();
        // the old link is gone: the timer fires, its retransmission is lost
        let rto = h.tx.poll_timeout().unwrap();
        h.now = rto;
        h.tx.handle_timeout(rto);
        assert_eq!(h.sent(), segs(2..3, true));
        assert_eq!(h.tx.ca_state(), CaState::Loss);
        let backed_off = h.tx.poll_timeout().unwrap();
        assert_eq!(backed_off - rto, Duration::from_secs(2));
        // the new link is up: the notice arrives 300 ms later
        h.now = rto + Duration::from_millis(300);
        // 416 kbit/s x 2 x 200 ms: 20 packets
        h.tx.handle_notification(h.now, &bbm(FAST, (416, 200), 2));
        (h, backed_off)
    };
    let (mut regular, backed_off) = run(CcConfig::named("newreno").unwrap());
    assert!(regular.sent().is_empty(), "regular TCP waits");
    assert_eq!(regular.tx.poll_timeout(), Some(backed_off));

    let (mut h, _) = run(CcConfig::Etcpv1(EtcpParams::default()));
    let now = h.now;
    assert_eq!(h.sent(), segs(2..3, true), "at once");
    assert_eq!(h.ssthresh(), 10 * MSS, "BDP_new / N = 20 / 2");
    assert_eq!(h.cwnd(), MSS, "the loss window stays");
    assert_eq!(
        h.tx.rtt().srtt(),
        None,
        "RTT variables as for a new connection"
    );
    assert_eq!(h.tx.poll_timeout(), Some(now + Duration::from_secs(1)));
    assert_eq!(h.tx.stats().rto_expiries, 1);
    // its ACK: slow start toward ssthresh, and the next sample is a first one
    h.at(now.as_nanos() / 1_000_000 + 120);
    h.ack(3 * MSS, &[]);
    assert_eq!(h.sent(), segs(3..5, true), "two after the ACK");
    assert_eq!(
        h.tx.rtt().srtt(),
        None,
        "Karn: no sample from a retransmission"
    );

    // outside RTO recovery nothing is retransmitted
    let mut h = v1(10);
    h.sent();
    notify(&mut h, 110, bbm(FAST, SLOW, 2));
    assert!(h.sent().is_empty());
}

/// Figure 3, armed and disarmed: a handoff to a link 32 x faster raises the
/// sender's dupthresh to 32; once everything sent before the handoff is
/// acknowledged without reordering, it is 3 again. A link only 3 x faster
/// does not arm it, nor does a handoff in loss recovery.
#[test]
fn figure_3_raises_dupthresh_for_a_faster_link_and_restores_it() {
    let mut h = v1(10);
    h.sent();
    notify(&mut h, 110, mbb(SLOW, FAST, 1));
    assert_eq!(h.tx.dupthresh(), 32);
    assert_eq!(etcp(&h).reordering(), Reordering::Armed);
    assert_eq!(h.cwnd(), 10 * MSS, "no reduction");
    h.at(150);
    h.ack(5 * MSS, &[]);
    assert_eq!(h.tx.dupthresh(), 32, "5 of the 10 still out");
    h.sent();
    h.ack(10 * MSS, &[]);
    assert_eq!(h.tx.dupthresh(), 3);
    assert_eq!(etcp(&h).reordering(), Reordering::Off);

    let mut h = v1(10);
    h.sent();
    notify(&mut h, 110, mbb(SLOW, (SLOW.0 * 3, 10), 1));
    assert_eq!(h.tx.dupthresh(), 3, "3 x is not more than 3 x");

    // a ratio that is not whole rounds down: 15.7 x gives 15
    let mut h = v1(10);
    h.sent();
    notify(&mut h, 110, mbb((700, 75), (11_000, 10), 1));
    assert_eq!(h.tx.dupthresh(), 15);
}

/// Figure 3's fast recovery: the new link's segments overtake the old
/// link's. Regular TCP's SACK recovery takes the old link's segments for
/// lost at the third SACK, halves its window and retransmits them; ETCPv1
/// retransmits only the first unacknowledged segment, then sends a new
/// segment for each one that leaves the network, and when the original
/// arrives and DSACK shows the retransmission unnecessary, its window comes
/// back (min(cwnd_prev, BDP_new / N)), ssthresh = max(cwnd_prev, BDP_new /
/// N).
#[test]
fn figure_3_answers_reordering_with_one_retransmission_and_a_dsack_undo() {
    // segments 0..10 leave on the slow link; the handoff notice arrives;
    // the ACK of 0..2 releases 10..14, which take the fast link and arrive
    // first
    let script = |algo: CcConfig| {
        let mut h = sender(algo, 10);
        assert_eq!(h.sent(), segs(0..10, false));
        notify(&mut h, 110, mbb(SLOW, FAST, 1));
        h.at(160);
        h.ack(2 * MSS, &[]);
        assert_eq!(h.sent(), segs(10..14, false));
        let mut sent = vec![];
        for k in 1..=3 {
            h.at(160 + k);
            h.ack(2 * MSS, &[(10 * MSS, (10 + k) * MSS)]);
            sent.push(h.sent());
        }
        (h, sent)
    };
    let (regular, sent) = script(CcConfig::named("newreno").unwrap());
    assert_eq!(regular.tx.stats().fast_retransmits, 1);
    assert_eq!(regular.cwnd(), 6 * MSS, "halved");
    // the old link's segments 2..10 are all marked lost: retransmitted as
    // the window allows (the pipe is 1 segment after marking 8 lost)
    assert_eq!(sent[2], segs(2..7, true));

    let (mut h, sent) = script(CcConfig::Etcpv1(EtcpParams::default()));
    assert_eq!(
        h.tx.stats().fast_retransmits,
        0,
        "no recovery of the sender's"
    );
    assert_eq!(sent[..2], [vec![], vec![]]);
    assert_eq!(sent[2], segs(2..3, true), "the first unacknowledged only");
    assert_eq!(etcp(&h).cwnd_prev(), Some(12 * MSS));
    assert_eq!(h.ssthresh(), 6 * MSS, "halved as a fast retransmit halves");
    assert!(matches!(
        etcp(&h).reordering(),
        Reordering::Recovering { .. }
    ));
    // each further SACK releases one new segment, nothing is retransmitted
    for k in 4..=6 {
        h.at(160 + k);
        h.ack(2 * MSS, &[(10 * MSS, (10 + k) * MSS)]);
        assert_eq!(h.sent(), segs(10 + k..11 + k, false), "SACK {k}");
    }
    // the old link delivers 2..4 in order: two left the network, two new
    h.at(200);
    h.ack(4 * MSS, &[(10 * MSS, 16 * MSS)]);
    assert_eq!(h.sent(), segs(17..19, false));
    assert_eq!(h.tx.stats().retransmissions, 1);
    // the receiver got segment 2 twice: a DSACK for it; the window comes
    // back to cwnd_prev (below BDP_new = 25.6 segments) and ssthresh to the
    // larger of the two
    let dsack = |h: &mut Harness| {
        h.at(210);
        h.ack(4 * MSS, &[(2 * MSS, 3 * MSS), (10 * MSS, 16 * MSS)]);
        assert_eq!(h.tx.stats().spurious_retransmissions, 1);
        assert_eq!(
            h.ssthresh(),
            bdp(
                Rate::from_bps(FAST.0 * 1000),
                Duration::from_millis(2),
                1000
            )
        );
        assert_eq!(etcp(h).cwnd_prev(), None);
    };
    dsack(&mut h);
    // segments 4..10 are still on the slow link: the defence holds
    // (section 3.4: until everything sent before the handoff is
    // acknowledged), so the SACKed data above them marks nothing lost
    assert!(matches!(
        etcp(&h).reordering(),
        Reordering::Recovering { .. }
    ));
    assert_eq!(h.tx.dupthresh(), 32);
    h.at(212);
    h.ack(4 * MSS, &[(2 * MSS, 3 * MSS), (10 * MSS, 17 * MSS)]);
    assert!(h.sent().iter().all(|s| !s.1), "no retransmission");
    // they arrive: everything sent before the handoff is acknowledged, the
    // defence ends with the window cwnd_prev = 12, which this ACK grows in
    // slow start (below ssthresh = BDP_new) by RFC 3465's limit of 2
    h.at(250);
    h.ack(17 * MSS, &[]);
    assert_eq!(etcp(&h).reordering(), Reordering::Off);
    assert_eq!(h.tx.dupthresh(), 3);
    assert_eq!(h.cwnd(), 14 * MSS);
    assert_eq!(h.tx.stats().retransmissions, 1);

    // Figure 3 read as flattened: the DSACK ends the defence at once, and
    // the slow link's segments still on their way are taken for lost
    let p = EtcpParams {
        dsack_ends_defence: true,
        ..EtcpParams::default()
    };
    let (mut h, _) = script(CcConfig::Etcpv1(p));
    for k in 4..=6 {
        h.at(160 + k);
        h.ack(2 * MSS, &[(10 * MSS, (10 + k) * MSS)]);
    }
    h.at(200);
    h.ack(4 * MSS, &[(10 * MSS, 16 * MSS)]);
    h.sent();
    dsack(&mut h);
    assert_eq!(etcp(&h).reordering(), Reordering::Off);
    assert_eq!(h.tx.dupthresh(), 3);
    h.at(212);
    h.ack(4 * MSS, &[(2 * MSS, 3 * MSS), (10 * MSS, 17 * MSS)]);
    let rtx: Vec<_> = h.sent().into_iter().filter(|s| s.1).collect();
    assert!(!rtx.is_empty() && rtx[0] == (4 * MSS, true), "{rtx:?}");
}

/// Figure 3: more duplicate ACKs than dupthresh means real loss, not
/// reordering: normal fast recovery takes over (the sender's own, with
/// dupthresh back to 3, repairing the holes), and a later DSACK undoes
/// nothing (return_fastrecovery = 1).
#[test]
fn figure_3_returns_to_normal_fast_recovery_past_dupthresh() {
    // a link 4 x faster: dupthresh 4
    let mut h = v1(10);
    h.sent();
    notify(&mut h, 110, mbb(SLOW, (SLOW.0 * 4, 10), 1));
    assert_eq!(h.tx.dupthresh(), 4);
    h.at(160);
    h.ack(2 * MSS, &[]);
    h.sent();
    for k in 1..=3 {
        h.ack(2 * MSS, &[(10 * MSS, (10 + k) * MSS)]);
    }
    assert_eq!(h.sent(), segs(2..3, true), "the reordering fast retransmit");
    let halved = h.cwnd();
    // the fourth: the sender's own fast retransmit at dupthresh 4
    h.ack(2 * MSS, &[(10 * MSS, 14 * MSS)]);
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(h.tx.ca_state(), CaState::Recovery);
    assert_eq!(etcp(&h).reordering(), Reordering::Returned);
    assert_eq!(h.tx.dupthresh(), 3);
    assert_eq!(h.ssthresh(), 6 * MSS, "not halved twice");
    // the holes below the SACKed segments are repaired: with the usual
    // threshold, 3..10 are lost and go out as the pipe allows
    h.ack(2 * MSS, &[(10 * MSS, 15 * MSS)]);
    let rtx: Vec<_> = h.sent().into_iter().filter(|s| s.1).collect();
    assert!(!rtx.is_empty() && rtx[0] == (3 * MSS, true), "{rtx:?}");
    // a DSACK now undoes nothing
    let cwnd = h.cwnd();
    h.ack(3 * MSS, &[(2 * MSS, 3 * MSS), (10 * MSS, 15 * MSS)]);
    assert_eq!(h.cwnd(), cwnd);
    assert!(cwnd <= halved);
    assert_eq!(h.ssthresh(), 6 * MSS);
}

/// Sections 3.1 and 3.5: the RTO floor follows the new access link
/// (2 x (2 x 300 ms + 5 ms) = 1.21 s), never below the connection's
/// min_rto, and the running timer is re-armed at once; the first sample of
/// data sent after the notice re-initialises the RTT variables when it is
/// at least twice (or half) the old SRTT and above the floor.
#[test]
fn sections_3_1_and_3_5_move_the_rto_floor_and_reinitialise_the_rtt() {
    let egprs = (1664, 300); // tx time of 1040 bytes: 5 ms
    let mut h = v1(4);
    h.sent();
    notify(&mut h, 110, mbb(FAST, egprs, 1));
    let floor = Duration::from_millis(1210);
    assert_eq!(h.tx.rtt().min_rto(), floor);
    assert_eq!(h.tx.poll_timeout(), Some(ms(110) + floor));
    // the four segments sent before the notice: their samples are the old
    // path's (SRTT smoothed, not replaced)
    h.at(400);
    h.ack(4 * MSS, &[]);
    let srtt = h.tx.rtt().srtt().unwrap();
    assert!(srtt > Duration::from_millis(100) && srtt < Duration::from_millis(400));
    let sent = h.sent();
    assert_eq!(sent.first(), Some(&(4 * MSS, false)));
    // the first one sent after: 1.5 s, above the floor and > 2 x SRTT
    h.at(1900);
    h.ack(5 * MSS, &[]);
    assert_eq!(h.tx.rtt().srtt(), Some(Duration::from_millis(1500)));
    assert_eq!(h.tx.rtt().rttvar(), Duration::from_millis(750));

    // below the floor: the sample is smoothed in as usual
    let mut h = v1(4);
    h.sent();
    notify(&mut h, 110, mbb(FAST, egprs, 1));
    h.at(120);
    h.ack(4 * MSS, &[]);
    h.sent();
    h.at(1020); // 900 ms < 1.21 s
    h.ack(5 * MSS, &[]);
    let srtt = h.tx.rtt().srtt().unwrap();
    assert!(srtt < Duration::from_millis(900), "{srtt:?}");

    // a fast new link: 2 x (4 ms + 0.16 ms) is below the 1 s min_rto, which stays
    let mut h = v1(4);
    h.sent();
    notify(&mut h, 110, mbb(egprs, FAST, 1));
    assert_eq!(h.tx.rtt().min_rto(), Duration::from_secs(1));
    // minrto_factor = 0 leaves the floor alone
    let off = EtcpParams {
        minrto_factor: 0.0,
        ..EtcpParams::default()
    };
    let mut h = sender(CcConfig::Etcpv1(off), 4);
    h.sent();
    notify(&mut h, 110, mbb(FAST, egprs, 1));
    assert_eq!(h.tx.rtt().min_rto(), Duration::from_secs(1));
}

/// Without a notification ETCP is regular TCP: the same ACK sequence (a
/// loss, SACK recovery, a timeout) gives the same transmissions and windows
/// as NewReno with SACK.
#[test]
fn without_a_notification_etcp_is_regular_tcp() {
    let play = |algo: CcConfig| {
        let mut h = sender(algo, 10);
        let mut trace = vec![h.sent()];
        h.at(200);
        for k in 2..=5 {
            h.ack(MSS, &[(2 * MSS, k * MSS)]);
            trace.push(h.sent());
        }
        h.at(300);
        h.ack(8 * MSS, &[]);
        trace.push(h.sent());
        let rto = h.tx.poll_timeout().unwrap();
        h.now = rto;
        h.tx.handle_timeout(rto);
        trace.push(h.sent());
        (trace, h.cwnd(), h.ssthresh(), h.tx.stats().clone())
    };
    let regular = play(CcConfig::named("newreno").unwrap());
    for name in ["etcpv0", "etcpv1"] {
        assert_eq!(play(CcConfig::named(name).unwrap()), regular, "{name}");
    }
}

/// A notice without the link figures it needs changes nothing.
#[test]
fn a_notice_without_rates_is_ignored() {
    let mut h = v1(40);
    h.sent();
    let n = Notification::Handoff(HandoffNotice {
        style: HandoffStyle::MakeBeforeBreak,
        old: PathInfo::default(),
        new: link(SLOW.0, SLOW.1),
        flows: 1,
    });
    notify(&mut h, 110, n);
    assert_eq!(h.cwnd(), 40 * MSS);
    assert_eq!(h.tx.rtt().min_rto(), Duration::from_secs(1));
    assert_eq!(etcp(&h).share(), None);
}
