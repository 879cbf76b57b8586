//! A TCP header: decode any bytes, encode what decodes, decode again (see wavelab_tcp::fuzzing).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| wavelab_tcp::fuzzing::wire_roundtrip(data));
