//! Random Early Detection (Floyd and Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM Transactions on Networking
//! 1(4), 1993), with the gentle variant (Floyd, "Recommendation on using
//! the gentle_ variant of RED", 2000).
//!
//! The rules, from the paper's Figure 2 (in our own code), all at a
//! packet's arrival:
//! * the average queue: `avg = (1 - w_q) avg + w_q q` when the queue holds
//!   packets; after an idle period, `avg = (1 - w_q)^m avg` with m the idle
//!   time over the transmission time of a typical packet (`mean_packet` at
//!   the link's rate). The queue is idle from the moment the discipline
//!   holds nothing (the packet in service is not counted, as nowhere else
//!   in the link model);
//! * below `min_th` nothing is dropped and `count` is -1; between `min_th`
//!   and `max_th`, `count` grows and the packet is dropped with probability
//!   p_a = p_b / (1 - count p_b), p_b = max_p (avg - min_th) / (max_th -
//!   min_th), which spaces drops nearly uniformly; at or above `max_th`
//!   every packet is dropped. Gentle: between `max_th` and 2 `max_th`, p_b
//!   rises linearly from `max_p` to 1 and the same spacing applies; forced
//!   drops start at 2 `max_th`;
//! * a drop in the probabilistic region marks an ECN-capable packet CE
//!   instead (RFC 3168 section 5); forced drops always drop (our choice:
//!   a queue at twice its upper threshold is beyond what a mark can fix,
//!   and an unresponsive ECN sender must not fill it).
//!
//! With `step`, the decision is the step marking DCTCP assumes (RFC 8257
//! section 3.1): an arrival that finds more than `min_th` packets queued
//! (instantaneous, no average) is marked CE, or dropped if not
//! ECN-capable; Linux users build the same from RED with min = max and
//! max_p = 1, which this model's forced region (always a drop) cannot.
//!
//! The buffer limit (the link's `queue`) applies after RED's decision.

use super::fifo::Fifo;
use super::spec::RedSpec;
use super::{fits, Ctx, DropCause, Dropped, Enqueued, Metrics, Queued, Tally};
use crate::rng::Rng;
use wavelab_tcp::Instant;

/// A RED queue.
#[derive(Clone, Debug)]
pub struct Red<P> {
    s: RedSpec,
    rng: Rng,
    q: Fifo<P>,
    avg: f64,
    count: i64,
    /// When the queue last became empty (while it is).
    idle_since: Option<Instant>,
    tally: Tally,
    /// The last early-drop probability computed.
    p: f64,
}

impl<P: Queued> Red<P> {
    /// An empty queue.
    pub fn new(s: RedSpec, rng: Rng) -> Self {
        Red {
            s,
            rng,
            q: Fifo::default(),
            avg: 0.0,
            count: -1,
            idle_since: Some(Instant::ZERO),
            tally: Tally::default(),
            p: 0.0,
        }
    }

    /// The average queue at an arrival at `ctx.now`.
    fn average(&mut self, ctx: &Ctx) {
        let w = self.s.weight;
        match self.idle_since {
            None => self.avg = (1.0 - w) * self.avg + w * self.q.len() as f64,
            Some(t) => {
                let s = ctx.rate.tx_time(self.s.mean_packet.0).as_nanos().max(1) as f64;
                let m = ctx.now.saturating_since(t).as_nanos() as f64 / s;
                self.avg *= (1.0 - w).powf(m);
            }
        }
    }

    /// The early-drop decision for the arriving packet: None to take it,
    /// Some(forced) to drop (or mark) it.
    fn decide(&mut self) -> Option<bool> {
        let (min, max, max_p) = (self.s.min_th, self.s.max_th, self.s.max_p);
        let avg = self.avg;
        let pb = if avg < min {
            self.count = -1;
            self.p = 0.0;
            return None;
        } else if avg < max {
            max_p * (avg - min) / (max - min)
        } else if self.s.gentle && avg < 2.0 * max {
            max_p + (1.0 - max_p) * (avg - max) / max
        } else {
            self.count = 0;
            self.p = 1.0;
            return Some(true);
        };
        self.count += 1;
        let denominator = 1.0 - self.count as f64 * pb;
        let pa = if denominator <= 0.0 {
            1.0
        } else {
            (pb / denominator).min(1.0)
        };
        self.p = pa;
        if self.rng.chance(pa) {
            self.count = 0;
            Some(false)
        } else {
            None
        }
    }

