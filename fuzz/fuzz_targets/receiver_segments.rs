//! A receiver fed raw segments from its SYN on (see wavelab_tcp::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelab_tcp::fuzzing::receiver_fed(data));
