//! PIE, "Proportional Integral Controller Enhanced" (Pan, Natarajan, Baker
//! and White, RFC 8033, 2017).
//!
//! The rules, from the RFC (in our own code):
//! * random dropping at the entrance (section 4.1): a packet is dropped
//!   with probability `drop_prob`, except while the burst allowance lasts,
//!   while the previous delay estimate is below half the target and the
//!   probability below 20 %, or while the queue holds at most two
//!   `mean_packet`s;
//! * every T_UPDATE (section 4.2): `p = alpha (qdelay - QDELAY_REF) + beta
//!   (qdelay - qdelay_old)`, scaled down while `drop_prob` is small (by
//!   2048 below 0.000001, 512 below 0.00001, 128 below 0.0001, 32 below
//!   0.001, 8 below 0.01, 2 below 0.1), added to `drop_prob`, which decays
//!   by 2 % when both delay estimates are zero and stays in [0, 1];
//! * the delay (section 4.3) is the sojourn of the packet last dequeued
//!   (the timestamp method; zero once the queue is empty);
//! * burst tolerance (section 4.4): the allowance starts at MAX_BURST, loses
//!   T_UPDATE at each update, and is reset to MAX_BURST when `drop_prob` is
//!   zero and both delay estimates are below half the target;
//! * ECN (section 5.1): an ECN-capable packet is marked instead of dropped
//!   while `drop_prob` is below `mark_threshold`;
//! * derandomisation (section 5.4, off by default): `accu_prob` sums the
//!   probability over arrivals; no drop below 0.85, a drop at 8.5;
//! * Cap Drop Adjustment (section 5.5, on by default): at 10 % or more, one
//!   update raises the probability by at most 2 %.
//!
//! `profile = "linux"` applies what Linux's sch_pie does instead: 2 % more
//! per update while the delay exceeds 250 ms, a decay of 1/64 instead of
//! 2 %, derandomisation always, the current delay (not the previous one)
//! tested against half the target, and the drop probability scaled only
//! below 10 % (the same scale steps).
//!
//! The updates run at multiples of T_UPDATE from the start of the run,
//! lazily (see [`super`]).

use super::fifo::Fifo;
use super::spec::{PieSpec, Profile};
use super::{fits, Ctx, DropCause, Dropped, Enqueued, Metrics, Queued, Tally};
use crate::rng::Rng;
use wavelab_tcp::{Duration, Instant};

/// A PIE queue.
#[derive(Clone, Debug)]
pub struct Pie<P> {
    s: PieSpec,
    rng: Rng,
    q: Fifo<P>,
    /// drop_prob.
    p: f64,
    /// The current delay estimate.
    qdelay: Duration,
    /// The estimate at the previous update.
    qdelay_old: Duration,
    /// The burst allowance left.
    burst: Duration,
    /// accu_prob (derandomisation).
    accu: f64,
    /// When the next update is due.
    next_update: Instant,
    tally: Tally,
}

impl<P: Queued> Pie<P> {
    /// An empty queue, its first update due T_UPDATE after the start.
    pub fn new(s: PieSpec, rng: Rng) -> Self {
        Pie {
            rng,
            q: Fifo::default(),
            p: 0.0,
            qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst: s.max_burst,
            accu: 0.0,
            next_update: Instant::ZERO + s.t_update,
            tally: Tally::default(),
            s,
        }
    }

    fn linux(&self) -> bool {
        self.s.profile == Profile::Linux
    }

    /// Runs the updates due up to `now`.
    pub fn advance(&mut self, now: Instant) {
        while self.next_update <= now {
            if self.at_rest() {
                // an idle queue's updates change nothing: skip to the last
                let k = (now - self.next_update).as_nanos() / self.s.t_update.as_nanos();
                self.next_update += self.s.t_update * (k + 1);
                break;
            }
            self.update();
            self.next_update += self.s.t_update;
        }
    }

    /// True if an update would leave the state as it is.
    fn at_rest(&self) -> bool {
        self.p == 0.0
            && self.qdelay.is_zero()
            && self.qdelay_old.is_zero()
            && self.burst == self.s.max_burst
    }

