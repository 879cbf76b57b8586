//! The emulated network: the scenario's link directions (the simulator's
//! link models, unchanged) and the routes packets take through them, in
//! planned time.
//!
//! A drop-tail direction is the clock-free model
//! ([`wavelab_model::link::Link`]): a packet is offered at the instant the
//! emulator read it and the model answers at once with its fate. A
//! direction with a queue discipline is the stepped model
//! ([`wavelab_model::link::Stepped`]), since its discipline decides at the
//! head of the queue, from packets offered after the one it decides: this
//! network holds its events (the end of each serialisation, the arrival at
//! the head of its pipe) and runs them at their planned instants, reads
//! each packet's ECN field and flow for the discipline, and reports the
//! packets it marks CE ([`Report::Marked`]) for the driver to mark in their
//! real IP headers. A packet that arrives at the far end of a direction
//! waits here until that instant and is then offered to the next direction,
//! or handed out for release to its destination. Everything is computed at
//! *planned* instants, never at the instants the emulator happened to get
//! to them, so the model's timeline is exactly a simulator's; only releases
//! happen late, and by how much is measured.
//!
//! Offers reach each direction in time order as long as the caller takes
//! every due event ([`Network::pop_due`]) before it offers one read at a
//! later instant, which the driver does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use wavelab_model::link::qdisc::{Ecn, QueueState};
use wavelab_model::link::{
    Admitted, DropCause, Link, LinkCounters, Outcome, ScheduleEntry, Settings, Stepped,
};
use wavelab_model::topology::DirId;
use wavelab_model::WallClockLink;
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
    /// The queue discipline of `dir` set CE on it (reported before its
    /// [`Report::Transmitted`] on that direction): the driver sets CE in
    /// its IP header. Only ECN-capable packets are marked; the discipline
    /// drops the others.
    Marked {
        /// The packet.
        packet: PacketId,
        /// The direction.
        dir: DirId,
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
pub struct Parcel {
    packet: PacketId,
    route: u32,
    hop: u16,
    size: u32,
    /// Its IP header's ECN field ([`Ecn::bits`]).
    ecn: u8,
    /// Its flow's key ([`wavelab_model::link::qdisc::flow_key`]).
    key: u64,
}

/// What is due at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    /// A parcel reaches the far end of a clock-free direction.
    Parcel(Parcel),
    /// A stepped direction's serialisation ends.
    Finish(DirId),
    /// The packet at the head of a stepped direction's pipe arrives.
    Arrive(DirId),
}

/// A direction with a queue discipline, and its changes still to apply.
#[derive(Debug)]
struct SteppedDir {
    link: Stepped<Parcel>,
    changes: Vec<(Instant, ScheduleEntry)>,
    applied: usize,
}

impl SteppedDir {
    /// Applies the changes due at or before `now`.
    fn catch_up(&mut self, now: Instant) {
        while let Some((t, e)) = self.changes.get(self.applied) {
            if *t > now {
                break;
            }
            self.link.apply(e);
            self.applied += 1;
        }
    }
}

/// One direction of the network.
// the clock-free direction, the common case, is held inline: no
// indirection on every packet
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Dir {
    ClockFree(Link),
    Stepped(Box<SteppedDir>),
}

/// The link directions and the packets between them.
#[derive(Debug)]
pub struct Network {
    links: Vec<Dir>,
    routes: Vec<Vec<DirId>>,
    /// Events by (instant, order of scheduling).
    pending: BinaryHeap<Reverse<(Instant, u64, Due)>>,
    scheduled: u64,
    live: u64,
    /// The most packets held at once.
    pub peak: u64,
}

impl Network {
    /// A network of drop-tail directions (indexed by [`DirId`]) and routes.
    pub fn new(links: Vec<Link>, routes: Vec<Vec<DirId>>) -> Self {
        Self::with_links(
            links.into_iter().map(WallClockLink::ClockFree).collect(),
            routes,
        )
    }

