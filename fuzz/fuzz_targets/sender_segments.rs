//! A connected sender fed raw segments from its peer (see wavelab_tcp::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelab_tcp::fuzzing::sender_fed(data));
