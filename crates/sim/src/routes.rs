//! The network: routes, and the movement of packets from one link direction
//! to the next.
//!
//! Each direction runs one of the two models of the link layer
//! ([`wavelab_model::link`]), which give bit-identical results (the engine's
//! canonical event order, [`crate::engine`], is what makes that possible):
//!
//! * **virtual time** ([`Link`]): a packet's whole schedule on the direction
//!   is computed when it is offered. Nothing is scheduled for a packet that
//!   has more links to cross: when the next direction's only source is this
//!   one, the packet is offered there at once, at its future arrival time
//!   (all packets that reach that direction before it came the same way and
//!   were offered before it). An event is scheduled only where something
//!   else can interleave: at the destination endpoint, or at a direction fed
//!   by several sources. Counters and queue lengths are read "as of now"
//!   after a [`Network::sync`].
//! * **reference** ([`Stepped`]): one pending end-of-serialisation event and
//!   one pending arrival event per direction, packets in an arena.
//!
//! Links with a handover at `"steady"` (decided during the run) run in
//! reference mode, as does everything in [`Simulation::new_reference`], the
//! oracle the tests compare the virtual-time mode against.
//!
//! Routes are lists of directions, one per flow and side (data, ACKs); a
//! flow may have several per side and switch between them during the run
//! ([`Network::switch_route`]): packets already on their way keep the route they
//! were sent on. The network reports what happens to packets through an
//! [`Observer`]; it does not log or capture anything itself.
//!
//! [`Simulation::new_reference`]: crate::Simulation::new_reference

use crate::engine::{Event, EventQueue};
use crate::packet::{Arena, Packet, PacketId};
use wavelab_model::histogram::Histogram;
use wavelab_model::link::qdisc::{Ecn, QueueState};
use wavelab_model::link::{
    Admitted, DropCause, Link, LinkCounters, Outages, Outcome, Settings, Stepped,
};
use wavelab_model::ring::Ring;
use wavelab_model::scenario::ScheduleEntry;
use wavelab_model::topology::DirId;
use wavelab_tcp::cc::LinkReport;
use wavelab_tcp::Instant;

/// Which event something the network reports belongs to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Row {
    /// The event being processed.
    Current,
    /// An event the virtual-time mode computes without scheduling it (its
    /// canonical key is computed only if it is needed).
    Virtual(Instant, Event),
}

/// What the network reports as packets move; the simulation decides what
/// to log and capture.
pub(crate) trait Observer {
    /// True if ends of serialisation are to be reported.
    fn wants_tx(&self) -> bool;
    /// Packet `p` ended its serialisation on `dir`; `key` is the canonical
    /// key of that end of serialisation ([`crate::engine::key`]).
    fn tx_end(&mut self, key: u128, dir: DirId, p: &Packet);
    /// Packet `p` was dropped on `dir` at `at`.
    fn dropped(&mut self, p: &Packet, dir: DirId, cause: DropCause, at: Instant, row: Row);
}

/// Where a network call comes from: the event queue and the clock, and who
/// hears what happens.
pub(crate) struct Ctx<'a, O> {
    pub q: &'a mut EventQueue,
    pub now: Instant,
    pub obs: &'a mut O,
    /// `obs.wants_tx()`, read once.
    pub tx: bool,
}

impl<'a, O: Observer> Ctx<'a, O> {
    /// The context of a call at `now`.
    #[inline]
    pub fn new(q: &'a mut EventQueue, now: Instant, obs: &'a mut O) -> Self {
        let tx = obs.wants_tx();
        Ctx { q, now, obs, tx }
    }
}

/// A direction in virtual time: the link model, and the packets that need
/// an arrival event (at the endpoint, or at a direction fed by several
/// sources), in arrival order.
#[derive(Clone, Debug)]
pub(crate) struct Timed {
    link: Link,
    parcels: Ring<Packet>,
}

/// One link direction, in one of the two modes.
#[derive(Clone, Debug)]
pub(crate) enum Dir {
    /// Virtual time.
    Virtual(Box<Timed>),
    /// Reference mode, over packets in the arena.
    Reference(Box<Stepped<PacketId>>),
}

