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
//! run with an error naming `log_packets` when the log reaches it. The
//! cross-layer notifications ([`MAX_NOTIFICATIONS`]) are bounded both ways:
//! before the run, the link-layer reports of directions that report every
//! frame (`report = "all"`) are counted from their capacity, and while it
//! goes, the notifications table stops the run when it reaches the limit
//! (reports of retried frames and of frames given up depend on the losses).

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

/// The most cross-layer notifications a run may deliver (rows of the
/// notifications table: link-layer reports and handoff notices), about 80
/// bytes each in the simulator and some 200 once in Python: about 4 GB. With
/// `output.notification_samples` each also adds a row of time series, counted
/// against [`MAX_SERIES_ROWS`].
pub const MAX_NOTIFICATIONS: u64 = 20_000_000;

/// The bytes of a data frame's headers (IPv4 and TCP without options) on
/// top of its payload, the least a full-sized frame adds to its flow's MSS
/// (used to count the frames a direction can carry).
pub const FRAME_HEADER_BYTES: u64 = 40;
