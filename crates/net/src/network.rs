//! The emulated network: the scenario's link directions (the simulator's
//! clock-free link model, [`wavelab_model::link::Link`], unchanged) and the
//! routes packets take through them, in planned time.
//!
//! A packet is offered to the first direction of its route at the instant
//! the emulator read it; the model answers at once with its fate. A packet
//! that arrives at the far end of a direction waits here until that instant
//! and is then offered to the next direction, or handed out for release to
//! its destination. Everything is computed at *planned* instants, never at
//! the instants the emulator happened to get to them, so the model's
//! timeline is exactly a simulator's; only releases happen late, and by how
//! much is measured.
//!
//! Offers reach each direction in time order as long as the caller takes
//! every due packet ([`Network::pop_due`]) before it offers one read at a
//! later instant, which the driver does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use wavelab_model::link::{DropCause, Link, Outcome};
use wavelab_model::topology::DirId;
use wavelab_tcp::Instant;

/// A packet's handle (the driver's buffer slot).
pub type PacketId = u32;

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// Its serialisation on `dir` ends at `finish` (it is then on the wire;
    /// reported even if the loss model or an outage destroys it later).
    Transmitted {
        /// The packet.
        packet: PacketId,
        /// The direction.
        dir: DirId,
        /// End of serialisation.
        finish: Instant,
    },
    /// It is destroyed on `dir` at `at`.
    Dropped {
        /// The packet.
        packet: PacketId,
        /// The direction.
        dir: DirId,
        /// Why.
        cause: DropCause,
        /// When.
        at: Instant,
    },
    /// It reached the end of its route and is to be released at `at`.
    Deliver {
        /// The packet.
        packet: PacketId,
        /// The last direction it crossed.
        dir: DirId,
        /// When it is due.
        at: Instant,
    },
}

/// A packet on its way: arrives at the far end of step `hop` of `route`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Parcel {
    packet: PacketId,
    route: u32,
    hop: u16,
    size: u32,
}

/// The link directions and the packets between them.
#[derive(Debug)]
pub struct Network {
    links: Vec<Link>,
    routes: Vec<Vec<DirId>>,
    /// Packets propagating, by (arrival, order of scheduling).
    pending: BinaryHeap<Reverse<(Instant, u64, Parcel)>>,
    scheduled: u64,
    /// Packets between the read and the release (or the drop), now and most.
    live: u64,
    /// The most packets held at once.
    pub peak: u64,
}

impl Network {
    /// A network of these directions (indexed by [`DirId`]) and routes.
    pub fn new(links: Vec<Link>, routes: Vec<Vec<DirId>>) -> Self {
        Network {
            links,
            routes,
            pending: BinaryHeap::new(),
            scheduled: 0,
            live: 0,
            peak: 0,
        }
    }

    /// The direction `dir`.
    pub fn link(&self, dir: DirId) -> &Link {
        &self.links[dir as usize]
    }

    /// Number of directions.
    pub fn dirs(&self) -> usize {
        self.links.len()
    }

    /// Packets held now.
    pub fn live(&self) -> u64 {
        self.live
    }

    /// Offers packet `packet` of `size` bytes, read at `at`, to route
    /// `route` (an index into the routes given to [`Network::new`]).
    pub fn inject(
        &mut self,
        at: Instant,
        packet: PacketId,
        size: u32,
        route: u32,
        out: &mut Vec<Report>,
    ) {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        let parcel = Parcel {
            packet,
            route,
            hop: 0,
            size,
        };
        self.offer(at, parcel, out);
    }

    /// Offers `p` to the direction of its hop at `at`.
    fn offer(&mut self, at: Instant, p: Parcel, out: &mut Vec<Report>) {
        let dir = self.routes[p.route as usize][p.hop as usize];
        let offer = self.links[dir as usize].offer(at, p.size);
        if let Some(finish) = offer.outcome.finish() {
            out.push(Report::Transmitted {
                packet: p.packet,
                dir,
                finish,
            });
        }
        let (cause, when) = match offer.outcome {
            Outcome::Arrive { at: arrival, .. } => {
                self.scheduled += 1;
                self.pending.push(Reverse((arrival, self.scheduled, p)));
                return;
            }
            Outcome::Refused => (DropCause::Queue, at),
            Outcome::Lost { finish } => (DropCause::Random, finish),
            Outcome::Outage { at, .. } => (DropCause::Outage, at),
        };
        self.live -= 1;
        out.push(Report::Dropped {
            packet: p.packet,
            dir,
            cause,
            at: when,
        });
    }