impl Dir {
    /// A direction in virtual time.
    pub fn timed(link: Link) -> Self {
        Dir::Virtual(Box::new(Timed {
            link,
            parcels: Ring::default(),
        }))
    }

    /// A direction in reference mode.
    pub fn stepped(link: Stepped<PacketId>) -> Self {
        Dir::Reference(Box::new(link))
    }

    /// True in virtual-time mode.
    pub fn is_virtual(&self) -> bool {
        matches!(self, Dir::Virtual(_))
    }

    /// Queueing delays of the packets that started serialisation
    /// (virtual-time mode: by the last [`Network::sync`]).
    pub fn waits(&self) -> Histogram {
        match self {
            Dir::Virtual(v) => v.link.waits(),
            Dir::Reference(r) => r.waits().clone(),
        }
    }

    /// The counters (virtual-time mode: as of the last [`Network::sync`]).
    pub fn counters(&self) -> &LinkCounters {
        match self {
            Dir::Virtual(v) => v.link.counters(),
            Dir::Reference(r) => r.counters(),
        }
    }

    /// The settings in effect at `now`.
    pub fn settings_at(&self, now: Instant) -> Settings {
        match self {
            Dir::Virtual(v) => v.link.settings_at(now),
            Dir::Reference(r) => r.settings(),
        }
    }

    /// Its queue discipline's state at `now`; None for drop-tail (the
    /// virtual-time mode runs drop-tail only).
    pub fn qdisc_state(&mut self, now: Instant) -> Option<QueueState> {
        match self {
            Dir::Virtual(_) => None,
            Dir::Reference(r) => r.qdisc_state(now),
        }
    }

    /// Packets and bytes waiting in the queue (virtual-time mode: as of the
    /// last sync).
    pub fn queued(&self) -> (u64, u64) {
        match self {
            Dir::Virtual(v) => v.link.queued(),
            Dir::Reference(r) => r.queued(),
        }
    }
}

/// The links and the packets on them.
#[derive(Clone, Debug)]
pub(crate) struct Network {
    pub dirs: Vec<Dir>,
    /// Packets in reference-mode directions (virtual-time directions keep
    /// theirs in their own queues, in arrival order).
    arena: Arena,
    /// Packets in the network now, and the most at once.
    live: u64,
    pub peak: u64,
    /// The routes, flat, each followed by an end marker.
    steps: Vec<Step>,
    /// Per flow and side (data, ACKs): where each of its routes starts in
    /// `steps`.
    routes: Vec<[Vec<u32>; 2]>,
    /// Per flow: where the routes in use start in `steps`.
    route_at: Vec<[u32; 2]>,
    /// Link-layer reports made and not yet taken by the simulation
    /// ([`Network::take_reports`]).
    reports: Vec<Report>,
    /// Per flow, per side (data, ACKs): the key a flow-queueing discipline
    /// hashes ([`wavelab_model::link::qdisc::flow_key`]).
    keys: Vec<[u64; 2]>,
    /// The packets a queue discipline dropped in the call being handled.
    discards: Vec<(PacketId, DropCause)>,
}

/// A link layer's report on a data frame, delivered or given up after its
/// retry limit (`dropped`), to reach its flow's sender at `at`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Report {
    pub flow: u32,
    pub dir: DirId,
    pub at: Instant,
    pub report: LinkReport,
    pub dropped: bool,
}

/// Where a packet handed out for delivery waits until it is released.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Delivery {
    /// At the front of a virtual-time direction's arrival queue.
    Parcel(DirId),
    /// In the arena (reference mode).
    Slot(PacketId),
}

/// One direction along a route.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// The direction ([`Step::END`] past the end of the route).
    dir: DirId,
    /// True if the packets of the previous direction are admitted to this
    /// one at once: it is in virtual-time mode, as is the previous one, its
    /// only source.
    merged: bool,
}

impl Step {
    const END: DirId = DirId::MAX;
}

