//! FQ-CoDel, "The Flow Queue CoDel Packet Scheduler and Active Queue
//! Management Algorithm" (Hoeiland-Joergensen, McKenney, Taht, Gettys and
//! Dumazet, RFC 8290, 2018).
//!
//! The rules, from the RFC (in our own code):
//! * enqueue (section 4.1): a packet's flow key is hashed, with a
//!   perturbation drawn per direction from the run's seed, into one of
//!   `flows` queues and appended to it; a queue that is not on either list
//!   joins the end of the list of new queues with a deficit of one quantum.
//!   When the buffer (the link's `queue`) is full, packets are dropped from
//!   the head of the queue holding the most bytes (`drop_batch` of them; 1
//!   by default; with more, Linux's rule: at most that many, stopping once
//!   half that queue's bytes are gone);
//! * dequeue (section 4.2): the first queue of the new list, else of the old
//!   list, is served: if its deficit is not positive it gains a quantum and
//!   moves to the end of the old list; otherwise its CoDel ([`super::codel`])
//!   dequeues a packet and the deficit shrinks by the packet's size. A queue
//!   whose CoDel returns nothing leaves its list, except that a new queue
//!   moves to the end of the old list while that list is not empty (so that
//!   a flow cannot stay "new" by emptying its queue each round);
//! * each queue's CoDel compares its own backlog with `mtu` (section 4.2:
//!   each queue is managed by CoDel); `backlog = "total"` compares the
//!   whole discipline's, as Linux's fq_codel does.

use super::codel::{Params, Vars};
use super::fifo::Fifo;
use super::spec::{Backlog, FqCodelSpec};
use super::{mix, Ctx, DropCause, Dropped, Enqueued, Metrics, Queued, Tally};
use crate::link::QueueLimit;
use crate::rng::Rng;
use std::collections::VecDeque;

/// One flow queue.
#[derive(Clone, Debug)]
struct Flow<P> {
    q: Fifo<P>,
    deficit: i64,
    vars: Vars,
    /// On the new or the old list.
    listed: bool,
}

impl<P> Default for Flow<P> {
    fn default() -> Self {
        Flow {
            q: Fifo::default(),
            deficit: 0,
            vars: Vars::default(),
            listed: false,
        }
    }
}

/// An FQ-CoDel discipline.
#[derive(Clone, Debug)]
pub struct FqCodel<P> {
    par: Params,
    quantum: i64,
    drop_batch: u32,
    backlog: Backlog,
    perturbation: u64,
    flows: Vec<Flow<P>>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    packets: u64,
    bytes: u64,
    tally: Tally,
    /// Queues that joined the new list so far.
    new_flows: u64,
}

impl<P: Queued> FqCodel<P> {
    /// An empty discipline; the hash perturbation is drawn from `rng`.
    pub fn new(s: &FqCodelSpec, mut rng: Rng) -> Self {
        FqCodel {
            par: Params {
                target: s.target,
                interval: s.interval,
                mtu: s.mtu.0,
                ecn: s.ecn,
            },
            quantum: s.quantum.0 as i64,
            drop_batch: s.drop_batch,
            backlog: s.backlog,
            perturbation: rng.next_u64(),
            flows: (0..s.flows).map(|_| Flow::default()).collect(),
            new: VecDeque::new(),
            old: VecDeque::new(),
            packets: 0,
            bytes: 0,
            tally: Tally::default(),
            new_flows: 0,
        }
    }

    /// The queue a flow key hashes to.
    fn index(&self, key: u64) -> usize {
        let h = mix(key ^ self.perturbation);
        ((h as u128 * self.flows.len() as u128) >> 64) as usize
    }

    /// Appends `p` to its flow's queue; if the buffer is then over its
    /// limit, drops from the fattest queue's head.
    pub fn enqueue(&mut self, ctx: &Ctx, p: P, dropped: &mut Dropped<P>) -> Enqueued<P> {
        let i = self.index(p.flow_key());
        self.packets += 1;
        self.bytes += p.size() as u64;
        let f = &mut self.flows[i];
        f.q.push(p);
        if !f.listed {
            f.listed = true;
            f.deficit = self.quantum;
            self.new.push_back(i as u32);
            self.new_flows += 1;
        }
        while self.over(ctx.limit) {
            self.drop_from_fattest(dropped);
        }
        Enqueued::Taken
    }