    /// When the next packet reaches the far end of a direction.
    pub fn next_due(&self) -> Option<Instant> {
        self.pending.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Moves on the next packet due at or before `now`, if any: offers it
    /// to its next direction (at its planned arrival), or reports it due
    /// for release. Returns false if nothing was due.
    pub fn pop_due(&mut self, now: Instant, out: &mut Vec<Report>) -> bool {
        match self.pending.peek() {
            Some(Reverse((t, _, _))) if *t <= now => {}
            _ => return false,
        }
        let Reverse((at, _, mut p)) = self.pending.pop().expect("peeked");
        let route = &self.routes[p.route as usize];
        if p.hop as usize + 1 == route.len() {
            self.live -= 1;
            out.push(Report::Deliver {
                packet: p.packet,
                dir: route[p.hop as usize],
                at,
            });
        } else {
            p.hop += 1;
            self.offer(at, p, out);
        }
        true
    }

    /// Brings every direction's counters and queue lengths to `now`.
    pub fn sync(&mut self, now: Instant) {
        for l in &mut self.links {
            l.sync(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavelab_model::link::{LossModel, Outages, Settings};
    use wavelab_model::rng::{Rng, Stream};
    use wavelab_model::scenario::{LossSpec, QueueLimit};
    use wavelab_tcp::{Duration, Rate};

    fn t(us: u64) -> Instant {
        Instant::from_nanos(us * 1000)
    }

    fn link(mbps: u64, delay_us: u64, queue: u32) -> Link {
        let settings = Settings {
            rate: Rate::from_mbps(mbps),
            delay: Duration::from_micros(delay_us),
            limit: QueueLimit::Packets(queue),
        };
        let loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
        Link::new(settings, loss, Outages::default(), vec![])
    }

    /// Runs the network to the end; returns the reports.
    fn drain(n: &mut Network, out: &mut Vec<Report>) {
        while n.pop_due(Instant::MAX, out) {}
    }

    #[test]
    fn packets_cross_a_chain_at_their_planned_instants() {
        // 1500 bytes: 120 us at 100 Mbit/s, 1200 us at 10 Mbit/s
        let mut n = Network::new(
            vec![
                link(100, 1000, 10),
                link(100, 1000, 10),
                link(10, 5000, 10),
                link(10, 5000, 10),
            ],
            vec![vec![0, 2]],
        );
        let mut out = vec![];
        n.inject(t(0), 7, 1500, 0, &mut out);
        n.inject(t(0), 8, 1500, 0, &mut out);
        assert_eq!(n.next_due(), Some(t(1120)));
        assert!(!n.pop_due(t(1119), &mut out), "nothing before its arrival");
        drain(&mut n, &mut out);
        let delivered: Vec<_> = out
            .iter()
            .filter_map(|r| match r {
                Report::Deliver { packet, at, dir } => Some((*packet, *at, *dir)),
                _ => None,
            })
            .collect();
        // the second waits 120 us behind the first on the first link, then
        // 1200 us behind it on the second: departures spaced by size / rate
        assert_eq!(
            delivered,
            [(7, t(1120 + 1200 + 5000), 2), (8, t(2320 + 1200 + 5000), 2)]
        );
        assert_eq!((n.live(), n.peak), (0, 2));
    }

    #[test]
    fn a_full_queue_refuses_at_the_offer() {
        let mut n = Network::new(vec![link(1, 0, 1)], vec![vec![0]]);
        let mut out = vec![];
        for id in 0..3 {
            n.inject(t(0), id, 1500, 0, &mut out);
        }
        assert!(out.contains(&Report::Dropped {
            packet: 2,
            dir: 0,
            cause: DropCause::Queue,
            at: t(0)
        }));
        drain(&mut n, &mut out);
        n.sync(Instant::MAX);
        let c = n.link(0).counters();
        assert_eq!((c.arrived, c.delivered_packets), (3, 2));
    }
}
