//! # wavelab-sim: a deterministic packet-level network simulator
//!
//! Drives the sans-IO endpoints of `wavelab-tcp` over links with rate servers,
//! propagation delays, drop-tail queues, random loss, schedules of changes and
//! outages. Time is integer nanoseconds; simultaneous events run in a
//! canonical order (`engine`); the link layer (`link`) computes each
//! packet's fate on a link direction without a clock, and the network
//! (`net`) moves packets along their routes; every random choice comes from
//! a generator seeded by the scenario seed and the component, so the same
//! scenario and seed give bit-identical results.
//!
//! ```
//! use wavelab_sim::{Scenario, Simulation};
//!
//! let sc = Scenario::from_toml_str(r#"
//!     duration = "5s"
//!     [[links]]
//!     between = ["sender", "receiver"]
//!     rate = "10Mbit/s"
//!     delay = "20ms"
//!     queue = "50pkt"
//!     [[flows]]
//!     from = "sender"
//!     to = "receiver"
//!     size = "1MB"
//! "#).unwrap();
//! let mut sim = Simulation::new(sc).unwrap();
//! sim.run();
//! let r = sim.results();
//! assert_eq!(r.flows.u64s("bytes_delivered"), &[1_000_000]);
//! ```

mod build;
pub mod capture;
mod endpoints;
pub mod engine;
pub mod fuzzing;
mod handover;
pub mod histogram;
pub mod limits;
pub mod link;
pub mod names;
mod net;
mod notices;
pub mod packet;
mod recorder;
mod ring;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tables;
pub mod topology;

pub use build::{handoff_table_until, link_models, route_switches, RouteSwitches};
pub use capture::{CaptureError, CaptureStats};
pub use scenario::{Scenario, ScenarioError};
pub use sim::Simulation;
pub use tables::{Column, ColumnData, ColumnType, Results, RunStats, Table};
