//! The link layer: one direction of a link, free of the event queue and of
//! any clock.
//!
//! A direction is a drop-tail queue in front of a rate server, a loss model
//! applied once a packet is serialised, and a first-in first-out propagation
//! pipe, with a timeline of scheduled changes (rate, delay, queue limit,
//! loss) and outage windows. Two models of it give bit-identical results:
//!
//! * [`Link`] computes a packet's whole fate when it is offered:
//!   [`Link::offer`]`(at, size)` returns its admission number and an
//!   [`Outcome`]: refused by the full queue, lost by the loss model at the
//!   end of its serialisation, destroyed by an outage, or arriving at the far
//!   end at a given instant. Offers come in time order; counters and queue
//!   lengths are read "as of" an instant with [`Link::sync`]. Nothing in it
//!   reads a clock or schedules anything, so the virtual-time engine uses it
//!   (it schedules an event only where something else can interleave), and a
//!   driver on the wall clock can use it unchanged: offer each real packet as
//!   it comes in, with its arrival time, and release it at the instant the
//!   outcome names (or drop it), syncing the counters whenever it reports
//!   them.
//! * [`Stepped`] is the textbook model: the caller delivers one
//!   end-of-serialisation and one arrival event at a time
//!   ([`Stepped::finish`], [`Stepped::arrive`]), and changes apply when
//!   they happen ([`Stepped::apply`]). The reference engine uses it (it is
//!   the oracle of the differential test), and so do directions whose
//!   changes are decided during the run.
//!
//! The layer reports what happened; it does not log, capture or route: the
//! driver moves packets between directions (the simulator's routes, or
//! the emulator's wire thread) and decides what to record.
//!
//! Semantics shared by both models:
//! * the queue limit counts packets waiting, not the one in service, and
//!   applies at admission; the rate applies at the start of serialisation;
//!   the delay and the loss model at its end;
//! * the pipe is first in, first out: when the delay drops, later packets
//!   queue behind earlier ones instead of overtaking them (a direction with
//!   `reorder` lets them overtake: stepped model only);
//! * a packet is lost to an outage if any part of its time on the link (from
//!   the start of its serialisation to its arrival) overlaps an outage
//!   window: packets queued when an outage starts keep being serialised at
//!   the link rate and are lost, and so is everything that arrives during the
//!   outage.
//!
//! Its parameters, as a scenario writes them, are its own types
//! (`params`: queue limit, loss model, schedule entries; `wireless`: ARQ
//! and outage processes); the scenario schema re-exports them.
//!
//! CSV traces of a direction's rate, delay and loss ([`Measured`]) run in
//! both models. Link-layer ARQ ([`Arq`]), Mahimahi traces
//! ([`Opportunities`]), CellReplay's replay ([`CellReplay`]) and reordering
//! run in the stepped model only: a direction with any of them is stepped in
//! both engine modes.

mod arq;
mod cellreplay;
mod clock_free;
mod fading;
mod leo;
mod loss;
mod measured;
mod outages;
mod params;
pub mod qdisc;
mod stepped;
mod timeline;
mod trace;
pub mod trace_file;
mod wireless;

pub use arq::{Arq, Attempts};
pub use cellreplay::{CellReplay, Replayed, SizeDelays, TrainTrace};
pub use clock_free::Link;
pub use fading::outage_windows;
pub use leo::{DelayRange, LeoInterval, LeoPlan, LeoSpec, RateRange};
pub use loss::LossModel;
pub(crate) use measured::duration as measured_duration;
pub use measured::{CsvTrace, Measured, Quantity};
pub use outages::Outages;
pub use params::{
    parse_queue, DelayInterpolation, DelayTraceFormat, Direction, LossSpec, QueueLimit,
    ScheduleEntry,
};
pub use stepped::{Admitted, Arrived, Finished, Stepped};
pub use trace::{MahimahiTrace, Opportunities, MAX_TIMESTAMP_MS, MTU};
pub use trace_file::{TraceError, MAX_TRACE_BYTES, TRACE_READ_SECONDS};
pub use wireless::{
    ArqOrder, ArqSpec, BackoffSpec, Distribution, OutageProcessSpec, ReportWhen, MAX_OUTAGE_CYCLES,
    MAX_RETRIES,
};

use wavelab_tcp::{Duration, Instant, Rate};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The queue was full.
    Queue = 0,
    /// The random loss model.
    Random = 1,
    /// An outage window.
    Outage = 2,
    /// A queue discipline's congestion signal ([`qdisc`]): an early or
    /// head drop, not for a full buffer.
    Aqm = 3,
}

impl DropCause {
    /// Names, indexed by the cause's code.
    pub const NAMES: [&'static str; 4] = ["queue", "random", "outage", "aqm"];
}

/// Counters of one link direction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkCounters {
    /// Packets offered to the direction.
    pub arrived: u64,
    /// Packets serialised.
    pub sent_packets: u64,
    /// Bytes serialised.
    pub sent_bytes: u64,
    /// Packets that reached the far end.
    pub delivered_packets: u64,
    /// Bytes that reached the far end.
    pub delivered_bytes: u64,
    /// Drops, indexed by [`DropCause`].
    pub dropped: [u64; 4],
    /// Packets a queue discipline set CE on.
    pub marked: u64,
    /// Largest number of packets waiting.
    pub max_queue_packets: u64,
    /// Largest number of bytes waiting.
    pub max_queue_bytes: u64,
    /// Link-layer ARQ: attempts made (first transmissions included).
    pub arq_attempts: u64,
    /// Link-layer ARQ: retransmissions made.
    pub arq_retries: u64,
    /// Link-layer ARQ: frames lost after all their attempts (also counted
    /// as random drops).
    pub arq_residual: u64,
}

/// A direction's settings at one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Rate of the server.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    /// Queue limit.
    pub limit: QueueLimit,
}

impl Settings {
    /// Applies the settings a change sets.
    pub fn apply(&mut self, e: &ScheduleEntry) {
        self.rate = e.rate.unwrap_or(self.rate);
        self.delay = e.delay.unwrap_or(self.delay);
        self.limit = e.queue.unwrap_or(self.limit);
    }
}

/// What became of a packet offered to a [`Link`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The queue was full: refused at admission, never serialised.
    Refused,
    /// Serialised until `finish`, then lost by the loss model (at `finish`).
    Lost {
        /// End of serialisation.
        finish: Instant,
    },
    /// Serialised until `finish` and destroyed by an outage, reported at
    /// `at` (when it would have arrived).
    Outage {
        /// End of serialisation.
        finish: Instant,
        /// When it would have arrived.
        at: Instant,
    },
    /// Reaches the far end at `at`.
    Arrive {
        /// End of serialisation.
        finish: Instant,
        /// Arrival at the far end.
        at: Instant,
    },
}

impl Outcome {
    /// The end of its serialisation, if it was serialised.
    #[inline]
    pub fn finish(&self) -> Option<Instant> {
        match *self {
            Outcome::Refused => None,
            Outcome::Lost { finish }
            | Outcome::Outage { finish, .. }
            | Outcome::Arrive { finish, .. } => Some(finish),
        }
    }
}

/// A packet's admission on a [`Link`]: its admission number (the count of
/// packets offered before it, refused ones included) and its outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    /// Admission number.
    pub n: u64,
    /// What becomes of it.
    pub outcome: Outcome,
}

/// Serialisation time of `size` bytes at `rate`.
#[inline]
fn tx_time(rate: Rate, size: u32) -> Duration {
    rate.tx_time(size as u64)
}
