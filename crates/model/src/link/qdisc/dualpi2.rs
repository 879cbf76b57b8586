//! DualPI2, the DualQ Coupled AQM with a PI2 base (De Schepper, Briscoe and
//! White, "Dual-Queue Coupled Active Queue Management (AQM) for Low Latency,
//! Low Loss, and Scalable Throughput (L4S)", RFC 9332, 2023; Appendix A's
//! example algorithm, in our own code).
//!
//! * Classification (Appendix A, enqueue): ECT(1) and CE packets join the
//!   L4S queue (L), Not-ECT and ECT(0) the Classic queue (C). The buffer
//!   (the link's `queue`) is shared.
//! * The base PI controller, every Tupdate: `p' += alpha (curq - target) +
//!   beta (curq - prevq)`, kept in [0, 1], where curq is the sojourn of C's
//!   head (`pi_delay = "max"`: the larger of both heads', as Linux's
//!   dualpi2); the coupled probabilities are p_CL = k p' for L and p_C =
//!   p'^2 for C (section 2.1: the square counters the classic sender's
//!   1/sqrt(p) response).
//! * Dequeue: the scheduler picks a queue; from L, the native ramp p'_L on
//!   the departing packet's sojourn (0 below minTh, 1 from minTh + range,
//!   linear between; 0 while L holds at most Th_len packets after the
//!   dequeue) combines with the coupling as p_L = max(p'_L, p_CL) and the
//!   packet is marked with it; from C, the packet is dropped (Not-ECT) or
//!   marked (ECT(0)) with p_C.
//! * Overload: once p_CL reaches 1 (p_Lmax), L's packets are dropped with
//!   p_C and the rest marked with p_CL; once p_C reaches p_Cmax = min(1/k^2,
//!   1), C's ECN-capable packets are dropped instead of marked.
//! * The "with probability" of each of these is the Appendix's `recur()`
//!   (a running sum per queue that fires each time it passes 1), or an
//!   independent draw with `draw = "random"`.
//! * The scheduler is our choice (the RFC leaves it open, section 4.2.2):
//!   Linux's weighted round robin on bytes, C getting `classic_weight` of
//!   the link while both queues hold packets; either queue alone gets it
//!   all.
//!
//! The updates run at multiples of Tupdate from the start of the run,
//! lazily (see [`super`]).

use super::fifo::Fifo;
use super::spec::{Draw, DualPi2Spec, PiDelay};
use super::{fits, Ctx, DropCause, Dropped, Enqueued, Metrics, Queued, Tally};
use crate::rng::Rng;
use wavelab_tcp::{Duration, Instant};

/// Weights are in thousandths.
const WEIGHT_SCALE: i64 = 1000;

/// A DualPI2 discipline.
#[derive(Clone, Debug)]
pub struct DualPi2<P> {
    target: Duration,
    t_update: Duration,
    alpha: f64,
    beta: f64,
    k: f64,
    min_th: Duration,
    range: Duration,
    th_len: u64,
    p_cmax: f64,
    draw: Draw,
    pi_delay: PiDelay,
    /// The scheduler's weights (thousandths) and credit (bytes times
    /// thousandths; L is served while it is not positive).
    wc: i64,
    wl: i64,
    credit: i64,
    credit_init: i64,
    rng: Rng,
    l: Fifo<P>,
    c: Fifo<P>,
    /// The base probability p' and the coupled ones.
    p: f64,
    p_cl: f64,
    p_c: f64,
    prevq: Duration,
    /// `recur()`'s running sums.
    l_sum: f64,
    c_sum: f64,
    next_update: Instant,
    tally: Tally,
    sojourn_l: Duration,
    sojourn_c: Duration,
}

