//! CoDel, "Controlled Delay Active Queue Management" (Nichols, Jacobson,
//! McGregor and Iyengar, RFC 8289, 2018), after the paper (Nichols and
//! Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012).
//!
//! The rules, from the RFC's section 5 pseudocode (written here in our own
//! code):
//! * a packet's sojourn time is measured when it leaves the queue
//!   (section 5.4: a timestamp at enqueue);
//! * `dodequeue` (section 5.5): the sojourn being below TARGET, or the
//!   queue holding at most `maxpacket` bytes after the dequeue, resets
//!   `first_above_time`; otherwise the first such packet sets it to now +
//!   INTERVAL, and from then on "ok to drop" once now reaches it;
//! * in the dropping state, each time now reaches `drop_next` the packet is
//!   dropped, `count` grows by one and the next drop is scheduled by the
//!   control law, `drop_next + INTERVAL / sqrt(count)` (section 5.6); a
//!   packet not ok to drop leaves the state;
//! * entering the state drops the packet and starts from `count` = 1, or
//!   from the count the last episode added if that was more than one and
//!   the last drop is less than 16 intervals ago;
//! * an empty queue leaves the dropping state.
//!
//! ECN: an ECN-capable packet that the rules would drop is marked CE
//! instead and sent (RFC 3168 section 5 lets a router mark in place of a
//! drop); the mark counts as a drop for `count` and the control law, and
//! the dequeue ends with it, as in Linux's `codel_dequeue`. The RFC's
//! pseudocode has no ECN; this is the one choice we made. "16 intervals
//! ago" is read with the time since the last scheduled drop saturating at
//! zero (a drop scheduled in the future counts as recent), as Linux's
//! signed comparison does; the RFC's unsigned C would wrap.

use super::fifo::Fifo;
use super::spec::CodelSpec;
use super::{fits, Ctx, DropCause, Dropped, Enqueued, Metrics, Queued, Tally};
use wavelab_tcp::{Duration, Instant};

/// CoDel's constants.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// TARGET.
    pub target: Duration,
    /// INTERVAL.
    pub interval: Duration,
    /// `maxpacket`, bytes.
    pub mtu: u64,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl Params {
    /// From a scenario's parameters.
    pub fn of(s: &CodelSpec) -> Self {
        Params {
            target: s.target,
            interval: s.interval,
            mtu: s.mtu.0,
            ecn: s.ecn,
        }
    }
}

/// The control law (RFC 8289 section 5.6): `t + interval / sqrt(count)`.
pub fn control_law(t: Instant, interval: Duration, count: u32) -> Instant {
    let step = interval.as_nanos() as f64 / (count.max(1) as f64).sqrt();
    t + Duration::from_nanos(step as u64)
}

/// The state of one CoDel queue (RFC 8289 section 5.2).
#[derive(Clone, Copy, Debug, Default)]
pub struct Vars {
    /// When the sojourn time may have been above target for an interval.
    first_above: Option<Instant>,
    /// When the next drop is due in the dropping state.
    drop_next: Instant,
    /// Drops (and marks) since entering the dropping state, or the count
    /// it restarted from.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    /// In the dropping state.
    dropping: bool,
}