impl Network {
    /// A network of `dirs`, for flows with these routes: per flow, per side
    /// (data, ACKs), the routes it may take, the first one in use at the
    /// start.
    pub fn new(dirs: Vec<Dir>, routes: Vec<[Vec<Vec<DirId>>; 2]>) -> Self {
        // the sources of each direction over every route: upstream
        // directions, or endpoints
        #[derive(Clone, Copy, PartialEq)]
        enum Source {
            None,
            One(DirId),
            Many,
        }
        let mut sources = vec![Source::None; dirs.len()];
        for route in routes.iter().flatten().flatten() {
            for (i, &d) in route.iter().enumerate() {
                let s = &mut sources[d as usize];
                let from = if i == 0 { None } else { Some(route[i - 1]) };
                *s = match (*s, from) {
                    (Source::None, Some(u)) => Source::One(u),
                    (Source::One(u), Some(v)) if u == v => Source::One(u),
                    _ => Source::Many,
                };
            }
        }
        let merge_from: Vec<_> = sources
            .iter()
            .enumerate()
            .map(|(d, s)| match *s {
                Source::One(u) if dirs[d].is_virtual() && dirs[u as usize].is_virtual() => Some(u),
                _ => None,
            })
            .collect();
        let mut steps = vec![];
        let mut starts = vec![];
        for flow in &routes {
            let mut at: [Vec<u32>; 2] = Default::default();
            for (side, alternatives) in flow.iter().enumerate() {
                for route in alternatives {
                    at[side].push(steps.len() as u32);
                    for (i, &dir) in route.iter().enumerate() {
                        let merged = i > 0 && merge_from[dir as usize] == Some(route[i - 1]);
                        steps.push(Step { dir, merged });
                    }
                    steps.push(Step {
                        dir: Step::END,
                        merged: false,
                    });
                }
            }
            starts.push(at);
        }
        let route_at = starts.iter().map(|s| [s[0][0], s[1][0]]).collect();
        Network {
            dirs,
            arena: Arena::default(),
            live: 0,
            peak: 0,
            steps,
            routes: starts,
            route_at,
            reports: Vec::new(),
            keys: Vec::new(),
            discards: Vec::new(),
        }
    }

    /// Sets each flow's keys, per side (data, ACKs), for flow-queueing
    /// disciplines (all zero if never set: one queue for all).
    pub fn set_flow_keys(&mut self, keys: Vec<[u64; 2]>) {
        self.keys = keys;
    }

    /// The most fifo entries each virtual-time direction ever held at once
    /// (rounded up to a power of two).
    #[cfg(test)]
    pub fn fifo_capacities(&self) -> Vec<usize> {
        let virt = self.dirs.iter().filter_map(|d| match d {
            Dir::Virtual(v) => Some(v.link.fifo_capacity()),
            Dir::Reference(_) => None,
        });
        virt.collect()
    }

    /// Packet transmissions on links so far (as of the last sync).
    pub fn hops(&self) -> u64 {
        self.dirs.iter().map(|d| d.counters().sent_packets).sum()
    }

    /// Makes flow `flow`'s packets of side `side` (0 data, 1 ACKs) sent from
    /// now on take its route number `route`; packets already sent keep
    /// theirs.
    pub fn switch_route(&mut self, flow: usize, side: usize, route: usize) {
        self.route_at[flow][side] = self.routes[flow][side][route];
    }

    /// Sends a packet an endpoint emitted now into its first link direction.
    #[inline]
    pub fn inject<O: Observer>(&mut self, ctx: &mut Ctx<O>, p: &mut Packet) {
        p.step = self.route_at[p.flow as usize][!p.to_receiver as usize];
        let first = self.steps[p.step as usize].dir;
        self.live += 1;
        self.peak = self.peak.max(self.live);
        self.admit(ctx, first, p);
    }

    /// The step after step `step` (the one a packet is on): its next
    /// direction, or [`Step::END`].
    #[inline]
    fn next_step(&self, step: u32) -> Step {
        self.steps[step as usize + 1]
    }

    /// Applies a scheduled or decided change to link `link`'s
    /// reference-mode directions (virtual-time directions read their
    /// scheduled changes from their timeline).
    pub fn apply(&mut self, link: usize, e: &ScheduleEntry) {
        for k in (0..2).filter(|&k| e.direction.covers(k)) {
            if let Dir::Reference(r) = &mut self.dirs[2 * link + k] {
                r.apply(e);
            }
        }
    }