    fn over(&self, limit: QueueLimit) -> bool {
        match limit {
            QueueLimit::Packets(k) => self.packets > k as u64,
            QueueLimit::Bytes(b) => self.bytes > b,
        }
    }

    /// Drops from the head of the queue holding the most bytes.
    fn drop_from_fattest(&mut self, dropped: &mut Dropped<P>) {
        let (i, _) = self
            .flows
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.q.bytes(), std::cmp::Reverse(*i)))
            .expect("at least one queue");
        let f = &mut self.flows[i];
        let half = f.q.bytes() / 2;
        let mut gone = 0;
        for k in 0..self.drop_batch {
            if k > 0 && gone >= half {
                break;
            }
            let Some(p) = f.q.pop() else { break };
            gone += p.size() as u64;
            self.packets -= 1;
            self.bytes -= p.size() as u64;
            dropped.push((p, DropCause::Queue));
        }
    }

    /// The next packet to send.
    pub fn dequeue(&mut self, ctx: &Ctx, dropped: &mut Dropped<P>) -> Option<P> {
        loop {
            let (from_new, i) = match (self.new.front(), self.old.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let f = &mut self.flows[i];
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                self.pop_list(from_new);
                self.old.push_back(i as u32);
                continue;
            }
            let others = match self.backlog {
                Backlog::Queue => 0,
                Backlog::Total => self.bytes - f.q.bytes(),
            };
            let (n0, b0) = (f.q.len(), f.q.bytes());
            let got = f.vars.dequeue(
                &self.par,
                &mut f.q,
                ctx.now,
                others,
                &mut self.tally,
                dropped,
            );
            self.packets -= n0 - f.q.len();
            self.bytes -= b0 - f.q.bytes();
            match got {
                Some(p) => {
                    f.deficit -= p.size() as i64;
                    return Some(p);
                }
                None => {
                    self.pop_list(from_new);
                    if from_new && !self.old.is_empty() {
                        self.old.push_back(i as u32);
                    } else {
                        self.flows[i].listed = false;
                    }
                }
            }
        }
    }

    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new.pop_front();
        } else {
            self.old.pop_front();
        }
    }

    /// Packets and bytes held.
    pub fn len(&self) -> (u64, u64) {
        (self.packets, self.bytes)
    }

    /// Marks, drops, sojourn.
    pub fn tally(&self) -> Tally {
        self.tally
    }
}