impl<P: Queued> DualPi2<P> {
    /// An empty discipline.
    pub fn new(s: &DualPi2Spec, rng: Rng) -> Self {
        let wc = (s.classic_weight * WEIGHT_SCALE as f64).round() as i64;
        let wl = WEIGHT_SCALE - wc;
        let credit_init = s.mtu.0 as i64 * (wc - wl);
        DualPi2 {
            target: s.target,
            t_update: s.t_update(),
            alpha: s.alpha(),
            beta: s.beta(),
            k: s.k,
            min_th: s.min_th,
            range: s.range,
            th_len: s.th_len as u64,
            p_cmax: (1.0 / (s.k * s.k)).min(1.0),
            draw: s.draw,
            pi_delay: s.pi_delay,
            wc,
            wl,
            credit: credit_init,
            credit_init,
            rng,
            l: Fifo::default(),
            c: Fifo::default(),
            p: 0.0,
            p_cl: 0.0,
            p_c: 0.0,
            prevq: Duration::ZERO,
            l_sum: 0.0,
            c_sum: 0.0,
            next_update: Instant::ZERO + s.t_update(),
            tally: Tally::default(),
            sojourn_l: Duration::ZERO,
            sojourn_c: Duration::ZERO,
        }
    }

    /// Runs the updates due up to `now`.
    pub fn advance(&mut self, now: Instant) {
        while self.next_update <= now {
            if self.l.is_empty() && self.c.is_empty() && self.p == 0.0 && self.prevq.is_zero() {
                // an empty queue at rest stays at rest
                let k = (now - self.next_update).as_nanos() / self.t_update.as_nanos();
                self.next_update += self.t_update * (k + 1);
                break;
            }
            let at = self.next_update;
            self.update(at);
            self.next_update += self.t_update;
        }
    }

    /// The head's sojourn of a queue at `now`, zero if it is empty.
    fn head_delay(q: &Fifo<P>, now: Instant) -> Duration {
        q.front()
            .map_or(Duration::ZERO, |p| now.saturating_since(p.enqueued()))
    }

    /// The PI2 update (Appendix A).
    fn update(&mut self, now: Instant) {
        let mut curq = Self::head_delay(&self.c, now);
        if self.pi_delay == PiDelay::Max {
            curq = curq.max(Self::head_delay(&self.l, now));
        }
        let secs = |d: Duration| d.as_secs_f64();
        self.p += self.alpha * (secs(curq) - secs(self.target))
            + self.beta * (secs(curq) - secs(self.prevq));
        self.p = self.p.clamp(0.0, 1.0);
        self.p_cl = self.k * self.p;
        self.p_c = self.p * self.p;
        self.prevq = curq;
    }

    /// True with likelihood `p`, for queue L (`l`) or C.
    fn roll(&mut self, l: bool, p: f64) -> bool {
        match self.draw {
            Draw::Recur => {
                let sum = if l { &mut self.l_sum } else { &mut self.c_sum };
                *sum += p;
                if *sum > 1.0 {
                    *sum -= 1.0;
                    true
                } else {
                    false
                }
            }
            Draw::Random => self.rng.chance(p),
        }
    }

    /// The native L4S ramp on a sojourn.
    fn laqm(&self, sojourn: Duration) -> f64 {
        if sojourn >= self.min_th + self.range {
            1.0
        } else if sojourn > self.min_th {
            (sojourn - self.min_th).as_nanos() as f64 / self.range.as_nanos() as f64
        } else {
            0.0
        }
    }

    /// Offers `p`: into L if it carries the L4S identifier, else into C.
    pub fn enqueue(&mut self, ctx: &Ctx, p: P, _: &mut Dropped<P>) -> Enqueued<P> {
        self.advance(ctx.now);
        let (n, b) = self.len();
        if !fits(ctx.limit, n, b, p.size()) {
            return Enqueued::Refused(p, DropCause::Queue);
        }
        if p.ecn().is_l4s() {
            self.l.push(p);
        } else {
            self.c.push(p);
        }
        Enqueued::Taken
    }

