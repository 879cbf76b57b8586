//! Cross-layer notifications on their way to a flow's sender.
//!
//! Whatever produces one (a handoff; a link's link-layer reports, once a
//! link layer makes them) schedules it with [`Notices::schedule`] to reach
//! the flow's sender at a given instant, after the delay the producer
//! models. It travels as an [`Event::Notify`] (the engine's class 4, after
//! flow starts and stops and before arrivals at the same instant), keyed by
//! the flow and the notification's number among the flow's, so both engine
//! modes deliver simultaneous notifications in the same order. At delivery
//! the simulation hands it to `Sender::handle_notification`, logs it, and
//! keeps it for the `notifications` table.

use crate::engine::{Event, EventQueue};
use std::collections::BTreeMap;
use wavelab_model::topology::DirId;
use wavelab_tcp::cc::Notification;
use wavelab_tcp::Instant;

/// What sent a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Handoff number `index`; `link` is the new access link's direction the
    /// flow's data crosses.
    Handoff { index: usize, link: DirId },
    /// The link layer of direction `.0`.
    Link(DirId),
}

impl Source {
    /// The link direction it concerns.
    pub fn link(&self) -> DirId {
        match *self {
            Source::Handoff { link, .. } | Source::Link(link) => link,
        }
    }
}

/// A notification, when it was sent and by what.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Notice {
    pub sent: Instant,
    pub msg: Notification,
    pub source: Source,
}

/// A notification delivered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Delivered {
    pub time: Instant,
    pub flow: u32,
    pub notice: Notice,
}

/// The notifications in flight, and those delivered.
#[derive(Clone, Debug, Default)]
pub(crate) struct Notices {
    pending: BTreeMap<(u32, u64), Notice>,
    /// Per flow: notifications scheduled so far.
    counts: Vec<u64>,
    /// Delivered, in delivery order.
    pub delivered: Vec<Delivered>,
}

impl Notices {
    /// No notification yet, for `flows` flows.
    pub fn new(flows: usize) -> Self {
        Notices {
            counts: vec![0; flows],
            ..Notices::default()
        }
    }

    /// Schedules `notice` to reach flow `flow`'s sender at `at`.
    pub fn schedule(&mut self, q: &mut EventQueue, flow: usize, at: Instant, notice: Notice) {
        let n = self.counts[flow];
        self.counts[flow] += 1;
        self.pending.insert((flow as u32, n), notice);
        q.push(
            at,
            Event::Notify {
                flow: flow as u32,
                n,
            },
        );
    }

    /// Takes the notification an [`Event::Notify`] delivers.
    pub fn take(&mut self, flow: u32, n: u64) -> Notice {
        self.pending
            .remove(&(flow, n))
            .expect("a scheduled notification")
    }
}
