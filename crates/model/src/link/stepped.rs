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
//!
//! With a queue discipline ([`Stepped::with_qdisc`]) the discipline holds the
//! waiting packets: it decides at the entrance and at the head which packet
//! is served next, which are dropped ([`Stepped::take_discarded`]) and which
//! are marked CE ([`Finished::marked`]).
//!
//! With link-layer ARQ ([`Stepped::with_arq`]) a frame's attempts are drawn
//! when its first attempt starts. In order, its retransmissions occupy the
//! server (its serialisation ends after the last attempt); out of order, the
//! server is free after the first attempt and the retransmissions delay the
//! frame alone, which the frames behind it may pass in the pipe.

use super::arq::{Arq, Attempts};
use super::cellreplay::{CellReplay, Replayed};
use super::measured::Measured;
use super::qdisc::{self, Ecn, Enqueued, Metrics, Qdisc, QdiscSpec, Queued};
use super::trace::Opportunities;
use super::{tx_time, DropCause, LinkCounters, LossModel, Outages, Settings};
use crate::histogram::Histogram;
use crate::link::{QueueLimit, ScheduleEntry};
use crate::rng::Rng;
use std::collections::VecDeque;
use wavelab_tcp::{Duration, Instant};

/// A packet on the direction: the caller's handle, its admission number and
/// its size.
#[derive(Clone, Copy, Debug)]
struct Held<T> {
    item: T,
    n: u64,
    size: u32,
    /// With ARQ, once its service started: its attempts, and the
    /// serialisation time of one.
    attempts: Attempts,
    tx: Duration,
    /// When it was offered.
    at: Instant,
    /// With CellReplay: when it reaches the far end (decided at the offer).
    due: Instant,
}

/// A packet held by a queue discipline: the packet, its ECN field and its
/// flow's key.
#[derive(Clone, Copy, Debug)]
struct Aqm<T> {
    held: Held<T>,
    ecn: Ecn,
    key: u64,
    marked: bool,
}

impl<T> Queued for Aqm<T> {
    fn size(&self) -> u32 {
        self.held.size
    }
    fn ecn(&self) -> Ecn {
        self.ecn
    }
    fn set_ce(&mut self) {
        self.ecn = Ecn::Ce;
        self.marked = true;
    }
    fn flow_key(&self) -> u64 {
        self.key
    }
    fn enqueued(&self) -> Instant {
        self.held.at
    }
}

/// A direction's queue discipline and what it gave back.
#[derive(Clone, Debug)]
struct Discipline<T> {
    qdisc: Qdisc<Aqm<T>>,
    /// Packets it dropped, not yet taken by the caller.
    discarded: Vec<(T, DropCause)>,
    scratch: qdisc::Dropped<Aqm<T>>,
    /// The packet in service was marked CE by it.
    busy_marked: bool,
}

/// A packet in the pipe.
#[derive(Clone, Copy, Debug)]
struct Flying<T> {
    held: Held<T>,
    /// Start of its serialisation.
    start: Instant,
    arrival: Instant,
    /// True once an arrival event is pending for it (always true of the
    /// head of the pipe).
    scheduled: bool,
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
    /// With ARQ: the retransmissions it took and its serialisation time.
    pub retries: Option<(u32, Duration)>,
    /// The queue discipline set CE on it (the caller sets CE in its
    /// packet's IP header).
    pub marked: bool,
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
    /// With ARQ: the retransmissions it needed and its serialisation time.
    pub retries: Option<(u32, Duration)>,
}

