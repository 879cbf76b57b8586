//! The fuzz targets' bodies (`wavelab_tcp::fuzzing`) over arbitrary bytes,
//! as property tests: what CI runs where no fuzzer is available
//! (`scripts/fuzz.sh` runs the real fuzz targets). Raw random bytes reach
//! less than a coverage-guided fuzzer, so the scripts here also come from a
//! generator that writes valid headers most of the time.

use proptest::prelude::*;
use wavelab_tcp::fuzzing::{receiver_fed, sender_fed, wire_roundtrip};
use wavelab_tcp::testing::cases;
use wavelab_tcp::wire::{Flags, Options, SackBlock, SackBlocks, Segment, Timestamps};
use wavelab_tcp::SeqNum;

/// A header, encoded: a valid one, or one with a byte flipped.
fn header() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<(u32, u32, u16)>(),
        prop_oneof![4 => Just(Flags::ACK.0), 1 => any::<u8>()],
        (
            prop::option::weighted(0.2, any::<u16>()),
            prop::option::weighted(0.2, any::<u8>()),
            any::<bool>(),
            prop::option::weighted(0.3, any::<(u32, u32)>()),
        ),
        prop::collection::vec(any::<(u32, u32)>(), 0..=3),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::option::weighted(0.1, (any::<usize>(), any::<u8>())),
    )
        .prop_map(
            |((seq, ack, window), flags, (mss, ws, sp, ts), blocks, payload, flip)| {
                let mut sack = SackBlocks::default();
                for (l, r) in blocks {
                    sack.push(SackBlock {
                        left: SeqNum(l),
                        right: SeqNum(r),
                    });
                }
                let seg = Segment {
                    seq: SeqNum(seq),
                    ack: SeqNum(ack),
                    flags: Flags(flags),
                    window,
                    len: 0,
                    options: Options {
                        mss,
                        window_scale: ws,
                        sack_permitted: sp,
                        timestamps: ts.map(|(val, ecr)| Timestamps { val, ecr }),
                        sack,
                    },
                };
                let mut out = Vec::new();
                let _ = seg.encode(10_000, 5001, &mut out);
                out.extend(payload);
                if let Some((at, b)) = flip {
                    let n = out.len();
                    if n > 0 {
                        out[at % n] ^= b;
                    }
                }
                out
            },
        )
}

/// A script of `fuzzing`'s format: configuration, algorithm, handshake
/// options, then steps (waits, and headers with every placement bit).
fn script() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<(u8, u8)>(),
        header(),
        prop::collection::vec(
            prop_oneof![
                1 => any::<u16>().prop_map(|ms| {
                    let [a, b] = ms.to_be_bytes();
                    vec![0, a, b]
                }),
                5 => (1u8..8, any::<u8>(), header(), any::<u16>()).prop_map(|(times, bits, h, len)| {
                    let c = times | (bits & 0x78);
                    let mut v = vec![c, h.len() as u8];
                    v.extend(&h[..h.len().min(255)]);
                    if c & 0x40 != 0 {
                        v.extend(len.to_be_bytes());
                    }
                    v
                }),
            ],
            0..80,
        ),
    )
        .prop_map(|((cfg, algo), hs, steps)| {
            let mut v = vec![cfg, algo, hs.len() as u8];
            v.extend(&hs[..hs.len().min(255)]);
            v.extend(steps.concat());
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("WAVELAB_FUZZ_BYTES_CASES", 256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn wire_decode_of_any_bytes_round_trips(bytes in prop::collection::vec(any::<u8>(), 0..100)) {
        wire_roundtrip(&bytes);
    }

    #[test]
    fn wire_decode_of_near_valid_headers_round_trips(bytes in header()) {
        wire_roundtrip(&bytes);
    }

    #[test]
    fn a_sender_fed_any_bytes_keeps_its_invariants(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        sender_fed(&bytes);
    }

    #[test]
    fn a_sender_fed_any_script_keeps_its_invariants(bytes in script()) {
        sender_fed(&bytes);
    }

    #[test]
    fn a_receiver_fed_any_bytes_keeps_its_invariants(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        receiver_fed(&bytes);
    }

    #[test]
    fn a_receiver_fed_any_script_keeps_its_invariants(bytes in script()) {
        receiver_fed(&bytes);
    }
}