    /// Offers `p`: RED's decision, then the buffer's limit.
    pub fn enqueue(&mut self, ctx: &Ctx, mut p: P, _: &mut Dropped<P>) -> Enqueued<P> {
        self.average(ctx);
        let decision = if self.s.step {
            let over = self.q.len() as f64 > self.s.min_th;
            self.p = if over { 1.0 } else { 0.0 };
            over.then_some(false)
        } else {
            self.decide()
        };
        match decision {
            None => {}
            Some(false) if self.tally.signal(&mut p, self.s.ecn) => {}
            Some(forced) => {
                if forced {
                    self.tally.drops += 1;
                }
                return Enqueued::Refused(p, DropCause::Aqm);
            }
        }
        if !fits(ctx.limit, self.q.len(), self.q.bytes(), p.size()) {
            return Enqueued::Refused(p, DropCause::Queue);
        }
        self.q.push(p);
        self.idle_since = None;
        Enqueued::Taken
    }

    /// The head.
    pub fn dequeue(&mut self, ctx: &Ctx, _: &mut Dropped<P>) -> Option<P> {
        let p = self.q.pop()?;
        self.tally.sojourn = ctx.now.saturating_since(p.enqueued());
        if self.q.is_empty() {
            self.idle_since = Some(ctx.now);
        }
        Some(p)
    }

    /// Packets and bytes held.
    pub fn len(&self) -> (u64, u64) {
        (self.q.len(), self.q.bytes())
    }

    /// Marks, drops, sojourn.
    pub fn tally(&self) -> Tally {
        self.tally
    }

    /// The early-drop (or mark) probability of the last arrival.
    pub fn probability(&self) -> f64 {
        self.p
    }
}