/// One link direction in the stepped model, over packets the caller refers
/// to by a handle `T`.
#[derive(Clone, Debug)]
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
    arq: Option<Arq>,
    trace: Option<Opportunities>,
    /// CellReplay's replay: it decides each packet's arrival at its offer.
    cellreplay: Option<Box<CellReplay>>,
    /// How long each packet that started its service waited in the queue.
    waits: Histogram,
    measured: Option<Box<Measured>>,
    /// Packets may overtake each other in the pipe when the delay drops.
    reorder: bool,
    /// A queue discipline other than drop-tail.
    aqm: Option<Box<Discipline<T>>>,
    /// Why the last refused packet was refused.
    last_refusal: DropCause,
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
            arq: None,
            trace: None,
            cellreplay: None,
            waits: Histogram::default(),
            measured: None,
            reorder: false,
            aqm: None,
            last_refusal: DropCause::Queue,
        }
    }

    /// The same direction with the queue discipline `spec` (drop-tail
    /// changes nothing), drawing its random numbers from `rng`.
    pub fn with_qdisc(mut self, spec: &QdiscSpec, rng: Rng) -> Self {
        self.aqm = Qdisc::new(spec, rng).map(|qdisc| {
            Box::new(Discipline {
                qdisc,
                discarded: Vec::new(),
                scratch: Vec::new(),
                busy_marked: false,
            })
        });
        self
    }

    /// True if a queue discipline other than drop-tail runs it.
    pub fn has_qdisc(&self) -> bool {
        self.aqm.is_some()
    }

    /// The packets the queue discipline dropped since the last call, with
    /// why (the caller drops them: they were not refused at the offer).
    pub fn take_discarded(&mut self) -> impl Iterator<Item = (T, DropCause)> + '_ {
        self.aqm
            .as_mut()
            .map(|a| a.discarded.drain(..))
            .into_iter()
            .flatten()
    }

    /// The queue discipline's variables' names ([`Metrics`]), empty for
    /// drop-tail.
    pub fn qdisc_metric_names(&self) -> &'static [&'static str] {
        self.aqm.as_ref().map_or(&[], |a| a.qdisc.metric_names())
    }

    /// The queue discipline's variables at `now` (its periodic updates
    /// brought up to `now` first), in the order of the names.
    pub fn qdisc_metrics(&mut self, now: Instant, out: &mut [f64]) {
        if let Some(a) = &mut self.aqm {
            a.qdisc.advance(now);
            a.qdisc.metrics(out);
        }
    }

    /// The queue discipline's state at `now` (its periodic updates brought
    /// up to `now` first), for the queue series; None for drop-tail.
    pub fn qdisc_state(&mut self, now: Instant) -> Option<qdisc::QueueState> {
        let a = self.aqm.as_mut()?;
        a.qdisc.advance(now);
        Some(a.qdisc.state())
    }

    /// The same direction with link-layer ARQ: its loss model is then the
    /// loss of one attempt.
    pub fn with_arq(mut self, arq: Arq) -> Self {
        self.arq = Some(arq);
        self
    }

    /// The same direction with a Mahimahi trace as its rate source: a
    /// packet's serialisation ends at the first unused delivery opportunity
    /// at or after the start of its service (the rate is not used).
    pub fn with_trace(mut self, trace: Opportunities) -> Self {
        self.trace = Some(trace);
        self
    }

    /// The same direction replayed as CellReplay does ([`CellReplay`]): its
    /// delay and capacity come from the replay, its queue limit is the heavy
    /// queue's, its loss model and outages apply as usual.
    pub fn with_cellreplay(mut self, replay: CellReplay) -> Self {
        self.cellreplay = Some(Box::new(replay));
        self
    }

    /// The same direction with CSV traces of its rate, delay or loss.
    pub fn with_measured(mut self, measured: Measured) -> Self {
        self.measured = (!measured.is_empty()).then(|| Box::new(measured));
        self
    }

    /// The same direction with a pipe that is not first in, first out: each
    /// packet takes the delay in effect at the end of its serialisation, so
    /// when the delay drops later packets overtake earlier ones.
    pub fn reordering(mut self) -> Self {
        self.reorder = true;
        self
    }

    /// The direction's ARQ, if it has one.
    pub fn arq(&self) -> Option<&Arq> {
        self.arq.as_ref()
    }

    /// Starts serving `held` at `now`: draws its attempts (with ARQ) and
    /// returns when its serialisation ends.
    fn serve(&mut self, now: Instant, mut held: Held<T>) -> Instant {
        if self.cellreplay.is_some() {
            // the replay decided its time on the link at the offer
            self.busy = Some((held, now));
            return now;
        }
        self.waits.record(now.saturating_since(held.at));
        let rate = match &mut self.measured {
            Some(m) => m.rate(now, self.settings.rate),
            None => self.settings.rate,
        };
        let tx = match &mut self.trace {
            Some(o) => o.take(now) - now,
            None => tx_time(rate, held.size),
        };
        let mut busy_for = tx;
        if let Some(arq) = &self.arq {
            if let Some(m) = &mut self.measured {
                m.loss(now, &mut self.loss);
            }
            held.attempts = arq.draw(&mut self.loss);
            held.tx = tx;
            if arq.in_order() {
                busy_for = tx + arq.extra(held.attempts.retries(), tx);
            }
        }
        self.busy = Some((held, now));
        now + busy_for
    }

    /// Offers packet `item` of `size` bytes at `now`; returns its admission
    /// number and what became of it.
    pub fn offer(&mut self, now: Instant, item: T, size: u32) -> (u64, Admitted) {
        self.offer_ecn(now, item, size, Ecn::NotEct, 0)
    }

    /// [`Stepped::offer`] for a packet whose IP header carries `ecn`, of the
    /// flow `key` ([`qdisc::flow_key`]): what a queue discipline reads. With
    /// a discipline, [`Admitted::Refused`] means the buffer was full or the
    /// discipline dropped the packet at the entrance
    /// ([`Stepped::last_refusal`] says which); packets it drops later, this
    /// one or others, come out of [`Stepped::take_discarded`].
    pub fn offer_ecn(
        &mut self,
        now: Instant,
        item: T,
        size: u32,
        ecn: Ecn,
        key: u64,
    ) -> (u64, Admitted) {
        let n = self.counters.arrived;
        self.counters.arrived += 1;
        let held = Held {
            item,
            n,
            size,
            attempts: Attempts::default(),
            tx: Duration::ZERO,
            at: now,
            due: now,
        };
        if self.cellreplay.is_some() {
            return (n, self.offer_replayed(now, held));
        }
        if self.aqm.is_some() {
            return (n, self.offer_aqm(now, held, ecn, key));
        }
        if self.busy.is_none() {
            let done = self.serve(now, held);
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

    /// Offers `held` to CellReplay's replay, which decides its arrival now;
    /// the server passes it on at once (in the order of the offers).
    fn offer_replayed(&mut self, now: Instant, mut held: Held<T>) -> Admitted {
        let c = self.cellreplay.as_mut().expect("a replay");
        let queue = c.offer(now, held.size, self.settings.limit);
        self.counters.max_queue_packets =
            (self.counters.max_queue_packets).max(c.heavy_queued() as u64);
        match queue {
            Replayed::Refused => {
                self.counters.dropped[DropCause::Queue as usize] += 1;
                Admitted::Refused
            }
            Replayed::Delivered { at, wait } => {
                self.waits.record(wait);
                held.due = at;
                if self.busy.is_none() {
                    Admitted::Started {
                        done: self.serve(now, held),
                    }
                } else {
                    // offered at the instant of the one before: it follows it
                    self.queued_bytes += held.size as u64;
                    self.queue.push_back(held);
                    Admitted::Queued
                }
            }
        }
    }

    /// The discipline's context now.
    fn ctx(&self, now: Instant) -> qdisc::Ctx {
        qdisc::Ctx {
            now,
            limit: self.settings.limit,
            rate: self.settings.rate,
        }
    }

    /// Offers `held` to the queue discipline.
    fn offer_aqm(&mut self, now: Instant, held: Held<T>, ecn: Ecn, key: u64) -> Admitted {
        let ctx = self.ctx(now);
        let a = self.aqm.as_mut().expect("a discipline");
        let p = Aqm {
            held,
            ecn,
            key,
            marked: false,
        };
        let mut admitted = match a.qdisc.enqueue(&ctx, p, &mut a.scratch) {
            Enqueued::Taken => Admitted::Queued,
            Enqueued::Refused(_, cause) => {
                self.counters.dropped[cause as usize] += 1;
                self.last_refusal = cause;
                Admitted::Refused
            }
        };
        if matches!(admitted, Admitted::Queued) && self.busy.is_none() {
            // an idle server takes the head at once
            if let Some(done) = self.next_from_qdisc(now) {
                admitted = Admitted::Started { done };
            }
        }
        self.settle();
        admitted
    }

    /// Starts serving the discipline's next packet, if any; returns when its
    /// serialisation ends.
    fn next_from_qdisc(&mut self, now: Instant) -> Option<Instant> {
        let ctx = self.ctx(now);
        let a = self.aqm.as_mut().expect("a discipline");
        let p = a.qdisc.dequeue(&ctx, &mut a.scratch)?;
        a.busy_marked = p.marked;
        Some(self.serve(now, p.held))
    }

    /// Hands the discipline's drops to the caller's list and brings the
    /// counters up to date.
    fn settle(&mut self) {
        let Some(a) = &mut self.aqm else { return };
        let c = &mut self.counters;
        for (p, cause) in a.scratch.drain(..) {
            c.dropped[cause as usize] += 1;
            a.discarded.push((p.held.item, cause));
        }
        c.marked = a.qdisc.tally().marks;
        let (packets, bytes) = a.qdisc.len();
        c.max_queue_packets = c.max_queue_packets.max(packets);
        c.max_queue_bytes = c.max_queue_bytes.max(bytes);
    }

    /// The packet in service ends its serialisation now.
    pub fn finish(&mut self, now: Instant) -> Finished<T> {
        let (held, start) = self.busy.take().expect("a packet is in service");
        self.counters.sent_packets += 1;
        self.counters.sent_bytes += held.size as u64;
        let (lost, extra, fifo) = match &self.arq {
            None => {
                if let Some(m) = &mut self.measured {
                    m.loss(now, &mut self.loss);
                }
                (self.loss.lose(), Duration::ZERO, true)
            }
            Some(arq) => {
                let a = held.attempts;
                let c = &mut self.counters;
                c.arq_attempts += a.tries as u64;
                c.arq_retries += a.retries() as u64;
                c.arq_residual += !a.delivered as u64;
                // out of order, the retransmissions delay this frame alone
                let extra = if arq.in_order() {
                    Duration::ZERO
                } else {
                    arq.extra(a.retries(), held.tx)
                };
                (!a.delivered, extra, extra.is_zero())
            }
        };
        let mut arrival = None;
        if lost {
            self.counters.dropped[DropCause::Random as usize] += 1;
        } else {
            let at = if self.cellreplay.is_some() {
                // the replay decided its arrival at the offer
                held.due.max(self.last_arrival)
            } else {
                let delay = match &mut self.measured {
                    Some(m) => m.delay(now, self.settings.delay),
                    None => self.settings.delay,
                };
                if self.reorder {
                    now + extra + delay
                } else {
                    (now + extra + delay).max(self.last_arrival)
                }
            };
            // a frame delayed by its own retransmissions does not hold the
            // ones behind it
            if fifo {
                self.last_arrival = at;
            }
            let i = self.pipe.partition_point(|f| f.arrival <= at);
            if i == 0 {
                arrival = Some((held.n, at));
            }
            self.pipe.insert(
                i,
                Flying {
                    held,
                    start,
                    arrival: at,
                    scheduled: i == 0,
                },
            );
        }
        let marked = self.aqm.as_ref().is_some_and(|a| a.busy_marked);
        let next = if self.aqm.is_some() {
            let next = self.next_from_qdisc(now).map(|done| {
                let (h, _) = self.busy.as_ref().expect("just started");
                (h.n, done)
            });
            self.settle();
            next
        } else {
            self.queue.pop_front().map(|h| {
                self.queued_bytes -= h.size as u64;
                (h.n, self.serve(now, h))
            })
        };
        let retries = self
            .arq
            .as_ref()
            .map(|_| (held.attempts.retries(), held.tx));
        Finished {
            item: held.item,
            lost,
            arrival,
            next,
            retries,
            marked,
        }
    }

    /// The packet at the head of the pipe reaches the far end now.
    pub fn arrive(&mut self, now: Instant) -> Arrived<T> {
        let f = self.pipe.pop_front().expect("a packet is propagating");
        let next = match self.pipe.front_mut() {
            Some(g) if !g.scheduled => {
                g.scheduled = true;
                Some((g.held.n, g.arrival))
            }
            _ => None,
        };
        let lost = self.outages.overlaps(f.start, now);
        if lost {
            self.counters.dropped[DropCause::Outage as usize] += 1;
        } else {
            self.counters.delivered_packets += 1;
            self.counters.delivered_bytes += f.held.size as u64;
        }
        let retries = self
            .arq
            .as_ref()
            .map(|_| (f.held.attempts.retries(), f.held.tx));
        Arrived {
            item: f.held.item,
            lost,
            next,
            retries,
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

    /// Replaces the outage windows (a forked simulation's handoff moved to
    /// another instant; the windows before now must be the same).
    pub fn set_outages(&mut self, outages: Outages) {
        self.outages = outages;
    }

    /// The settings in effect.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// How long each packet that started its service waited in the queue.
    pub fn waits(&self) -> &Histogram {
        &self.waits
    }

    /// The counters.
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    /// Packets and bytes waiting in the queue.
    pub fn queued(&self) -> (u64, u64) {
        match &self.aqm {
            Some(a) => a.qdisc.len(),
            None => (self.queue.len() as u64, self.queued_bytes),
        }
    }

    /// Why the last packet [`Admitted::Refused`] was refused: a full buffer
    /// ([`DropCause::Queue`]) or the queue discipline's early drop
    /// ([`DropCause::Aqm`]).
    pub fn last_refusal(&self) -> DropCause {
        self.last_refusal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Arq;
    use crate::link::{ArqOrder, ArqSpec, LossSpec, ReportWhen};
    use crate::rng::{Rng, Stream};
    use std::collections::BTreeSet;
    use wavelab_tcp::Rate;

    const FRAME: u32 = 1000;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// 8 Mbit/s (a 1000-byte frame takes 1 ms), 10 ms of delay, a large
    /// queue, per-attempt loss `p`, `k` retries 2 ms apart.
    fn wlan(p: f64, k: u32, order: ArqOrder) -> Stepped<u64> {
        let settings = Settings {
            rate: Rate::from_mbps(8),
            delay: ms(10),
            limit: QueueLimit::Packets(1_000_000),
        };
        let loss = LossModel::new(
            LossSpec::Bernoulli { p },
            Rng::derive(5, Stream::LinkLoss(0)),
        );
        let arq = Arq::new(ArqSpec {
            retries: k,
            retry_delay: ms(2),
            backoff: None,
            order,
            report: ReportWhen::None,
            report_delay: Duration::ZERO,
        });
        Stepped::new(settings, loss, Outages::default()).with_arq(arq)
    }

    /// What reached the far end: (frame, arrival, retries), in arrival order.
    type Arrivals = Vec<(u64, Instant, u32)>;

    /// Offers frame `i` at `offers[i]` (in time order) and runs the
    /// direction's events: one pending end of serialisation, the arrivals
    /// it asks for.
    fn drive(l: &mut Stepped<u64>, offers: &[Instant]) -> Arrivals {
        let mut done: Option<Instant> = None;
        let mut arrivals: BTreeSet<(Instant, u64)> = BTreeSet::new();
        let mut out = vec![];
        let mut next_offer = 0;
        loop {
            let offer = offers.get(next_offer).copied();
            let arrival = arrivals.first().map(|a| a.0);
            let first = [offer, done, arrival].into_iter().flatten().min();
            let Some(now) = first else { break };
            if offer == Some(now) {
                let i = next_offer as u64;
                next_offer += 1;
                if let (_, Admitted::Started { done: d }) = l.offer(now, i, FRAME) {
                    done = Some(d);
                }
            } else if done == Some(now) {
                let f = l.finish(now);
                done = f.next.map(|n| n.1);
                if let Some((n, at)) = f.arrival {
                    arrivals.insert((at, n));
                }
            } else {
                arrivals.pop_first();
                let a = l.arrive(now);
                if let Some((n, at)) = a.next {
                    arrivals.insert((at, n));
                }
                assert!(!a.lost);
                out.push((a.item, now, a.retries.expect("ARQ").0));
            }
        }
        out
    }

    /// Residual loss p^(k+1) within four standard errors, and each
    /// delivered frame delayed by exactly its attempts: on an idle link,
    /// 1 ms of serialisation, then per retransmission 2 ms of wait and 1 ms
    /// again, then 10 ms of propagation; the mean attempts match
    /// (1 - p^(k+1)) / (1 - p). The counters agree.
    #[test]
    fn residual_loss_and_delay_of_the_attempts() {
        let (p, k) = (0.4, 3u32);
        let n = 40_000u64;
        let mut l = wlan(p, k, ArqOrder::InOrder);
        // one frame every 100 ms: the link is idle at each offer
        let offers: Vec<Instant> = (0..n).map(|i| Instant::ZERO + ms(100 * i)).collect();
        let out = drive(&mut l, &offers);
        let lost = (n - out.len() as u64) as f64 / n as f64;
        let want = p.powi(k as i32 + 1);
        let se = (want * (1.0 - want) / n as f64).sqrt();
        assert!((lost - want).abs() < 4.0 * se, "lost {lost}, want {want}");
        for &(i, at, r) in &out {
            let delay = at - offers[i as usize];
            assert_eq!(
                delay,
                ms(1) + ms(3) * r as u64 + ms(10),
                "frame {i}, {r} retries"
            );
        }
        // attempts over all frames, the lost ones' k + 1 included
        let c = l.counters();
        let mean = c.arq_attempts as f64 / n as f64;
        let want_mean = (1.0 - want) / (1.0 - p);
        assert!(
            (mean - want_mean).abs() < 0.02,
            "mean attempts {mean}, want {want_mean}"
        );
        assert_eq!(c.arq_retries, c.arq_attempts - n);
        assert_eq!(c.arq_residual, n - out.len() as u64);
        assert_eq!(c.dropped[DropCause::Random as usize], c.arq_residual);
        let retried: u64 = out.iter().map(|o| o.2 as u64).sum();
        assert_eq!(c.arq_retries, retried + c.arq_residual * k as u64);
    }

    /// Back to back: in order, the frames leave in the order they came (a
    /// frame in retry holds the others); out of order, frames behind a
    /// frame in retry pass it, and none is lost either way with a generous
    /// retry limit.
    #[test]
    fn in_order_never_reorders_and_out_of_order_does() {
        let offers: Vec<Instant> = (0..5_000).map(|i| Instant::ZERO + ms(i / 4)).collect();
        let mut l = wlan(0.3, 20, ArqOrder::InOrder);
        let out = drive(&mut l, &offers);
        assert_eq!(out.len(), offers.len());
        assert!(
            out.windows(2).all(|w| w[0].0 < w[1].0),
            "reordered in order"
        );
        assert!(out.iter().any(|o| o.2 > 0));
        let mut l = wlan(0.3, 20, ArqOrder::OutOfOrder);
        let out = drive(&mut l, &offers);
        assert_eq!(out.len(), offers.len());
        let passed = out.windows(2).filter(|w| w[0].0 > w[1].0).count();
        assert!(passed > 100, "{passed} frames passed");
        // a frame sent once is never passed by a later frame sent once
        let once: Vec<u64> = out.iter().filter(|o| o.2 == 0).map(|o| o.0).collect();
        assert!(once.windows(2).all(|w| w[0] < w[1]));
        // out of order the retransmissions do not occupy the link: the last
        // frame sent once leaves 1 ms after the previous one
        let in_order_end = drive(&mut wlan(0.3, 20, ArqOrder::InOrder), &offers)
            .last()
            .unwrap()
            .1;
        let end = out.iter().map(|o| o.1).max().unwrap();
        assert!(end < in_order_end, "{end:?} vs {in_order_end:?}");
    }

    /// A direction with CoDel, fed ECT and Not-ECT packets at twice its
    /// rate: the discipline's marks come out of `finish` (and only on ECT
    /// packets), its drops out of `take_discarded` (only Not-ECT ones, and
    /// counted as AQM drops), the full buffer's refusals at the offer; every
    /// packet is accounted for once.
    #[test]
    fn a_queue_discipline_marks_and_drops_through_the_stepped_model() {
        use crate::link::qdisc::{CodelSpec, Ecn, QdiscSpec};
        let settings = Settings {
            rate: Rate::from_mbps(12),
            delay: ms(10),
            limit: QueueLimit::Packets(200),
        };
        let loss = LossModel::new(LossSpec::None, Rng::derive(5, Stream::LinkLoss(0)));
        let spec = QdiscSpec::Codel(CodelSpec::default());
        let mut l: Stepped<u64> = Stepped::new(settings, loss, Outages::default())
            .with_qdisc(&spec, Rng::derive(5, Stream::LinkQdisc(0)));
        assert!(l.has_qdisc());
        let ecn = |i: u64| if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
        let n = 20_000u64;
        let (mut done, mut refused, mut marked, mut discarded, mut sent) = (None, 0, 0, 0, 0);
        let mut next = 0u64;
        loop {
            let offer = (next < n).then(|| Instant::ZERO + Duration::from_micros(500 * next));
            let t = match (offer, done) {
                (Some(a), Some(d)) => a.min(d),
                (a, d) => match a.or(d) {
                    Some(t) => t,
                    None => break,
                },
            };
            if done == Some(t) {
                let f = l.finish(t);
                sent += 1;
                if f.marked {
                    marked += 1;
                    assert_eq!(ecn(f.item), Ecn::Ect0, "a Not-ECT packet marked");
                }
                if let Some((_, at)) = f.arrival {
                    l.arrive(at);
                }
                done = f.next.map(|x| x.1);
            } else {
                let (_, a) = l.offer_ecn(t, next, 1500, ecn(next), 7);
                match a {
                    Admitted::Started { done: d } => done = Some(d),
                    Admitted::Queued => {}
                    Admitted::Refused => refused += 1,
                }
                next += 1;
            }
            for (item, cause) in l.take_discarded() {
                assert_eq!(cause, DropCause::Aqm);
                assert_eq!(ecn(item), Ecn::NotEct, "an ECT packet dropped");
                discarded += 1;
            }
        }
        assert!(
            marked > 0 && discarded > 0,
            "{marked} marks, {discarded} drops"
        );
        assert_eq!(sent + refused + discarded, n);
        let c = l.counters();
        assert_eq!(c.marked, marked);
        assert_eq!(c.dropped[DropCause::Aqm as usize], discarded);
        assert_eq!(c.dropped[DropCause::Queue as usize], refused);
    }
}