    /// One update of the drop probability (section 4.2) and of the burst
    /// allowance (section 4.4).
    fn update(&mut self) {
        let (qd, old) = (self.qdelay, self.qdelay_old);
        let secs = |d: Duration| d.as_secs_f64();
        let reference = secs(self.s.target);
        let mut dp = self.s.alpha * (secs(qd) - reference) + self.s.beta * (secs(qd) - secs(old));
        let p = self.p;
        // the smaller the probability, the smaller its steps
        dp /= if p < 0.000_001 {
            2048.0
        } else if p < 0.000_01 {
            512.0
        } else if p < 0.000_1 {
            128.0
        } else if p < 0.001 {
            32.0
        } else if p < 0.01 {
            8.0
        } else if p < 0.1 {
            2.0
        } else {
            1.0
        };
        if self.s.cap_drop_adjustment && p >= 0.1 && dp > 0.02 {
            dp = 0.02;
        }
        if self.linux() && qd > Duration::from_millis(250) {
            dp += 0.02;
        }
        let mut next = p + dp;
        if qd.is_zero() && old.is_zero() {
            next = if self.linux() {
                next - next / 64.0
            } else {
                next * 0.98
            };
        }
        self.p = next.clamp(0.0, 1.0);
        self.burst = self.burst.saturating_sub(self.s.t_update);
        let half = self.s.target / 2;
        if self.p == 0.0 && qd < half && old < half {
            self.burst = self.s.max_burst;
        }
        self.qdelay_old = qd;
    }

    /// Section 4.1's decision for an arrival: true to drop (or mark).
    fn drop_early(&mut self) -> bool {
        if !self.burst.is_zero() {
            return false;
        }
        let guard = if self.linux() {
            self.qdelay
        } else {
            self.qdelay_old
        };
        if (guard < self.s.target / 2 && self.p < 0.2) || self.q.bytes() <= 2 * self.s.mean_packet.0
        {
            return false;
        }
        if self.s.derandomize || self.linux() {
            if self.p == 0.0 {
                self.accu = 0.0;
            }
            self.accu += self.p;
            if self.accu < 0.85 {
                return false;
            }
            if self.accu >= 8.5 {
                return true;
            }
        }
        self.rng.chance(self.p)
    }

    /// Offers `p`.
    pub fn enqueue(&mut self, ctx: &Ctx, mut p: P, _: &mut Dropped<P>) -> Enqueued<P> {
        self.advance(ctx.now);
        if !fits(ctx.limit, self.q.len(), self.q.bytes(), p.size()) {
            self.accu = 0.0;
            return Enqueued::Refused(p, DropCause::Queue);
        }
        if self.drop_early() {
            let mark = self.s.ecn && p.ecn().is_capable() && self.p < self.s.mark_threshold;
            if !self.tally.signal(&mut p, mark) {
                self.accu = 0.0;
                return Enqueued::Refused(p, DropCause::Aqm);
            }
        }
        self.q.push(p);
        Enqueued::Taken
    }