impl<P> Metrics for FqCodel<P> {
    fn metric_names(&self) -> &'static [&'static str] {
        &[
            "sojourn",
            "drops",
            "marks",
            "new_queues",
            "old_queues",
            "new_flows",
        ]
    }
    fn metrics(&self, out: &mut [f64]) {
        self.tally.write(out);
        out[3] = self.new.len() as f64;
        out[4] = self.old.len() as f64;
        out[5] = self.new_flows as f64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{paced, Bench, Pkt};
    use super::super::{Ecn, Qdisc, QdiscSpec};
    use super::*;
    use crate::rng::Stream;
    use wavelab_tcp::{Duration, Instant, Rate};

    fn fq(spec: FqCodelSpec) -> Qdisc<Pkt> {
        Qdisc::new(
            &QdiscSpec::FqCodel(spec),
            Rng::derive(3, Stream::LinkQdisc(0)),
        )
        .unwrap()
    }

    /// A bulk flow that keeps the 10 Mbit/s link overloaded (arrivals at
    /// 12 Mbit/s) and a sparse flow, one small packet every 20 ms: the
    /// sparse flow's packets wait at most the packet in service (1.2 ms)
    /// plus a quantum of the bulk flow, while the bulk flow, which does not
    /// slow down for CoDel's drops, waits tens of milliseconds (in one
    /// first-in first-out queue the sparse flow would wait as long).
    #[test]
    fn a_sparse_flow_is_isolated_from_a_bulk_one() {
        let rate = Rate::from_mbps(10);
        let mut q = fq(FqCodelSpec::default());
        let mut b = Bench::new(rate, QueueLimit::Packets(1000));
        let secs = 20;
        let bulk_gap = Duration::from_micros(1000); // 1500 B / ms = 12 Mbit/s
        let mut arrivals = paced(
            0,
            1,
            secs * 1000,
            1500,
            Ecn::NotEct,
            Instant::ZERO,
            bulk_gap,
        );
        arrivals.extend(paced(
            1_000_000,
            2,
            secs * 50,
            100,
            Ecn::NotEct,
            Instant::ZERO + Duration::from_micros(333),
            Duration::from_millis(20),
        ));
        b.offer_merged(&mut q, arrivals);
        b.drain(&mut q);
        let waits = |flow: u64| -> Vec<f64> {
            b.sent
                .iter()
                .filter(|(p, s)| p.flow == flow && *s > Instant::ZERO + Duration::from_secs(2))
                .map(|(p, s)| (*s - p.at).as_secs_f64() * 1e3)
                .collect()
        };
        let sparse = waits(2);
        let worst = sparse.iter().cloned().fold(0.0, f64::max);
        assert!(worst <= 2.5, "sparse flow waited up to {worst} ms");
        assert!(b.dropped.iter().all(|d| d.0.flow == 1), "only bulk drops");
        let bulk = waits(1);
        let mean = bulk.iter().sum::<f64>() / bulk.len() as f64;
        assert!(mean > 20.0, "bulk mean wait {mean} ms");
    }

    /// Two bulk flows of different sizes get the same bytes per round: a
    /// flow of 500-byte packets sends three packets for each 1500-byte one.
    #[test]
    fn deficit_round_robin_shares_bytes() {
        let rate = Rate::from_mbps(10);
        let mut q = fq(FqCodelSpec {
            ecn: false,
            target: Duration::from_secs(1),
            interval: Duration::from_secs(10),
            ..FqCodelSpec::default()
        });
        let mut b = Bench::new(rate, QueueLimit::Packets(100_000));
        let mut arrivals = paced(0, 1, 3000, 1500, Ecn::NotEct, Instant::ZERO, Duration::ZERO);
        arrivals.extend(paced(
            10_000,
            2,
            9000,
            500,
            Ecn::NotEct,
            Instant::ZERO,
            Duration::ZERO,
        ));
        b.offer_merged(&mut q, arrivals);
        b.drain(&mut q);
        let first: Vec<&(Pkt, Instant)> = b.sent.iter().take(4000).collect();
        let bytes = |flow| -> u64 {
            first
                .iter()
                .filter(|(p, _)| p.flow == flow)
                .map(|(p, _)| p.size as u64)
                .sum()
        };
        let (a, c) = (bytes(1) as f64, bytes(2) as f64);
        assert!((a / c - 1.0).abs() < 0.02, "{a} vs {c} bytes");
    }

    /// A full buffer drops from the head of the fattest queue, not the
    /// arrival: a sparse flow's packet is taken while the bulk flow loses
    /// its oldest.
    #[test]
    fn overflow_drops_from_the_fattest_head() {
        let rate = Rate::from_mbps(1);
        let mut q = fq(FqCodelSpec::default());
        let mut b = Bench::new(rate, QueueLimit::Packets(10));
        for p in paced(0, 1, 12, 1500, Ecn::NotEct, Instant::ZERO, Duration::ZERO) {
            b.offer(&mut q, p);
        }
        b.offer(
            &mut q,
            Pkt {
                id: 99,
                flow: 2,
                size: 100,
                ecn: Ecn::NotEct,
                at: Instant::ZERO,
            },
        );
        // packet 0 in service, ten held: packet 11 pushed out packet 1, the
        // sparse packet packet 2
        let gone: Vec<u64> = b.dropped.iter().map(|d| d.0.id).collect();
        assert_eq!(gone, [1, 2]);
        assert!(b.dropped.iter().all(|d| d.1 == DropCause::Queue));
        b.drain(&mut q);
        // the bulk queue still had 14 bytes of its quantum after packet 0, so
        // it sends packet 3; then its deficit is spent and the new sparse
        // queue goes before it
        let order: Vec<u64> = b.sent.iter().take(4).map(|s| s.0.id).collect();
        assert_eq!(order, [0, 3, 99, 4]);
    }
}