    /// Replaces the outage windows of direction `dir` if it runs in
    /// reference mode; false for a virtual-time direction (its schedule of
    /// departures was planned with the windows it had).
    pub fn set_outages(&mut self, dir: usize, outages: Outages) -> bool {
        match &mut self.dirs[dir] {
            Dir::Reference(r) => {
                r.set_outages(outages);
                true
            }
            Dir::Virtual(_) => false,
        }
    }

    /// Adds the outage window `[start, end)` to a reference-mode direction
    /// (a virtual-time direction knows its windows from the start).
    pub fn add_outage(&mut self, dir: usize, start: Instant, end: Instant) {
        match &mut self.dirs[dir] {
            Dir::Reference(r) => r.add_outage(start, end),
            Dir::Virtual(_) => unreachable!("a decided outage on a virtual-time direction"),
        }
    }

    // ----- admission ---------------------------------------------------------

    /// Offers packet `p`, which arrives now, to direction `dir`.
    #[inline]
    fn admit<O: Observer>(&mut self, ctx: &mut Ctx<O>, dir: DirId, p: &mut Packet) {
        let now = ctx.now;
        let Dir::Reference(r) = &mut self.dirs[dir as usize] else {
            return self.admit_virtual(ctx, dir, p);
        };
        let id = self.arena.alloc(*p);
        let (n, admitted) = if r.has_qdisc() {
            let key = self
                .keys
                .get(p.flow as usize)
                .map_or(0, |k| k[!p.to_receiver as usize]);
            r.offer_ecn(now, id, p.size, p.ecn, key)
        } else {
            r.offer(now, id, p.size)
        };
        self.arena.get_mut(id).n = n;
        match admitted {
            Admitted::Started { done } => ctx.q.push(done, Event::TxDone { dir, n }),
            Admitted::Queued => {}
            Admitted::Refused => {
                let cause = r.last_refusal();
                self.arena.free(id);
                self.drop_packet(ctx, p, dir, cause, now, Row::Current);
            }
        }
        self.discard(ctx, dir);
    }

    /// Drops the packets reference-mode direction `dir`'s queue discipline
    /// let go of in the call just made.
    #[inline]
    fn discard<O: Observer>(&mut self, ctx: &mut Ctx<O>, dir: DirId) {
        let Dir::Reference(r) = &mut self.dirs[dir as usize] else {
            return;
        };
        if !r.has_qdisc() {
            return;
        }
        self.discards.extend(r.take_discarded());
        for k in 0..self.discards.len() {
            let (id, cause) = self.discards[k];
            let p = *self.arena.get(id);
            self.arena.free(id);
            self.drop_packet(ctx, &p, dir, cause, ctx.now, Row::Current);
        }
        self.discards.clear();
    }

    /// Admits packet `p`, which arrives now, to virtual-time direction
    /// `dir`, and on to the next directions while they are merged (each at
    /// the packet's arrival from the previous one).
    #[inline]
    fn admit_virtual<O: Observer>(&mut self, ctx: &mut Ctx<O>, mut dir: DirId, p: &mut Packet) {
        let mut a = ctx.now;
        // the direction and admission number the packet arrives from, in a
        // chain of merged directions (`Step::END` for the first)
        let mut from = (Step::END, 0);
        loop {
            let Dir::Virtual(v) = &mut self.dirs[dir as usize] else {
                unreachable!("a merged direction is in virtual time");
            };
            let offer = v.link.offer(a, p.size);
            let n = offer.n;
            if ctx.tx {
                if let Some(finish) = offer.outcome.finish() {
                    let k = crate::engine::key(finish, &Event::TxDone { dir, n });
                    ctx.obs.tx_end(k, dir, p);
                }
            }
            let arrival = match offer.outcome {
                Outcome::Arrive { at, .. } => at,
                Outcome::Refused => {
                    let row = match from {
                        (Step::END, _) => Row::Current,
                        (d, m) => Row::Virtual(a, Event::Arrive { dir: d, n: m }),
                    };
                    return self.drop_packet(ctx, p, dir, DropCause::Queue, a, row);
                }
                Outcome::Lost { finish } => {
                    let row = Row::Virtual(finish, Event::TxDone { dir, n });
                    return self.drop_packet(ctx, p, dir, DropCause::Random, finish, row);
                }
                Outcome::Outage { at, .. } => {
                    let row = Row::Virtual(at, Event::Arrive { dir, n });
                    return self.drop_packet(ctx, p, dir, DropCause::Outage, at, row);
                }
            };
            let next = self.next_step(p.step);
            if next.merged {
                // on at once to the next direction, at the arrival time
                p.advance();
                from = (dir, n);
                dir = next.dir;
                a = arrival;
                continue;
            }
            let Dir::Virtual(v) = &mut self.dirs[dir as usize] else {
                unreachable!("the direction just offered to");
            };
            p.n = n;
            p.arrival = arrival;
            v.parcels.push(*p);
            if v.parcels.len() == 1 {
                ctx.q.push(arrival, Event::Arrive { dir, n });
            }
            return;
        }
    }