    /// The head; its sojourn becomes the delay estimate.
    pub fn dequeue(&mut self, ctx: &Ctx, _: &mut Dropped<P>) -> Option<P> {
        self.advance(ctx.now);
        let p = self.q.pop()?;
        let sojourn = ctx.now.saturating_since(p.enqueued());
        self.tally.sojourn = sojourn;
        self.qdelay = if self.q.is_empty() {
            Duration::ZERO
        } else {
            sojourn
        };
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

    /// The drop probability.
    pub fn probability(&self) -> f64 {
        self.p
    }
}

impl<P> Metrics for Pie<P> {
    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "sojourn",
            "drops",
            "marks",
            "p",
            "qdelay",
            "burst_allowance",
        ]
    }
    fn metrics(&self, out: &mut [f64]) {
        self.tally.write(out);
        out[3] = self.p;
        out[4] = self.qdelay.as_secs_f64();
        out[5] = self.burst.as_secs_f64();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{paced, Bench, Pkt};
    use super::super::{Ecn, Qdisc, QdiscSpec};
    use super::*;
    use crate::link::QueueLimit;
    use crate::rng::Stream;
    use wavelab_tcp::Rate;

    fn pie(s: PieSpec) -> Qdisc<Pkt> {
        Qdisc::new(&QdiscSpec::Pie(s), Rng::derive(9, Stream::LinkQdisc(0))).unwrap()
    }

    /// An unresponsive flow at 1.25 times the rate: the drop probability
    /// converges to the excess (0.2) and holds the delay near the 15 ms
    /// target; before, the burst allowance lets the first 150 ms through.
    #[test]
    fn drop_probability_converges_to_hold_the_target() {
        let rate = Rate::from_mbps(12);
        let mut q = pie(PieSpec::default());
        let mut b = Bench::new(rate, QueueLimit::Packets(10_000));
        let n = 60_000; // 48 s
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
        let Qdisc::Pie(pie) = &q else { unreachable!() };
        let p = pie.probability();
        assert!((0.17..0.23).contains(&p), "drop probability {p}");
        b.drain(&mut q);
        assert!(b.dropped.iter().all(|d| d.1 == DropCause::Aqm));
        // no drop within the burst allowance
        let first = b.dropped[0].2;
        assert!(
            first >= Instant::ZERO + Duration::from_millis(150),
            "{first:?}"
        );
        // the waits of the last 20 s
        let late: Vec<f64> = b
            .sent
            .iter()
            .filter(|(p, _)| p.at > Instant::ZERO + Duration::from_secs(28))
            .map(|(p, s)| (*s - p.at).as_secs_f64() * 1e3)
            .collect();
        let mean = late.iter().sum::<f64>() / late.len() as f64;
        assert!((10.0..20.0).contains(&mean), "mean wait {mean} ms");
    }

    /// One update from known delays follows section 4.2 to the last digit:
    /// at p = 0.05 (scaled by 1/2), qdelay 25 ms, previous 20 ms:
    /// p += (0.125 * 0.010 + 1.25 * 0.005) / 2.
    #[test]
    fn an_update_is_section_4_2s_arithmetic() {
        let mut p: Pie<Pkt> = Pie::new(PieSpec::default(), Rng::derive(1, Stream::LinkQdisc(0)));
        p.p = 0.05;
        p.qdelay = Duration::from_millis(25);
        p.qdelay_old = Duration::from_millis(20);
        p.update();
        let want = 0.05 + (0.125 * 0.010 + 1.25 * 0.005) / 2.0;
        assert!((p.p - want).abs() < 1e-15, "{} vs {want}", p.p);
        assert_eq!(p.qdelay_old, Duration::from_millis(25));
        // a big step at 10 % or more is capped at 2 %
        p.p = 0.3;
        p.qdelay = Duration::from_millis(200);
        p.update();
        assert!((p.p - 0.32).abs() < 1e-12, "{}", p.p);
        // two zero delays decay it by 2 %, after the step (halved below 10 %)
        p.qdelay = Duration::ZERO;
        p.update();
        let before = p.p;
        assert!(before < 0.1 && p.qdelay_old.is_zero());
        p.update();
        let step = 0.125 * -0.015 / 2.0;
        assert!((p.p - (before + step) * 0.98).abs() < 1e-12, "{}", p.p);
    }

    /// With ECN, ECT packets are marked while p is below 10 % and dropped
    /// at or above it: an unresponsive ECT flow 5 % above the rate is
    /// marked until p reaches 10 %, then dropped, which relieves the queue
    /// and brings p back under 10 %, so marks and drops alternate.
    #[test]
    fn marks_below_the_threshold_and_drops_above() {
        let rate = Rate::from_mbps(12);
        let mut q = pie(PieSpec::default());
        let mut b = Bench::new(rate, QueueLimit::Packets(100_000));
        for p in paced(
            0,
            1,
            40_000,
            1500,
            Ecn::Ect0,
            Instant::ZERO,
            Duration::from_micros(952),
        ) {
            b.offer(&mut q, p);
        }
        b.drain(&mut q);
        let marks = b.sent.iter().filter(|s| s.0.ecn == Ecn::Ce).count();
        assert!(marks > 100, "{marks} marks");
        assert!(!b.dropped.is_empty(), "drops once p passes 10 %");
        assert_eq!(q.tally().marks as usize, marks);
        assert_eq!(q.tally().drops as usize, b.dropped.len());
    }
}
