//! [`Link`]: a link direction whose packets' schedules are computed when
//! they are offered.
//!
//! The direction is a first-in first-out server: start = max(admission,
//! previous finish), finish = start + size / rate, arrival = max(finish +
//! delay, previous arrival). Rate, delay, queue limit and loss come from the
//! direction's timeline of scheduled changes, read at the instants the
//! stepped model ([`super::Stepped`]) would apply them; the random loss of
//! each packet is drawn in service order, as in that model, so both give the
//! same results.
//!
//! Counters and queue lengths are read "as of" an instant: each admitted
//! packet's schedule stays in a ring until [`Link::sync`] finds the clock
//! past it; cursors over running totals make a sync cost a few binary
//! searches, not a pass over the packets.

use super::timeline::Timeline;
use super::{
    tx_time, DropCause, LinkCounters, LossModel, Measured, Offer, Outages, Outcome, Settings,
};
use crate::histogram::Histogram;
use crate::link::{QueueLimit, ScheduleEntry};
use crate::ring::Ring;
use std::collections::VecDeque;
use wavelab_tcp::{Duration, Instant, Rate};

/// Running totals along the fifo, from the start of the run up to and
/// including one entry: the counters as of any instant are read off the
/// entry just before the clock's cursor, so moving the clock costs a binary
/// search, not a pass over the packets. (Losses, rare, are listed apart:
/// [`Loss`].)
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    /// Bytes admitted.
    bytes: u64,
    /// The largest queue (packets, bytes) right after an admission.
    max_queue: (u32, u32),
}

/// One admitted packet.
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

/// A packet lost after admission.
#[derive(Clone, Copy, Debug)]
struct Loss {
    /// Its entry's absolute index.
    index: u64,
    size: u32,
    cause: DropCause,
}

/// The clock's side of the losses: how many of the listed losses the finish
/// and arrival cursors have passed, and what the arrival cursor passed.
#[derive(Clone, Debug, Default)]
struct LossCursors {
    finish: u64,
    arrive: u64,
    lost_packets: u64,
    lost_bytes: u64,
}

/// Where the clock is along the fifo: absolute indices of the first entry
/// not yet admitted, started, finished and arrived as of the last sync (each
/// stage's times are in order along the fifo, so each cursor only moves
/// forward).
#[derive(Clone, Debug, Default)]
struct Cursors {
    admit: u64,
    start: u64,
    finish: u64,
    arrive: u64,
}

/// One link direction in the clock-free model: [`Link::offer`] computes a
/// packet's fate at once. Offers must come in time order.
#[derive(Clone, Debug)]
pub struct Link {
    /// Settings at the start of the run.
    initial: Settings,
    timeline: Timeline,
    /// CSV traces of the rate, delay or loss, if any.
    measured: Option<Box<Measured>>,
    loss: LossModel,
    outages: Outages,
    /// Counters as of the last [`Link::sync`].
    counters: LinkCounters,
    /// Packets offered (queue drops included): the next admission number.
    offered: u64,
    /// Packets admitted and not yet entirely past the clock, by absolute
    /// index (every entry ever pushed has one).
    fifo: Ring<Entry>,
    /// Totals up to the entry before the first one kept (those of the last
    /// entry forgotten).
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
    /// Queue drops at admission instants not yet reached by the clock.
    drops: VecDeque<Instant>,
    /// The clock's side.
    seen: Cursors,
    /// The last serialisation time computed, by packet size.
    tx_cache: [(u32, Rate, Duration); 2],
    /// How long each packet admitted to a busy direction waits in the queue,
    /// counted at its admission (a packet admitted to an idle direction
    /// waits 0; [`Link::waits`] counts those, and leaves out the packets
    /// not started by the last sync).
    busy_waits: Histogram,
}

impl Link {
    /// A direction with these initial settings, loss model, outage windows
    /// and scheduled changes (sorted by time).
    pub fn new(
        initial: Settings,
        loss: LossModel,
        outages: Outages,
        changes: Vec<(Instant, ScheduleEntry)>,
    ) -> Self {
        Link {
            initial,
            timeline: Timeline::new(changes, initial),
            measured: None,
            loss,
            outages,
            counters: LinkCounters::default(),
            offered: 0,
            fifo: Ring::default(),
            forgotten: Totals::default(),
            totals: Totals::default(),
            losses: VecDeque::new(),
            lost_base: 0,
            seen_losses: LossCursors::default(),
            busy_waits: Histogram::default(),
            started: 0,
            last_start: Instant::ZERO,
            last_finish: Instant::ZERO,
            last_arrival: Instant::ZERO,
            drops: VecDeque::new(),
            seen: Cursors::default(),
            tx_cache: Default::default(),
        }
    }

    /// The same direction with CSV traces of its rate, delay or loss (they
    /// replace the setting they give from their first point on; the
    /// scenario's validation refuses scheduled changes of the same setting).
    pub fn with_measured(mut self, measured: Measured) -> Self {
        self.measured = (!measured.is_empty()).then(|| Box::new(measured));
        self
    }