    // ----- events ------------------------------------------------------------

    /// A reference-mode direction finished serialising its packet.
    pub fn on_tx_done<O: Observer>(&mut self, ctx: &mut Ctx<O>, key: u128, dir: DirId) {
        let Dir::Reference(r) = &mut self.dirs[dir as usize] else {
            unreachable!("serialisation events are for reference-mode directions");
        };
        let f = r.finish(ctx.now);
        if f.marked {
            self.arena.get_mut(f.item).ecn = Ecn::Ce;
        }
        // (retries, link RTO, report delay) of a frame the ARQ gave up
        let report = f.retries.filter(|_| f.lost).and_then(|(k, tx)| {
            let arq = r.arq().filter(|q| q.reports_drops())?;
            Some((k, arq.link_rto(k, tx), arq.report_delay()))
        });
        if ctx.tx {
            ctx.obs.tx_end(key, dir, self.arena.get(f.item));
        }
        if f.lost {
            let p = *self.arena.get(f.item);
            self.arena.free(f.item);
            if let Some(r) = report.filter(|_| p.to_receiver) {
                self.report(&p, dir, ctx.now, r, true);
            }
            self.drop_packet(ctx, &p, dir, DropCause::Random, ctx.now, Row::Current);
        }
        if let Some((n, at)) = f.arrival {
            ctx.q.push(at, Event::Arrive { dir, n });
        }
        if let Some((n, done)) = f.next {
            ctx.q.push(done, Event::TxDone { dir, n });
        }
        self.discard(ctx, dir);
    }

    /// A packet reached the far end of `dir`: it goes on to its next
    /// direction, or is handed out for delivery to its endpoint, where it
    /// waits (read it with [`Network::delivered`]) until [`Network::release`].
    pub fn on_arrive<O: Observer>(&mut self, ctx: &mut Ctx<O>, dir: DirId) -> Option<Delivery> {
        let now = ctx.now;
        match &mut self.dirs[dir as usize] {
            Dir::Virtual(v) => {
                if let Some(next) = v.parcels.try_get(v.parcels.start() + 1) {
                    ctx.q.push(next.arrival, Event::Arrive { dir, n: next.n });
                }
                let step = v.parcels.front().expect("an arrival is pending").step;
                let next = self.next_step(step);
                if next.dir == Step::END {
                    // delivered from where it waits: no copy
                    self.live -= 1;
                    return Some(Delivery::Parcel(dir));
                }
                let Dir::Virtual(v) = &mut self.dirs[dir as usize] else {
                    unreachable!("the same direction");
                };
                let mut p = v.parcels.pop_front().expect("an arrival is pending");
                p.advance();
                self.admit(ctx, next.dir, &mut p);
                None
            }
            Dir::Reference(r) => {
                let a = r.arrive(now);
                if let Some((n, at)) = a.next {
                    ctx.q.push(at, Event::Arrive { dir, n });
                }
                // (retries, link RTO, report delay) if the ARQ reports it
                let report = a.retries.and_then(|(k, tx)| {
                    let arq = r.arq().filter(|q| q.reports(k))?;
                    Some((k, arq.link_rto(k, tx), arq.report_delay()))
                });
                let p = *self.arena.get(a.item);
                if a.lost {
                    self.arena.free(a.item);
                    self.drop_packet(ctx, &p, dir, DropCause::Outage, now, Row::Current);
                    return None;
                }
                if let Some(r) = report.filter(|_| p.to_receiver) {
                    self.report(&p, dir, now, r, false);
                }
                let next = self.next_step(p.step);
                if next.dir == Step::END {
                    self.live -= 1;
                    return Some(Delivery::Slot(a.item));
                }
                self.arena.free(a.item);
                let mut p = p;
                p.advance();
                self.admit(ctx, next.dir, &mut p);
                None
            }
        }
    }

