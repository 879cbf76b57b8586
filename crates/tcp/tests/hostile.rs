//! Property tests: a peer that sends anything at all. The real-network mode
//! will feed the endpoints whatever arrives on the wire, so neither may panic
//! (these tests run with overflow checks on) or break its own bookkeeping,
//! whatever the segments say: acknowledgments of data never sent, SACK blocks
//! anywhere in the sequence space, a second SYN, RST, FIN in the middle of
//! the data, zero windows, stale and future timestamps.

use proptest::prelude::*;
use wavelab_tcp::config::{Hystart, ReceiverProfile, RecoveryReduction, SsthreshBasis};
use wavelab_tcp::fuzzing::{drain, ReceiverWatch, SenderWatch};
use wavelab_tcp::testing::{cases, every_algorithm, ms, synack, Harness, IRS, ISS, SYNACK_WINDOW};
use wavelab_tcp::wire::{Flags, Options, SackBlock, SackBlocks, Segment, Timestamps};
use wavelab_tcp::{Duration, LostRetransmissions, PartialAckTimer, Receiver, SeqNum, TcpConfig};

/// A sequence number: on a segment boundary around the interesting offset
/// `near` (relative to `base`; the test's MSS is 1000), near it, or anywhere
/// in the 32-bit space.
#[derive(Clone, Copy, Debug)]
enum Seq {
    Boundary(i64),
    Near(i64),
    Anywhere(u32),
}

impl Seq {
    fn at(self, base: SeqNum, near: u64) -> SeqNum {
        match self {
            Seq::Boundary(k) => SeqNum::from_offset(base, near.saturating_add_signed(1000 * k)),
            Seq::Near(d) => SeqNum::from_offset(base, near.saturating_add_signed(d)),
            Seq::Anywhere(s) => SeqNum(s),
        }
    }
}

fn seq() -> impl Strategy<Value = Seq> {
    prop_oneof![
        4 => (-3i64..16).prop_map(Seq::Boundary),
        3 => (-20_000i64..60_000).prop_map(Seq::Near),
        1 => any::<u32>().prop_map(Seq::Anywhere),
    ]
}

/// One segment from the peer, before its sequence numbers are placed.
#[derive(Clone, Debug)]
struct Wild {
    seq: Seq,
    ack: Seq,
    flags: u8,
    window: u16,
    len: u32,
    mss: Option<u16>,
    wscale: Option<u8>,
    sack_permitted: bool,
    ts: Option<(u32, u32)>,
    sack: Vec<(Seq, Seq)>,
}

fn wild() -> impl Strategy<Value = Wild> {
    (
        (seq(), seq()),
        prop_oneof![
            20 => Just(Flags::ACK.0),
            1 => any::<u8>(),
        ],
        prop_oneof![
            4 => Just(32_767u16),
            1 => any::<u16>(),
        ],
        prop_oneof![
            3 => Just(0u32),
            3 => Just(1000u32),
            1 => 0u32..70_000,
        ],
        (
            prop::option::weighted(0.1, any::<u16>()),
            prop::option::weighted(0.1, any::<u8>()),
            any::<bool>(),
            prop::option::weighted(0.3, any::<(u32, u32)>()),
        ),
        prop::collection::vec((seq(), seq()), 0..=SackBlocks::MAX),
    )
        .prop_map(
            |((seq, ack), flags, window, len, (mss, wscale, sack_permitted, ts), sack)| Wild {
                seq,
                ack,
                flags,
                window,
                len,
                mss,
                wscale,
                sack_permitted,
                ts,
                sack,
            },
        )
}

impl Wild {
    /// The segment, its numbers placed around `seq_near` and `ack_near`
    /// (offsets from the bases of the two directions' sequence spaces).
    fn segment(&self, seq_base: SeqNum, seq_near: u64, ack_base: SeqNum, ack_near: u64) -> Segment {
        let mut sack = SackBlocks::default();
        for &(l, r) in &self.sack {
            sack.push(SackBlock {
                left: l.at(ack_base, ack_near),
                right: r.at(ack_base, ack_near),
            });
        }
        Segment {
            seq: self.seq.at(seq_base, seq_near),
            ack: self.ack.at(ack_base, ack_near),
            flags: Flags(self.flags),
            window: self.window,
            len: self.len,
            options: Options {
                mss: self.mss,
                window_scale: self.wscale,
                sack_permitted: self.sack_permitted,
                timestamps: self.ts.map(|(val, ecr)| Timestamps { val, ecr }),
                sack,
            },
        }
    }
}

/// What the test does next: deliver a segment (a few times over: duplicate
/// ACKs), or let time pass (running the endpoint's timers).
#[derive(Clone, Debug)]
enum Step {
    Segment(Wild, usize),
    Wait(u64),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            5 => (wild(), prop_oneof![3 => Just(1usize), 1 => 2usize..5])
                .prop_map(|(w, n)| Step::Segment(w, n)),
            1 => (1u64..5_000).prop_map(Step::Wait),
        ],
        1..60,
    )
}

