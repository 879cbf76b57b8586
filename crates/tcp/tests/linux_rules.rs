//! Exchange tests for the loss-recovery rules Linux runs and the RFCs
//! describe: PRR's sending schedule (RFC 6937 section 3.1), the ssthresh
//! bases, F-RTO's two-ACK decision (RFC 5682 section 3.1), the undo of a
//! reduction whose every retransmission came back as a DSACK (RFC 3708), and
//! Linux's quick-ACK receiver.

use wavelab_tcp::config::{ReceiverProfile, RecoveryReduction, SsthreshBasis};
use wavelab_tcp::testing::{ms, Harness, ISS};
use wavelab_tcp::wire::{Flags, Options, Segment};
use wavelab_tcp::{CaState, Duration, Receiver, SeqNum, TcpConfig, TxKind};

const MSS: u64 = 1000;

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        sack: true,
        delayed_ack: None,
        ..TcpConfig::default()
    }
}

/// What each of the duplicate ACKs 1..=19 released, as RFC 6937's
/// diagrams write it: "N" new data, "R" a retransmission, "" nothing.
fn schedule(reduction: RecoveryReduction) -> Vec<String> {
    let c = TcpConfig {
        initial_cwnd: 20,
        limited_transmit: true,
        recovery_reduction: reduction,
        // "standard AIMD ... ssthresh will be set to 10"
        ssthresh_basis: SsthreshBasis::FlightSize,
        ..cfg()
    };
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent().len(), 20);
    let mut out = Vec::new();
    for k in 1..=19u64 {
        h.at(200 + k);
        // segment 0 is lost; the ACK for segment k SACKs 1..=k
        h.ack(0, &[(MSS, (k + 1) * MSS)]);
        let s: String = h
            .sent()
            .iter()
            .map(|&(_, r)| if r { 'R' } else { 'N' })
            .collect();
        out.push(s);
    }
    out
}

