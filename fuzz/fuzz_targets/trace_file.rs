//! The trace parsers (Mahimahi, CSV rate, delay and loss) fed raw bytes,
//! and a link driven by each Mahimahi trace that parses (see
//! wavelab_sim::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelab_sim::fuzzing::trace_file(data));
