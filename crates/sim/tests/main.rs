//! The simulator's integration tests, compiled as one test binary: each file below is a module
//! (`autotests = false` in Cargo.toml), because linking and optimising
//! one binary per file cost most of `cargo test`'s build time. Run one
//! file's tests with `cargo test -p wavelab-sim --test integration FILE::`.

mod common;

mod aqm;
mod arq;
mod bbr;
mod bbr3;
mod cellreplay;
mod cubic;
mod dctcp;
mod engines;
mod etcp;
mod flow_stats;
mod fork;
mod fuzz_bytes;
mod handoff;
mod handover;
mod leo;
mod limits;
mod mptcp;
mod notify;
mod peers;
mod pinned;
mod system;
mod trace;
mod udp;
mod wave;
mod westwood;
mod wsc;
