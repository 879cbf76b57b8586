//! The scenario fuzz target's body (`wavelab_sim::fuzzing::scenario_toml`)
//! as a property test over arbitrary bytes and over the shipped scenarios
//! with random edits: what CI runs where no fuzzer is available
//! (`scripts/fuzz.sh` runs the real fuzz target).

use proptest::prelude::*;
use wavelab_sim::fuzzing::scenario_toml;
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
