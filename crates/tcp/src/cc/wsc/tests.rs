//! WSC-TCP against hand-written exchanges: ACKs played by
//! `crate::testing::Harness` and link-layer reports written out as a link
//! would send them. The SYN-ACK arrives at 100 ms (a 100 ms handshake RTT),
//! and the initial window of 10 segments of 1000 bytes leaves then.

use super::{DupThreshRestore, SessionRecord, Start, WscParams, WscTcp};
use crate::cc::{
    AckEvent, CcConfig, CongestionControl, LinkReport, Notification, SenderRequest, WindowStart,
};
use crate::seq::SeqNum;
use crate::testing::{acked, ms, Harness, ISS};
use crate::time::{Duration, Instant};
use crate::Cc;

const MSS: u64 = 1000;
const LL_RTO: Duration = Duration::from_millis(500);

fn harness(cc: CcConfig) -> Harness {
    Harness::plain(&cc, MSS as u32)
}

fn wsc(p: WscParams) -> Harness {
    harness(CcConfig::WscTcp(p))
}

fn newreno() -> Harness {
    harness(CcConfig::named("newreno").unwrap())
}

fn state(h: &Harness) -> &WscTcp {
    match h.tx.cc() {
        Cc::Wsc(w) => w,
        other => panic!("not wsc-tcp: {other:?}"),
    }
}

/// The link's report that segment `seg` was delivered after `retries`
/// link-layer retransmissions (as a driver writes it: the wire's sequence
/// number only).
fn report(h: &mut Harness, seg: u64, retries: u32) {
    let r = LinkReport {
        seq: SeqNum::from_offset(ISS + 1, seg * MSS),
        offset: 0,
        retries,
        link_rto: LL_RTO,
    };
    h.tx.handle_notification(h.now, &Notification::LinkReport(r));
}

fn drop_report(h: &mut Harness, seg: u64) {
    let r = LinkReport {
        seq: SeqNum::from_offset(ISS + 1, seg * MSS),
        offset: 0,
        retries: 7,
        link_rto: LL_RTO,
    };
    h.tx.handle_notification(h.now, &Notification::LinkDrop(r));
}

/// Section 3.1: a segment that needed two link-layer retransmissions comes
/// back 1150 ms after it left; the estimator sees 1150 - 2 x 500 = 150 ms,
/// NewReno's 1150 ms.
#[test]
fn the_rtt_sample_loses_the_link_layer_retransmissions() {
    let mut h = wsc(WscParams::default());
    assert_eq!(h.sent().len(), 10);
    h.at(300);
    report(&mut h, 0, 2);
    h.at(1250);
    h.ack(MSS, &[]);
    assert_eq!(h.tx.rtt().latest(), Some(Duration::from_millis(150)));
    assert_eq!(state(&h).corrected_samples(), 1);

    let mut nr = newreno();
    nr.sent();
    nr.at(1250);
    nr.ack(MSS, &[]);
    assert_eq!(nr.tx.rtt().latest(), Some(Duration::from_millis(1150)));

    // switched off: the raw sample (the clustering filter, still on, lets
    // the first samples through)
    let mut off = wsc(WscParams {
        corrected_rtt: false,
        ..WscParams::default()
    });
    off.sent();
    off.at(300);
    report(&mut off, 0, 2);
    off.at(1250);
    off.ack(MSS, &[]);
    assert_eq!(off.tx.rtt().latest(), Some(Duration::from_millis(1150)));
}

/// A correction larger than the sample (an LL_RTO above the link's real
/// retry delay) is floored at the smallest clean sample, here the
/// handshake's 100 ms, not taken to zero.
#[test]
fn a_corrected_sample_is_floored_at_the_smallest_clean_one() {
    let mut h = wsc(WscParams::default());
    h.sent();
    report(&mut h, 0, 3);
    h.at(400); // 300 ms observed, 3 x 500 ms subtracted
    h.ack(MSS, &[]);
    assert_eq!(h.tx.rtt().latest(), Some(Duration::from_millis(100)));
}

