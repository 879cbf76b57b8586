//! The scenario and trace fuzz targets' bodies (`wavelab_sim::fuzzing`) as
//! property tests over arbitrary bytes, the shipped scenarios with random
//! edits, and near-valid traces: what CI runs where no fuzzer is available
//! (`scripts/fuzz.sh` runs the real fuzz targets).

use proptest::prelude::*;
use wavelab_sim::fuzzing::{scenario_toml, trace_file};
use wavelab_tcp::testing::cases;

const SHIPPED: [&str; 5] = [
    include_str!("../../../scenarios/demo.toml"),
    include_str!("../../../scenarios/dcnet2016-handover.toml"),
    include_str!("../../../scenarios/fairness-4.toml"),
    include_str!("../../../scenarios/wave-page-single.toml"),
    include_str!("../../../scenarios/bbr.toml"),
];

/// Words worth splicing into a scenario: keys, units, tables.
const WORDS: [&str; 16] = [
    "\"1e30s\"",
    "\"0ns\"",
    "count = 99999",
    "[[flows]]",
    "[[links]]",
    "\"steady\"",
    "{ earliest = \"8s\", latest = \"2s\" }",
    "nan",
    "inf",
    "\"1e19bit/s\"",
    "\"0pkt\"",
    "name = \"a\\u0000b\"",
    "[[[[",
    "= [[[[[[[[1]]]]]]]]",
    "\"4294967295pkt\"",
    "-1",
];

/// An edit of a scenario's text.
#[derive(Clone, Debug)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, usize),
    Byte(usize, u8),
}

fn edited(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for e in edits {
        let n = b.len().max(1);
        match *e {
            Edit::Delete(at, len) => {
                let at = at % n;
                let end = (at + len % 64).min(b.len());
                b.drain(at.min(b.len())..end);
            }
            Edit::Insert(at, w) => {
                let at = (at % n).min(b.len());
                b.splice(at..at, WORDS[w % WORDS.len()].bytes());
            }
            Edit::Byte(at, v) => {
                if !b.is_empty() {
                    let at = at % b.len();
                    b[at] = v;
                }
            }
        }
    }
    b
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, l)| Edit::Delete(a, l)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, w)| Edit::Insert(a, w)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, v)| Edit::Byte(a, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("WAVELAB_FUZZ_BYTES_CASES", 256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_scenario_parser_survives_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        scenario_toml(&bytes);
    }

    #[test]
    fn the_scenario_parser_survives_edited_scenarios(
        which in 0..SHIPPED.len(),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        scenario_toml(&edited(SHIPPED[which], &edits));
    }
}

/// A line of a near-valid trace: a timestamp or a `time,value` point, with
/// values at and beyond the clock's range, units, negative and odd numbers.
fn trace_line() -> impl Strategy<Value = String> {
    let number = prop_oneof![
        (0u64..5000).prop_map(|n| n.to_string()),
        Just("1000000000000".to_string()),
        Just("1000000000001".to_string()),
        Just("18446744073709551615".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("1e30".to_string()),
        Just("-1".to_string()),
        Just("nan".to_string()),
        Just("2.5".to_string()),
        Just("250ms".to_string()),
        Just("2Mbit/s".to_string()),
        Just("1e19bit/s".to_string()),
        Just("root:$6$saltsalt$hashhashhash:19000:0:99999:7:::".to_string()),
    ];
    prop_oneof![
        number.clone(),
        (number.clone(), number).prop_map(|(a, b)| format!("{a},{b}")),
        Just(String::new()),
        Just("# comment".to_string()),
        Just("time,rate".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases("WAVELAB_FUZZ_BYTES_CASES", 256),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_trace_parsers_survive_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        trace_file(&bytes);
    }

    #[test]
    fn the_trace_parsers_survive_near_valid_traces(
        lines in prop::collection::vec(trace_line(), 1..40),
        sorted in any::<bool>(),
    ) {
        let mut lines = lines;
        if sorted {
            // a Mahimahi trace's timestamps never decrease: mostly valid ones
            lines.sort_by_key(|l| l.parse::<u64>().unwrap_or(u64::MAX));
        }
        trace_file(lines.join("\n").as_bytes());
    }

    /// Valid Mahimahi traces, some with a last timestamp at or beyond the
    /// clock's range: each is refused or drives a link that carries no more
    /// than its opportunities.
    #[test]
    fn traced_links_carry_no_more_than_their_opportunities(
        times in prop::collection::vec(0u64..3000, 1..60),
        last in prop_oneof![
            Just(None),
            Just(Some(1_000_000_000_000u64)),
            Just(Some(1_000_000_000_001u64)),
            Just(Some(18_446_744_073_709u64)),
            (1u64..10_000_000_000_000).prop_map(Some),
        ],
    ) {
        let mut times = times;
        times.sort_unstable();
        times.extend(last);
        let text: Vec<String> = times.iter().map(u64::to_string).collect();
        trace_file(text.join("\n").as_bytes());
    }
}
