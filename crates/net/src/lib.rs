//! # wavelab-net: the link model on the wall clock
//!
//! Runs a scenario's links on real packets: each node that ends a flow gets
//! an anonymous network namespace with a TUN device; the wire thread reads
//! every packet the nodes send, passes it through the scenario's link
//! directions (the simulator's clock-free model, [`wavelab_model::link::Link`],
//! driven unchanged: queues, rates, delays, loss, schedules, outages,
//! handovers) and writes it to its destination's device at the instant the
//! model says, recording how late. Flows are real Linux TCP connections
//! with the kernel's congestion control of the flow's `cc`, or real UDP
//! sockets sending a UDP or ping flow's datagrams; their `TCP_INFO` and
//! what the wire thread counts of each flow's packets fill the same tables
//! a simulation writes.
//!
//! * [`plan`]: from a scenario to what is set up (errors name the field);
//! * [`netns`], [`preflight`], [`cleanup`]: namespaces, what the machine
//!   must offer, and what a killed run can leave;
//! * [`network`]: the links and routes in planned time (no I/O);
//! * [`driver`]: the wire thread (devices, timing, lateness, packet log,
//!   captures); [`clock`]: the run's clock;
//! * [`flows`]: the built-in sender and receiver, and commands;
//!   [`datagrams`]: the UDP and ping flows' endpoints; [`mptcp`]: Multipath
//!   TCP's addresses, path manager and figures;
//!   [`tcpinfo`]: the kernel's per-connection figures;
//! * [`emulation`]: a run; [`tables`]: its results.
//!
//! `docs/emulation.md` describes the emulator and its measured accuracy.

pub mod cleanup;
pub mod clock;
pub mod datagrams;
pub mod driver;
pub mod emulation;
pub mod flows;
pub mod mptcp;
pub mod netns;
pub mod network;
pub mod packet;
pub mod plan;
pub mod preflight;
mod sys;
pub mod tables;
pub mod tcpinfo;
pub mod wave;

pub use emulation::{Emulation, Options};
pub use plan::{BpfWave, Kernel, Plan};
pub use tables::{EmulationResults, EmulationStats, Lateness};

/// The environment variable every process an emulation starts carries (its
/// value: the emulator's PID), so that `wavelab emulate --cleanup` finds
/// what a killed run left.
pub const MARKER: &str = "WAVELAB_EMULATION";