    /// The next packet to send (Appendix A's dequeue).
    pub fn dequeue(&mut self, ctx: &Ctx, dropped: &mut Dropped<P>) -> Option<P> {
        self.advance(ctx.now);
        loop {
            let both = !self.l.is_empty() && !self.c.is_empty();
            let from_l = match (self.l.is_empty(), self.c.is_empty()) {
                (true, true) => {
                    self.credit = self.credit_init;
                    return None;
                }
                (false, true) => true,
                (true, false) => false,
                (false, false) => self.credit <= 0,
            };
            if from_l {
                let mut p = self.l.pop().expect("L holds packets");
                let sojourn = ctx.now.saturating_since(p.enqueued());
                self.sojourn_l = sojourn;
                self.tally.sojourn = sojourn;
                if self.p_cl < 1.0 {
                    let native = if self.l.len() > self.th_len {
                        self.laqm(sojourn)
                    } else {
                        0.0
                    };
                    if self.roll(true, native.max(self.p_cl)) {
                        self.tally.signal(&mut p, true);
                    }
                } else {
                    // overload: classic drops first, then linear marks
                    if self.roll(true, self.p_c) {
                        self.tally.drops += 1;
                        dropped.push((p, DropCause::Aqm));
                        continue;
                    }
                    if self.roll(true, self.p_cl) {
                        self.tally.signal(&mut p, true);
                    }
                }
                if both {
                    self.credit += self.wc * p.size() as i64;
                }
                return Some(p);
            }
            let mut p = self.c.pop().expect("C holds packets");
            let sojourn = ctx.now.saturating_since(p.enqueued());
            self.sojourn_c = sojourn;
            self.tally.sojourn = sojourn;
            if self.roll(false, self.p_c) {
                let mark = self.p_c < self.p_cmax;
                if !self.tally.signal(&mut p, mark) {
                    dropped.push((p, DropCause::Aqm));
                    continue;
                }
            }
            if both {
                self.credit -= self.wl * p.size() as i64;
            }
            return Some(p);
        }
    }

    /// Packets and bytes held in both queues.
    pub fn len(&self) -> (u64, u64) {
        (self.l.len() + self.c.len(), self.l.bytes() + self.c.bytes())
    }

    /// Marks, drops, sojourn.
    pub fn tally(&self) -> Tally {
        self.tally
    }

    /// (p', p_C, p_CL).
    pub fn probabilities(&self) -> (f64, f64, f64) {
        (self.p, self.p_c, self.p_cl)
    }
}