    /// A network of these directions, with or without queue disciplines
    /// ([`wavelab_model::wall_clock_links`]), and routes.
    pub fn with_links(links: Vec<WallClockLink<Parcel>>, routes: Vec<Vec<DirId>>) -> Self {
        let links = links
            .into_iter()
            .map(|l| match l {
                WallClockLink::ClockFree(l) => Dir::ClockFree(l),
                WallClockLink::Stepped { link, changes } => Dir::Stepped(Box::new(SteppedDir {
                    link: *link,
                    changes,
                    applied: 0,
                })),
            })
            .collect();
        Network {
            links,
            routes,
            pending: BinaryHeap::new(),
            scheduled: 0,
            live: 0,
            peak: 0,
        }
    }

    /// Number of directions.
    pub fn dirs(&self) -> usize {
        self.links.len()
    }

    /// Direction `dir`'s counters (a drop-tail one's as of the last
    /// [`Network::sync`]).
    pub fn counters(&self, dir: DirId) -> &LinkCounters {
        match &self.links[dir as usize] {
            Dir::ClockFree(l) => l.counters(),
            Dir::Stepped(s) => s.link.counters(),
        }
    }

    /// Direction `dir`'s settings in effect at `now`.
    pub fn settings_at(&self, dir: DirId, now: Instant) -> Settings {
        match &self.links[dir as usize] {
            Dir::ClockFree(l) => l.settings_at(now),
            Dir::Stepped(s) => s.link.settings(),
        }
    }

    /// Packets and bytes waiting in direction `dir`'s queue (a drop-tail
    /// one's as of the last [`Network::sync`]).
    pub fn queued(&self, dir: DirId) -> (u64, u64) {
        match &self.links[dir as usize] {
            Dir::ClockFree(l) => l.queued(),
            Dir::Stepped(s) => s.link.queued(),
        }
    }

    /// Direction `dir`'s queue discipline's state at `now`; None for
    /// drop-tail.
    pub fn qdisc_state(&mut self, dir: DirId, now: Instant) -> Option<QueueState> {
        match &mut self.links[dir as usize] {
            Dir::ClockFree(_) => None,
            Dir::Stepped(s) => s.link.qdisc_state(now),
        }
    }

    /// Packets held now.
    pub fn live(&self) -> u64 {
        self.live
    }

    fn schedule(&mut self, at: Instant, due: Due) {
        self.scheduled += 1;
        self.pending.push(Reverse((at, self.scheduled, due)));
    }

    /// Offers packet `packet` of `size` bytes, read at `at`, to route
    /// `route` (an index into the routes given to [`Network::new`]); its IP
    /// header carries `ecn`, and `key` is its flow's key, which only a
    /// queue discipline reads.
    #[allow(clippy::too_many_arguments)]
    pub fn inject(
        &mut self,
        at: Instant,
        packet: PacketId,
        size: u32,
        route: u32,
        ecn: Ecn,
        key: u64,
        out: &mut Vec<Report>,
    ) {
        self.live += 1;
        self.peak = self.peak.max(self.live);
        let parcel = Parcel {
            packet,
            route,
            hop: 0,
            size,
            ecn: ecn.bits(),
            key,
        };
        self.offer(at, parcel, out);
    }

    /// Reports `packet` destroyed on `dir` at `at`.
    fn lose(
        &mut self,
        packet: PacketId,
        dir: DirId,
        cause: DropCause,
        at: Instant,
        out: &mut Vec<Report>,
    ) {
        self.live -= 1;
        out.push(Report::Dropped {
            packet,
            dir,
            cause,
            at,
        });
    }

    /// Reports the packets the discipline of `dir` dropped since the last
    /// call.
    fn discarded(&mut self, dir: DirId, at: Instant, out: &mut Vec<Report>) {
        let Dir::Stepped(s) = &mut self.links[dir as usize] else {
            return;
        };
        let discarded: Vec<_> = s.link.take_discarded().collect();
        for (p, cause) in discarded {
            self.lose(p.packet, dir, cause, at, out);
        }
    }

