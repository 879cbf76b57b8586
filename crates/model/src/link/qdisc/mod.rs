//! Queue disciplines: what decides, at the entrance and at the head of a
//! link direction's queue, which packet goes next and which packets are
//! dropped or marked Congestion Experienced.
//!
//! Each discipline is a state machine that reads no clock: it is given the
//! instant of every call ([`Ctx::now`]) and the packets it holds, so the
//! simulator's stepped link model and the emulator's wall-clock driver run
//! the same code. Periodic updates (PIE's and DualPI2's probability every
//! T_UPDATE) are made lazily: before a call at `now`, every update due at
//! an instant up to `now` runs in turn, from the state the queue was in at
//! that instant (nothing changes between two calls), which is exactly what a
//! timer would have done.
//!
//! Drop-tail (the default) is not here: the clock-free [`super::Link`] and
//! [`super::Stepped`] run it themselves. The others need decisions at the
//! head of the queue that depend on packets offered after the one being
//! decided, so they run in the stepped model only.
//!
//! * [`red`]: Random Early Detection with the gentle variant;
//! * [`codel`]: CoDel (RFC 8289), also each queue of [`fq_codel`];
//! * [`fq_codel`]: FQ-CoDel (RFC 8290);
//! * [`pie`]: PIE (RFC 8033);
//! * [`dualpi2`]: the DualQ Coupled AQM with PI2 (RFC 9332);
//! * [`spec`]: their parameters, as a scenario writes them.

pub mod codel;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod spec;

pub use spec::{
    Backlog, CodelSpec, Draw, DualPi2Spec, FqCodelSpec, PiDelay, PieSpec, Profile, QdiscSpec,
    RedSpec, DISCIPLINES,
};

use super::{DropCause, QueueLimit};
use crate::rng::Rng;
pub use wavelab_tcp::wire::Ecn;
use wavelab_tcp::{Instant, Rate};

/// What a discipline reads and changes of a packet it holds.
pub trait Queued {
    /// Bytes on the wire.
    fn size(&self) -> u32;
    /// Its ECN field.
    fn ecn(&self) -> Ecn;
    /// Sets its ECN field to CE (only called on ECN-capable packets).
    fn set_ce(&mut self);
    /// A key of its flow (its addresses, ports and protocol, see
    /// [`flow_key`]), which flow-queueing disciplines hash.
    fn flow_key(&self) -> u64;
    /// When it entered the discipline.
    fn enqueued(&self) -> Instant;
}

/// A flow's key from its IPv4 addresses, TCP ports and protocol, as both
/// drivers compute it (the simulator from the addresses and ports its
/// captures write, the emulator from the real headers).
pub fn flow_key(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, protocol: u8) -> u64 {
    let a = u32::from_be_bytes(src) as u64;
    let b = u32::from_be_bytes(dst) as u64;
    let ports = ((sport as u64) << 16) | dport as u64;
    mix(mix(a << 32 | b) ^ (ports << 8 | protocol as u64))
}

/// A 64-bit finaliser (SplitMix64's), so that nearby keys spread.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What a call into a discipline knows of its direction.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// The instant of the call.
    pub now: Instant,
    /// The direction's queue limit (the buffer the discipline manages).
    pub limit: QueueLimit,
    /// The direction's rate.
    pub rate: Rate,
}

/// What became of a packet offered to a discipline.
#[derive(Debug)]
pub enum Enqueued<P> {
    /// It is held (it may be marked, or dropped later).
    Taken,
    /// It was not taken: the buffer was full ([`DropCause::Queue`]) or the
    /// discipline dropped it at the entrance ([`DropCause::Aqm`]).
    Refused(P, DropCause),
}

/// Packets a discipline dropped other than the one offered, with why.
pub type Dropped<P> = Vec<(P, DropCause)>;

/// What every discipline counts: its marks, its drops other than for a
/// full buffer, and the sojourn of the packet it last sent.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Packets it set CE on (already-CE ones it would have marked included).
    pub marks: u64,
    /// Packets it dropped as congestion signals (not for a full buffer).
    pub drops: u64,
    /// How long the packet it last sent waited in it.
    pub sojourn: wavelab_tcp::Duration,
}

