//! Exchange tests for the loss-recovery rules Linux runs and the RFCs
//! describe: PRR's sending schedule (RFC 6937 section 3.1), the ssthresh
//! bases, F-RTO's two-ACK decision (RFC 5682 section 3.1), the undo of a
//! reduction whose every retransmission came back as a DSACK (RFC 3708),
//! Linux's quick-ACK receiver, Linux's timers after a tail loss probe, the
//! timer wheel those timers fire on, BBR's window allowance as Linux
//! sizes it, and the TSO bursts Linux sends a paced flow's data in.

use wavelab_tcp::cc::bbr::Mode;
use wavelab_tcp::config::{
    BbrQuantum, ReceiverProfile, RecoveryReduction, RtoRearm, SsthreshBasis, Tso,
};
use wavelab_tcp::profile::TcpProfile;
use wavelab_tcp::testing::{ms, synack, Harness, ISS, SYNACK_WINDOW};
use wavelab_tcp::wire::{Flags, Options, Segment};
use wavelab_tcp::{
    CaState, Cc, CcConfig, CongestionControl, Duration, Instant, Receiver, Sender, SeqNum,
    TcpConfig, TxKind,
};

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

/// The instants of a chain of timeouts with nothing coming back: the first
/// flight's RTO, then each doubled one, on timers of `hz` (0: exact).
fn backoff_chain(hz: u32, phase: Duration) -> Vec<Instant> {
    let c = TcpConfig {
        timer_hz: hz,
        ..cfg()
    };
    let mut h = Harness::new(c, "newreno");
    h.tx.set_timer_phase(phase);
    h.sent();
    // a fresh timer placed on the wheel with the phase
    h.tx.handle_timeout(h.now);
    let mut fired = Vec::new();
    for _ in 0..6 {
        let t = h.tx.poll_timeout().expect("the retransmission timer");
        h.now = t;
        h.tx.handle_timeout(t);
        assert_eq!(h.sent(), vec![(0, true)], "{hz} Hz: the head again");
        fired.push(t);
    }
    fired
}

