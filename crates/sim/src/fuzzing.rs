//! The body of the scenario fuzz target (`fuzz/`, run with cargo-fuzz) and
//! of the property tests over arbitrary bytes that stand in for it where no
//! fuzzer runs (`tests/fuzz_bytes.rs`).
//!
//! [`scenario_toml`] feeds any bytes to the scenario parser: it must return
//! a scenario or an error naming a field, never panic; a scenario it accepts
//! must survive the JSON round trip the Python layer makes, must build, and
//! (when small) must run its first 100 simulated milliseconds.

use crate::simulation::Simulation;
use wavelab_model::scenario::Scenario;
use wavelab_tcp::Instant;

/// The largest accepted scenario (flows and links) that is also run.
const RUN_AT_MOST: usize = 64;

/// Parses `data` as a scenario file; see the module description.
pub fn scenario_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sc = match Scenario::from_toml_str(text) {
        Ok(sc) => sc,
        Err(e) => {
            assert!(!e.message.is_empty(), "an error without a message");
            return;
        }
    };
    let again = Scenario::from_json_str(&sc.to_json())
        .unwrap_or_else(|e| panic!("the normalised scenario is refused: {e}\n{}", sc.to_json()));
    assert_eq!(again, sc, "the JSON round trip changed the scenario");
    let flows: u64 = sc.flows.iter().map(|f| u64::from(f.count)).sum();
    let small = flows <= RUN_AT_MOST as u64 && sc.links.len() <= RUN_AT_MOST;
    let mut sim =
        Simulation::new(sc).unwrap_or_else(|e| panic!("a valid scenario does not build: {e}"));
    if small {
        sim.run_until(Instant::from_nanos(100_000_000));
        let _ = sim.results();
    }
}