/// The initial window leaves; the link delivers segment 0, then 2..=6
/// while segment 1 is in link-layer retry.
fn overtake_segment_1(h: &mut Harness) {
    h.sent();
    h.at(110);
    report(h, 0, 0);
    for seg in 2..=6 {
        report(h, seg, 0);
    }
}

/// The exchange behind section 3.2: segment 1 is in link-layer retry while
/// the link delivers 2..=6, whose arrival draws five duplicate ACKs. NewReno
/// retransmits at the third; WSC-TCP's threshold is 3 + 5 and it does not.
/// When segment 1 arrives the cumulative ACK covers everything, and the
/// threshold is back to 3.
fn link_retry_exchange(h: &mut Harness) {
    overtake_segment_1(h);
    h.at(200);
    h.ack(MSS, &[]);
    h.sent();
    for t in 201..=205 {
        h.at(t);
        h.ack(MSS, &[]);
    }
}

#[test]
fn the_threshold_rises_while_a_segment_is_in_link_retry_and_no_spurious_fast_retransmit() {
    let mut nr = newreno();
    link_retry_exchange(&mut nr);
    assert_eq!(nr.tx.stats().fast_retransmits, 1, "NewReno: a spurious one");

    let mut h = wsc(WscParams::default());
    link_retry_exchange(&mut h);
    assert_eq!(h.tx.dupthresh(), 8);
    assert_eq!(state(&h).dupthresh_extra(), 5);
    assert_eq!(h.tx.stats().fast_retransmits, 0);
    assert!(
        h.sent().iter().all(|&(_, rtx)| !rtx),
        "nothing retransmitted"
    );
    // the late segment: delivered after one link retransmission
    h.at(650);
    report(&mut h, 1, 1);
    assert_eq!(
        h.tx.dupthresh(),
        8,
        "held until the cumulative ACK passes it"
    );
    h.at(750);
    h.ack(7 * MSS, &[]);
    assert_eq!(h.tx.dupthresh(), 3, "restored");
    assert_eq!(h.tx.stats().fast_retransmits, 0);
    assert_eq!(h.tx.stats().retransmissions, 0);
}

/// Restoring the threshold when the link reports the late segment, as the
/// thesis' pseudo-code does, brings the spurious retransmission back when
/// duplicate ACKs are still on their way: the reason for the default.
#[test]
fn restoring_at_the_link_report_lets_duplicate_acks_in_flight_through() {
    let mut h = wsc(WscParams {
        dupthresh_restore: DupThreshRestore::Link,
        ..WscParams::default()
    });
    overtake_segment_1(&mut h);
    h.at(200);
    h.ack(MSS, &[]);
    h.ack(MSS, &[]);
    assert_eq!(h.tx.dupthresh(), 8);
    h.at(205);
    report(&mut h, 1, 1);
    assert_eq!(h.tx.dupthresh(), 3);
    for t in 206..=209 {
        h.at(t);
        h.ack(MSS, &[]);
    }
    assert_eq!(h.tx.stats().fast_retransmits, 1);
}

/// A segment the link gave up is a loss: the threshold is not raised for
/// it, and the third duplicate ACK retransmits it, as NewReno.
#[test]
fn a_segment_the_link_dropped_is_fast_retransmitted() {
    let mut h = wsc(WscParams::default());
    overtake_segment_1(&mut h);
    assert_eq!(h.tx.dupthresh(), 8);
    drop_report(&mut h, 1);
    assert_eq!(h.tx.dupthresh(), 3);
    h.at(200);
    h.ack(MSS, &[]);
    h.sent();
    for t in 201..=203 {
        h.at(t);
        h.ack(MSS, &[]);
    }
    assert_eq!(h.tx.stats().fast_retransmits, 1);
    assert_eq!(h.sent()[0], (MSS, true));
}

