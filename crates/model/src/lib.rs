//! # wavelab-model: the network model both drivers share
//!
//! What a run is, independent of the clock that runs it: the simulator
//! (`wavelab-sim`, virtual time) and the emulator (`wavelab-net`, the wall
//! clock, real packets) both read a scenario, compile it, run the same link
//! model and write the same tables. The data flows one way: scenario ->
//! compile -> a driver -> tables.
//!
//! * [`scenario`]: the schema of a scenario file (links, handovers and
//!   handoffs, flows, output) and its validation passes; [`limits`] and
//!   [`names`] are the rules some passes apply;
//! * [`link`]: one direction of a link without a clock: queue, rate server,
//!   loss, propagation, outages, schedules, traces, ARQ; it owns its
//!   parameter types (queue limits, loss models, ARQ, trace settings), which
//!   the schema re-exports;
//! * [`topology`]: nodes, link directions and routes;
//! * [`compile`]: a scenario compiled into link directions, changes to
//!   come, routes and the switches of node handoffs;
//! * [`rng`]: the seeded random streams, one per component; [`histogram`]:
//!   the log-bucketed histograms of RTTs and queueing delays;
//! * [`tables`]: the result tables: the column type, the record types of a
//!   flow, a link direction, a link handover and a node handoff, and the one
//!   builder per table both drivers use;
//! * [`capture`]: pcap files of what crosses a link or a flow's sender;
//!   [`order`]: the ordering keys of records; [`ring`]: the queue addressed
//!   by absolute position that link directions keep their packets in.

pub mod capture;
pub mod compile;
pub mod flow_stats;
pub mod histogram;
pub mod limits;
pub mod link;
pub mod names;
pub mod order;
pub mod ring;
pub mod rng;
pub mod scenario;
pub mod tables;
pub mod topology;
pub mod udp;
pub mod workload;

pub use capture::{CaptureError, CaptureStats};
pub use compile::{link_models, route_switches, wall_clock_links, RouteSwitches, WallClockLink};
pub use scenario::{Scenario, ScenarioError};
pub use tables::{Column, ColumnData, ColumnType, Results, RunStats, Table};