    /// Offers `p` to the direction of its hop at `at`.
    fn offer(&mut self, at: Instant, p: Parcel, out: &mut Vec<Report>) {
        let dir = self.routes[p.route as usize][p.hop as usize];
        let offer = match &mut self.links[dir as usize] {
            Dir::ClockFree(l) => l.offer(at, p.size),
            Dir::Stepped(s) => {
                s.catch_up(at);
                let (_, admitted) = s
                    .link
                    .offer_ecn(at, p, p.size, Ecn::from_bits(p.ecn), p.key);
                let refused = match admitted {
                    Admitted::Started { done } => {
                        self.schedule(done, Due::Finish(dir));
                        None
                    }
                    Admitted::Queued => None,
                    Admitted::Refused => Some(s.link.last_refusal()),
                };
                if let Some(cause) = refused {
                    self.lose(p.packet, dir, cause, at, out);
                }
                self.discarded(dir, at, out);
                return;
            }
        };
        if let Some(finish) = offer.outcome.finish() {
            out.push(Report::Transmitted {
                packet: p.packet,
                dir,
                finish,
            });
        }
        let (cause, when) = match offer.outcome {
            Outcome::Arrive { at: arrival, .. } => {
                self.schedule(arrival, Due::Parcel(p));
                return;
            }
            Outcome::Refused => (DropCause::Queue, at),
            Outcome::Lost { finish } => (DropCause::Random, finish),
            Outcome::Outage { at, .. } => (DropCause::Outage, at),
        };
        self.lose(p.packet, dir, cause, when, out);
    }