/// RFC 6937 section 3.1's single loss: cwnd = FlightSize = 20, limited
/// transmit, segment 0 lost. PRR sends the retransmission on the third
/// duplicate ACK, then a segment on every other ACK, and ends the round
/// trip with the pipe at ssthresh; RFC 6675 sends nothing until the pipe has
/// fallen below cwnd = ssthresh, then a segment per ACK. The RFC's diagrams
/// show the same rows shifted by one ACK at the end (PRR's last sends at
/// ACKs 18-19 there, RFC 6675's first new segment at ACK 12), because their
/// pipe row counts one segment fewer than RFC 6675's definition does; fed
/// that pipe, the algorithm gives the diagram's row exactly
/// (`sender::prr::tests`).
#[test]
fn prr_spreads_the_reduction_over_the_round_trip() {
    let n = |k: usize| vec![String::new(); k];
    let mut prr = vec!["N", "N", "R"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    for _ in 0..7 {
        prr.extend(n(1));
        prr.push("N".into());
    }
    prr.extend(n(2));
    assert_eq!(schedule(RecoveryReduction::Prr), prr);

    let mut rfc6675 = vec!["N", "N", "R"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    rfc6675.extend(n(9));
    rfc6675.extend(vec!["N".to_string(); 7]);
    assert_eq!(schedule(RecoveryReduction::Rfc6675), rfc6675);
}

/// ssthresh at the third duplicate ACK of a 20-segment flight, three
/// segments SACKed: half of FlightSize (RFC 5681, the default), half the
/// pipe without the SACKed data (ns-3), half of cwnd (Linux).
#[test]
fn each_ssthresh_basis_halves_what_it_names() {
    for (basis, expected) in [
        (SsthreshBasis::FlightSize, 10_000),
        (SsthreshBasis::Pipe, 8_500),
        (SsthreshBasis::Cwnd, 10_000),
    ] {
        let c = TcpConfig {
            initial_cwnd: 20,
            ssthresh_basis: basis,
            ..cfg()
        };
        let mut h = Harness::new(c, "newreno");
        h.sent();
        h.at(200);
        for k in 1..=3 {
            h.ack(0, &[(MSS, (k + 1) * MSS)]);
        }
        assert_eq!(h.tx.ca_state(), CaState::Recovery, "{basis:?}");
        assert_eq!(h.ssthresh(), expected, "{basis:?}");
    }
}

/// A sender whose first flight of ten segments timed out at 1.1 s and whose
/// retransmission of segment 0 has gone out; F-RTO on.
fn timed_out() -> Harness {
    let c = TcpConfig {
        frto: true,
        ..cfg()
    };
    let mut h = Harness::new(c, "newreno");
    assert_eq!(h.sent().len(), 10);
    let rto = h.tx.poll_timeout().expect("the retransmission timer");
    h.now = rto;
    h.tx.handle_timeout(rto);
    assert_eq!(h.sent(), vec![(0, true)]);
    assert_eq!(h.tx.ca_state(), CaState::Loss);
    h
}

/// RFC 5682 section 3.1: the first ACK after the timeout that advances
/// `snd_una` (here over segment 0, retransmitted) releases new data, not
/// retransmissions (step 2b); the second decides. Here it acknowledges
/// segment 1, sent before the timeout and never retransmitted: the timeout
/// was spurious (step 3b), the window comes back and nothing else is
/// retransmitted.
#[test]
fn frto_undoes_a_timeout_the_second_ack_shows_spurious() {
    let mut h = timed_out();
    h.at(1200);
    h.ack(MSS, &[]);
    assert_eq!(
        h.sent(),
        vec![(10 * MSS, false), (11 * MSS, false)],
        "step 2b"
    );
    assert_eq!(h.tx.ca_state(), CaState::Loss);
    h.at(1201);
    h.ack(2 * MSS, &[]);
    assert_eq!(h.tx.stats().spurious_rtos, 1);
    assert_eq!(h.tx.ca_state(), CaState::Open);
    // the window before the timeout, plus this ACK's slow-start growth (the
    // ssthresh restored is unlimited again)
    assert_eq!(h.cwnd(), 11 * MSS);
    assert_eq!(h.ssthresh(), u64::MAX);
    assert!(
        h.sent().iter().all(|&(_, rtx)| !rtx),
        "segments 3-9 are not retransmitted"
    );
}

/// The same timeout, but the second ACK is a duplicate that SACKs the new
/// segment 10: the loss was real (step 3a); recovery retransmits as after
/// any timeout, and the window stays reduced.
#[test]
fn frto_keeps_the_reduction_when_the_second_ack_shows_loss() {
    let mut h = timed_out();
    h.at(1200);
    h.ack(MSS, &[]);
    assert_eq!(h.sent().len(), 2);
    h.at(1201);
    h.ack(MSS, &[(10 * MSS, 11 * MSS)]);
    assert_eq!(h.sent(), vec![(MSS, true)]);
    assert_eq!(h.tx.stats().spurious_rtos, 0);
    assert_eq!(h.tx.stats().undos, 0);
    assert_eq!(h.tx.ca_state(), CaState::Loss);
    assert!(h.cwnd() <= 3 * MSS);
}

/// Reordering taken for loss: segment 0 arrives late, after the fast
/// retransmit; the receiver reports the retransmission as a duplicate. With
/// `undo` the DSACK of every retransmission the recovery made restores the
/// window (RFC 3708; Linux's `tcp_try_undo_dsack`); without it the
/// reduction stays.
#[test]
fn a_dsack_of_every_retransmission_undoes_the_reduction() {
    for undo in [true, false] {
        let c = TcpConfig { undo, ..cfg() };
        let mut h = Harness::new(c, "newreno");
        assert_eq!(h.sent().len(), 10);
        h.at(200);
        for k in 1..=3 {
            h.ack(0, &[(MSS, (k + 1) * MSS)]);
        }
        assert_eq!(h.sent()[0], (0, true), "fast retransmit");
        let reduced = h.cwnd();
        assert!(reduced < 10 * MSS);
        // the original segment 0 arrives: the cumulative ACK covers 0-3
        h.at(210);
        h.ack(4 * MSS, &[]);
        h.sent();
        // then its retransmission, a duplicate: DSACK
        h.at(300);
        h.ack(4 * MSS, &[(0, MSS)]);
        if undo {
            assert_eq!(h.tx.stats().undos, 1);
            assert_eq!(h.cwnd(), 10 * MSS, "the window before the recovery");
            assert_ne!(h.tx.ca_state(), CaState::Recovery);
        } else {
            assert_eq!(h.tx.stats().undos, 0);
            assert!(h.cwnd() <= reduced);
        }
    }
}

/// Linux's receiver acknowledges each of the first 16 segments of a bulk
/// transfer (quick-ACK mode), then every second one; the RFC receiver every
/// second one from the start.
#[test]
fn the_linux_receiver_quick_acks_the_first_sixteen_segments() {
    let acks = |receiver| {
        let c = TcpConfig {
            receiver,
            delayed_ack: Some(Duration::from_millis(200)),
            ..cfg()
        };
        let mut rx = Receiver::new(c, SeqNum(5000));
        let syn = Segment {
            seq: ISS,
            ack: SeqNum(0),
            flags: Flags::SYN,
            window: 65_535,
            len: 0,
            options: Options {
                mss: Some(MSS as u16),
                window_scale: Some(7),
                sack_permitted: true,
                ..Options::default()
            },
        };
        rx.handle_segment(ms(0), &syn, None);
        assert_eq!(rx.poll_transmit(ms(0)).unwrap().kind, TxKind::SynAck);
        let mut sent = Vec::new();
        for k in 0..40u64 {
            let seg = Segment {
                seq: ISS + 1 + (k * MSS) as u32,
                ack: SeqNum(5001),
                flags: Flags::ACK,
                window: 1000,
                len: MSS as u32,
                options: Options::default(),
            };
            rx.handle_segment(ms(100 + k), &seg, None);
            while let Some(t) = rx.poll_transmit(ms(100 + k)) {
                sent.push((k, t.offset / MSS));
            }
        }
        sent
    };
    let linux = acks(ReceiverProfile::Linux);
    assert_eq!(linux.len(), 16 + 12);
    for (i, &(k, acked)) in linux.iter().enumerate().take(16) {
        assert_eq!(
            (k, acked),
            (i as u64, i as u64 + 1),
            "a quick ACK per segment"
        );
    }
    assert_eq!(linux[16], (17, 18), "then every second segment");
    assert_eq!(acks(ReceiverProfile::Rfc).len(), 20);
}