impl Tally {
    /// The metrics every discipline reports first.
    pub const NAMES: [&'static str; 3] = ["sojourn", "drops", "marks"];

    /// Writes them to the first three slots of `out`.
    pub fn write(&self, out: &mut [f64]) {
        out[0] = self.sojourn.as_secs_f64();
        out[1] = self.drops as f64;
        out[2] = self.marks as f64;
    }

    /// Signals congestion on `p`: CE if it is ECN-capable and `ecn` allows
    /// it (true), else a drop (false: the caller drops it).
    pub fn signal<P: Queued>(&mut self, p: &mut P, ecn: bool) -> bool {
        if ecn && p.ecn().is_capable() {
            p.set_ce();
            self.marks += 1;
            true
        } else {
            self.drops += 1;
            false
        }
    }
}

/// A discipline's view of its state, for the queue series: its variables'
/// names and values, as an algorithm's `cc_*` columns.
pub trait Metrics {
    /// The variables' names (each becomes an `aqm_<name>` column).
    fn metric_names(&self) -> &'static [&'static str];
    /// Their values now, in the order of the names.
    fn metrics(&self, out: &mut [f64]);
}

/// An active queue discipline holding packets `P`.
#[derive(Clone, Debug)]
pub enum Qdisc<P> {
    /// RED.
    Red(Box<red::Red<P>>),
    /// CoDel.
    Codel(Box<codel::Codel<P>>),
    /// FQ-CoDel.
    FqCodel(Box<fq_codel::FqCodel<P>>),
    /// PIE.
    Pie(Box<pie::Pie<P>>),
    /// DualPI2.
    DualPi2(Box<dualpi2::DualPi2<P>>),
}

macro_rules! each {
    ($q:expr, $d:ident => $e:expr) => {
        match $q {
            Qdisc::Red($d) => $e,
            Qdisc::Codel($d) => $e,
            Qdisc::FqCodel($d) => $e,
            Qdisc::Pie($d) => $e,
            Qdisc::DualPi2($d) => $e,
        }
    };
}

impl<P: Queued> Qdisc<P> {
    /// The discipline `spec` describes, drawing from `rng` (and hashing
    /// flows with a perturbation drawn from it); `None` for drop-tail.
    pub fn new(spec: &QdiscSpec, rng: Rng) -> Option<Self> {
        Some(match spec {
            QdiscSpec::DropTail => return None,
            QdiscSpec::Red(s) => Qdisc::Red(Box::new(red::Red::new(s.clone(), rng))),
            QdiscSpec::Codel(s) => Qdisc::Codel(Box::new(codel::Codel::new(s))),
            QdiscSpec::FqCodel(s) => Qdisc::FqCodel(Box::new(fq_codel::FqCodel::new(s, rng))),
            QdiscSpec::Pie(s) => Qdisc::Pie(Box::new(pie::Pie::new(s.clone(), rng))),
            QdiscSpec::DualPi2(s) => Qdisc::DualPi2(Box::new(dualpi2::DualPi2::new(s, rng))),
        })
    }

    /// Offers packet `p` (its [`Queued::enqueued`] is `ctx.now`). Packets
    /// the discipline drops to make room go to `dropped`.
    pub fn enqueue(&mut self, ctx: &Ctx, p: P, dropped: &mut Dropped<P>) -> Enqueued<P> {
        each!(self, q => q.enqueue(ctx, p, dropped))
    }

    /// The next packet to send, if any; packets dropped on the way go to
    /// `dropped`.
    pub fn dequeue(&mut self, ctx: &Ctx, dropped: &mut Dropped<P>) -> Option<P> {
        each!(self, q => q.dequeue(ctx, dropped))
    }

    /// Packets and bytes held.
    pub fn len(&self) -> (u64, u64) {
        each!(self, q => q.len())
    }

    /// True if it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len().0 == 0
    }

    /// Its marks, drops and latest sojourn so far.
    pub fn tally(&self) -> Tally {
        each!(self, q => q.tally())
    }

    /// Brings its periodic updates up to `now` (before reading its
    /// metrics; changes nothing a later call would not have done).
    pub fn advance(&mut self, now: Instant) {
        match self {
            Qdisc::Pie(q) => q.advance(now),
            Qdisc::DualPi2(q) => q.advance(now),
            Qdisc::Red(_) | Qdisc::Codel(_) | Qdisc::FqCodel(_) => {}
        }
    }
}

