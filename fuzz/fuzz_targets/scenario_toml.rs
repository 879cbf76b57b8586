//! The scenario parser fed raw TOML (see wavelab_sim::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelab_sim::fuzzing::scenario_toml(data));