/// Linux's timer wheel (kernel/time/timer.c): at 250 Hz a timeout of 0.25
/// to 2 s waits in buckets of 8 jiffies (32 ms), one of 2 to 16 s in buckets
/// of 64 jiffies (256 ms) and a longer one in buckets of 2.048 s, each fired
/// at the bucket's end, so every timeout of
/// a backoff chain fires after its doubled deadline, on a bucket boundary of
/// its level, and at most one bucket late. Where the boundaries fall (the
/// phase of the host's jiffies counter) moves the instants.
#[test]
fn the_timer_wheel_fires_a_backed_off_rto_late_on_its_levels_buckets() {
    let exact = backoff_chain(0, Duration::ZERO);
    // RFC 6298's 1 s initial RTO, doubled: 1, 2, 4, 8, 16 s apart
    let gaps: Vec<u64> = exact
        .windows(2)
        .map(|w| (w[1] - w[0]).as_nanos() / 1_000_000)
        .collect();
    assert_eq!(gaps, vec![2_000, 4_000, 8_000, 16_000, 32_000]);
    for phase in [0, 1_000, 77_777] {
        let phase = Duration::from_millis(phase);
        let wheel = backoff_chain(250, phase);
        let mut armed = wheel[0];
        for (k, &t) in wheel.iter().enumerate().skip(1) {
            let timeout = Duration::from_secs(1 << k);
            // the level by the timeout in 4 ms jiffies: below 504, 8-jiffy
            // buckets; below 4032, 64-jiffy ones; above, 512-jiffy ones
            let jiffies = timeout.as_nanos() / 4_000_000;
            let granule = Duration::from_millis(match jiffies {
                0..504 => 32,
                504..4_032 => 256,
                _ => 2_048,
            });
            let deadline = armed + timeout;
            assert!(t > deadline, "timeout {k} fired at its deadline or before");
            assert!(
                t <= deadline + granule,
                "timeout {k}: more than a bucket late"
            );
            let on_boundary = (t + phase).as_nanos() % granule.as_nanos();
            assert_eq!(on_boundary, 0, "timeout {k} is not on a bucket boundary");
            armed = t;
        }
    }
    assert_ne!(
        backoff_chain(250, Duration::ZERO),
        backoff_chain(250, Duration::from_millis(1_000)),
        "the phase moves the instants"
    );
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

/// An ACK on its way back: arrival at the sender, cumulative offset, SACK
/// blocks.
type PathAck = (Instant, u64, Vec<(u64, u64)>);

/// A path for closed-loop exchanges: a bottleneck of `rate` bytes per
/// second with an unlimited FIFO, `one_way` propagation each way, a receiver
/// that acknowledges every segment at once (cumulative ACK and up to three
/// SACK blocks), and a hold: the bottleneck sends nothing in `[hold.0,
/// hold.1)` and delivers what queued there afterwards (a link-layer stall,
/// which makes a timeout spurious; nothing is lost).
struct Path {
    rate: u64,
    one_way: Duration,
    hold: (Instant, Instant),
    busy_until: Instant,
    received: std::collections::BTreeSet<u64>,
    /// ACKs on their way back.
    acks: Vec<PathAck>,
    /// Data on its way to the receiver: (arrival, offset).
    data: Vec<(Instant, u64)>,
    /// The instant each data segment left the sender.
    sent_at: Vec<Instant>,
}

impl Path {
    fn new(rate: u64, one_way: Duration, hold: (Instant, Instant)) -> Self {
        Path {
            rate,
            one_way,
            hold,
            busy_until: Instant::from_nanos(0),
            received: Default::default(),
            acks: Vec::new(),
            data: Vec::new(),
            sent_at: Vec::new(),
        }
    }

    fn send(&mut self, now: Instant, offset: u64) {
        self.sent_at.push(now);
        let mut start = (now + self.one_way / 2).max(self.busy_until);
        if start >= self.hold.0 && start < self.hold.1 {
            start = self.hold.1;
        }
        let tx = Duration::from_nanos((MSS + 40) * 1_000_000_000 / self.rate);
        self.busy_until = start + tx;
        self.data.push((start + tx + self.one_way / 2, offset));
    }

    fn receive(&mut self, at: Instant, offset: u64) {
        self.received.insert(offset / MSS);
        let mut cum = 0;
        while self.received.contains(&cum) {
            cum += 1;
        }
        let mut blocks: Vec<(u64, u64)> = Vec::new();
        for &s in self.received.range(cum..) {
            match blocks.last_mut() {
                Some(b) if b.1 == s * MSS => b.1 += MSS,
                _ => blocks.push((s * MSS, (s + 1) * MSS)),
            }
        }
        // the block of this segment first, then the highest others (RFC 2018)
        blocks.sort_by_key(|b| std::cmp::Reverse((b.0 <= offset && offset < b.1, b.0)));
        blocks.truncate(3);
        self.acks.push((at + self.one_way, cum * MSS, blocks));
    }
}

/// Runs `h`'s sender over `path` until `end` (milliseconds), calling `probe`
/// after every event with the time and the sender.
fn run(h: &mut Harness, path: &mut Path, end: u64, mut probe: impl FnMut(Instant, &Harness)) {
    let end = ms(end);
    loop {
        for t in h.drain() {
            if matches!(t.kind, TxKind::Data | TxKind::Retransmission) {
                path.send(h.now, t.offset);
            }
        }
        let next_data = path.data.iter().map(|d| d.0).min();
        let next_ack = path.acks.iter().map(|a| a.0).min();
        let next_timer = h.tx.poll_timeout();
        let Some(next) = [next_data, next_ack, next_timer]
            .into_iter()
            .flatten()
            .min()
        else {
            break;
        };
        if next > end {
            break;
        }
        h.now = next;
        if next_data == Some(next) {
            let i = path.data.iter().position(|d| d.0 == next).unwrap();
            let (at, off) = path.data.remove(i);
            path.receive(at, off);
        } else if next_ack == Some(next) {
            let i = path.acks.iter().position(|a| a.0 == next).unwrap();
            let (_, cum, blocks) = path.acks.remove(i);
            h.ack(cum, &blocks);
        } else {
            h.tx.handle_timeout(next);
        }
        probe(h.now, h);
    }
}

/// BBR through a spurious timeout: a 4 Mbit/s, 40 ms path stalls for
/// 1.5 s at 5 s, so the retransmission timer expires (twice) though nothing
/// is lost. With the linux profile, F-RTO undoes the timeout when the
/// stalled segments arrive, and a fast recovery follows that retransmits
/// some 37 segments whose originals are still arriving; without F-RTO,
/// go-back-N after the timeout does the same. Each original's ACK comes a
/// few milliseconds after its retransmission, which the delivery-rate
/// sampler credits: a sample whose interval is below the minimum RTT, so it
/// has no rate. Linux's `bbr_update_bw` counts no round on such a sample;
/// counting them ended a "round" every other ACK, aged the 10-round
/// bandwidth filter out within the repair, and left BBR pacing at 18.6 kB/s
/// (the stall's sample) on a 481 kB/s path. The pacing rate must stay near
/// the path's rate (PROBE_BW's 0.75 gain at the lowest).
#[test]
fn bbr_keeps_its_pacing_rate_through_a_spurious_timeout() {
    for frto in [true, false] {
        let c = TcpConfig {
            mss: MSS as u32,
            frto,
            ..TcpProfile::Linux.config()
        };
        let mut h = Harness::new(c, "bbr");
        let mut path = Path::new(500_000, Duration::from_millis(20), (ms(5000), ms(6500)));
        let mut lowest = f64::INFINITY;
        let mut rtos = 0;
        run(&mut h, &mut path, 9000, |now, h| {
            if now >= ms(6500) {
                let r = h.tx.cc().pacing_rate().unwrap().as_bytes_per_sec_f64();
                lowest = lowest.min(r);
            }
            rtos = h.tx.stats().rto_expiries;
        });
        assert!(rtos >= 1, "frto {frto}: the stall times out");
        assert_eq!(h.tx.stats().undos, u64::from(frto), "frto {frto}");
        assert!(
            h.tx.stats().retransmissions > 30,
            "frto {frto}: segments retransmitted while their originals arrive"
        );
        // the path's payload rate (1040-byte packets), at PROBE_BW's 0.75
        // gain, with a margin
        let payload = 500_000.0 * MSS as f64 / (MSS + 40) as f64;
        assert!(
            lowest >= 0.7 * payload,
            "frto {frto}: pacing fell to {lowest:.0} B/s on a {payload:.0} B/s path"
        );
    }
}

/// Drains what the sender transmits at `t` (ms) into `log` as (offset, send
/// time); the end of the last segment logged, if any.
fn log_sent(h: &mut Harness, log: &mut Vec<(u64, u64)>, t: u64) -> Option<u64> {
    for (off, _) in h.sent() {
        log.push((off, t));
    }
    log.last().map(|&(off, _)| off + MSS)
}

/// The tail loss probe's timer after a transmission, by `tcp.rto_rearm`.
/// Eight round trips of 400 ms, each flight acknowledged at once, settle
/// SRTT at about 400 ms (and the RTO below 2 SRTT). The ACKs of the ninth
/// flight (sent at 3.3 s) then come one every 10 ms from 3.7 s, a queue
/// draining, each releasing new data; after the tenth the oldest outstanding
/// segment is still one sent at 3.3 s. The PTO re-armed after those
/// transmissions is 2 SRTT, capped: by RFC 8985 section 7.2 with the RTO
/// restarted at the last ACK (3.79 s + RTO), by Linux
/// (`tcp_schedule_loss_probe` with `tcp_rto_delta_us`) with the oldest
/// outstanding segment's send time + RTO, 490 ms earlier (and 2 ms added to
/// the 2 SRTT). Here the RTO is about 1.05 s and SRTT 414 ms: the RFC
/// probes at 3.79 s + 2 SRTT, Linux at 3.3 s + RTO. Once the probe has gone
/// out, the RTO runs from it in both.
#[test]
fn linux_caps_the_probe_timeout_by_the_oldest_segments_rto() {
    for rearm in [RtoRearm::Rfc8985, RtoRearm::Linux] {
        let c = TcpConfig {
            mss: MSS as u32,
            timestamps: false,
            rto_rearm: rearm,
            // the rules' own instants: timers that fire at their deadline
            timer_hz: 0,
            ..TcpProfile::Linux.config()
        };
        let mut h = Harness::new(c, "reno");
        // (offset, send time) of every segment, in order
        let mut log: Vec<(u64, u64)> = Vec::new();
        let mut nxt = log_sent(&mut h, &mut log, 100).unwrap();
        for round in 1..=8 {
            let t = 100 + 400 * round;
            h.at(t);
            h.ack(nxt, &[]);
            nxt = log_sent(&mut h, &mut log, t).unwrap_or(nxt);
        }
        // the ninth flight, sent at 3.3 s
        let mut una = log.iter().find(|e| e.1 == 3300).unwrap().0;
        for k in 0..10 {
            let t = 3700 + 10 * k;
            h.at(t);
            una += MSS;
            h.ack(una, &[]);
            log_sent(&mut h, &mut log, t);
        }
        let head_sent = ms(log.iter().find(|e| e.0 == una).unwrap().1);
        assert_eq!(head_sent, ms(3300), "{rearm:?}");
        let srtt = h.tx.rtt().srtt().unwrap();
        let rto = h.tx.rtt().rto();
        let rfc = h.now + (srtt * 2).min(rto);
        let linux = (h.now + srtt * 2 + Duration::from_millis(2)).min(head_sent + rto);
        assert!(linux + Duration::from_millis(100) < rfc, "the cases differ");
        let pto = h.tx.poll_timeout().unwrap();
        let want = match rearm {
            RtoRearm::Rfc8985 => rfc,
            RtoRearm::Linux => linux,
        };
        assert_eq!(pto, want, "{rearm:?}");
        // the probe, then the RTO from the probe's instant
        h.now = pto;
        h.tx.handle_timeout(pto);
        assert_eq!(h.sent().len(), 1, "{rearm:?}: the probe");
        assert_eq!(h.tx.stats().loss_probes, 1);
        assert_eq!(
            h.tx.poll_timeout(),
            Some(pto + h.tx.rtt().rto()),
            "{rearm:?}"
        );
    }
}

/// The retransmission timer after a tail loss probe when the RTO is below 2
/// SRTT (Linux's RTO is SRTT + a variance term of at least `TCP_RTO_MIN`,
/// below 2 SRTT once SRTT is long and steady), by `tcp.rto_rearm`. Rounds
/// of 600 ms, each flight acknowledged at once, bring the RTO below 2 SRTT
/// (after 18 rounds: SRTT 555 ms, RTO 1.06 s); the next flight (sent at
/// `t0`) is then lost but for its first segment, whose ACK comes late. The
/// flights stay below the peer's window, so the probe is a new segment.
///
/// * The PTO is capped by the RTO in both rules (RFC 8985 section 7.2: the
///   RTO restarted by the ACK at `t0`; Linux: the oldest segment's send
///   time, `t0`, + RTO): it fires at `t0` + RTO and sends the probe.
/// * After the probe the RTO runs from the probe's instant in both (RFC 8985
///   section 7.3; Linux's `tcp_send_loss_probe` clears `icsk_pending` before
///   `tcp_rearm_rto`), not from the 2 SRTT of a PTO re-armed by the
///   transmission of the probe's new segment, which would come later here.
/// * The late ACK of the first segment (its RTT sample raises the RTO),
///   with the probe still outstanding, re-arms the PTO; when it fires no second probe may go out (one
///   outstanding probe). RFC 8985 section 7.3 then restarts the RTO from
///   now, a full RTO more; Linux (`tcp_send_loss_probe`'s "at most one
///   outstanding TLP" branch, `tcp_rearm_rto` with the PTO still pending)
///   arms it at the oldest outstanding segment's send time + RTO, long past,
///   so one tick (1 ms) later. Either way the timeout then resends that
///   segment.
#[test]
fn the_rto_after_a_probe_follows_each_rearm_rule_below_two_srtt() {
    for rearm in [RtoRearm::Rfc8985, RtoRearm::Linux] {
        let c = TcpConfig {
            mss: MSS as u32,
            timestamps: false,
            rto_rearm: rearm,
            // the rules' own instants: timers that fire at their deadline
            timer_hz: 0,
            ..TcpProfile::Linux.config()
        };
        // congestion avoidance from 20 segments: the flights stay below the
        // peer's window, so that the probe is new data
        let cc = CcConfig::named("reno").unwrap().build(
            c.mss,
            c.initial_cwnd,
            Some(20 * MSS),
            c.abc_limit,
        );
        let mut tx = Sender::new(c, cc, ISS);
        tx.write_unlimited();
        assert_eq!(tx.poll_transmit(ms(0)).unwrap().kind, TxKind::Syn);
        tx.handle_segment(
            ms(100),
            &synack(Some(MSS as u16), Some(1), true, SYNACK_WINDOW),
        );
        let mut h = Harness { tx, now: ms(100) };
        // (offset, send time in ms) of every segment, in order
        let mut log: Vec<(u64, u64)> = Vec::new();
        let mut nxt = log_sent(&mut h, &mut log, 100).unwrap();
        let mut t0 = 100;
        for _ in 0..40 {
            t0 += 600;
            h.at(t0);
            h.ack(nxt, &[]);
            nxt = log_sent(&mut h, &mut log, t0).unwrap_or(nxt);
            let (srtt, rto) = (h.tx.rtt().srtt().unwrap(), h.tx.rtt().rto());
            if rto < srtt * 2 {
                break;
            }
        }
        let (srtt, rto) = (h.tx.rtt().srtt().unwrap(), h.tx.rtt().rto());
        assert!(
            rto < srtt * 2,
            "{rearm:?}: RTO {rto} not below 2 SRTT {srtt}"
        );
        let first = log.iter().find(|e| e.1 == t0).unwrap().0;

        // the PTO, capped by the RTO from t0, sends the probe
        let pto = h.tx.poll_timeout().unwrap();
        assert_eq!(pto, ms(t0) + rto, "{rearm:?}");
        h.now = pto;
        h.tx.handle_timeout(pto);
        assert_eq!(
            h.sent(),
            vec![(nxt, false)],
            "{rearm:?}: the probe, new data"
        );
        assert_eq!(h.tx.stats().loss_probes, 1);
        assert_eq!(h.tx.poll_timeout(), Some(pto + rto), "{rearm:?}");
        assert!(
            rto < srtt * 2 + Duration::from_millis(2),
            "the cases differ"
        );

        // the first segment's ACK, late; the probe is still outstanding
        let late = pto + Duration::from_millis(100);
        h.now = late;
        h.ack(first + MSS, &[]);
        let released = !h.sent().is_empty();
        // (the late ACK's RTT sample raised the RTO)
        let (srtt, rto) = (h.tx.rtt().srtt().unwrap(), h.tx.rtt().rto());
        let head_deadline = ms(t0) + rto;
        let pto = h.tx.poll_timeout().unwrap();
        let want = match rearm {
            RtoRearm::Rfc8985 => late + (srtt * 2).min(rto),
            // after new data, capped by the head's RTO only while it is ahead
            RtoRearm::Linux if released && head_deadline <= late => {
                late + srtt * 2 + Duration::from_millis(2)
            }
            RtoRearm::Linux if released => {
                (late + srtt * 2 + Duration::from_millis(2)).min(head_deadline)
            }
            RtoRearm::Linux => (late + srtt * 2 + Duration::from_millis(2)).min(late + rto),
        };
        assert_eq!(pto, want, "{rearm:?} (data released: {released})");
        h.now = pto;
        h.tx.handle_timeout(pto);
        assert!(h.sent().is_empty(), "{rearm:?}: no second probe");
        assert_eq!(h.tx.stats().loss_probes, 1);
        assert_eq!(h.tx.stats().rto_expiries, 0);
        let rto_at = h.tx.poll_timeout().unwrap();
        let want = match rearm {
            RtoRearm::Rfc8985 => pto + rto,
            RtoRearm::Linux => pto + Duration::from_millis(1),
        };
        assert_eq!(rto_at, want, "{rearm:?}");
        h.now = rto_at;
        h.tx.handle_timeout(rto_at);
        assert_eq!(h.tx.stats().rto_expiries, 1, "{rearm:?}");
        assert!(
            h.sent().contains(&(first + MSS, true)),
            "{rearm:?}: the timeout resends the oldest outstanding segment"
        );
    }
}

/// BBR's window and PROBE_RTT on a 2 Mbit/s, 60 ms path with no other
/// traffic, by `tcp.bbr_quantum`. Without an allowance (the default) PROBE_BW
/// keeps at most its bandwidth-delay product in flight after each 0.75
/// phase, the queue empties, and every such round trip measures RTprop
/// again to the nanosecond, so the estimate never ages and PROBE_RTT never
/// comes. Linux's `bbr_quantization_budget` (`"linux"`, the linux profile)
/// adds 3 x 2 segments (rounded up to an even count, 2 more in the probing
/// phase) to every in-flight target: the window in PROBE_BW is that much
/// above 2 x BDP, the queue never empties, no RTT sample matches RTprop,
/// and PROBE_RTT comes 10 s after the last one ended, as the kernel's does
/// (here at 10.23 and 20.90 s; at 10.1 s and then after 20.4 s in the
/// emulated DCNET handover runs).
#[test]
fn linux_bbr_quantum_keeps_a_queue_and_probes_rtt_every_ten_seconds() {
    for quantum in [BbrQuantum::None, BbrQuantum::Linux] {
        let c = TcpConfig {
            mss: MSS as u32,
            bbr_quantum: quantum,
            ..TcpProfile::Linux.config()
        };
        let mut h = Harness::new(c, "bbr");
        let far = ms(1_000_000);
        let mut path = Path::new(250_000, Duration::from_millis(30), (far, far));
        let mut probe_rtt = Vec::new();
        let mut extra = std::collections::BTreeSet::new();
        let mut in_probe_rtt = false;
        run(&mut h, &mut path, 25_000, |now, h| {
            let Cc::Bbr(b) = h.tx.cc() else {
                unreachable!()
            };
            let now_in = b.mode() == Mode::ProbeRtt;
            if now_in && !in_probe_rtt {
                probe_rtt.push(now.as_secs_f64());
            }
            in_probe_rtt = now_in;
            // the window above cwnd_gain x BDP (in whole segments) in
            // PROBE_BW's cruising phases
            if b.mode() == Mode::ProbeBw && b.cycle_index().is_some_and(|i| i >= 2) {
                let bdp = b.bdp().unwrap() as f64 * b.cwnd_gain();
                let segments = (bdp / MSS as f64).ceil() as u64;
                extra.insert(b.cwnd() as i64 / MSS as i64 - segments as i64);
            }
        });
        match quantum {
            BbrQuantum::None => {
                assert!(probe_rtt.is_empty(), "{probe_rtt:?}");
                assert!(extra.iter().all(|&e| e <= 0), "{extra:?}");
            }
            BbrQuantum::Linux => {
                assert_eq!(probe_rtt.len(), 2, "{probe_rtt:?}");
                assert!((10.0..10.5).contains(&probe_rtt[0]), "{probe_rtt:?}");
                // 10 s after the estimate taken at the end of the first:
                // the flight drained to 4 segments, 200 ms and a round trip
                let gap = probe_rtt[1] - probe_rtt[0];
                assert!((10.2..11.0).contains(&gap), "{probe_rtt:?}");
                // 3 x 2 segments, plus one where rounding up to even adds it
                assert!(extra.iter().all(|&e| e == 6 || e == 7), "{extra:?}");
            }
        }
    }
}

/// How BBR's paced data leaves on a 2 Mbit/s, 60 ms path, by `tcp.tso`.
/// One segment per pacing interval by default; with Linux's TSO bursts
/// (`"linux"`, the linux profile) the segments of `bbr_tso_segs_goal` (2 at
/// this rate: 1/1024 s of it is less than a segment, and BBR's
/// `bbr_min_tso_segs` is 2 at or above 1.2 Mbit/s) leave at one instant,
/// and the next burst waits for the pacing time of both.
#[test]
fn linux_tso_sends_bbrs_paced_data_two_segments_at_a_time() {
    for tso in [Tso::None, Tso::Linux] {
        let c = TcpConfig {
            mss: MSS as u32,
            tso,
            ..TcpProfile::Linux.config()
        };
        let mut h = Harness::new(c, "bbr");
        let far = ms(1_000_000);
        let mut path = Path::new(250_000, Duration::from_millis(30), (far, far));
        run(&mut h, &mut path, 9_000, |_, _| {});
        // the sends of PROBE_BW, grouped by instant
        let mut groups: Vec<(Instant, usize)> = Vec::new();
        for &t in path.sent_at.iter().filter(|&&t| t >= ms(5_000)) {
            match groups.last_mut() {
                Some(g) if g.0 == t => g.1 += 1,
                _ => groups.push((t, 1)),
            }
        }
        let sizes: std::collections::BTreeMap<usize, usize> =
            groups.iter().fold(Default::default(), |mut m, g| {
                *m.entry(g.1).or_default() += 1;
                m
            });
        let segments: usize = sizes.iter().map(|(k, n)| k * n).sum();
        assert!(segments > 800, "{tso:?}: {sizes:?}");
        match tso {
            Tso::None => assert_eq!(sizes.keys().copied().collect::<Vec<_>>(), [1], "{sizes:?}"),
            Tso::Linux => {
                assert_eq!(sizes.keys().max(), Some(&2), "{sizes:?}");
                // nearly every segment in a pair (a burst cut short by the
                // window or PROBE_RTT's four segments aside)
                assert!(sizes[&2] * 2 * 100 >= segments * 95, "{sizes:?}");
                // the pacer waits for the whole pair: two segments' time at
                // the fastest pacing rate, PROBE_BW's 1.25 x 2 Mbit/s (6.66
                // ms of 1,040-byte packets; one segment's would be 3.33)
                let gaps = groups.windows(2).filter(|w| w[0].1 == 2);
                let min_gap = gaps.map(|w| w[1].0 - w[0].0).min().unwrap();
                assert!(min_gap >= Duration::from_micros(6_600), "{min_gap:?}");
            }
        }
    }
}
