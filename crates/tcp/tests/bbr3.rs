//! Exchange tests of BBRv3 (draft-ietf-ccwg-bbr-06): the sans-IO sender runs
//! `cc = "bbr3"` over a played bottleneck (a rate, a one-way delay each
//! way, a drop-tail buffer and optional random loss; the receiver ACKs each
//! segment with SACK), and each test pins one phase transition or the loss
//! response of the draft's section 5.

use wavelab_tcp::cc::bbr3::State;
use wavelab_tcp::testing::{ms, Harness};
use wavelab_tcp::{Cc, CongestionControl, Duration, Instant, TcpConfig, TxKind};

const MSS: u64 = 1000;

/// An ACK on its way back: arrival at the sender, cumulative ACK, SACK blocks.
type ReturningAck = (Instant, u64, Vec<(u64, u64)>);

/// The played path.
struct Bottleneck {
    /// Bits per second of the bottleneck (payload plus 40 header bytes).
    rate: u64,
    one_way: Duration,
    /// Drop-tail buffer in bytes.
    buffer: u64,
    /// Probability that a segment is lost before the bottleneck, in
    /// millionths, drawn from a fixed SplitMix64 sequence.
    loss_ppm: u64,
    draws: u64,
    busy_until: Instant,
    received: std::collections::BTreeSet<u64>,
    /// (arrival at the receiver, offset).
    data: Vec<(Instant, u64)>,
    acks: Vec<ReturningAck>,
}

impl Bottleneck {
    fn new(mbps: u64, rtt_ms: u64, buffer: u64, loss_ppm: u64) -> Self {
        Bottleneck {
            rate: mbps * 1_000_000,
            one_way: Duration::from_millis(rtt_ms / 2),
            buffer,
            loss_ppm,
            draws: 0,
            busy_until: Instant::ZERO,
            received: Default::default(),
            data: Vec::new(),
            acks: Vec::new(),
        }
    }

    fn random_loss(&mut self) -> bool {
        self.draws += 1;
        let mut z = self.draws.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % 1_000_000 < self.loss_ppm
    }

    fn send(&mut self, now: Instant, offset: u64) {
        if self.random_loss() {
            return;
        }
        let tx = Duration::from_nanos((MSS + 40) * 8 * 1_000_000_000 / self.rate);
        let backlog = self.busy_until.saturating_since(now);
        if backlog.as_nanos() * (MSS + 40) / tx.as_nanos() > self.buffer {
            return; // drop-tail
        }
        let start = now.max(self.busy_until);
        self.busy_until = start + tx;
        self.data.push((self.busy_until + self.one_way, offset));
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
        blocks.sort_by_key(|b| std::cmp::Reverse((b.0 <= offset && offset < b.1, b.0)));
        blocks.truncate(3);
        self.acks.push((at + self.one_way, cum * MSS, blocks));
    }

    /// The path's bandwidth-delay product in payload bytes.
    fn bdp(&self) -> u64 {
        let rtt = (self.one_way * 2).as_secs_f64();
        (self.rate as f64 / 8.0 * rtt * MSS as f64 / (MSS + 40) as f64) as u64
    }
}

fn bbr3(h: &Harness) -> &wavelab_tcp::cc::Bbr3 {
    let Cc::Bbr3(b) = h.tx.cc() else {
        unreachable!("the harness runs bbr3")
    };
    b
}

/// Runs BBRv3 until `end_ms`; `probe` sees the sender after every event.
fn run(path: &mut Bottleneck, end_ms: u64, probe: impl FnMut(Instant, &Harness)) -> Harness {
    run_cc(path, "bbr3", end_ms, probe)
}

/// Runs algorithm `cc` until `end_ms`.
fn run_cc(
    path: &mut Bottleneck,
    cc: &str,
    end_ms: u64,
    mut probe: impl FnMut(Instant, &Harness),
) -> Harness {
    let cfg = TcpConfig {
        mss: MSS as u32,
        delayed_ack: None,
        ..TcpConfig::default()
    };
    let mut h = Harness::new(cfg, cc);
    let end = ms(end_ms);
    loop {
        for t in h.drain() {
            if matches!(t.kind, TxKind::Data | TxKind::Retransmission) {
                path.send(h.now, t.offset);
            }
        }
        let next_data = path.data.iter().map(|d| d.0).min();
        let next_ack = path.acks.iter().map(|a| a.0).min();
        let Some(next) = [next_data, next_ack, h.tx.poll_timeout()]
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
            let (at, off) = path.data.swap_remove(i);
            path.receive(at, off);
        } else if next_ack == Some(next) {
            let i = path.acks.iter().position(|a| a.0 == next).unwrap();
            let (_, cum, blocks) = path.acks.swap_remove(i);
            h.ack(cum, &blocks);
        } else {
            h.tx.handle_timeout(next);
        }
        probe(h.now, &h);
    }
    h
}