impl<P> Metrics for DualPi2<P> {
    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "sojourn",
            "drops",
            "marks",
            "p",
            "p_c",
            "p_cl",
            "sojourn_l",
            "sojourn_c",
            "packets_l",
            "packets_c",
        ]
    }
    fn metrics(&self, out: &mut [f64]) {
        self.tally.write(out);
        out[3] = self.p;
        out[4] = self.p_c;
        out[5] = self.p_cl;
        out[6] = self.sojourn_l.as_secs_f64();
        out[7] = self.sojourn_c.as_secs_f64();
        out[8] = self.l.len() as f64;
        out[9] = self.c.len() as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{paced, Bench, Pkt};
    use super::super::{Ecn, Qdisc};
    use super::*;
    use crate::link::QueueLimit;
    use crate::rng::Stream;
    use wavelab_tcp::Rate;

    fn dualpi2(s: DualPi2Spec) -> DualPi2<Pkt> {
        DualPi2::new(&s, Rng::derive(2, Stream::LinkQdisc(0)))
    }

    /// The coupling: after every update p_C = (p_CL / k)^2, k = 2; driven by
    /// a Classic queue held at 30 ms the base probability climbs, and the
    /// relation holds at every step.
    #[test]
    fn coupling_is_the_square_of_the_scaled_probability() {
        let mut d = dualpi2(DualPi2Spec::default());
        // a Classic packet waiting from t = 0 and one arriving every update
        let mut t = Instant::ZERO;
        for i in 0..200 {
            let ctx = Ctx {
                now: t,
                limit: QueueLimit::Packets(10_000),
                rate: Rate::from_mbps(10),
            };
            let p = Pkt {
                id: i,
                flow: 1,
                size: 1500,
                ecn: Ecn::NotEct,
                at: t,
            };
            let _ = d.enqueue(&ctx, p, &mut vec![]);
            if i >= 2 {
                // keep the head 30 ms old
                let _ = d.c.pop();
            }
            t += Duration::from_millis(15);
            d.advance(t);
            let (p, p_c, p_cl) = d.probabilities();
            assert!(
                (p_c - (p_cl / 2.0).powi(2)).abs() < 1e-15,
                "{p} {p_c} {p_cl}"
            );
        }
        let (p, _, _) = d.probabilities();
        assert!(p > 0.3, "p' = {p} after 3 s at twice the target");
    }

    /// `recur()` fires exactly once per 1/p packets: p = 0.25 marks every
    /// fourth of 1000 L packets.
    #[test]
    fn recur_is_derandomised() {
        let mut d = dualpi2(DualPi2Spec::default());
        let fired = (0..1000).filter(|_| d.roll(true, 0.25)).count();
        assert_eq!(fired, 249, "the sum passes 1 on the 5th, then every 4th");
    }

    /// Both queues backlogged (the controllers inert): the scheduler gives
    /// C its weight, a tenth of the packets, and L the rest.
    #[test]
    fn the_scheduler_gives_the_classic_queue_its_weight() {
        let rate = Rate::from_mbps(12);
        let inert = DualPi2Spec {
            alpha: Some(0.0),
            beta: Some(0.0),
            min_th: Duration::from_secs(10),
            ..DualPi2Spec::default()
        };
        let mut q = Qdisc::DualPi2(Box::new(dualpi2(inert)));
        let mut b = Bench::new(rate, QueueLimit::Packets(100_000));
        let gap = Duration::from_micros(1000);
        let mut arrivals = paced(0, 1, 5000, 1500, Ecn::Ect0, Instant::ZERO, gap);
        arrivals.extend(paced(100_000, 2, 5000, 1500, Ecn::Ect1, Instant::ZERO, gap));
        b.offer_merged(&mut q, arrivals);
        let sent: Vec<u64> = b.sent.iter().take(4000).map(|s| s.0.flow).collect();
        let share = sent.iter().filter(|&&f| f == 2).count() as f64 / sent.len() as f64;
        assert!((share - 0.9).abs() < 0.005, "L share {share}");
        assert_eq!(q.tally().marks + q.tally().drops, 0);
    }

    /// The native ramp: an L4S stream at twice the rate builds a queue whose
    /// sojourn passes minTh + range within milliseconds; from then on every
    /// departing packet with more than one behind it is marked (`recur()`
    /// at probability 1 fires on all but the first).
    #[test]
    fn the_l4s_ramp_marks_a_standing_queue() {
        let rate = Rate::from_mbps(12);
        let mut q = Qdisc::DualPi2(Box::new(dualpi2(DualPi2Spec::default())));
        let mut b = Bench::new(rate, QueueLimit::Packets(100_000));
        for p in paced(
            0,
            1,
            400,
            1500,
            Ecn::Ect1,
            Instant::ZERO,
            Duration::from_micros(500),
        ) {
            b.offer(&mut q, p);
        }
        b.drain(&mut q);
        let late: Vec<&(Pkt, Instant)> = b
            .sent
            .iter()
            .filter(|(p, s)| (*s - p.at) >= Duration::from_micros(1200))
            .collect();
        let unmarked = late.iter().filter(|(p, _)| p.ecn != Ecn::Ce).count();
        // the last two leave with at most one packet behind them
        assert!(
            late.len() > 300 && unmarked <= 3,
            "{unmarked} of {}",
            late.len()
        );
        assert!(b.dropped.is_empty());
    }
}