    /// Offers a packet of `size` bytes at `a` (not before the previous
    /// offer): computes its admission number and its fate.
    #[inline]
    pub fn offer(&mut self, a: Instant, size: u32) -> Offer {
        // the admission number counts every offer, drops included
        let n = self.offered;
        self.offered += 1;
        // what has started by `a` (admissions come in time order)
        if self.last_start <= a {
            // all have (an idle link's common case: no entry is read)
            self.started = self.fifo.end();
        }
        while self.started < self.fifo.end() && self.entry(self.started).start <= a {
            self.started += 1;
        }
        let busy = self.last_finish > a;
        let mut totals = self.totals;
        if busy {
            let limit = self.timeline.limit(a);
            let waiting = self.fifo.end() - self.started;
            let waiting_bytes = self.totals.bytes - self.totals_before(self.started).bytes;
            let fits = match limit {
                QueueLimit::Packets(k) => waiting < k as u64,
                QueueLimit::Bytes(b) => waiting_bytes + size as u64 <= b,
            };
            if !fits {
                self.drops.push_back(a);
                return Offer {
                    n,
                    outcome: Outcome::Refused,
                };
            }
            let m = &mut totals.max_queue;
            m.0 = m.0.max(sat32(waiting + 1));
            m.1 = m.1.max(sat32(waiting_bytes + size as u64));
            self.busy_waits.record(self.last_finish.saturating_since(a));
        }
        let start = if busy { self.last_finish } else { a };
        let mut rate = self.timeline.rate(start);
        if let Some(m) = &mut self.measured {
            rate = m.rate(start, rate);
        }
        let finish = start + self.tx(rate, size);
        self.last_start = start;
        self.last_finish = finish;
        self.timeline.loss(&mut self.loss, finish);
        if let Some(m) = &mut self.measured {
            m.loss(finish, &mut self.loss);
        }
        totals.bytes += size as u64;
        let (outcome, arrival) = if self.loss.lose() {
            self.lost(size, DropCause::Random);
            (Outcome::Lost { finish }, self.last_arrival)
        } else {
            let mut delay = self.timeline.delay(finish);
            if let Some(m) = &mut self.measured {
                delay = m.delay(finish, delay);
            }
            let arrival = (finish + delay).max(self.last_arrival);
            self.last_arrival = arrival;
            if !self.outages.is_empty() && self.outages.overlaps(start, arrival) {
                self.lost(size, DropCause::Outage);
                (
                    Outcome::Outage {
                        finish,
                        at: arrival,
                    },
                    arrival,
                )
            } else {
                (
                    Outcome::Arrive {
                        finish,
                        at: arrival,
                    },
                    arrival,
                )
            }
        };
        self.fifo.push(Entry {
            admit: a,
            start,
            finish,
            arrival,
            totals,
        });
        self.totals = totals;
        Offer { n, outcome }
    }

    /// The counters as of the last [`Link::sync`].
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    /// The settings in effect at `now`.
    pub fn settings_at(&self, now: Instant) -> Settings {
        let mut s = self.initial;
        for (t, e) in self.timeline.changes() {
            if *t > now {
                break;
            }
            s.apply(e);
        }
        s
    }

    /// Packets and bytes waiting in the queue (as of the last sync).
    pub fn queued(&self) -> (u64, u64) {
        let s = &self.seen;
        let bytes = self.totals_before(s.admit).bytes - self.totals_before(s.start).bytes;
        (s.admit - s.start, bytes)
    }

    /// The most fifo entries ever held at once (rounded up to a power of
    /// two): the memory the direction keeps for packets in flight.
    pub fn fifo_capacity(&self) -> usize {
        self.fifo.capacity()
    }

    /// Serialisation time of `size` bytes at `rate`, cached by size.
    #[inline]
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
    /// totals they stop at; forgets the entries entirely behind it. When a
    /// sync happens changes nothing but what the counters say.
    pub fn sync(&mut self, now: Instant) {
        let mut counters = std::mem::take(&mut self.counters);
        let c = &mut counters;
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
        self.counters = counters;
    }

    /// Queueing delays of the packets that started serialisation by the
    /// last [`Link::sync`]: those counted at admission to a busy direction,
    /// less the ones not started by then (still in the fifo: a sync forgets
    /// only entries that finished), plus a zero for each of the others.
    pub fn waits(&self) -> Histogram {
        let mut h = self.busy_waits.clone();
        for k in self.seen.start..self.fifo.end() {
            let e = self.entry(k);
            if e.start > e.admit {
                h.remove(e.start.saturating_since(e.admit));
            }
        }
        h.record_n(Duration::ZERO, self.seen.start - h.count());
        h
    }
}

