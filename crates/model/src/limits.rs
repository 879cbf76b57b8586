//! Resource limits of a scenario, checked before anything is allocated.
//!
//! A scenario is data a user (or a sweep, or a fuzzer) wrote; a unit
//! mistake can ask for a hundred million flows or a billion samples. These
//! limits turn such a request into an error that names the field and the
//! value, instead of an allocation failure that kills the process. Each one
//! is far above what the shipped studies and benchmarks use and well within
//! a workstation's memory; `docs/scenarios.md` lists them with the memory
//! they correspond to.
//!
//! The packet log cannot be bounded from the scenario alone (how many
//! packets a flow sends depends on what happens), so it is bounded while the
//! run goes: [`MAX_LOG_ROWS`], enforced by the simulation, which stops the
//! run with an error naming `log_packets` when the log reaches it.

/// The most flows a scenario may have, replicas (`count`) included. A flow
/// costs about 2 KB before the run starts, plus the packets it keeps in
/// flight.
pub const MAX_FLOWS: u64 = 100_000;

/// The most links a scenario may have.
pub const MAX_LINKS: usize = 10_000;

/// The most samples per flow a run may record (a 1 ms interval over almost 3
/// hours); more is almost always a unit mistake.
pub const MAX_SAMPLES: u64 = 10_000_000;

/// The most rows of time series a run may record: one per flow per sample,
/// plus one per link direction per sample when queues are recorded. A row
/// costs about 100 bytes in the simulator and as much again in Python, so the
/// limit is about 10 GB.
pub const MAX_SERIES_ROWS: u64 = 50_000_000;

/// The most rows the packet log may hold (about 70 bytes each in the
/// simulator, some 200 bytes once in Python: about 4 GB). The run stops
/// when the log reaches it (checked every few thousand events).
pub const MAX_LOG_ROWS: usize = 20_000_000;
