//! The network: what happens to packets between the endpoints.
//!
//! A link direction runs in one of two modes, which give bit-identical
//! results (the engine's canonical event order, [`crate::engine`], is what
//! makes that possible):
//!
//! * **reference**: a drop-tail queue served at the link rate with one
//!   pending end-of-serialisation event, then a first-in first-out pipe with
//!   one pending arrival event, as a textbook simulator does it;
//! * **virtual time**: the direction is a first-in first-out server whose
//!   schedule is computed when a packet is admitted: start = max(admission,
//!   previous finish), finish = start + size / rate, arrival = max(finish +
//!   delay, previous arrival). Rate, delay, queue limit and loss come from
//!   the direction's timeline of scheduled changes, evaluated at the instant
//!   the reference mode would apply them; the random loss of each packet is
//!   drawn in service order, as in reference mode. Nothing is scheduled for a
//!   packet that has more links to cross: when the next direction's only
//!   source is this one, the packet is admitted there at once, at its future
//!   arrival time (all packets that reach that direction before it came the
//!   same way and were admitted before it). An event is scheduled only where
//!   something else can interleave: at the destination endpoint, or at a
//!   direction fed by several sources. Counters and queue lengths are read
//!   "as of now" through cursors that follow the clock.
//!
//! Links with a handover at `"steady"` (decided during the run) run in
//! reference mode, as does everything in [`Simulation::new_reference`],
//! the oracle the tests compare the virtual-time mode against.
//!
//! [`Simulation::new_reference`]: crate::Simulation::new_reference

use crate::capture::{Capture, TapPoint};
use crate::engine::{key, Event, EventQueue};
use crate::link::{DropCause, LinkCounters, LossModel, Outages};
use crate::packet::{Arena, Packet, PacketId};
use crate::ring::Ring;
use crate::scenario::{QueueLimit, ScheduleEntry};
use crate::topology::DirId;
use crate::trace::{event, kind_code, PacketEvent, PacketLog};
use std::collections::VecDeque;
use wavelab_tcp::{Duration, Instant, Rate};

/// Where an engine call comes from: the event being processed (its
/// canonical key and how many packet-log rows it wrote so far) and the clock.
pub(crate) struct Ctx<'a> {
    pub q: &'a mut EventQueue,
    pub log: &'a mut PacketLog,
    pub now: Instant,
    pub key: u128,
    pub rows: &'a mut u32,
    /// Packet captures, told of every end of serialisation.
    pub captures: &'a mut [Capture],
}

/// Which event a packet-log row belongs to.
#[derive(Clone, Copy)]
enum Row {
    /// The event being processed.
    Current,
    /// An event the virtual-time mode computes without scheduling it (its
    /// key is computed only if the row is written).
    Virtual(Instant, Event),
}

/// A direction's settings at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub rate: Rate,
    pub delay: Duration,
    pub limit: QueueLimit,
}

impl Settings {
    /// Applies the settings a change sets.
    fn apply(&mut self, e: &ScheduleEntry) {
        self.rate = e.rate.unwrap_or(self.rate);
        self.delay = e.delay.unwrap_or(self.delay);
        self.limit = e.queue.unwrap_or(self.limit);
    }
}

/// The scheduled changes of a direction, read by one cursor per setting;
/// each cursor moves forward with the (monotone) instants at which its
/// setting is needed: the rate at the start of serialisation, the queue limit
/// at admission, the delay and the loss model at the end of serialisation.
#[derive(Debug, Default)]
struct Timeline {
    changes: Vec<(Instant, ScheduleEntry)>,
    rate: Cursor<Rate>,
    delay: Cursor<Duration>,
    limit: Cursor<QueueLimit>,
    loss: Cursor<()>,
}

/// One setting's cursor along a timeline: the value in effect, and the
/// instant of the next change still to read (so that a read before it costs
/// one comparison).
#[derive(Debug, Default)]
struct Cursor<T> {
    value: T,
    index: usize,
    next: Instant,
}