    /// The packet [`Network::on_arrive`] handed out for delivery.
    #[inline]
    pub fn delivered(&self, d: Delivery) -> &Packet {
        match d {
            Delivery::Parcel(dir) => match &self.dirs[dir as usize] {
                Dir::Virtual(v) => v.parcels.front().expect("the packet being delivered"),
                Dir::Reference(_) => unreachable!("a parcel is in virtual time"),
            },
            Delivery::Slot(id) => self.arena.get(id),
        }
    }

    /// Forgets a delivered packet (before anything else enters the network).
    #[inline]
    pub fn release(&mut self, d: Delivery) {
        match d {
            Delivery::Parcel(dir) => {
                if let Dir::Virtual(v) = &mut self.dirs[dir as usize] {
                    v.parcels.pop_front();
                }
            }
            Delivery::Slot(id) => self.arena.free(id),
        }
    }

    #[inline]
    fn drop_packet<O: Observer>(
        &mut self,
        ctx: &mut Ctx<O>,
        p: &Packet,
        dir: DirId,
        cause: DropCause,
        at: Instant,
        row: Row,
    ) {
        self.live -= 1;
        ctx.obs.dropped(p, dir, cause, at, row);
    }

    /// Queues a link-layer report on data packet `p` at `now`: `(retries,
    /// link RTO, report delay)`; `dropped` for a frame given up.
    fn report(
        &mut self,
        p: &Packet,
        dir: DirId,
        now: Instant,
        (retries, link_rto, delay): (u32, wavelab_tcp::Duration, wavelab_tcp::Duration),
        dropped: bool,
    ) {
        self.reports.push(Report {
            flow: p.flow,
            dir,
            at: now + delay,
            report: LinkReport {
                seq: p.seg.seq,
                offset: 0,
                retries,
                link_rto,
            },
            dropped,
        });
    }