/// A discipline's state as the queue series records it: the figures every
/// discipline has, and NaN where a discipline has no such figure (see
/// [`Qdisc::state`] for which fills what).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueState {
    /// Seconds the packet most recently dequeued waited in the discipline
    /// (its sojourn time, measured at the head, RFC 8289 section 4.1); 0
    /// before the first dequeue.
    pub sojourn: f64,
    /// Packets it dropped as congestion signals so far (not for a full
    /// buffer).
    pub drops: u64,
    /// Packets it set CE on so far.
    pub marks: u64,
    /// Its drop (or mark) probability: PIE's p (RFC 8033 section 4.2),
    /// RED's latest early-drop probability, DualPI2's classic p_C (RFC 9332
    /// section 2.4); NaN for CoDel and FQ-CoDel.
    pub drop_prob: f64,
    /// DualPI2's coupled L4S marking probability p_CL = k p' (RFC 9332
    /// section 2.4), the floor of p_L = max(p_L', p_CL) (its native step
    /// marking is a per-packet threshold, not a probability); NaN for the
    /// other disciplines.
    pub prob_l: f64,
    /// CoDel: 1 in the dropping state, else 0 (RFC 8289 section 5.2); NaN
    /// for the other disciplines (FQ-CoDel's queues each have their own).
    pub codel_dropping: f64,
    /// CoDel: the drop count of its control law; NaN for the others.
    pub codel_count: f64,
}

impl<P: Queued> Qdisc<P> {
    /// Its state now (call [`Qdisc::advance`] first to bring PIE's and
    /// DualPI2's periodic updates up to the instant).
    pub fn state(&self) -> QueueState {
        let t = each!(self, q => q.tally());
        let mut s = QueueState {
            sojourn: t.sojourn.as_secs_f64(),
            drops: t.drops,
            marks: t.marks,
            drop_prob: f64::NAN,
            prob_l: f64::NAN,
            codel_dropping: f64::NAN,
            codel_count: f64::NAN,
        };
        match self {
            Qdisc::Red(q) => s.drop_prob = q.probability(),
            Qdisc::Pie(q) => s.drop_prob = q.probability(),
            Qdisc::DualPi2(q) => {
                let (_, p_c, p_cl) = q.probabilities();
                s.drop_prob = p_c;
                s.prob_l = p_cl;
            }
            Qdisc::Codel(q) => {
                s.codel_dropping = q.vars().dropping() as u8 as f64;
                s.codel_count = q.vars().count() as f64;
            }
            Qdisc::FqCodel(_) => {}
        }
        s
    }
}

impl<P> Metrics for Qdisc<P> {
    fn metric_names(&self) -> &'static [&'static str] {
        each!(self, q => q.metric_names())
    }
    fn metrics(&self, out: &mut [f64]) {
        each!(self, q => q.metrics(out))
    }
}

/// Bytes counted against a [`QueueLimit`]: true if a discipline holding
/// `packets` and `bytes` has room for `size` more bytes.
pub(crate) fn fits(limit: QueueLimit, packets: u64, bytes: u64, size: u32) -> bool {
    match limit {
        QueueLimit::Packets(k) => packets < k as u64,
        QueueLimit::Bytes(b) => bytes + size as u64 <= b,
    }
}