/// Running totals along a virtual-time direction's fifo, from the start of
/// the run up to and including one entry: the counters as of any instant are
/// read off the entry just before the clock's cursor, so moving the clock
/// costs a binary search, not a pass over the packets. (Losses, rare, are
/// listed apart: [`Loss`].)
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    /// Bytes admitted.
    bytes: u64,
    /// The largest queue (packets, bytes) right after an admission.
    max_queue: (u32, u32),
}

/// One packet on a virtual-time direction.
#[derive(Clone, Copy, Debug)]
struct Entry {
    admit: Instant,
    start: Instant,
    finish: Instant,
    /// Arrival at the far end; for a random loss, the previous arrival (so
    /// that arrivals stay in order along the fifo).
    arrival: Instant,
    /// Totals up to and including this packet.
    totals: Totals,
}

/// A packet of a virtual-time direction lost after admission.
#[derive(Clone, Copy, Debug)]
struct Loss {
    /// Its entry's absolute index.
    index: u64,
    size: u32,
    cause: DropCause,
}

/// The clock's side of the losses: how many of the listed losses the finish
/// and arrival cursors have passed, and what the arrival cursor passed.
#[derive(Debug, Default)]
struct LossCursors {
    finish: u64,
    arrive: u64,
    lost_packets: u64,
    lost_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Arrives,
    RandomLoss,
    OutageLoss,
}

/// Where the clock is along a virtual-time direction's fifo: absolute
/// indices of the first entry not yet admitted, started, finished and
/// arrived as of the last sync (each stage's times are in order along the
/// fifo, so each cursor only moves forward).
#[derive(Debug, Default)]
struct Cursors {
    admit: u64,
    start: u64,
    finish: u64,
    arrive: u64,
}

/// A virtual-time direction's state.
#[derive(Debug, Default)]
struct Virtual {
    timeline: Timeline,
    /// Packets offered (queue drops included): the next admission number.
    offered: u64,
    /// Packets admitted and not yet entirely past the clock, by absolute
    /// index (every entry ever pushed has one).
    fifo: Ring<Entry>,
    /// Totals up to the entry before the first one kept (those of the last entry
    /// forgotten).
    forgotten: Totals,
    /// Totals up to the last entry pushed.
    totals: Totals,
    /// Losses after admission, by entry, not yet passed by both the finish
    /// and the arrival cursors; `lost_base` is the absolute index of
    /// `losses[0]` among all losses.
    losses: VecDeque<Loss>,
    lost_base: u64,
    seen_losses: LossCursors,
    /// Admission side: the first entry (absolute) not started at the latest
    /// admission instant.
    started: u64,
    /// Start, finish and arrival of the last entry pushed.
    last_start: Instant,
    last_finish: Instant,
    last_arrival: Instant,
    /// The packets that need an arrival event (at the endpoint, or at a
    /// direction fed by several sources), in arrival order.
    parcels: Ring<Packet>,
    /// Queue drops at admission instants not yet reached by the clock.
    drops: VecDeque<Instant>,
    /// The clock's side.
    seen: Cursors,
    /// The last serialisation time computed, by packet size.
    tx_cache: [(u32, Rate, Duration); 2],
}

/// A reference-mode direction's state.
#[derive(Debug, Default)]
struct Reference {
    queue: VecDeque<(PacketId, u32)>,
    queued_bytes: u64,
    busy: Option<PacketId>,
    pipe: VecDeque<PacketId>,
    last_arrival: Instant,
}

/// One link direction.
#[derive(Debug)]
pub(crate) struct Dir {
    /// Settings (in reference mode: current; in virtual-time mode: initial).
    settings: Settings,
    loss: LossModel,
    pub outages: Outages,
    /// Counters (virtual-time mode: as of the last [`Net::sync`]).
    pub counters: LinkCounters,
    virt: Option<Box<Virtual>>,
    reference: Reference,
}

