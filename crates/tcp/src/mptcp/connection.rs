//! A Multipath TCP connection's data level (RFC 8684 section 3.3): the
//! data sequence space, the mappings that hand it to subflows, the data
//! ACK, the receiver's reassembly, reinjection and the DATA_FIN.
//!
//! The subflows are ordinary [`Sender`]/[`Receiver`] pairs, unchanged: the
//! connection hands a subflow data by writing virtual bytes into its
//! sender ([`Sender::write_virtual`]) and records the mapping; it learns
//! what arrived from each subflow's cumulative ACK point (sender side) and
//! in-order delivery (receiver side). The driver calls
//! [`Connection::update`] after every event of any of its subflows, then
//! drains every subflow sender.
//!
//! Simplifications, each documented in docs/algorithms/mptcp.md:
//! * The DSS option's mapping reaches the receiver with the data (section
//!   3.3.1); in a simulation both ends read the one mapping table.
//! * The data ACK (section 3.3.2) the sender acts on is the in-order point
//!   of the data covered by the subflow ACKs it has received: each subflow
//!   ACK covers mapped data the receiver's subflow delivered to the
//!   connection. It can lag the receiver's own data ACK (data delivered on
//!   one subflow and acknowledged on another), never lead it.
//! * The connection-level receive window is unbounded (each subflow's
//!   receiver keeps its own window).
//! * DATA_FIN (section 3.3.3): a sized transfer is complete when the data
//!   ACK covers its last byte; the subflows are then closed (their FINs).
//!
//! Failure and reinjection: a subflow goes *stale* after `stale_after`
//! retransmission timeouts without progress of its cumulative ACK (Linux's
//! `net.mptcp.stale_loss_cnt` idea; the default here is one timeout, as
//! Linux's connection-level retransmission timer reinjects after one), or
//! is *removed* when the driver reports its address gone
//! ([`Connection::set_removed`], a cross-layer notice as Linux's path
//! manager reacts to an address removal). Its data not yet data-ACKed is
//! then queued for reinjection (section 3.3.6: "data ... can be
//! retransmitted on another subflow") and goes out on the next subflow
//! with window space ahead of new data. A stale subflow becomes usable
//! again when its cumulative ACK advances.

use super::coupled::PathView;
use super::mapping::Mappings;
use super::reassembly::Reassembly;
use super::scheduler::{pick, Candidate, Scheduler};
use crate::cc::{Cc, CongestionControl};
use crate::{Receiver, Sender, SenderState};
use std::collections::VecDeque;

/// The connection-level settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionConfig {
    /// The packet scheduler.
    pub scheduler: Scheduler,
    /// How the subflows' windows are coupled.
    pub coupling: super::Coupling,
    /// Retransmission timeouts without progress that make a subflow stale.
    pub stale_after: u32,
}

/// One subflow's ends, as the driver lends them to [`Connection::update`].
#[derive(Debug)]
pub struct Endpoints<'a> {
    /// Its sender (at the connection's sending host).
    pub sender: &'a mut Sender,
    /// Its receiver.
    pub receiver: &'a Receiver,
}

/// Counters of one subflow at the data level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowStats {
    /// Data bytes mapped to it (reinjections included).
    pub mapped: u64,
    /// Of those, bytes reinjected from a failed subflow.
    pub reinjected: u64,
    /// Times it went stale or was removed.
    pub failures: u64,
}

/// The data-level state of one subflow.
#[derive(Clone, Debug)]
struct Subflow {
    backup: bool,
    map: Mappings,
    /// The sender's cumulative ACK point already accounted for.
    acked: u64,
    /// The receiver's in-order point already accounted for.
    delivered: u64,
    /// The sender's timeout count when its ACK point last advanced.
    rtos_at_progress: u64,
    stale: bool,
    removed: bool,
    /// The redundant scheduler's next data sequence number for it.
    next: u64,
    /// Its sender's loss events (fast retransmits and timeouts) seen.
    losses: u64,
    /// Bytes acknowledged since its last loss, and between the two before
    /// (OLIA's `l_r`).
    since_loss: u64,
    between_losses: u64,
    stats: SubflowStats,
}

/// A connection's data level.
#[derive(Clone, Debug)]
pub struct Connection {
    cfg: ConnectionConfig,
    /// The end of the data (u64::MAX: unlimited).
    end: u64,
    /// The next data sequence number never mapped.
    next_new: u64,
    /// What the data ACKs cover (sender side).
    acked: Reassembly,
    /// What reached the receiver's connection level.
    received: Reassembly,
    /// Data ranges to send again on another subflow.
    reinject: VecDeque<(u64, u64)>,
    subflows: Vec<Subflow>,
    /// The round-robin turn.
    turn: usize,
    /// The data ACK covered the last byte (the DATA_FIN was acknowledged).
    finished: bool,
}

