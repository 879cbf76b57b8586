//! [`Stepped`]: a link direction moved one event at a time, as a textbook
//! simulator does it: a drop-tail queue served at the link rate with one
//! pending end of serialisation, then a first-in first-out pipe with one
//! pending arrival.
//!
//! The caller holds the events: [`Stepped::offer`] says when a packet that
//! found the server idle ends its serialisation, [`Stepped::finish`] (at that
//! instant) says what became of it and when the next one ends, and
//! [`Stepped::arrive`] (at the first arrival) hands out the packet at the
//! head of the pipe and says when the next one arrives. Changes apply when
//! the caller applies them ([`Stepped::apply`]), so their instants need not
//! be known in advance.

use super::{tx_time, DropCause, LinkCounters, LossModel, Outages, Settings};
use crate::scenario::{QueueLimit, ScheduleEntry};
use std::collections::VecDeque;
use wavelab_tcp::Instant;

/// A packet on the direction: the caller's handle, its admission number and
/// its size.
#[derive(Clone, Copy, Debug)]
struct Held<T> {
    item: T,
    n: u64,
    size: u32,
}

/// A packet in the pipe.
#[derive(Clone, Copy, Debug)]
struct Flying<T> {
    held: Held<T>,
    /// Start of its serialisation.
    start: Instant,
    arrival: Instant,
}

/// What [`Stepped::offer`] did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// The server was idle: serialisation starts now and ends at `done`.
    Started {
        /// End of serialisation.
        done: Instant,
    },
    /// It waits in the queue.
    Queued,
    /// The queue was full: it is dropped (the caller keeps its handle).
    Refused,
}

/// The end of a serialisation ([`Stepped::finish`]).
#[derive(Clone, Copy, Debug)]
pub struct Finished<T> {
    /// The packet serialised.
    pub item: T,
    /// True if the loss model destroyed it (the caller keeps its handle);
    /// otherwise it propagates.
    pub lost: bool,
    /// An arrival to schedule (the pipe was empty): admission number and
    /// instant.
    pub arrival: Option<(u64, Instant)>,
    /// The next packet's serialisation started: its admission number and
    /// when it ends.
    pub next: Option<(u64, Instant)>,
}

/// An arrival at the far end ([`Stepped::arrive`]).
#[derive(Clone, Copy, Debug)]
pub struct Arrived<T> {
    /// The packet at the head of the pipe.
    pub item: T,
    /// True if an outage destroyed it.
    pub lost: bool,
    /// The next arrival to schedule: admission number and instant.
    pub next: Option<(u64, Instant)>,
}

/// One link direction in the stepped model, over packets the caller refers
/// to by a handle `T`.
#[derive(Debug)]
pub struct Stepped<T> {
    settings: Settings,
    loss: LossModel,
    outages: Outages,
    counters: LinkCounters,
    queue: VecDeque<Held<T>>,
    queued_bytes: u64,
    busy: Option<(Held<T>, Instant)>,
    pipe: VecDeque<Flying<T>>,
    last_arrival: Instant,
}

impl<T: Copy> Stepped<T> {
    /// A direction with these initial settings, loss model and outages.
    pub fn new(settings: Settings, loss: LossModel, outages: Outages) -> Self {
        Stepped {
            settings,
            loss,
            outages,
            counters: LinkCounters::default(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            busy: None,
            pipe: VecDeque::new(),
            last_arrival: Instant::ZERO,
        }
    }

    /// Offers packet `item` of `size` bytes at `now`; returns its admission
    /// number and what became of it.
    pub fn offer(&mut self, now: Instant, item: T, size: u32) -> (u64, Admitted) {
        let n = self.counters.arrived;
        self.counters.arrived += 1;
        let held = Held { item, n, size };
        if self.busy.is_none() {
            self.busy = Some((held, now));
            let done = now + tx_time(self.settings.rate, size);
            return (n, Admitted::Started { done });
        }
        let fits = match self.settings.limit {
            QueueLimit::Packets(k) => self.queue.len() < k as usize,
            QueueLimit::Bytes(b) => self.queued_bytes + size as u64 <= b,
        };
        if !fits {
            self.counters.dropped[DropCause::Queue as usize] += 1;
            return (n, Admitted::Refused);
        }
        self.queue.push_back(held);
        self.queued_bytes += size as u64;
        let c = &mut self.counters;
        c.max_queue_packets = c.max_queue_packets.max(self.queue.len() as u64);
        c.max_queue_bytes = c.max_queue_bytes.max(self.queued_bytes);
        (n, Admitted::Queued)
    }

    /// The packet in service ends its serialisation now.
    pub fn finish(&mut self, now: Instant) -> Finished<T> {
        let (held, start) = self.busy.take().expect("a packet is in service");
        self.counters.sent_packets += 1;
        self.counters.sent_bytes += held.size as u64;
        let lost = self.loss.lose();
        let mut arrival = None;
        if lost {
            self.counters.dropped[DropCause::Random as usize] += 1;
        } else {
            let at = (now + self.settings.delay).max(self.last_arrival);
            self.last_arrival = at;
            if self.pipe.is_empty() {
                arrival = Some((held.n, at));
            }
            self.pipe.push_back(Flying {
                held,
                start,
                arrival: at,
            });
        }
        let next = self.queue.pop_front().map(|h| {
            self.queued_bytes -= h.size as u64;
            self.busy = Some((h, now));
            (h.n, now + tx_time(self.settings.rate, h.size))
        });
        Finished {
            item: held.item,
            lost,
            arrival,
            next,
        }
    }

    /// The packet at the head of the pipe reaches the far end now.
    pub fn arrive(&mut self, now: Instant) -> Arrived<T> {
        let f = self.pipe.pop_front().expect("a packet is propagating");
        let next = self.pipe.front().map(|g| (g.held.n, g.arrival));
        let lost = self.outages.overlaps(f.start, now);
        if lost {
            self.counters.dropped[DropCause::Outage as usize] += 1;
        } else {
            self.counters.delivered_packets += 1;
            self.counters.delivered_bytes += f.held.size as u64;
        }
        Arrived {
            item: f.held.item,
            lost,
            next,
        }
    }

    /// Applies a change now.
    pub fn apply(&mut self, e: &ScheduleEntry) {
        self.settings.apply(e);
        if let Some(l) = e.loss {
            self.loss.set(l);
        }
    }

    /// Adds the outage window `[start, end)`.
    pub fn add_outage(&mut self, start: Instant, end: Instant) {
        self.outages.insert(start, end);
    }

    /// The settings in effect.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// The counters.
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    /// Packets and bytes waiting in the queue.
    pub fn queued(&self) -> (u64, u64) {
        (self.queue.len() as u64, self.queued_bytes)
    }
}