/// A packet for the disciplines' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;
    use wavelab_tcp::Duration;

    /// A packet of `size` bytes of flow `flow`, with an id.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Pkt {
        pub id: u64,
        pub flow: u64,
        pub size: u32,
        pub ecn: Ecn,
        pub at: Instant,
    }

    impl Queued for Pkt {
        fn size(&self) -> u32 {
            self.size
        }
        fn ecn(&self) -> Ecn {
            self.ecn
        }
        fn set_ce(&mut self) {
            self.ecn = Ecn::Ce;
        }
        fn flow_key(&self) -> u64 {
            self.flow
        }
        fn enqueued(&self) -> Instant {
            self.at
        }
    }

    /// A bottleneck of `rate` in front of a discipline, fed by a schedule
    /// of arrivals: serves one packet at a time at `rate`, as the stepped
    /// link model does. Returns the packets sent (with the instant their
    /// service started) and those dropped.
    pub struct Bench {
        pub rate: Rate,
        pub limit: QueueLimit,
        pub busy_until: Instant,
        pub sent: Vec<(Pkt, Instant)>,
        pub dropped: Vec<(Pkt, DropCause, Instant)>,
        scratch: Dropped<Pkt>,
    }

    impl Bench {
        pub fn new(rate: Rate, limit: QueueLimit) -> Self {
            Bench {
                rate,
                limit,
                busy_until: Instant::MAX,
                sent: vec![],
                dropped: vec![],
                scratch: vec![],
            }
        }

        fn ctx(&self, now: Instant) -> Ctx {
            Ctx {
                now,
                limit: self.limit,
                rate: self.rate,
            }
        }

        /// Serves packets whose service can start by `until`.
        pub fn run_until(&mut self, q: &mut Qdisc<Pkt>, until: Instant) {
            while self.busy_until <= until {
                let now = self.busy_until;
                let ctx = self.ctx(now);
                let next = q.dequeue(&ctx, &mut self.scratch);
                for (p, c) in self.scratch.drain(..) {
                    self.dropped.push((p, c, now));
                }
                match next {
                    Some(p) => {
                        self.busy_until = now + self.rate.tx_time(p.size as u64);
                        self.sent.push((p, now));
                    }
                    None => {
                        self.busy_until = Instant::MAX;
                    }
                }
            }
        }

        /// Offers `p` at `p.at` after serving what starts before.
        pub fn offer(&mut self, q: &mut Qdisc<Pkt>, p: Pkt) {
            let now = p.at;
            // what can start strictly before this arrival
            while self.busy_until < now {
                let t = self.busy_until;
                self.run_until(q, t);
            }
            let ctx = self.ctx(now);
            if let Enqueued::Refused(p, c) = q.enqueue(&ctx, p, &mut self.scratch) {
                self.dropped.push((p, c, now));
            }
            for (p, c) in self.scratch.drain(..) {
                self.dropped.push((p, c, now));
            }
            if self.busy_until == Instant::MAX {
                // the server was idle: it takes the head now
                self.busy_until = now;
                self.run_until(q, now);
            }
        }

        /// Offers `arrivals` (several flows' packets) in the order of
        /// their arrival instants, ties by id.
        pub fn offer_merged(&mut self, q: &mut Qdisc<Pkt>, mut arrivals: Vec<Pkt>) {
            arrivals.sort_by_key(|p| (p.at, p.id));
            for p in arrivals {
                self.offer(q, p);
            }
        }

        /// Runs until the queue is empty.
        pub fn drain(&mut self, q: &mut Qdisc<Pkt>) {
            while self.busy_until != Instant::MAX {
                let t = self.busy_until;
                self.run_until(q, t);
            }
        }
    }

    /// `n` packets of `size` bytes of `flow`, one every `gap` from `start`.
    pub fn paced(
        first_id: u64,
        flow: u64,
        n: u64,
        size: u32,
        ecn: Ecn,
        start: Instant,
        gap: Duration,
    ) -> Vec<Pkt> {
        (0..n)
            .map(|i| Pkt {
                id: first_id + i,
                flow,
                size,
                ecn,
                at: start + gap * i,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecn_codepoints_are_rfc_3168s() {
        assert_eq!(Ecn::from_bits(0b01), Ecn::Ect1);
        assert_eq!(Ecn::from_bits(0b10), Ecn::Ect0);
        assert_eq!(Ecn::from_bits(0xff), Ecn::Ce);
        assert!(Ecn::Ect1.is_l4s() && Ecn::Ce.is_l4s());
        assert!(!Ecn::Ect0.is_l4s() && !Ecn::NotEct.is_l4s());
        assert!(!Ecn::NotEct.is_capable());
    }

    #[test]
    fn flow_keys_differ_by_any_field() {
        let k = flow_key([10, 0, 0, 1], [10, 0, 0, 2], 10000, 5001, 6);
        assert_ne!(k, flow_key([10, 0, 0, 1], [10, 0, 0, 2], 10001, 5001, 6));
        assert_ne!(k, flow_key([10, 0, 0, 2], [10, 0, 0, 1], 10000, 5001, 6));
        assert_ne!(k, flow_key([10, 0, 0, 1], [10, 0, 0, 2], 10000, 5001, 17));
        assert_eq!(k, flow_key([10, 0, 0, 1], [10, 0, 0, 2], 10000, 5001, 6));
    }
}