impl<P> Metrics for Red<P> {
    fn metric_names(&self) -> &'static [&'static str] {
        &["sojourn", "drops", "marks", "avg", "p"]
    }
    fn metrics(&self, out: &mut [f64]) {
        self.tally.write(out);
        out[3] = self.avg;
        out[4] = self.p;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{paced, Bench, Pkt};
    use super::super::{Ecn, Qdisc, QdiscSpec};
    use super::*;
    use crate::link::QueueLimit;
    use crate::rng::Stream;
    use wavelab_tcp::{Duration, Rate};

    fn red(s: RedSpec) -> Qdisc<Pkt> {
        Qdisc::new(&QdiscSpec::Red(s), Rng::derive(5, Stream::LinkQdisc(0))).unwrap()
    }

    /// Arrivals at 1.25 times the link rate: RED holds the average between
    /// its thresholds, dropping about the excess (a fifth of the arrivals),
    /// with no forced drops and no buffer overflow.
    #[test]
    fn the_average_settles_between_the_thresholds() {
        let rate = Rate::from_mbps(12);
        let mut q = red(RedSpec::default());
        let mut b = Bench::new(rate, QueueLimit::Packets(1000));
        let n = 50_000;
        for p in paced(
            0,
            1,
            n,
            1500,
            Ecn::NotEct,
            Instant::ZERO,
            Duration::from_micros(800),
        ) {
            b.offer(&mut q, p);
        }
        b.drain(&mut q);
        let dropped = b.dropped.len() as f64 / n as f64;
        assert!((0.18..0.22).contains(&dropped), "dropped {dropped}");
        assert!(b.dropped.iter().all(|d| d.1 == DropCause::Aqm));
        let Qdisc::Red(r) = &q else { unreachable!() };
        assert!((5.0..=30.0).contains(&r.avg), "average {} packets", r.avg);
    }

    /// Gentle RED's probability is continuous at max_th; the original jumps
    /// to 1 there.
    #[test]
    fn gentle_ramps_where_the_original_jumps() {
        let mut g: Red<Pkt> = Red::new(RedSpec::default(), Rng::derive(1, Stream::LinkQdisc(0)));
        g.avg = 16.0;
        g.count = -1;
        g.decide();
        // p_b = 0.1 + 0.9 / 15 = 0.16 at count 0
        assert!((g.p - 0.16).abs() < 1e-9, "{}", g.p);
        let mut o: Red<Pkt> = Red::new(
            RedSpec {
                gentle: false,
                ..RedSpec::default()
            },
            Rng::derive(1, Stream::LinkQdisc(0)),
        );
        o.avg = 16.0;
        assert_eq!(o.decide(), Some(true));
    }

    /// In the probabilistic region ECN-capable packets are marked and kept;
    /// Not-ECT ones are dropped.
    #[test]
    fn marks_ect_and_drops_the_rest() {
        let rate = Rate::from_mbps(12);
        let mut q = red(RedSpec::default());
        let mut b = Bench::new(rate, QueueLimit::Packets(1000));
        let gap = Duration::from_micros(1850);
        let mut arrivals = paced(0, 1, 20_000, 1500, Ecn::Ect0, Instant::ZERO, gap);
        arrivals.extend(paced(
            100_000,
            2,
            20_000,
            1500,
            Ecn::NotEct,
            Instant::ZERO,
            gap,
        ));
        b.offer_merged(&mut q, arrivals);
        b.drain(&mut q);
        assert!(b.dropped.iter().all(|d| d.0.flow == 2));
        let marks = b.sent.iter().filter(|s| s.0.ecn == Ecn::Ce).count();
        assert!(marks > 100, "{marks} marks");
        assert_eq!(q.tally().marks as usize, marks);
    }

    /// Step marking (RFC 8257 section 3.1): in a burst of back-to-back
    /// arrivals, those that find at most K = 10 packets queued pass
    /// unmarked and every later one is marked; Not-ECT arrivals past K are
    /// dropped instead. No average: the first burst on an empty queue is
    /// already marked.
    #[test]
    fn step_marks_every_arrival_above_k_packets() {
        let spec = RedSpec {
            min_th: 10.0,
            step: true,
            ..RedSpec::default()
        };
        let burst = |ecn: Ecn| {
            let mut q = red(spec.clone());
            let mut b = Bench::new(Rate::from_mbps(12), QueueLimit::Packets(1000));
            let gap = Duration::from_micros(1);
            for p in paced(0, 1, 30, 1500, ecn, Instant::ZERO, gap) {
                b.offer(&mut q, p);
            }
            b.drain(&mut q);
            (
                b.sent.iter().map(|s| s.0).collect::<Vec<_>>(),
                b.dropped.len(),
                q,
            )
        };
        let (sent, dropped, q) = burst(Ecn::Ect0);
        assert_eq!(dropped, 0);
        let clear = sent.iter().take_while(|p| p.ecn == Ecn::Ect0).count();
        // K queued plus the one in service (not counted as queued)
        assert!((11..=12).contains(&clear), "{clear} unmarked");
        assert!(sent[clear..].iter().all(|p| p.ecn == Ecn::Ce));
        assert_eq!(q.tally().marks as usize, 30 - clear);
        let (sent, dropped, _) = burst(Ecn::NotEct);
        assert_eq!((sent.len(), dropped), (clear, 30 - clear));
    }

    /// Step mode ignores `max_th`, so K may be set above its default.
    #[test]
    fn step_needs_no_upper_threshold() {
        let spec = RedSpec {
            min_th: 40.0,
            step: true,
            ..RedSpec::default()
        };
        assert!(QdiscSpec::Red(spec.clone()).validate().is_ok());
        assert!(QdiscSpec::Red(RedSpec {
            step: false,
            ..spec
        })
        .validate()
        .is_err());
    }
}