impl Vars {
    /// True in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The drop count.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// RFC 8289 `dodequeue`: takes the head and says whether it is ok to
    /// drop. `others` is backlog outside `q` that counts against `maxpacket`
    /// (zero but for FQ-CoDel's Linux rule).
    fn dodequeue<P: Queued>(
        &mut self,
        par: &Params,
        q: &mut Fifo<P>,
        now: Instant,
        others: u64,
        tally: &mut Tally,
    ) -> (Option<P>, bool) {
        let Some(p) = q.pop() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now.saturating_since(p.enqueued());
        tally.sojourn = sojourn;
        if sojourn < par.target || q.bytes() + others <= par.mtu {
            self.first_above = None;
            return (Some(p), false);
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + par.interval);
                (Some(p), false)
            }
            Some(t) => (Some(p), now >= t),
        }
    }

    /// RFC 8289 section 5.5 `dequeue` over queue `q`: the packet to send,
    /// if any; the packets dropped go to `dropped`.
    pub fn dequeue<P: Queued>(
        &mut self,
        par: &Params,
        q: &mut Fifo<P>,
        now: Instant,
        others: u64,
        tally: &mut Tally,
        dropped: &mut Dropped<P>,
    ) -> Option<P> {
        let (mut p, ok) = self.dodequeue(par, q, now, others, tally);
        if p.is_none() {
            // an empty queue takes us out of the dropping state
            self.dropping = false;
            return None;
        }
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count = self.count.saturating_add(1);
                let mut head = p.take().expect("a packet while dropping");
                if tally.signal(&mut head, par.ecn) {
                    self.drop_next = control_law(self.drop_next, par.interval, self.count);
                    return Some(head);
                }
                dropped.push((head, DropCause::Aqm));
                let (next, ok) = self.dodequeue(par, q, now, others, tally);
                p = next;
                if ok {
                    self.drop_next = control_law(self.drop_next, par.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok {
            let mut head = p.take().expect("checked above");
            if tally.signal(&mut head, par.ecn) {
                p = Some(head);
            } else {
                dropped.push((head, DropCause::Aqm));
                p = self.dodequeue(par, q, now, others, tally).0;
            }
            self.dropping = true;
            // a recent episode's drop rate is a good start (section 5.5)
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = if delta > 1 && now.saturating_since(self.drop_next) < par.interval * 16 {
                delta
            } else {
                1
            };
            self.drop_next = control_law(now, par.interval, self.count);
            self.lastcount = self.count;
        }
        p
    }
}

/// A CoDel queue.
#[derive(Clone, Debug)]
pub struct Codel<P> {
    par: Params,
    vars: Vars,
    q: Fifo<P>,
    tally: Tally,
}

impl<P: Queued> Codel<P> {
    /// An empty queue.
    pub fn new(s: &CodelSpec) -> Self {
        Codel {
            par: Params::of(s),
            vars: Vars::default(),
            q: Fifo::default(),
            tally: Tally::default(),
        }
    }

    /// Appends `p` if the buffer has room (section 5.4: CoDel itself never
    /// drops at the entrance).
    pub fn enqueue(&mut self, ctx: &Ctx, p: P, _: &mut Dropped<P>) -> Enqueued<P> {
        if !fits(ctx.limit, self.q.len(), self.q.bytes(), p.size()) {
            return Enqueued::Refused(p, DropCause::Queue);
        }
        self.q.push(p);
        Enqueued::Taken
    }

    /// The next packet to send.
    pub fn dequeue(&mut self, ctx: &Ctx, dropped: &mut Dropped<P>) -> Option<P> {
        self.vars
            .dequeue(&self.par, &mut self.q, ctx.now, 0, &mut self.tally, dropped)
    }

    /// Packets and bytes held.
    pub fn len(&self) -> (u64, u64) {
        (self.q.len(), self.q.bytes())
    }

    /// Marks, drops, sojourn.
    pub fn tally(&self) -> Tally {
        self.tally
    }

    /// Its state (dropping or not, the drop count).
    pub fn vars(&self) -> &Vars {
        &self.vars
    }
}

impl<P> Metrics for Codel<P> {
    fn metric_names(&self) -> &'static [&'static str] {
        &["sojourn", "drops", "marks", "dropping", "count"]
    }
    fn metrics(&self, out: &mut [f64]) {
        self.tally.write(out);
        out[3] = self.vars.dropping as u8 as f64;
        out[4] = self.vars.count as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{paced, Bench, Pkt};
    use super::super::{Ecn, Qdisc, QdiscSpec};
    use super::*;
    use crate::link::QueueLimit;
    use crate::rng::{Rng, Stream};
    use wavelab_tcp::Rate;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn codel(ecn: bool) -> Qdisc<Pkt> {
        let spec = QdiscSpec::Codel(CodelSpec {
            ecn,
            ..CodelSpec::default()
        });
        Qdisc::new(&spec, Rng::derive(1, Stream::LinkQdisc(0))).unwrap()
    }

    /// The control law: the n-th drop of an episode comes interval /
    /// sqrt(n) after the previous one (RFC 8289 section 5.6).
    #[test]
    fn control_law_spaces_drops_by_interval_over_sqrt_count() {
        let t = Instant::from_nanos(1_000_000_000);
        assert_eq!(control_law(t, ms(100), 1), t + ms(100));
        assert_eq!(control_law(t, ms(100), 4), t + ms(50));
        assert_eq!(control_law(t, ms(100), 100), t + ms(10));
    }

    /// An overloaded queue (arrivals at twice the service rate, far more
    /// than the buffer needs): the first drop comes one interval after the
    /// sojourn first exceeds the target, and the gaps between the drops of
    /// the episode follow interval / sqrt(n) to the nanosecond.
    #[test]
    fn drops_in_an_episode_follow_the_control_law() {
        // 1500 B at 12 Mbit/s: 1 ms each; arrivals every 0.5 ms
        let rate = Rate::from_mbps(12);
        let mut q = codel(false);
        let mut b = Bench::new(rate, QueueLimit::Packets(100_000));
        let start = Instant::ZERO;
        for p in paced(
            0,
            1,
            4000,
            1500,
            Ecn::NotEct,
            start,
            Duration::from_micros(500),
        ) {
            b.offer(&mut q, p);
        }
        b.drain(&mut q);
        let drops: Vec<Instant> = b.dropped.iter().map(|d| d.2).collect();
        assert!(drops.len() > 10, "{} drops", drops.len());
        // the sojourn passes 5 ms at about 10 ms (the queue grows by one
        // packet per ms): first_above ~ 110 ms, the first drop at the first
        // dequeue after it
        let first = drops[0].as_nanos() as f64 / 1e6;
        assert!((109.0..=112.0).contains(&first), "first drop at {first} ms");
        // entering the dropping state schedules the next drop an interval
        // later (count 1); the n-th drop after the first is scheduled
        // interval / sqrt(n) after the one before it. The dequeue that
        // finds it due comes at most one service time (1 ms) later, and the
        // schedule runs from the scheduled instants, not from the dequeues
        let mut next = drops[0];
        for (n, &d) in drops.iter().enumerate().skip(1).take(30) {
            next = control_law(next, ms(100), n as u32);
            assert!(
                d >= next && d < next + ms(1),
                "drop {n} at {d:?}, scheduled {next:?}"
            );
        }
    }

    /// With ECN the same episode marks instead: nothing is dropped (the
    /// buffer is large), every signal is a CE mark on an ECT packet, and a
    /// Not-ECT flow sharing the queue is dropped, never marked.
    #[test]
    fn ecn_capable_packets_are_marked_and_others_dropped() {
        let rate = Rate::from_mbps(12);
        let mut q = codel(true);
        let mut b = Bench::new(rate, QueueLimit::Packets(100_000));
        let gap = Duration::from_micros(1000);
        let mut arrivals = paced(0, 1, 2000, 1500, Ecn::Ect0, Instant::ZERO, gap);
        arrivals.extend(paced(
            10_000,
            2,
            2000,
            1500,
            Ecn::NotEct,
            Instant::ZERO,
            gap,
        ));
        b.offer_merged(&mut q, arrivals);
        b.drain(&mut q);
        let marked = b.sent.iter().filter(|(p, _)| p.ecn == Ecn::Ce).count();
        assert!(marked > 10, "{marked} marks");
        assert!(b
            .sent
            .iter()
            .all(|(p, _)| p.flow == 1 || p.ecn == Ecn::NotEct));
        assert!(b
            .dropped
            .iter()
            .all(|(p, c, _)| p.flow == 2 && *c == DropCause::Aqm));
        assert!(!b.dropped.is_empty());
        let t = q.tally();
        assert_eq!(t.marks as usize, marked);
        assert_eq!(t.drops as usize, b.dropped.len());
    }

    /// A queue that never holds more than one MTU beyond the packet leaving
    /// is never above target, however long that packet waited: a slow link
    /// (1 Mbit/s, 12 ms per packet) fed pairs of packets every 30 ms, the
    /// second of each waiting 12 ms.
    #[test]
    fn one_mtu_of_backlog_never_drops() {
        let rate = Rate::from_mbps(1);
        let mut q = codel(false);
        let mut b = Bench::new(rate, QueueLimit::Packets(1000));
        let mut arrivals = paced(0, 1, 2000, 1500, Ecn::NotEct, Instant::ZERO, ms(30));
        arrivals.extend(paced(
            5000,
            1,
            2000,
            1500,
            Ecn::NotEct,
            Instant::ZERO,
            ms(30),
        ));
        b.offer_merged(&mut q, arrivals);
        b.drain(&mut q);
        assert!(b.dropped.is_empty(), "{} drops", b.dropped.len());
        assert_eq!(q.tally().sojourn, ms(12));
    }
}