/// With the mechanism off the threshold never moves.
#[test]
fn the_dynamic_threshold_can_be_switched_off() {
    let mut h = wsc(WscParams {
        dynamic_dupthresh: false,
        ..WscParams::default()
    });
    link_retry_exchange(&mut h);
    assert_eq!(h.tx.dupthresh(), 3);
    assert_eq!(h.tx.stats().fast_retransmits, 1);
}

fn rec(s: u64, window: u32) -> SessionRecord {
    SessionRecord {
        started: Instant::from_nanos(s * 1_000_000_000),
        window,
    }
}

/// Section 3.3: with past sessions in this hour the connection starts at
/// their median window (30 segments) in congestion avoidance; with none in
/// this hour it falls back to the 10-segment initial window and slow start.
#[test]
fn best_start_uses_the_history_and_falls_back_without_one() {
    let mut h = wsc(WscParams::default());
    h.tx.set_path_history(ms(100), &[rec(0, 20), rec(1, 30), rec(2, 45)]);
    assert_eq!(state(&h).start(), Start::BestStart(30));
    assert_eq!((h.cwnd(), h.ssthresh()), (30 * MSS, 30 * MSS));
    assert_eq!(h.sent().len(), 30);

    let mut h = wsc(WscParams::default());
    // the only past session ran at 05:00
    h.tx.set_path_history(ms(100), &[rec(5 * 3600, 45)]);
    assert_eq!(state(&h).start(), Start::SlowStart);
    assert_eq!((h.cwnd(), h.ssthresh()), (10 * MSS, u64::MAX));
    assert_eq!(h.sent().len(), 10);

    // switched off: the history is not even looked at, no record is kept
    let mut h = wsc(WscParams {
        best_start: false,
        ..WscParams::default()
    });
    h.tx.set_path_history(ms(100), &[rec(0, 45)]);
    assert_eq!(state(&h).start(), Start::NotAsked);
    assert_eq!(h.sent().len(), 10);
    assert_eq!(h.tx.session_record(), None);
}

/// What a session adds to the history: the largest window before any
/// congestion event.
#[test]
fn a_session_records_the_window_it_reached() {
    let mut h = wsc(WscParams::default());
    h.tx.set_path_history(ms(100), &[]);
    h.sent();
    for k in 1..=10 {
        h.at(200 + k);
        h.ack(k * MSS, &[]);
        h.sent();
    }
    let r = h.tx.session_record().unwrap();
    assert_eq!((r.started, r.window), (ms(100), 20));
}

fn ack_with_rtt(rtt_ms: u64) -> AckEvent {
    acked(MSS as u32, MSS)
        .in_flight(10 * MSS, 10 * MSS)
        .sample(Some(Duration::from_millis(rtt_ms)))
        .cwnd_limited(false)
        .build()
}

/// Section 3.4 through the algorithm: samples the filter withholds never
/// become [`SenderRequest::RttSample`]s.
#[test]
fn the_clustering_filter_withholds_an_outlier_and_follows_a_shift() {
    let start = WindowStart {
        mss: MSS as u32,
        initial_cwnd: 10,
        initial_ssthresh: None,
        abc_limit: 2,
    };
    let mut w = WscTcp::new(&WscParams::default(), &start);
    let fed = |w: &mut WscTcp, rtt| {
        w.on_ack(Instant::ZERO, &ack_with_rtt(rtt));
        let mut out = Vec::new();
        while let Some(r) = w.poll_request() {
            if let SenderRequest::RttSample(d) = r {
                out.push(d.as_millis());
            }
        }
        out
    };
    for i in 0..20 {
        assert_eq!(fed(&mut w, 100 + i % 3), [100 + i % 3]);
    }
    assert_eq!(fed(&mut w, 800), Vec::<u64>::new(), "an isolated outlier");
    for i in 0..16 {
        assert_eq!(fed(&mut w, 100 + i % 3), [100 + i % 3]);
    }
    // a new level: withheld while its cluster is below a quarter of the
    // window of 16, followed from its fourth sample on
    let shifted: Vec<usize> = (0..8).map(|_| fed(&mut w, 250).len()).collect();
    assert_eq!(shifted, [0, 0, 0, 1, 1, 1, 1, 1]);
    assert_eq!(w.withheld_samples(), 4);
}