/// The links and the packets on them.
#[derive(Debug)]
pub(crate) struct Net {
    pub dirs: Vec<Dir>,
    /// Packets in reference-mode directions (virtual-time directions keep
    /// theirs in their own fifos, in arrival order).
    pub arena: Arena,
    /// Packets in the network now, and the most at once.
    live: u64,
    pub peak: u64,
    /// The routes, flat: per flow, its data route then its ACK route, each
    /// followed by an end marker.
    steps: Vec<Step>,
    /// Per flow: where its data route and its ACK route start in `steps`.
    route_at: Vec<[u32; 2]>,
    /// Per flow: whether its packets are logged.
    logged: Vec<bool>,
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

/// `x` as a `u32`, saturating (queue sizes beyond 4 G are not modelled).
fn sat32(x: u64) -> u32 {
    x.min(u32::MAX as u64) as u32
}

fn tx_time(rate: Rate, size: u32) -> Duration {
    rate.tx_time(size as u64)
}

impl Dir {
    /// A direction with these initial settings, loss model and outages, in
    /// virtual-time mode with `changes` (sorted by time) if `changes` is
    /// `Some`, else in reference mode.
    pub fn new(
        settings: Settings,
        loss: LossModel,
        outages: Outages,
        changes: Option<Vec<(Instant, ScheduleEntry)>>,
    ) -> Self {
        Dir {
            settings,
            loss,
            outages,
            counters: LinkCounters::default(),
            virt: changes.map(|changes| {
                Box::new(Virtual {
                    timeline: Timeline::new(changes, settings),
                    ..Virtual::default()
                })
            }),
            reference: Reference::default(),
        }
    }

    /// True in virtual-time mode.
    pub fn is_virtual(&self) -> bool {
        self.virt.is_some()
    }

    /// The settings in effect at `now`.
    pub fn settings_at(&self, now: Instant) -> Settings {
        let mut s = self.settings;
        if let Some(v) = &self.virt {
            for (t, e) in &v.timeline.changes {
                if *t > now {
                    break;
                }
                s.apply(e);
            }
        }
        s
    }

    /// Packets and bytes waiting in the queue (as of the last sync).
    pub fn queued(&self) -> (u64, u64) {
        match &self.virt {
            Some(v) => v.waiting(),
            None => (
                self.reference.queue.len() as u64,
                self.reference.queued_bytes,
            ),
        }
    }