/// The states in the order they were entered, with the instant (s).
fn transitions(path: &mut Bottleneck, end_ms: u64) -> (Vec<(State, f64)>, Harness) {
    let mut seen: Vec<(State, f64)> = vec![(State::Startup, 0.0)];
    let h = run(path, end_ms, |now, h| {
        let s = bbr3(h).state();
        if seen.last().unwrap().0 != s {
            seen.push((s, now.as_secs_f64()));
        }
    });
    (seen, h)
}

/// Section 5.3.1.2: on a deep buffer without loss, Startup ends on the
/// bandwidth plateau (no inflight_longterm: not a loss exit), with max_bw
/// near the bottleneck's payload rate; Drain follows and ends in ProbeBW.
#[test]
fn startup_exits_on_the_bandwidth_plateau() {
    let mut path = Bottleneck::new(10, 40, 1_000_000, 0);
    let mut at_exit = None;
    let h = run(&mut path, 2_000, |_, h| {
        let b = bbr3(h);
        if at_exit.is_none() && b.state() != State::Startup {
            at_exit = Some((
                b.state(),
                b.max_bw().unwrap().as_bps(),
                b.inflight_longterm(),
                h.tx.stats().retransmissions,
            ));
        }
    });
    let (state, max_bw, hi, rexmits) = at_exit.expect("Startup ended");
    assert_eq!(state, State::Drain);
    assert_eq!(hi, None, "a plateau exit sets no long-term bound");
    assert_eq!(rexmits, 0);
    let payload = 10_000_000 * MSS / (MSS + 40);
    assert!(
        (payload * 9 / 10..=payload * 11 / 10).contains(&max_bw),
        "{max_bw} vs {payload}"
    );
    assert!(bbr3(&h).state().is_probe_bw(), "{:?}", bbr3(&h).state());
}

/// Section 5.3.1.3: with a buffer of a fifth of the BDP, Startup's
/// overshoot loses more than 2 % of a round in six or more events; Startup
/// ends on that loss and sets inflight_longterm = max(BDP, the round's
/// delivered volume).
#[test]
fn startup_exits_on_loss_with_a_shallow_buffer() {
    let mut path = Bottleneck::new(10, 40, 10_000, 0);
    let bdp = path.bdp();
    let mut at_exit = None;
    run(&mut path, 2_000, |_, h| {
        let b = bbr3(h);
        if at_exit.is_none() && b.state() != State::Startup {
            at_exit = Some((
                b.state(),
                b.inflight_longterm(),
                h.tx.stats().retransmissions,
            ));
        }
    });
    let (state, hi, rexmits) = at_exit.expect("Startup ended");
    // Drain, or ProbeBW if the losses had already brought the flight
    // down to the BDP on the same ACK
    assert!(state == State::Drain || state.is_probe_bw(), "{state:?}");
    assert!(rexmits >= 6, "{rexmits} retransmissions");
    let hi = hi.expect("a loss exit sets inflight_longterm");
    assert!(hi >= bdp * 8 / 10 && hi <= bdp * 3, "{hi} vs BDP {bdp}");
}

/// Section 5.3.2: Drain ends when in flight is down to the BDP estimate (or
/// after three rounds), and it does within three round trips.
#[test]
fn drain_ends_with_in_flight_at_the_bdp() {
    let mut path = Bottleneck::new(10, 40, 1_000_000, 0);
    let mut drain = None;
    let mut exit = None;
    run(&mut path, 2_000, |now, h| {
        let b = bbr3(h);
        let t = now.as_secs_f64();
        if drain.is_none() && b.state() == State::Drain {
            drain = Some(t);
        }
        if drain.is_some() && exit.is_none() && b.state() != State::Drain {
            exit = Some((t, h.tx.in_flight(), b.bdp()));
        }
    });
    let (t, in_flight, bdp) = exit.expect("Drain ended");
    // the BDP estimate plus the quantization budget (three 2-segment quanta)
    assert!(in_flight <= bdp.max(6 * MSS), "{in_flight} > {bdp}");
    assert!(t - drain.unwrap() < 3.0 * 0.045, "{t} {drain:?}");
}