    /// When the next event is due: a packet reaches the far end of a
    /// direction, or a serialisation on a direction with a queue discipline
    /// ends.
    pub fn next_due(&self) -> Option<Instant> {
        self.pending.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Runs the next event due at or before `now`, if any: a packet that
    /// reached the far end of a direction is offered to its next direction
    /// (at its planned arrival) or reported due for release; a
    /// serialisation that ended hands its packet to the pipe and starts the
    /// next. Returns false if nothing was due.
    pub fn pop_due(&mut self, now: Instant, out: &mut Vec<Report>) -> bool {
        match self.pending.peek() {
            Some(Reverse((t, _, _))) if *t <= now => {}
            _ => return false,
        }
        let Reverse((at, _, due)) = self.pending.pop().expect("peeked");
        match due {
            Due::Parcel(p) => self.arrived(at, p, out),
            Due::Finish(dir) => self.finish(at, dir, out),
            Due::Arrive(dir) => {
                let Dir::Stepped(s) = &mut self.links[dir as usize] else {
                    unreachable!("arrivals are scheduled on stepped directions")
                };
                let a = s.link.arrive(at);
                if let Some((_, next)) = a.next {
                    self.schedule(next, Due::Arrive(dir));
                }
                if a.lost {
                    self.lose(a.item.packet, dir, DropCause::Outage, at, out);
                } else {
                    self.arrived(at, a.item, out);
                }
            }
        }
        true
    }

    /// The serialisation in progress on stepped direction `dir` ends at `at`.
    fn finish(&mut self, at: Instant, dir: DirId, out: &mut Vec<Report>) {
        let Dir::Stepped(s) = &mut self.links[dir as usize] else {
            unreachable!("ends of serialisation are scheduled on stepped directions")
        };
        s.catch_up(at);
        let f = s.link.finish(at);
        let packet = f.item.packet;
        if f.marked {
            out.push(Report::Marked { packet, dir });
        }
        out.push(Report::Transmitted {
            packet,
            dir,
            finish: at,
        });
        if let Some((_, arrival)) = f.arrival {
            self.schedule(arrival, Due::Arrive(dir));
        }
        if let Some((_, done)) = f.next {
            self.schedule(done, Due::Finish(dir));
        }
        if f.lost {
            self.lose(packet, dir, DropCause::Random, at, out);
        }
        self.discarded(dir, at, out);
    }

    /// `p` reached the far end of its hop at `at`: on to the next hop, or
    /// due for release.
    fn arrived(&mut self, at: Instant, mut p: Parcel, out: &mut Vec<Report>) {
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
    }

    /// Brings every drop-tail direction's counters and queue lengths to
    /// `now` (a stepped direction's are always current).
    pub fn sync(&mut self, now: Instant) {
        for l in &mut self.links {
            if let Dir::ClockFree(l) = l {
                l.sync(now);
            }
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
        n.inject(t(0), 7, 1500, 0, Ecn::NotEct, 0, &mut out);
        n.inject(t(0), 8, 1500, 0, Ecn::NotEct, 0, &mut out);
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
            n.inject(t(0), id, 1500, 0, Ecn::NotEct, 0, &mut out);
        }
        assert!(out.contains(&Report::Dropped {
            packet: 2,
            dir: 0,
            cause: DropCause::Queue,
            at: t(0)
        }));
        drain(&mut n, &mut out);
        n.sync(Instant::MAX);
        let c = n.counters(0);
        assert_eq!((c.arrived, c.delivered_packets), (3, 2));
    }

    /// A 1 Mbit/s direction running CoDel (ECN marking on) fed 60 packets
    /// of 1500 bytes at once (a 720 ms queue): CoDel signals once the
    /// sojourn has been above 5 ms for 100 ms. ECN-capable packets are
    /// marked, reported before their transmission, and all delivered; the
    /// same packets Not-ECT are dropped by the discipline instead.
    #[test]
    fn codel_marks_ect_packets_and_drops_the_others() {
        use wavelab_model::link::qdisc::{CodelSpec, QdiscSpec};
        use wavelab_model::link::Stepped;
        use wavelab_model::WallClockLink;
        let run = |ecn: Ecn| {
            let settings = Settings {
                rate: Rate::from_mbps(1),
                delay: Duration::from_millis(10),
                limit: QueueLimit::Packets(1000),
            };
            let loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
            let codel = Stepped::new(settings, loss, Outages::default()).with_qdisc(
                &QdiscSpec::Codel(CodelSpec::default()),
                Rng::derive(1, Stream::LinkQdisc(0)),
            );
            let mut n = Network::with_links(
                vec![WallClockLink::Stepped {
                    link: Box::new(codel),
                    changes: vec![],
                }],
                vec![vec![0]],
            );
            let mut out = vec![];
            for id in 0..60 {
                n.inject(t(0), id, 1500, 0, ecn, 7, &mut out);
            }
            drain(&mut n, &mut out);
            assert_eq!(n.live(), 0);
            out
        };
        let count =
            |out: &[Report], f: &dyn Fn(&Report) -> bool| out.iter().filter(|r| f(r)).count();
        let marked = run(Ecn::Ect0);
        let marks = count(&marked, &|r| matches!(r, Report::Marked { .. }));
        assert!(marks > 0, "CoDel marked");
        assert_eq!(count(&marked, &|r| matches!(r, Report::Deliver { .. })), 60);
        assert_eq!(count(&marked, &|r| matches!(r, Report::Dropped { .. })), 0);
        // each mark comes right before the transmission of its packet
        for (i, r) in marked.iter().enumerate() {
            if let Report::Marked { packet, dir } = r {
                assert!(matches!(
                    marked[i + 1],
                    Report::Transmitted { packet: p, dir: d, .. } if p == *packet && d == *dir
                ));
            }
        }
        let dropped = run(Ecn::NotEct);
        let drops = count(&dropped, &|r| {
            matches!(
                r,
                Report::Dropped {
                    cause: DropCause::Aqm,
                    ..
                }
            )
        });
        assert_eq!(count(&dropped, &|r| matches!(r, Report::Marked { .. })), 0);
        assert!(drops > 0, "CoDel dropped the Not-ECT packets");
        assert_eq!(
            count(&dropped, &|r| matches!(r, Report::Deliver { .. })),
            60 - drops
        );
    }
}