    /// Applies a change now (reference mode; virtual-time directions read
    /// their scheduled changes from their timeline).
    fn apply(&mut self, e: &ScheduleEntry) {
        if self.virt.is_some() {
            return;
        }
        self.settings.apply(e);
        if let Some(l) = e.loss {
            self.loss.set(l);
        }
    }
}

impl Net {
    /// A network of `dirs`, for flows with these routes and log flags.
    pub fn new(dirs: Vec<Dir>, routes: Vec<[Vec<DirId>; 2]>, logged: Vec<bool>) -> Self {
        // the sources of each direction: upstream directions, or endpoints
        #[derive(Clone, Copy, PartialEq)]
        enum Source {
            None,
            One(DirId),
            Many,
        }
        let mut sources = vec![Source::None; dirs.len()];
        for route in routes.iter().flatten() {
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
        let mut route_at = vec![];
        for flow in &routes {
            let mut at = [0; 2];
            for (side, route) in flow.iter().enumerate() {
                at[side] = steps.len() as u32;
                for (i, &dir) in route.iter().enumerate() {
                    let merged = i > 0 && merge_from[dir as usize] == Some(route[i - 1]);
                    steps.push(Step { dir, merged });
                }
                steps.push(Step {
                    dir: Step::END,
                    merged: false,
                });
            }
            route_at.push(at);
        }
        Net {
            dirs,
            arena: Arena::default(),
            live: 0,
            peak: 0,
            steps,
            route_at,
            logged,
        }
    }

    /// The most fifo entries each virtual-time direction ever held at once
    /// (rounded up to a power of two).
    #[cfg(test)]
    pub fn fifo_capacities(&self) -> Vec<usize> {
        let virt = self.dirs.iter().filter_map(|d| d.virt.as_ref());
        virt.map(|v| v.fifo.capacity()).collect()
    }

    /// Packet transmissions on links so far (as of the last sync).
    pub fn hops(&self) -> u64 {
        self.dirs.iter().map(|d| d.counters.sent_packets).sum()
    }

    /// Sends a packet an endpoint emitted now into its first link direction.
    pub fn inject(&mut self, ctx: &mut Ctx, p: &mut Packet) {
        p.step = self.route_at[p.flow as usize][!p.to_receiver as usize];
        let first = self.steps[p.step as usize].dir;
        self.live += 1;
        self.peak = self.peak.max(self.live);
        self.admit(ctx, first, p, ctx.now, Row::Current);
    }

    /// The step after step `step` (the one a packet is on): its next
    /// direction, or [`Step::END`].
    #[inline]
    fn next_step(&self, step: u32) -> Step {
        self.steps[step as usize + 1]
    }

    /// Applies a scheduled or decided change to link `link`'s directions.
    pub fn apply(&mut self, link: usize, e: &ScheduleEntry) {
        for k in (0..2).filter(|&k| e.direction.covers(k)) {
            self.dirs[2 * link + k].apply(e);
        }
    }

    // ----- admission ---------------------------------------------------------

    /// Offers packet `p` to direction `dir` at `at` (now, or for a merged
    /// virtual-time direction the packet's arrival from its source).
    fn admit(&mut self, ctx: &mut Ctx, dir: DirId, p: &mut Packet, at: Instant, row: Row) {
        let d = &mut self.dirs[dir as usize];
        let n = d.counters.arrived;
        if d.virt.is_none() {
            d.counters.arrived += 1;
            p.n = n;
            let size = p.size;
            let r = &mut d.reference;
            if r.busy.is_none() {
                let id = self.arena.alloc(*p);
                r.busy = Some(id);
                self.start_tx(ctx, dir, id);
                return;
            }
            let fits = match d.settings.limit {
                QueueLimit::Packets(n) => r.queue.len() < n as usize,
                QueueLimit::Bytes(b) => r.queued_bytes + size as u64 <= b,
            };
            if !fits {
                d.counters.dropped[DropCause::Queue as usize] += 1;
                self.drop_packet(ctx, p, dir, DropCause::Queue, at, row);
                return;
            }
            let id = self.arena.alloc(*p);
            r.queue.push_back((id, size));
            r.queued_bytes += size as u64;
            let c = &mut d.counters;
            c.max_queue_packets = c.max_queue_packets.max(r.queue.len() as u64);
            c.max_queue_bytes = c.max_queue_bytes.max(r.queued_bytes);
            return;
        }
        self.admit_virtual(ctx, dir, p, at, row);
    }

    /// Admits packet `p` to virtual-time direction `dir` at `a`, and on to
    /// the next directions while they are merged.
    #[inline]
    fn admit_virtual(
        &mut self,
        ctx: &mut Ctx,
        mut dir: DirId,
        p: &mut Packet,
        mut a: Instant,
        mut row: Row,
    ) {
        loop {
            let d = &mut self.dirs[dir as usize];
            let v = d.virt.as_mut().expect("virtual-time direction");
            // the admission number counts every offer, drops included, as the
            // reference mode's counter does
            let n = v.offered;
            v.offered += 1;
            p.n = n;
            let size = p.size;
            // what has started by `a` (admissions come in time order)
            if v.last_start <= a {
                // all have (an idle link's common case: no entry is read)
                v.started = v.fifo.end();
            }
            while v.started < v.fifo.end() && v.entry(v.started).start <= a {
                v.started += 1;
            }
            let busy = v.last_finish > a;
            let mut totals = v.totals;
            if busy {
                let limit = v.timeline.limit(a);
                let waiting = v.fifo.end() - v.started;
                let waiting_bytes = v.totals.bytes - v.totals_before(v.started).bytes;
                let fits = match limit {
                    QueueLimit::Packets(k) => waiting < k as u64,
                    QueueLimit::Bytes(b) => waiting_bytes + size as u64 <= b,
                };
                if !fits {
                    v.drops.push_back(a);
                    self.drop_packet(ctx, p, dir, DropCause::Queue, a, row);
                    return;
                }
                let m = &mut totals.max_queue;
                m.0 = m.0.max(sat32(waiting + 1));
                m.1 = m.1.max(sat32(waiting_bytes + size as u64));
            }
            let start = if busy { v.last_finish } else { a };
            let rate = v.timeline.rate(start);
            let finish = start + v.tx(rate, size);
            v.last_start = start;
            v.last_finish = finish;
            v.timeline.loss(&mut d.loss, finish);
            totals.bytes += size as u64;
            let (fate, arrival) = if d.loss.lose() {
                v.lost(size, DropCause::Random);
                (Fate::RandomLoss, v.last_arrival)
            } else {
                let delay = v.timeline.delay(finish);
                let arrival = (finish + delay).max(v.last_arrival);
                v.last_arrival = arrival;
                if !d.outages.is_empty() && d.outages.overlaps(start, arrival) {
                    v.lost(size, DropCause::Outage);
                    (Fate::OutageLoss, arrival)
                } else {
                    (Fate::Arrives, arrival)
                }
            };
            v.fifo.push(Entry {
                admit: a,
                start,
                finish,
                arrival,
                totals,
            });
            v.totals = totals;
            if !ctx.captures.is_empty() {
                let k = key(finish, &Event::TxDone { dir, n });
                for c in ctx.captures.iter_mut() {
                    c.record(k, TapPoint::LinkTx(dir), p);
                }
            }
            match fate {
                Fate::RandomLoss => {
                    let row = Row::Virtual(finish, Event::TxDone { dir, n });
                    self.drop_packet(ctx, p, dir, DropCause::Random, finish, row);
                    return;
                }
                Fate::OutageLoss => {
                    let row = Row::Virtual(arrival, Event::Arrive { dir, n });
                    self.drop_packet(ctx, p, dir, DropCause::Outage, arrival, row);
                    return;
                }
                Fate::Arrives => {}
            }
            let next = self.next_step(p.step);
            if next.merged {
                // on at once to the next direction, at the arrival time
                p.advance();
                row = Row::Virtual(arrival, Event::Arrive { dir, n });
                dir = next.dir;
                a = arrival;
                continue;
            }
            let v = self.dirs[dir as usize].virt.as_mut().expect("virtual");
            p.arrival = arrival;
            v.parcels.push(*p);
            if v.parcels.len() == 1 {
                ctx.q.push(arrival, Event::Arrive { dir, n });
            }
            return;
        }
    }

    // ----- reference mode ------------------------------------------------------

    fn start_tx(&mut self, ctx: &mut Ctx, dir: DirId, id: PacketId) {
        let now = ctx.now;
        let d = &self.dirs[dir as usize];
        let p = self.arena.get_mut(id);
        p.tx_start = now;
        let done = now + tx_time(d.settings.rate, p.size);
        ctx.q.push(done, Event::TxDone { dir, n: p.n });
    }

    /// A reference-mode direction finished serialising its packet.
    pub fn on_tx_done(&mut self, ctx: &mut Ctx, dir: DirId) {
        let d = &mut self.dirs[dir as usize];
        let r = &mut d.reference;
        let id = r.busy.take().expect("a packet is in service");
        let size = self.arena.get(id).size as u64;
        d.counters.sent_packets += 1;
        d.counters.sent_bytes += size;
        for c in ctx.captures.iter_mut() {
            c.record(ctx.key, TapPoint::LinkTx(dir), self.arena.get(id));
        }
        if d.loss.lose() {
            d.counters.dropped[DropCause::Random as usize] += 1;
            let p = *self.arena.get(id);
            self.arena.free(id);
            self.drop_packet(ctx, &p, dir, DropCause::Random, ctx.now, Row::Current);
        } else {
            let was_empty = r.pipe.is_empty();
            let arrival = (ctx.now + d.settings.delay).max(r.last_arrival);
            r.last_arrival = arrival;
            r.pipe.push_back(id);
            let p = self.arena.get_mut(id);
            p.arrival = arrival;
            if was_empty {
                ctx.q.push(arrival, Event::Arrive { dir, n: p.n });
            }
        }
        let r = &mut self.dirs[dir as usize].reference;
        if let Some((next, size)) = r.queue.pop_front() {
            r.queued_bytes -= size as u64;
            r.busy = Some(next);
            self.start_tx(ctx, dir, next);
        }
    }

    /// A packet reached the far end of `dir`: it goes on to its next
    /// direction, or is handed out for delivery to its endpoint, where it
    /// waits (read it with [`Net::delivered`]) until [`Net::release`].
    pub fn on_arrive(&mut self, ctx: &mut Ctx, dir: DirId) -> Option<Delivery> {
        let d = &mut self.dirs[dir as usize];
        if let Some(v) = d.virt.as_mut() {
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
            let v = self.dirs[dir as usize].virt.as_mut().expect("virtual");
            let mut p = v.parcels.pop_front().expect("an arrival is pending");
            p.advance();
            self.admit(ctx, next.dir, &mut p, ctx.now, Row::Current);
            return None;
        }
        let r = &mut d.reference;
        let id = r.pipe.pop_front().expect("a packet is propagating");
        if let Some(&next) = r.pipe.front() {
            let p = self.arena.get(next);
            ctx.q.push(p.arrival, Event::Arrive { dir, n: p.n });
        }
        let p = *self.arena.get(id);
        if d.outages.overlaps(p.tx_start, ctx.now) {
            self.arena.free(id);
            d.counters.dropped[DropCause::Outage as usize] += 1;
            self.drop_packet(ctx, &p, dir, DropCause::Outage, ctx.now, Row::Current);
            return None;
        }
        d.counters.delivered_packets += 1;
        d.counters.delivered_bytes += p.size as u64;
        let next = self.next_step(p.step);
        if next.dir == Step::END {
            self.live -= 1;
            return Some(Delivery::Slot(id));
        }
        self.arena.free(id);
        let mut p = p;
        p.advance();
        self.admit(ctx, next.dir, &mut p, ctx.now, Row::Current);
        None
    }

    /// The packet [`Net::on_arrive`] handed out for delivery.
    #[inline]
    pub fn delivered(&self, d: Delivery) -> &Packet {
        match d {
            Delivery::Parcel(dir) => {
                let v = self.dirs[dir as usize].virt.as_ref().expect("virtual");
                v.parcels.front().expect("the packet being delivered")
            }
            Delivery::Slot(id) => self.arena.get(id),
        }
    }

    /// Forgets a delivered packet (before anything else enters the network).
    #[inline]
    pub fn release(&mut self, d: Delivery) {
        match d {
            Delivery::Parcel(dir) => {
                let v = self.dirs[dir as usize].virt.as_mut().expect("virtual");
                v.parcels.pop_front();
            }
            Delivery::Slot(id) => self.arena.free(id),
        }
    }

    fn drop_packet(
        &mut self,
        ctx: &mut Ctx,
        p: &Packet,
        dir: DirId,
        cause: DropCause,
        at: Instant,
        row: Row,
    ) {
        self.live -= 1;
        if self.logged[p.flow as usize] {
            let e = PacketEvent {
                time: at.as_secs_f64(),
                flow: p.flow,
                event: event::DROP,
                seq: p.offset,
                len: p.seg.len,
                is_ack: !p.to_receiver,
                kind: kind_code(p.kind),
                link: dir as i64,
                cause: cause as u8,
            };
            match row {
                Row::Current => ctx.log.push_next(ctx.key, ctx.rows, e),
                Row::Virtual(at, ev) => ctx.log.push(key(at, &ev), 0, e),
            }
        }
    }

    // ----- observation ---------------------------------------------------------

    /// Brings the virtual-time directions' counters and queues to `now`, and
    /// forgets the packets entirely behind it.
    pub fn sync(&mut self, now: Instant) {
        for d in &mut self.dirs {
            if let Some(v) = d.virt.as_mut() {
                v.sync(now, &mut d.counters);
            }
        }
    }
}

impl Virtual {
    /// Serialisation time of `size` bytes at `rate`, cached by size.
    fn tx(&mut self, rate: Rate, size: u32) -> Duration {
        for &(s, r, t) in &self.tx_cache {
            if s == size && r == rate {
                return t;
            }
        }
        let t = tx_time(rate, size);
        self.tx_cache[1] = self.tx_cache[0];
        self.tx_cache[0] = (size, rate, t);
        t
    }

