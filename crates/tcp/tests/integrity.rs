//! Property tests: over a channel that loses, duplicates, delays and reorders
//! segments in both directions, and may go dark for a few seconds (an outage),
//! with up to two cross-layer handoff notices at random instants (which the
//! cross-layer algorithms act on), the receiver delivers exactly the bytes
//! written to the sender, in order, once; and the sender only adds data to the
//! network when its algorithm's window allows it (plus the one immediate
//! retransmission each loss event permits, and the one a notice may ask for).

use proptest::prelude::*;
use std::collections::BinaryHeap;
use wavelab_tcp::cc::{CaState, HandoffNotice, HandoffStyle, Notification, PathInfo};
use wavelab_tcp::config::{BbrQuantum, Hystart, ReceiverProfile, RecoveryReduction, SsthreshBasis};
use wavelab_tcp::{
    ByteSize, CcConfig, CongestionControl, Duration, Instant, LostRetransmissions, Receiver,
    RtoFlavour, RtoRearm, RtoSsthresh, Sender, SeqNum, TcpConfig, TxKind,
};

/// A small deterministic generator (xorshift64*), so the channel is reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

#[derive(Clone, Debug)]
struct Channel {
    loss: f64,
    dup: f64,
    delay_ms: u64,
    jitter_ms: u64,
    /// Everything sent in `[start, start + len)` milliseconds is lost.
    outage_ms: Option<(u64, u64)>,
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Arrival {
    at: std::cmp::Reverse<(u64, u64)>,
    to_receiver: bool,
    idx: usize,
}

struct Outcome {
    delivered: Vec<u8>,
    window_violations: u64,
    loss_events: u64,
    finished: bool,
}

/// A handoff notice delivered to the sender at `at_ms`.
#[derive(Clone, Debug)]
struct Notice {
    at_ms: u64,
    msg: Notification,
}

fn notice() -> impl Strategy<Value = Notice> {
    let link = (1u64..200_000, 1u64..400).prop_map(|(kbps, ms)| PathInfo {
        rate: Some(wavelab_tcp::Rate::from_bps(kbps * 1000)),
        delay: Some(Duration::from_millis(ms)),
    });
    (0u64..6_000, link.clone(), link, 1u32..5, any::<bool>()).prop_map(
        |(at_ms, old, new, flows, mbb)| Notice {
            at_ms,
            msg: Notification::Handoff(HandoffNotice {
                style: if mbb {
                    HandoffStyle::MakeBeforeBreak
                } else {
                    HandoffStyle::BreakBeforeMake {
                        disconnection: Duration::from_secs(1),
                    }
                },
                old,
                new,
                flows,
            }),
        },
    )
}

fn run(
    cfg: TcpConfig,
    algo: &CcConfig,
    data: &[u8],
    chan: Channel,
    seed: u64,
    chunked_writes: bool,
    mut notices: Vec<Notice>,
) -> Outcome {
    notices.sort_by_key(|n| std::cmp::Reverse(n.at_ms));
    let cc = algo.build(cfg.mss, cfg.initial_cwnd, None, cfg.abc_limit);
    let mut tx = Sender::new(cfg.clone(), cc, SeqNum(seed as u32));
    let mut rx = Receiver::new(cfg.clone(), SeqNum((seed >> 32) as u32));
    rx.keep_bytes();
    if chunked_writes {
        for c in data.chunks(777) {
            tx.write(c);
        }
    } else {
        tx.write(data);
    }
    tx.close();
    let mut rng = Rng(seed | 1);
    // In-flight segments with their payload.
    let mut store: Vec<(wavelab_tcp::Segment, Vec<u8>)> = Vec::new();
    let mut heap: BinaryHeap<Arrival> = BinaryHeap::new();
    let mut counter = 0u64;
    let mut now = Instant::ZERO;
    let mut delivered = Vec::new();
    let mut window_violations = 0u64;
    let mut partial_acks = 0u64;
    let mut notified = 0u64;
    let mss = cfg.mss as u64;
    let lt_allowance = if cfg.limited_transmit { 2 * mss } else { 0 };
    // PRR lets a SACK recovery send while the pipe is above cwnd (= ssthresh),
    // never raising it above the window the recovery reduces plus a segment
    let prr = cfg.sack && cfg.recovery_reduction == RecoveryReduction::Prr;
    let mut cwnd_before_recovery = 0u64;
    let limit = Instant::from_nanos(20_000 * 1_000_000_000);
    let mut send = |to_receiver: bool,
                    seg: wavelab_tcp::Segment,
                    payload: Vec<u8>,
                    now: Instant,
                    rng: &mut Rng,
                    heap: &mut BinaryHeap<Arrival>,
                    store: &mut Vec<(wavelab_tcp::Segment, Vec<u8>)>| {
        if rng.chance(chan.loss) {
            return;
        }
        if let Some((start, len)) = chan.outage_ms {
            let t = now.as_nanos() / 1_000_000;
            if (start..start + len).contains(&t) {
                return;
            }
        }
        let copies = if rng.chance(chan.dup) { 2 } else { 1 };
        for _ in 0..copies {
            let d = chan.delay_ms * 1_000_000 + rng.below(chan.jitter_ms * 1_000_000 + 1);
            counter += 1;
            store.push((seg, payload.clone()));
            heap.push(Arrival {
                at: std::cmp::Reverse((now.as_nanos() + d, counter)),
                to_receiver,
                idx: store.len() - 1,
            });
        }
    };
    loop {
        // Drain both endpoints.
        loop {
            let mut moved = false;
            loop {
                let pipe_before = tx.in_flight();
                let outstanding_before = tx.snapshot().outstanding;
                let state = tx.ca_state();
                if state != CaState::Recovery {
                    cwnd_before_recovery = tx.cc().cwnd();
                }
                let paced = prr && state == CaState::Recovery && tx.cc().proportional_reduction();
                let prr_bound = |cwnd: u64| {
                    if paced {
                        cwnd.max(cwnd_before_recovery + mss)
                    } else {
                        cwnd
                    }
                };
                let Some(t) = tx.poll_transmit(now) else {
                    break;
                };
                moved = true;
                let cwnd = tx.cc().cwnd();
                let len = t.segment.seq_len() as u64;
                match t.kind {
                    TxKind::Data => {
                        let used = match state {
                            CaState::Recovery | CaState::Loss => pipe_before,
                            _ => outstanding_before,
                        };
                        if used + len > prr_bound(cwnd) + lt_allowance {
                            window_violations += 1;
                        }
                    }
                    TxKind::Retransmission if pipe_before + len > prr_bound(cwnd) => {
                        window_violations += 1;
                    }
                    _ => {}
                }
                let mut payload = vec![0u8; t.segment.len as usize];
                tx.payload(t.offset, &mut payload);
                send(
                    true, t.segment, payload, now, &mut rng, &mut heap, &mut store,
                );
            }
            while let Some(t) = rx.poll_transmit(now) {
                moved = true;
                send(
                    false,
                    t.segment,
                    Vec::new(),
                    now,
                    &mut rng,
                    &mut heap,
                    &mut store,
                );
            }
            let mut buf = [0u8; 4096];
            loop {
                let n = rx.read(&mut buf);
                if n == 0 {
                    break;
                }
                delivered.extend_from_slice(&buf[..n]);
            }
            if !moved {
                break;
            }
        }
        if tx.stats().completed_at.is_some() {
            break;
        }
        let next_arrival = heap.peek().map(|a| Instant::from_nanos(a.at.0 .0));
        let next_notice = notices
            .last()
            .map(|n| Instant::from_nanos(n.at_ms * 1_000_000));
        let next = [
            next_arrival,
            tx.poll_timeout(),
            rx.poll_timeout(),
            next_notice,
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next else { break };
        if next > limit {
            break;
        }
        assert!(next >= now, "time never runs backwards");
        now = next;
        if next_notice.is_some_and(|t| t <= now) {
            let n = notices.pop().unwrap();
            tx.handle_notification(now, &n.msg);
            notified += 1;
            continue;
        }
        if let Some(a) = heap.peek() {
            if Instant::from_nanos(a.at.0 .0) <= now {
                let a = heap.pop().unwrap();
                let (seg, payload) = &store[a.idx];
                if a.to_receiver {
                    rx.handle_segment(now, seg, Some(payload));
                } else {
                    let una = tx.bytes_acked();
                    let in_recovery = tx.ca_state() == CaState::Recovery;
                    tx.handle_segment(now, seg);
                    if in_recovery && tx.bytes_acked() > una {
                        partial_acks += 1;
                    }
                }
                continue;
            }
        }
        if tx.poll_timeout().is_some_and(|d| d <= now) {
            tx.handle_timeout(now);
        }
        if rx.poll_timeout().is_some_and(|d| d <= now) {
            rx.handle_timeout(now);
        }
    }
    let s = tx.stats();
    Outcome {
        delivered,
        window_violations,
        // (a tail loss probe may exceed the window by one segment too; a
        // notice may retransmit the first unacknowledged segment at once,
        // ETCP's Figure 2, or start ETCP's reordering fast retransmit)
        loss_events: s.fast_retransmits
            + s.rto_expiries
            + partial_acks
            + s.loss_probes
            + 2 * notified,
        finished: s.completed_at.is_some(),
    }
}

fn config_strategy() -> impl Strategy<Value = TcpConfig> {
    (
        500u32..1500,
        1u32..12,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1u32..5,
        prop_oneof![Just(None), Just(Some(Duration::from_millis(40)))],
        prop_oneof![
            Just(LostRetransmissions::Rto),
            Just(LostRetransmissions::Rack)
        ],
        (
            any::<bool>(),
            prop_oneof![Just(RtoFlavour::Rfc6298), Just(RtoFlavour::Linux)],
            prop_oneof![
                Just(RtoSsthresh::Rfc5681),
                Just(RtoSsthresh::Linux),
                Just(RtoSsthresh::Ns3)
            ],
            prop_oneof![Just(RtoRearm::Rfc8985), Just(RtoRearm::Linux)],
            prop_oneof![Just(BbrQuantum::None), Just(BbrQuantum::Linux)],
        ),
        (
            prop_oneof![
                Just(RecoveryReduction::Prr),
                Just(RecoveryReduction::Rfc6675)
            ],
            prop_oneof![
                Just(SsthreshBasis::Pipe),
                Just(SsthreshBasis::FlightSize),
                Just(SsthreshBasis::Cwnd)
            ],
            any::<bool>(),
            any::<bool>(),
            prop_oneof![
                Just(Hystart::Off),
                Just(Hystart::HystartPlusPlus),
                Just(Hystart::Linux),
                Just(Hystart::Ns3)
            ],
            prop_oneof![Just(ReceiverProfile::Rfc), Just(ReceiverProfile::Linux)],
            any::<bool>(),
            1u32..64,
        ),
    )
        .prop_map(
            |(
                mss,
                iw,
                sack,
                ts,
                lt,
                dsack,
                dupthresh,
                delack,
                lost_rtx,
                (tlp, rto, rto_ss, rearm, quantum),
                (reduction, basis, frto, undo, hystart, receiver, ca_per_ack, abc_rto),
            )| {
                TcpConfig {
                    recovery_reduction: reduction,
                    ssthresh_basis: basis,
                    frto,
                    undo,
                    hystart,
                    receiver,
                    ca_per_ack,
                    abc_limit_after_rto: abc_rto,
                    mss,
                    initial_cwnd: iw,
                    sack,
                    timestamps: ts,
                    limited_transmit: lt,
                    dsack,
                    dupthresh,
                    // Linux's receiver takes `delayed_ack` as its ATO cap
                    delayed_ack: delack.map(|d| {
                        if receiver == ReceiverProfile::Linux {
                            Duration::from_millis(200)
                        } else {
                            d
                        }
                    }),
                    lost_retransmissions: lost_rtx,
                    // RACK-TLP's probe where it applies
                    tlp: tlp && sack && lost_rtx == LostRetransmissions::Rack,
                    rto_rearm: rearm,
                    bbr_quantum: quantum,
                    rto,
                    rto_ssthresh: rto_ss,
                    min_rto: Duration::from_millis(200),
                    max_rto: Duration::from_secs(4),
                    rcv_window: ByteSize(256 * 1024),
                    ..TcpConfig::default()
                }
            },
        )
}

proptest! {
    // WAVELAB_INTEGRITY_CASES=5000 for a longer search (or WAVELAB_CASES_SCALE)
    #![proptest_config(ProptestConfig {
        cases: wavelab_tcp::testing::cases("WAVELAB_INTEGRITY_CASES", 256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn stream_arrives_intact_once_in_order(
        cfg in config_strategy(),
        algo in prop::sample::select(wavelab_tcp::testing::every_algorithm()),
        len in 1usize..150_000,
        loss in 0.0f64..0.15,
        dup in 0.0f64..0.05,
        delay_ms in 1u64..60,
        jitter_ms in 0u64..40,
        outage_ms in proptest::option::of((0u64..3_000, 100u64..4_000)),
        seed in any::<u64>(),
        chunked in any::<bool>(),
        notices in prop::collection::vec(notice(), 0..3),
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i as u64).wrapping_mul(2_654_435_761).wrapping_add(seed) as u8).collect();
        let chan = Channel { loss, dup, delay_ms, jitter_ms, outage_ms };
        let out = run(cfg, &algo, &data, chan, seed, chunked, notices);
        prop_assert!(out.finished, "transfer did not complete");
        prop_assert_eq!(out.delivered.len(), data.len());
        prop_assert!(out.delivered == data, "delivered bytes differ from the written stream");
        prop_assert!(out.window_violations <= out.loss_events,
            "{} transmissions beyond the window for {} loss events", out.window_violations, out.loss_events);
    }
}

#[test]
fn clean_channel_has_no_window_violations_and_no_retransmissions() {
    let data = vec![7u8; 300_000];
    let chan = Channel {
        loss: 0.0,
        dup: 0.0,
        delay_ms: 20,
        jitter_ms: 0,
        outage_ms: None,
    };
    let out = run(
        TcpConfig::default(),
        &CcConfig::default(),
        &data,
        chan,
        42,
        false,
        vec![],
    );
    assert!(out.finished);
    assert_eq!(out.delivered, data);
    assert_eq!(out.window_violations, 0);
    assert_eq!(out.loss_events, 0);
}