impl Connection {
    /// A connection that sends `size` bytes (None: unlimited) over
    /// subflows flagged `backup` (RFC 8684 section 3.3.8) in order.
    pub fn new(cfg: ConnectionConfig, size: Option<u64>, backup: &[bool]) -> Self {
        Connection {
            cfg,
            end: size.unwrap_or(u64::MAX),
            next_new: 0,
            acked: Reassembly::default(),
            received: Reassembly::default(),
            reinject: VecDeque::new(),
            subflows: backup
                .iter()
                .map(|&backup| Subflow {
                    backup,
                    map: Mappings::default(),
                    acked: 0,
                    delivered: 0,
                    rtos_at_progress: 0,
                    stale: false,
                    removed: false,
                    next: 0,
                    losses: 0,
                    since_loss: 0,
                    between_losses: 0,
                    stats: SubflowStats::default(),
                })
                .collect(),
            turn: 0,
            finished: false,
        }
    }

    /// The data ACK: every data byte below it is known delivered.
    pub fn data_acked(&self) -> u64 {
        self.acked.in_order()
    }

    /// Data bytes the receiving application has read in order.
    pub fn delivered(&self) -> u64 {
        self.received.in_order()
    }

    /// Data bytes that reached the receiver more than once.
    pub fn duplicate(&self) -> u64 {
        self.received.duplicate()
    }

    /// True once the DATA_FIN was acknowledged (sized transfers only).
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Subflow `k`'s counters.
    pub fn subflow_stats(&self, k: usize) -> SubflowStats {
        self.subflows[k].stats
    }

    /// True if subflow `k` is flagged backup.
    pub fn is_backup(&self, k: usize) -> bool {
        self.subflows[k].backup
    }

    /// True if subflow `k` takes no new data now (stale or removed).
    pub fn is_failed(&self, k: usize) -> bool {
        self.subflows[k].stale || self.subflows[k].removed
    }

    /// Marks subflow `k`'s address removed (or back): a removed subflow
    /// takes no data and its unacknowledged data is reinjected.
    pub fn set_removed(&mut self, k: usize, removed: bool) {
        let was = self.is_failed(k);
        self.subflows[k].removed = removed;
        if !was && self.is_failed(k) {
            self.fail(k);
        }
    }

    /// The application stops writing: the data ends at what was mapped
    /// (a DATA_FIN follows it).
    pub fn stop(&mut self) {
        self.end = self.end.min(self.next_new);
    }