fn config() -> impl Strategy<Value = TcpConfig> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(sack, timestamps, delack, rack, limited, patient, linux, old)| TcpConfig {
                mss: 1000,
                // Linux's rules, or the RFC 6675 recovery with RFC 5681's ssthresh
                frto: linux,
                undo: linux,
                receiver: if linux {
                    ReceiverProfile::Linux
                } else {
                    ReceiverProfile::Rfc
                },
                hystart: if linux { Hystart::Linux } else { Hystart::Off },
                ssthresh_basis: match (linux, old) {
                    (true, _) => SsthreshBasis::Cwnd,
                    (false, true) => SsthreshBasis::FlightSize,
                    (false, false) => SsthreshBasis::Pipe,
                },
                recovery_reduction: if old {
                    RecoveryReduction::Rfc6675
                } else {
                    RecoveryReduction::Prr
                },
                ca_per_ack: old && !linux,
                sack,
                timestamps,
                delayed_ack: delack.then_some(Duration::from_millis(200)),
                lost_retransmissions: if rack && sack {
                    LostRetransmissions::Rack
                } else {
                    LostRetransmissions::Rto
                },
                limited_transmit: limited,
                partial_ack_timer: if patient {
                    PartialAckTimer::SlowButSteady
                } else {
                    PartialAckTimer::Impatient
                },
                ..TcpConfig::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("WAVELAB_HOSTILE_CASES", 300),
        .. ProptestConfig::default()
    })]

    /// A connected sender, for every algorithm, under any ACK stream.
    #[test]
    fn the_sender_survives_any_peer(
        algo in prop::sample::select(every_algorithm()),
        cfg in config(),
        mss in prop_oneof![3 => Just(Some(1000u16)), 1 => prop::option::of(any::<u16>())],
        window_scale in prop_oneof![3 => Just(Some(1u8)), 1 => prop::option::of(any::<u8>())],
        steps in steps(),
    ) {
        // the SYN-ACK too may say anything: an MSS of 0 or 65,535, a shift of 255
        let sa = synack(mss, window_scale, cfg.sack, SYNACK_WINDOW);
        let mut h = Harness::with_algorithm(cfg, &algo, sa, true);
        let mut now = 100u64;
        let mut watch = SenderWatch::default();
        drain(|| h.tx.poll_transmit(ms(now)));
        for step in &steps {
            let mut waited = None;
            match step {
                Step::Segment(w, n) => {
                    let seg = w.segment(IRS + 1, 0, ISS + 1, h.tx.bytes_acked());
                    for _ in 0..*n {
                        h.tx.handle_segment(ms(now), &seg);
                    }
                }
                Step::Wait(d) => {
                    now += d;
                    if h.tx.poll_timeout().is_some_and(|t| t <= ms(now)) {
                        h.tx.handle_timeout(ms(now));
                    }
                    waited = Some(ms(now));
                }
            }
            let sent = drain(|| h.tx.poll_transmit(ms(now)));
            watch.check(&h.tx, &sent, waited).map_err(TestCaseError::fail)?;
        }
    }

    /// A receiver, from its first SYN on, under any segment stream.
    #[test]
    fn the_receiver_survives_any_peer(
        cfg in config(),
        syn_window_scale in prop::option::of(0u8..20),
        steps in steps(),
    ) {
        let iss = SeqNum(3_000_000_000);
        let peer_iss = SeqNum(u32::MAX - 10_000);
        let mut rx = Receiver::new(cfg.clone(), iss);
        let syn = Segment {
            seq: peer_iss,
            ack: SeqNum(0),
            flags: Flags::SYN,
            window: 65_535,
            len: 0,
            options: Options {
                mss: Some(1000),
                window_scale: syn_window_scale,
                sack_permitted: cfg.sack,
                timestamps: cfg.timestamps.then_some(Timestamps { val: 1, ecr: 0 }),
                ..Options::default()
            },
        };
        let mut now = 0u64;
        rx.handle_segment(ms(now), &syn, None);
        drain(|| rx.poll_transmit(ms(now)));
        let mut watch = ReceiverWatch::default();
        for step in &steps {
            let mut waited = None;
            match step {
                Step::Segment(w, n) => {
                    let seg = w.segment(peer_iss + 1, rx.delivered(), iss + 1, 0);
                    for _ in 0..*n {
                        rx.handle_segment(ms(now), &seg, None);
                    }
                }
                Step::Wait(d) => {
                    now += d;
                    if rx.poll_timeout().is_some_and(|t| t <= ms(now)) {
                        rx.handle_timeout(ms(now));
                    }
                    waited = Some(ms(now));
                }
            }
            let sent = drain(|| rx.poll_transmit(ms(now)));
            watch
                .check(&rx, cfg.rcv_window.0, &sent, waited)
                .map_err(TestCaseError::fail)?;
        }
    }
}