/// `x` as a `u32`, saturating (queue sizes beyond 4 G are not modelled).
fn sat32(x: u64) -> u32 {
    x.min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{Direction, LossSpec};
    use crate::rng::{Rng, Stream};

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn link(limit: QueueLimit, changes: Vec<(Instant, ScheduleEntry)>) -> Link {
        let settings = Settings {
            rate: Rate::from_mbps(1),
            delay: Duration::from_millis(240),
            limit,
        };
        let loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
        Link::new(settings, loss, Outages::default(), changes)
    }

    /// The clock-free call a wall-clock driver would make: offers in time
    /// order, each answered at once with its admission number and fate.
    #[test]
    fn offers_are_answered_at_once() {
        let mut l = link(QueueLimit::Packets(1), vec![]);
        // 1500 bytes at 1 Mbit/s take 12 ms
        let o: Vec<Offer> = [0, 0, 0, 30]
            .iter()
            .map(|&ms| l.offer(t(ms), 1500))
            .collect();
        let arrive = |finish, at| Outcome::Arrive {
            finish: t(finish),
            at: t(at),
        };
        assert_eq!(
            o[0],
            Offer {
                n: 0,
                outcome: arrive(12, 252)
            }
        );
        assert_eq!(
            o[1],
            Offer {
                n: 1,
                outcome: arrive(24, 264)
            }
        );
        assert_eq!(
            o[2],
            Offer {
                n: 2,
                outcome: Outcome::Refused
            }
        );
        assert_eq!(
            o[3],
            Offer {
                n: 3,
                outcome: arrive(42, 282)
            }
        );
        // counters as of an instant
        l.sync(t(20));
        let c = l.counters().clone();
        assert_eq!((c.arrived, c.sent_packets, c.delivered_packets), (3, 1, 0));
        assert_eq!(c.dropped[DropCause::Queue as usize], 1);
        assert_eq!(l.queued(), (0, 0), "the second is in service");
        l.sync(t(300));
        let c = l.counters();
        assert_eq!((c.arrived, c.sent_packets, c.delivered_packets), (4, 3, 3));
    }

    #[test]
    fn outages_and_delay_changes_in_the_outcome() {
        let change = ScheduleEntry {
            at: Duration::from_millis(100),
            direction: Direction::Both,
            rate: None,
            delay: Some(Duration::from_millis(10)),
            queue: None,
            loss: None,
        };
        let settings = Settings {
            rate: Rate::from_mbps(1),
            delay: Duration::from_millis(240),
            limit: QueueLimit::Packets(10),
        };
        let loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
        let outages = Outages::new(vec![(t(500), t(600))]);
        let mut l = Link::new(settings, loss, outages, vec![(t(100), change)]);
        // serialised before the change: 240 ms; after: 10 ms, but not before
        // the previous packet (first in, first out)
        assert_eq!(
            l.offer(t(80), 1500).outcome,
            Outcome::Arrive {
                finish: t(92),
                at: t(332)
            }
        );
        assert_eq!(
            l.offer(t(110), 1500).outcome,
            Outcome::Arrive {
                finish: t(122),
                at: t(332)
            }
        );
        assert_eq!(
            l.offer(t(495), 1500).outcome,
            Outcome::Outage {
                finish: t(507),
                at: t(517)
            }
        );
        assert_eq!(l.settings_at(t(99)).delay, Duration::from_millis(240));
        assert_eq!(l.settings_at(t(100)).delay, Duration::from_millis(10));
    }

    /// CSV traces in the clock-free model: the rate at the start of each
    /// serialisation (2 Mbit/s, 6 ms a packet, then 8 Mbit/s from 30 ms,
    /// 1.5 ms), the delay at its end, first in, first out when it drops.
    #[test]
    fn csv_traces_set_the_rate_and_the_delay() {
        use crate::link::DelayInterpolation;
        use crate::link::{CsvTrace, Measured, Quantity};
        let rate = CsvTrace::parse("r", "0,2Mbit/s\n30ms,8Mbit/s\n", Quantity::Rate).unwrap();
        let delay = CsvTrace::parse("d", "0,300ms\n31ms,10ms\n", Quantity::Delay).unwrap();
        let m = Measured::new(Some(rate), Some(delay), None, DelayInterpolation::Step);
        let mut l = link(QueueLimit::Packets(100), vec![]).with_measured(m);
        let out: Vec<Outcome> = (0..7).map(|_| l.offer(t(0), 1500).outcome).collect();
        let ends: Vec<Instant> = out.iter().map(|o| o.finish().unwrap()).collect();
        let us = |x: u64| Instant::from_nanos(x * 1000);
        assert_eq!(
            ends,
            [6, 12, 18, 24, 30]
                .map(t)
                .into_iter()
                .chain([us(31_500), us(33_000)])
                .collect::<Vec<_>>()
        );
        // 30 + 300 ms; then 31.5 + 10 ms would pass it: held to 330 ms
        assert_eq!(
            out[4],
            Outcome::Arrive {
                finish: t(30),
                at: t(330)
            }
        );
        assert_eq!(
            out[5],
            Outcome::Arrive {
                finish: us(31_500),
                at: t(330)
            }
        );
    }
}