    /// Takes in what the subflows did since the last call (ACKs, timeouts,
    /// deliveries), then maps data to the subflows with window space.
    /// Returns true when the DATA_FIN was acknowledged by this call.
    pub fn update(&mut self, eps: &mut [Endpoints<'_>]) -> bool {
        debug_assert_eq!(eps.len(), self.subflows.len());
        for (k, ep) in eps.iter().enumerate() {
            self.observe(k, ep);
        }
        if self.cfg.coupling != super::Coupling::Uncoupled {
            self.couple(eps);
        }
        let was = self.finished;
        if !self.finished && self.data_acked() >= self.end {
            self.finished = true;
            for ep in eps.iter_mut() {
                ep.sender.close();
            }
        }
        if !self.finished {
            self.schedule(eps);
        }
        self.finished && !was
    }

    /// Accounts for subflow `k`'s ACK point, timeouts and deliveries.
    fn observe(&mut self, k: usize, ep: &Endpoints<'_>) {
        let sf = &mut self.subflows[k];
        let acked = ep.sender.bytes_acked().min(sf.map.end());
        let rtos = ep.sender.stats().rto_expiries;
        let losses = ep.sender.stats().fast_retransmits + rtos;
        if losses > sf.losses {
            sf.losses = losses;
            sf.between_losses = sf.since_loss;
            sf.since_loss = 0;
        }
        if acked > sf.acked {
            sf.since_loss += acked - sf.acked;
            let acks = &mut self.acked;
            sf.map.data_ranges(sf.acked, acked, |a, b| {
                acks.insert(a, b);
            });
            sf.acked = acked;
            sf.rtos_at_progress = rtos;
            sf.stale = false;
        }
        let delivered = ep.receiver.delivered().min(sf.map.end());
        if delivered > sf.delivered {
            let received = &mut self.received;
            sf.map.data_ranges(sf.delivered, delivered, |a, b| {
                received.insert(a, b);
            });
            sf.delivered = delivered;
        }
        let outstanding = sf.map.end() > sf.acked;
        if !sf.stale
            && outstanding
            && rtos.saturating_sub(sf.rtos_at_progress) >= self.cfg.stale_after as u64
        {
            let was = sf.removed;
            sf.stale = true;
            if !was {
                self.fail(k);
            }
        }
    }

    /// Subflow `k` failed: queue its data not yet data-ACKed for
    /// reinjection on the others (none with the redundant scheduler, whose
    /// other subflows carry everything anyway).
    fn fail(&mut self, k: usize) {
        let sf = &mut self.subflows[k];
        sf.stats.failures += 1;
        if self.cfg.scheduler == Scheduler::Redundant {
            return;
        }
        let acked = &self.acked;
        let queue = &mut self.reinject;
        sf.map.data_ranges(sf.acked, sf.map.end(), |a, b| {
            if !acked.contains(a, b) {
                queue.push_back((a, b));
            }
        });
    }

    /// Gives each Reno-family subflow window its coupled rule, computed
    /// from the usable subflows ([`super::coupled`]).
    fn couple(&self, eps: &mut [Endpoints<'_>]) {
        let views: Vec<Option<PathView>> = eps
            .iter()
            .enumerate()
            .map(|(k, ep)| {
                let s = &ep.sender;
                if self.is_failed(k) || s.state() != SenderState::Established {
                    return None;
                }
                let sf = &self.subflows[k];
                Some(PathView {
                    cwnd: s.cc().cwnd(),
                    rtt: s.rtt().srtt()?,
                    mss: s.mss() as u64,
                    between_losses: sf.since_loss.max(sf.between_losses),
                })
            })
            .collect();
        let rules = super::coupled::rules(self.cfg.coupling, &views);
        for (ep, rule) in eps.iter_mut().zip(rules) {
            if let Cc::Reno(r) = ep.sender.cc_mut() {
                r.set_coupled(rule);
            }
        }
    }

    /// The subflows that may take data now, with the backup rule: regular
    /// ones while any regular one is alive, else the backups.
    fn candidates(&self, eps: &[Endpoints<'_>]) -> Vec<Candidate> {
        let alive =
            |k: usize| !self.is_failed(k) && eps[k].sender.state() == SenderState::Established;
        let regular_alive = (0..eps.len()).any(|k| alive(k) && !self.subflows[k].backup);
        (0..eps.len())
            .filter(|&k| alive(k) && self.subflows[k].backup != regular_alive)
            .filter(|&k| room(eps[k].sender) > 0)
            .map(|k| Candidate {
                index: k,
                srtt: eps[k]
                    .sender
                    .rtt()
                    .srtt()
                    .map_or(f64::INFINITY, |d| d.as_secs_f64()),
            })
            .collect()
    }

    /// Maps data to subflows while one has window space and data is left.
    fn schedule(&mut self, eps: &mut [Endpoints<'_>]) {
        if self.cfg.scheduler == Scheduler::Redundant {
            return self.schedule_redundant(eps);
        }
        loop {
            let cands = self.candidates(eps);
            let Some(k) = pick(self.cfg.scheduler, &cands, self.turn) else {
                return;
            };
            let mss = eps[k].sender.mss().max(1) as u64;
            let quota = match self.cfg.scheduler {
                Scheduler::RoundRobin => mss,
                _ => quota(eps[k].sender),
            };
            let Some((a, b, reinjected)) = self.next_data(quota) else {
                return;
            };
            let sf = &mut self.subflows[k];
            sf.map.push(a, b - a);
            sf.stats.mapped += b - a;
            if reinjected {
                sf.stats.reinjected += b - a;
            }
            eps[k].sender.write_virtual(b - a);
            self.turn = k + 1;
        }
    }

    /// The next data to map, at most `quota` bytes: reinjections first
    /// (what the data ACK has not covered), else new data.
    fn next_data(&mut self, quota: u64) -> Option<(u64, u64, bool)> {
        while let Some((a, b)) = self.reinject.pop_front() {
            let a = a.max(self.data_acked());
            if a >= b || self.acked.contains(a, b) {
                continue;
            }
            let e = b.min(a + quota);
            if e < b {
                self.reinject.push_front((e, b));
            }
            return Some((a, e, true));
        }
        if self.next_new >= self.end {
            return None;
        }
        let a = self.next_new;
        let b = self.end.min(a.saturating_add(quota));
        self.next_new = b;
        Some((a, b, false))
    }

    /// The redundant scheduler: each subflow with room sends the data after
    /// its own position (skipping what the data ACK covers).
    fn schedule_redundant(&mut self, eps: &mut [Endpoints<'_>]) {
        let acked = self.data_acked();
        for c in self.candidates(eps) {
            let k = c.index;
            let quota = quota(eps[k].sender);
            let sf = &mut self.subflows[k];
            let a = sf.next.max(acked);
            let b = self.end.min(a.saturating_add(quota));
            if a >= b {
                continue;
            }
            sf.map.push(a, b - a);
            sf.stats.mapped += b - a;
            sf.next = b;
            self.next_new = self.next_new.max(b);
            eps[k].sender.write_virtual(b - a);
        }
    }
}

/// What the lowest-RTT and redundant schedulers map to subflow sender `s`
/// at a time: its window space in whole segments plus one segment, so that
/// a subflow given all it can send still has data waiting when its window
/// fills, and its sender counts as window-limited (its window may grow,
/// RFC 7661's spirit): Linux likewise keeps data queued on the subflow it
/// picks.
fn quota(s: &Sender) -> u64 {
    let mss = s.mss().max(1) as u64;
    (room(s).div_ceil(mss) + 1) * mss
}

/// Bytes subflow sender `s` could send now beyond what it holds: its
/// congestion window less what is in flight and what waits unsent.
fn room(s: &Sender) -> u64 {
    s.cc().cwnd().saturating_sub(s.in_flight() + s.queued())
}
