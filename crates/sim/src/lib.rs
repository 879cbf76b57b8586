//! # wavelab-sim: a deterministic packet-level network simulator
//!
//! Drives the sans-IO endpoints of `wavelab-tcp` over the network model of
//! `wavelab-model` (links with rate servers, propagation delays, drop-tail
//! queues, random loss, schedules of changes and outages) in virtual time.
//! Time is integer nanoseconds; simultaneous events run in a canonical order
//! (`engine`); every random choice comes from a generator seeded by the
//! scenario seed and the component, so the same scenario and seed give
//! bit-identical results.
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

//! ## Modules
//!
//! The network model (scenario, link layer, topology, compiling, tables,
//! capture, random streams) is `wavelab-model`'s, re-exported here. The
//! simulator adds the clock and what moves on it:
//!
//! * [`engine`]: the event queue and the canonical order of simultaneous
//!   events;
//! * [`packet`]: packets and the arena that recycles them;
//! * `routes`: the network of link directions and the flows' routes: hop
//!   scheduling, in virtual time (a direction's schedule computed at
//!   admission) or stepped (explicit events), route switches at handoffs;
//! * `notices`: cross-layer notifications in flight to the senders;
//! * `recorder`: the packet log and the captures, as the run goes;
//! * [`simulation`]: [`Simulation`], the event loop, with its parts in one
//!   folder (building it from a scenario, driving the endpoints, changes and
//!   handovers, reading its results into tables);
//! * [`fuzzing`]: the bodies of the fuzz targets.

pub mod engine;
pub mod fuzzing;
mod notices;
pub mod packet;
mod recorder;
mod routes;
pub mod simulation;

// The model, where the simulator's users have always found it.
pub use simulation::Simulation;
pub use wavelab_model::{
    capture, compile, histogram, limits, link, names, rng, scenario, tables, topology,
};
pub use wavelab_model::{
    link_models, route_switches, CaptureError, CaptureStats, Column, ColumnData, ColumnType,
    Results, RouteSwitches, RunStats, Scenario, ScenarioError, Table,
};