/// Section 5.3.3: ProbeBW cycles REFILL -> UP -> DOWN -> CRUISE -> REFILL;
/// CRUISE lasts the randomized 2-3 s wait or the Reno-coexistence bound
/// (min(BDP in segments, 63) rounds: 48 rounds here, 1.9 s).
#[test]
fn probe_bw_cycles_through_its_four_phases() {
    let mut path = Bottleneck::new(10, 40, 1_000_000, 0);
    let (seen, _) = transitions(&mut path, 8_000);
    // ProbeRTT returns to CRUISE (section 5.3.4.4), and DOWN passes to
    // CRUISE on the ACK that entered it when in flight is already within
    // the BDP (after Drain): both are left out of the cycle.
    let mut states: Vec<State> = seen
        .iter()
        .map(|s| s.0)
        .filter(|&s| s != ProbeRtt)
        .collect();
    states.dedup();
    use State::*;
    let cycle = [ProbeBwRefill, ProbeBwUp, ProbeBwDown, ProbeBwCruise];
    let first = states.iter().position(|&s| s == ProbeBwRefill).unwrap();
    let steady = &states[first..];
    assert!(steady.len() >= 9, "{seen:?}");
    for (i, s) in steady.iter().enumerate() {
        assert_eq!(*s, cycle[i % 4], "{seen:?}");
    }
    // CRUISE to REFILL
    for w in seen.windows(2) {
        if w[0].0 == ProbeBwCruise && w[1].0 == ProbeBwRefill {
            let cruise = w[1].1 - w[0].1;
            assert!(
                (1.0..3.0).contains(&cruise),
                "{cruise} s in CRUISE: {seen:?}"
            );
        }
    }
}

/// Section 5.5.10.2: with 3 % random loss a bandwidth probe sees more
/// than 2 % of its flight lost and cuts inflight_longterm, to at least
/// beta (0.7) x the target min(BDP, cwnd); without loss there is no cut.
/// With 0.5 % and 3 % loss the flow keeps well above a loss-based flow
/// (the draft's section 1: NewReno's window halves at each loss).
#[test]
fn probe_loss_above_two_percent_cuts_inflight_longterm() {
    const END: u64 = 5_000;
    let goodput = |h: &Harness| h.tx.bytes_acked() as f64 * 8.0 / (END as f64 / 1000.0 - 0.1);
    let run_with = |ppm| {
        let mut path = Bottleneck::new(10, 40, 1_000_000, ppm);
        // (the new bound, the target min(BDP, cwnd) before the ACK that cut)
        let mut cuts = Vec::new();
        let mut last = None;
        let mut target = 0;
        let h = run(&mut path, END, |_, h| {
            let b = bbr3(h);
            let hi = b.inflight_longterm();
            if let (Some(new), Some(old)) = (hi, last) {
                if new < old {
                    cuts.push((new, target));
                }
            }
            if hi.is_some() {
                last = hi;
            }
            target = b.bdp().min(b.cwnd());
        });
        (cuts, goodput(&h))
    };
    let (none, _) = run_with(0);
    let (low, goodput_low) = run_with(5_000);
    let (high, goodput_high) = run_with(30_000);
    assert!(none.is_empty(), "no loss, yet cuts: {none:?}");
    assert!(!high.is_empty(), "3 % loss never cut inflight_longterm");
    // a cut never goes below 0.7 x the target
    assert!(
        high.iter().chain(&low).all(|&(b, t)| b + 1 >= t * 7 / 10),
        "0.5 %: {low:?}, 3 %: {high:?}"
    );
    assert!(goodput_low > goodput_high);
    for (ppm, bbr3) in [(5_000, goodput_low), (30_000, goodput_high)] {
        let mut path = Bottleneck::new(10, 40, 1_000_000, ppm);
        let reno = goodput(&run_cc(&mut path, "newreno", END, |_, _| {}));
        assert!(bbr3 > 1.5 * reno, "{ppm} ppm: bbr3 {bbr3}, newreno {reno}");
    }
}

/// Section 5.3.4: with no queue, RTT samples never fall below the first
/// minimum, so probe_rtt_min_delay expires 5 s after it was taken:
/// ProbeRTT comes then, holds cwnd at half the BDP (at least four segments)
/// for 200 ms and a round trip once the flight is down to it, and returns to
/// ProbeBW.
#[test]
fn probe_rtt_after_five_seconds_holds_half_a_bdp_for_200_ms() {
    let mut path = Bottleneck::new(10, 40, 1_000_000, 0);
    let mut entered = None;
    let mut left = None;
    let mut max_cwnd_in = 0u64;
    let mut half_bdp = 0u64;
    run(&mut path, 7_000, |now, h| {
        let b = bbr3(h);
        let t = now.as_secs_f64();
        if b.state() == State::ProbeRtt {
            if entered.is_none() {
                entered = Some(t);
                half_bdp = (b.bdp() / 2).max(4 * MSS);
            }
            max_cwnd_in = max_cwnd_in.max(b.cwnd());
        } else if entered.is_some() && left.is_none() {
            left = Some((t, b.state()));
        }
    });
    let entered = entered.expect("ProbeRTT");
    assert!((5.0..6.0).contains(&entered), "{entered}");
    let (t, state) = left.expect("ProbeRTT ended");
    assert_eq!(state, State::ProbeBwCruise);
    // 200 ms after in flight fell to the target, and one round (40 ms)
    let held = t - entered;
    assert!((0.2..0.35).contains(&held), "{held} s");
    assert!(max_cwnd_in <= half_bdp + MSS, "{max_cwnd_in} > {half_bdp}");
}