    fn entry(&self, abs: u64) -> &Entry {
        self.fifo.get(abs)
    }

    /// Lists the loss of the packet about to be pushed.
    fn lost(&mut self, size: u32, cause: DropCause) {
        self.losses.push_back(Loss {
            index: self.fifo.end(),
            size,
            cause,
        });
    }

    /// The totals of the entries before absolute index `abs` (which is
    /// still in the fifo, or just past its end).
    fn totals_before(&self, abs: u64) -> Totals {
        if abs == self.fifo.start() {
            self.forgotten
        } else {
            self.entry(abs - 1).totals
        }
    }

    /// Moves the clock's cursors to `now` and reads the counters off the
    /// totals they stop at; forgets the entries entirely behind it.
    fn sync(&mut self, now: Instant, c: &mut LinkCounters) {
        while self.drops.front().is_some_and(|&a| a <= now) {
            self.drops.pop_front();
            c.dropped[DropCause::Queue as usize] += 1;
        }
        // each stage's times are in order along the fifo
        let past = |f: fn(&Entry) -> Instant| self.fifo.partition_point(|e| f(e) <= now);
        let s = Cursors {
            admit: past(|e| e.admit),
            start: past(|e| e.start),
            finish: past(|e| e.finish),
            arrive: past(|e| e.arrival),
        };
        let admitted = self.totals_before(s.admit);
        c.arrived = s.admit + c.dropped[DropCause::Queue as usize];
        c.max_queue_packets = admitted.max_queue.0 as u64;
        c.max_queue_bytes = admitted.max_queue.1 as u64;
        c.sent_packets = s.finish;
        c.sent_bytes = self.totals_before(s.finish).bytes;
        let l = &mut self.seen_losses;
        let listed = |k: u64| self.losses.get((k - self.lost_base) as usize);
        while let Some(loss) = listed(l.finish).filter(|x| x.index < s.finish) {
            if loss.cause == DropCause::Random {
                c.dropped[DropCause::Random as usize] += 1;
            }
            l.finish += 1;
        }
        while let Some(loss) = listed(l.arrive).filter(|x| x.index < s.arrive) {
            if loss.cause == DropCause::Outage {
                c.dropped[DropCause::Outage as usize] += 1;
            }
            l.lost_packets += 1;
            l.lost_bytes += loss.size as u64;
            l.arrive += 1;
        }
        let (lost_packets, lost_bytes, passed) =
            (l.lost_packets, l.lost_bytes, l.finish.min(l.arrive));
        c.delivered_packets = s.arrive - lost_packets;
        c.delivered_bytes = self.totals_before(s.arrive).bytes - lost_bytes;
        if passed > self.lost_base {
            self.losses.drain(..(passed - self.lost_base) as usize);
            self.lost_base = passed;
        }
        // forget what is entirely behind the clock; it started before now, so
        // before any admission to come
        let keep_from = s.arrive.min(s.finish);
        if keep_from > self.fifo.start() {
            self.forgotten = self.totals_before(keep_from);
            self.fifo.forget_below(keep_from);
            self.started = self.started.max(keep_from);
        }
        self.seen = s;
    }