    /// Takes the link-layer reports made since the last call.
    #[inline]
    pub fn take_reports(&mut self) -> Option<std::vec::Drain<'_, Report>> {
        (!self.reports.is_empty()).then(|| self.reports.drain(..))
    }

    // ----- observation ---------------------------------------------------------

    /// Brings the virtual-time directions' counters and queues to `now`, and
    /// forgets the packets entirely behind it.
    pub fn sync(&mut self, now: Instant) {
        for d in &mut self.dirs {
            if let Dir::Virtual(v) = d {
                v.link.sync(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavelab_model::link::{LossModel, Outages};
    use wavelab_model::rng::{Rng, Stream};
    use wavelab_model::scenario::{Direction, LossSpec, QueueLimit};
    use wavelab_tcp::{Duration, Rate, Segment, TxKind};

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// Hears nothing.
    struct Deaf;
    impl Observer for Deaf {
        fn wants_tx(&self) -> bool {
            false
        }
        fn tx_end(&mut self, _: u128, _: DirId, _: &Packet) {}
        fn dropped(&mut self, _: &Packet, _: DirId, _: DropCause, _: Instant, _: Row) {}
    }

    /// One flow over one link; its data crosses direction 0.
    fn net(limit: QueueLimit, changes: Option<Vec<(Instant, ScheduleEntry)>>) -> Network {
        let dir = || {
            let settings = Settings {
                rate: Rate::from_mbps(1),
                delay: ms(240),
                limit,
            };
            let loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
            match changes.clone() {
                Some(c) => Dir::timed(Link::new(settings, loss, Outages::default(), c)),
                None => Dir::stepped(Stepped::new(settings, loss, Outages::default())),
            }
        };
        Network::new(vec![dir(), dir()], vec![[vec![vec![0]], vec![vec![1]]]])
    }

    fn packet(offset: u64, size: u32) -> Packet {
        Packet {
            flow: 0,
            to_receiver: true,
            hop: 0,
            step: 0,
            n: 0,
            size,
            arrival: Instant::ZERO,
            kind: TxKind::Data,
            offset,
            seg: Segment::default(),
            ecn: Ecn::NotEct,
        }
    }

    /// Injects packets `(at, size)` (in time order) and runs the network:
    /// returns the arrivals `(time, offset)` at the far end and the
    /// direction's counters.
    fn run(net: &mut Network, sends: &[(Instant, u32)]) -> (Vec<(Instant, u64)>, LinkCounters) {
        let mut q = EventQueue::default();
        let mut deaf = Deaf;
        let mut out = vec![];
        let mut sends = sends.iter().enumerate().peekable();
        loop {
            let next_send = sends.peek().map(|(_, (at, _))| *at);
            let next_event = q.peek_time();
            let send_first = match (next_send, next_event) {
                (Some(s), Some(e)) => s <= e,
                (s, _) => s.is_some(),
            };
            match (send_first, next_event) {
                (true, _) => {
                    let (i, &(at, size)) = sends.next().expect("peeked");
                    let mut ctx = Ctx::new(&mut q, at, &mut deaf);
                    net.inject(&mut ctx, &mut packet(i as u64, size));
                }
                (false, Some(_)) => {
                    let (now, ev, key) = q.pop_until(Instant::MAX).expect("an event");
                    let mut ctx = Ctx::new(&mut q, now, &mut deaf);
                    match ev {
                        Event::TxDone { dir, .. } => net.on_tx_done(&mut ctx, key, dir),
                        Event::Arrive { dir, .. } => {
                            if let Some(d) = net.on_arrive(&mut ctx, dir) {
                                out.push((now, net.delivered(d).offset));
                                net.release(d);
                            }
                        }
                        other => panic!("unexpected {other:?}"),
                    }
                }
                (false, None) => break,
            }
        }
        net.sync(Instant::MAX);
        (out, net.dirs[0].counters().clone())
    }

    #[test]
    fn drop_tail_counts_packets_or_bytes_in_both_modes() {
        for changes in [None, Some(vec![])] {
            // one in service, two waiting, the fourth is dropped
            let mut n = net(QueueLimit::Packets(2), changes.clone());
            let (out, c) = run(&mut n, &[(t(0), 1500); 4]);
            assert_eq!(out.iter().map(|o| o.1).collect::<Vec<_>>(), [0, 1, 2]);
            assert_eq!((c.arrived, c.dropped[DropCause::Queue as usize]), (4, 1));
            assert_eq!((c.max_queue_packets, c.max_queue_bytes), (2, 3000));
            // 3000 bytes of queue: a 1501-byte packet does not fit, a 1500 one does
            let mut n = net(QueueLimit::Bytes(3000), changes);
            let sends = [(t(0), 1500), (t(0), 1500), (t(0), 1501), (t(0), 1500)];
            let (out, c) = run(&mut n, &sends);
            assert_eq!(out.iter().map(|o| o.1).collect::<Vec<_>>(), [0, 1, 3]);
            assert_eq!(c.dropped[DropCause::Queue as usize], 1);
            // 1500 bytes at 1 Mbit/s take 12 ms: back to back after 240 ms
            assert_eq!(out[0].0, t(252));
            assert_eq!(out[1].0, t(264));
        }
    }

    #[test]
    fn pipe_stays_fifo_when_the_delay_drops() {
        let change = ScheduleEntry {
            at: ms(2),
            direction: Direction::Both,
            rate: None,
            delay: Some(ms(30)),
            queue: None,
            loss: None,
        };
        // virtual time: the first packet leaves before the change (240 ms of
        // delay), the second after it (30 ms) but may not overtake
        let mut n = net(QueueLimit::Packets(10), Some(vec![(t(2), change)]));
        let (out, _) = run(&mut n, &[(t(0), 125), (t(1), 125), (t(400), 125)]);
        assert_eq!(out, [(t(241), 0), (t(241), 1), (t(431), 2)]);
    }
}