#[test]
fn bad_parameters_are_named() {
    let parse = |json: &str| serde_json::from_str::<CcConfig>(json).map(|c| c.validate());
    let err = |json: &str| match parse(json) {
        Ok(Err(e)) => e,
        Err(e) => e.to_string(),
        Ok(Ok(())) => panic!("{json} was accepted"),
    };
    assert!(err(r#"{"algorithm": "wsc-tcp", "cluster_k": 1}"#).starts_with("cluster_k: 1"));
    assert!(
        err(r#"{"algorithm": "wsc-tcp", "cluster_window": 65}"#).starts_with("cluster_window: 65")
    );
    assert!(err(r#"{"algorithm": "wsc-tcp", "cluster_min_share": 1.5}"#)
        .starts_with("cluster_min_share"));
    assert!(err(r#"{"algorithm": "wsc-tcp", "bucket": "0s"}"#).starts_with("bucket"));
    assert!(err(r#"{"algorithm": "wsc-tcp", "history": 0}"#).starts_with("history"));
    assert!(err(r#"{"algorithm": "wsc-tcp", "pending_limit": 0}"#).starts_with("pending_limit"));
    assert!(
        err(r#"{"algorithm": "wsc-tcp", "dupthresh_restore": "never"}"#)
            .contains("unknown variant `never`")
    );
    assert!(err(r#"{"algorithm": "wsc-tcp", "clusterk": 2}"#).contains("unknown field `clusterk`"));
    let ok: CcConfig =
        serde_json::from_str(r#"{"algorithm": "wsc-tcp", "best_start": false, "cluster_k": 3}"#)
            .unwrap();
    assert_eq!(ok.name(), "wsc-tcp");
    assert_eq!(ok.validate(), Ok(()));
}

mod property {
    use super::*;
    use proptest::prelude::*;

    /// One input of the random exchange.
    #[derive(Clone, Debug)]
    enum Op {
        /// An ACK of this many segments (may go back: the sender ignores it).
        Ack(u64),
        /// The link delivered this segment after so many retries.
        Report(u64, u32),
        /// The link gave this segment up.
        Drop(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..40).prop_map(Op::Ack),
            (0u64..40, 0u32..8).prop_map(|(s, r)| Op::Report(s, r)),
            (0u64..40).prop_map(Op::Drop),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: crate::testing::cases("WAVELAB_WSC_CASES", 256),
            ..ProptestConfig::default()
        })]

        /// Link reports and ACKs in any order and for any segment (again,
        /// late, already acknowledged, never sent) never upset the sender:
        /// the threshold it uses is always the configured one plus what
        /// WSC-TCP asked, and a raise never exceeds the segments in flight.
        #[test]
        fn any_reports_keep_the_threshold_consistent(ops in proptest::collection::vec(op(), 1..80)) {
            let mut h = wsc(WscParams::default());
            h.sent();
            let mut t = 100;
            for op in ops {
                t += 3;
                h.at(t);
                match op {
                    Op::Ack(k) => h.ack(k * MSS, &[]),
                    Op::Report(s, r) => report(&mut h, s, r),
                    Op::Drop(s) => drop_report(&mut h, s),
                }
                h.sent();
                let extra = state(&h).dupthresh_extra();
                prop_assert_eq!(h.tx.dupthresh(), 3 + extra);
                prop_assert!(extra as u64 <= 64, "{}", extra);
            }
        }
    }
}