    /// Packets and bytes waiting at the last sync.
    fn waiting(&self) -> (u64, u64) {
        let s = &self.seen;
        let bytes = self.totals_before(s.admit).bytes - self.totals_before(s.start).bytes;
        (s.admit - s.start, bytes)
    }
}

impl<T: Copy> Cursor<T> {
    fn new(value: T, changes: &[(Instant, ScheduleEntry)]) -> Self {
        Cursor {
            value,
            index: 0,
            next: changes.first().map_or(Instant::MAX, |c| c.0),
        }
    }

    /// The value at `at` (not before the previous read's instant), applying
    /// with `apply` the changes up to `at` still unread.
    #[inline]
    fn at(
        &mut self,
        changes: &[(Instant, ScheduleEntry)],
        at: Instant,
        apply: impl FnMut(&mut T, &ScheduleEntry),
    ) -> T {
        if at >= self.next {
            self.advance(changes, at, apply);
        }
        self.value
    }

    #[cold]
    fn advance(
        &mut self,
        changes: &[(Instant, ScheduleEntry)],
        at: Instant,
        mut apply: impl FnMut(&mut T, &ScheduleEntry),
    ) {
        while let Some((_, e)) = changes.get(self.index).filter(|c| c.0 <= at) {
            apply(&mut self.value, e);
            self.index += 1;
        }
        self.next = changes.get(self.index).map_or(Instant::MAX, |c| c.0);
    }
}

impl Timeline {
    fn new(changes: Vec<(Instant, ScheduleEntry)>, initial: Settings) -> Self {
        Timeline {
            rate: Cursor::new(initial.rate, &changes),
            delay: Cursor::new(initial.delay, &changes),
            limit: Cursor::new(initial.limit, &changes),
            loss: Cursor::new((), &changes),
            changes,
        }
    }
    #[inline]
    fn rate(&mut self, at: Instant) -> Rate {
        self.rate
            .at(&self.changes, at, |v, e| *v = e.rate.unwrap_or(*v))
    }
    #[inline]
    fn delay(&mut self, at: Instant) -> Duration {
        self.delay
            .at(&self.changes, at, |v, e| *v = e.delay.unwrap_or(*v))
    }
    #[inline]
    fn limit(&mut self, at: Instant) -> QueueLimit {
        self.limit
            .at(&self.changes, at, |v, e| *v = e.queue.unwrap_or(*v))
    }
    /// Applies to `loss` every loss change up to `at`, in order.
    #[inline]
    fn loss(&mut self, loss: &mut LossModel, at: Instant) {
        self.loss.at(&self.changes, at, |_, e| {
            if let Some(l) = e.loss {
                loss.set(l);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Rng, Stream};
    use crate::scenario::{Direction, LossSpec};
    use wavelab_tcp::{Segment, TxKind};

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn ms(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// One flow over one link; its data crosses direction 0.
    fn net(limit: QueueLimit, changes: Option<Vec<(Instant, ScheduleEntry)>>) -> Net {
        let dir = || {
            let settings = Settings {
                rate: Rate::from_mbps(1),
                delay: ms(240),
                limit,
            };
            let loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
            Dir::new(settings, loss, Outages::default(), changes.clone())
        };
        Net::new(vec![dir(), dir()], vec![[vec![0], vec![1]]], vec![true])
    }

    fn packet(offset: u64, size: u32) -> Packet {
        Packet {
            flow: 0,
            to_receiver: true,
            hop: 0,
            step: 0,
            n: 0,
            size,
            tx_start: Instant::ZERO,
            arrival: Instant::ZERO,
            kind: TxKind::Data,
            offset,
            seg: Segment::default(),
        }
    }

    /// Injects packets `(at, size)` (in time order) and runs the network:
    /// returns the arrivals `(time, offset)` at the far end and the
    /// direction's counters.
    fn run(net: &mut Net, sends: &[(Instant, u32)]) -> (Vec<(Instant, u64)>, LinkCounters) {
        let mut q = EventQueue::default();
        let mut log = PacketLog::default();
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
                    let mut rows = 0;
                    let mut ctx = Ctx {
                        q: &mut q,
                        log: &mut log,
                        now: at,
                        key: 0,
                        rows: &mut rows,
                        captures: &mut [],
                    };
                    net.inject(&mut ctx, &mut packet(i as u64, size));
                }
                (false, Some(_)) => {
                    let (now, ev, key) = q.pop_until(Instant::MAX).expect("an event");
                    let mut rows = 0;
                    let mut ctx = Ctx {
                        q: &mut q,
                        log: &mut log,
                        now,
                        key,
                        rows: &mut rows,
                        captures: &mut [],
                    };
                    match ev {
                        Event::TxDone { dir, .. } => net.on_tx_done(&mut ctx, dir),
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
        (out, net.dirs[0].counters.clone())
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
