//! The TCP core's integration tests, compiled as one test binary: each file below is a module
//! (`autotests = false` in Cargo.toml), because linking and optimising
//! one binary per file cost most of `cargo test`'s build time. Run one
//! file's tests with `cargo test -p wavelab-tcp --test integration FILE::`.

mod bbr3;
mod conformance;
mod cross_layer;
mod fuzz_bytes;
mod hooks;
mod hostile;
mod integrity;
mod linux_rules;
mod rfc5961;
