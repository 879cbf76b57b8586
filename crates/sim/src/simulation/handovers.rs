//! Changes during the run: a link's schedule of changes, its handovers, and
//! the handoffs of multi-homed nodes.
//!
//! Two models of a vertical handover:
//! * a link's **handover** (DCNET 2016): the path stays, its link changes in
//!   place: an outage plus a switch to new settings, at a time or once a
//!   flow is at full rate;
//! * a node's **handoff** (MobiWac 2009): the node moves from one access
//!   link to another, so the routes change: from the switch on, every flow
//!   whose route crossed the old link sends its packets (data and ACKs)
//!   over the new one, while packets already sent keep their route. A
//!   make-before-break handoff leaves the old link up, so it delivers what
//!   it holds (and reorders, when the new path is faster); a
//!   break-before-make handoff takes the old link down until the node comes
//!   back to it (what it holds is lost, unless `held = "delivered"`) and
//!   keeps the new one down for the disconnection. Both compile, at
//!   construction, into outage windows and a route switch per flow and
//!   side, so both engine modes apply them identically.
//!
//! A handover at a fixed time compiles, at construction
//! ([`wavelab_model::compile`]), into a schedule entry at T for both
//! directions and an outage window [T, T + HT), so it inherits their
//! documented effect on queued and in-flight packets. A handover at
//! `"steady"` has no time yet: at each
//! sampling instant the simulation checks the watched flow's goodput over the
//! rule's window against the old link's payload capacity and, when the rule
//! holds (or at `latest`), applies the switch and inserts the outage window
//! from that instant; such links run in reference mode, since their future
//! settings are not known at admission.

use super::endpoints::Flow;
use crate::notices::{Notice, Source};
use crate::routes::Network;
use crate::simulation::Simulation;
use std::collections::VecDeque;
use wavelab_model::compile::{at, switch_entry, ChangeKind, LinkHandoverPlan, NodeHandoffPlan};
use wavelab_model::scenario::{Failover, LinkHandoverTime, NodeHandoffKind, Scenario};
use wavelab_model::tables::NodeHandoffRecord;
use wavelab_model::topology::DirId;
use wavelab_tcp::cc::{HandoffNotice, HandoffStyle, Notification, PathInfo};
use wavelab_tcp::SenderState;
use wavelab_tcp::{Duration, Instant};

/// A node handoff during the run: its plan, and what it did.
#[derive(Clone, Debug)]
pub(crate) struct NodeHandoff {
    pub plan: NodeHandoffPlan,
    /// Whether it happened yet.
    pub done: bool,
    /// Senders it notified.
    pub notified: u32,
    /// Its transfer measurement: each measured flow and how long after the
    /// switch it had the packets acknowledged (None: not yet).
    pub transfers: Vec<(usize, Option<Duration>)>,
}

impl NodeHandoff {
    /// A handoff still to come.
    pub fn new(plan: NodeHandoffPlan) -> Self {
        NodeHandoff {
            plan,
            done: false,
            notified: 0,
            transfers: Vec::new(),
        }
    }

    /// Its row of the handoffs table.
    pub fn record(&self, sc: &Scenario) -> NodeHandoffRecord {
        let time = self.done.then_some(self.plan.at);
        NodeHandoffRecord::new(sc, &self.plan, time, self.notified, &self.transfers)
    }
}

/// A link handover during the run: its plan (its time, once it happened),
/// and the goodput history of the watched flow, for the steady-state rule.
#[derive(Clone, Debug)]
pub(crate) struct LinkHandover {
    pub plan: LinkHandoverPlan,
    pub history: VecDeque<(Instant, u64)>,
}

impl Simulation {
    /// Runs scheduled change number `i`.
    pub(crate) fn on_change(&mut self, i: usize) {
        match &self.changes[i].what {
            ChangeKind::Link { link, entry } => {
                let (link, entry) = (*link, entry.clone());
                self.net.apply(link, &entry);
            }
            ChangeKind::NodeHandoff(h) => self.on_handoff(*h),
        }
    }

    /// Switches the routes of the flows handoff `h` moves, and schedules
    /// its notification to their senders.
    fn on_handoff(&mut self, h: usize) {
        let now = self.now;
        let (from, to) = (self.handoffs[h].plan.from, self.handoffs[h].plan.to);
        let moved = self.handoffs[h].plan.moved();
        // the old link's direction each moved flow used, before the switch
        let old: Vec<Option<DirId>> = moved
            .iter()
            .map(|&f| self.flows[f].crossing(from))
            .collect();
        let ho = &mut self.handoffs[h];
        ho.done = true;
        for &(f, side, route) in &ho.plan.switches {
            self.net.switch_route(f, side, route);
            self.flows[f].route[side] = route;
        }
        self.start_transfers(h, &moved);
        let Some(notify) = self.handoffs[h].plan.spec.notify.clone() else {
            return;
        };
        self.notify_mptcp(h, notify.delay);
        // N: the flows using the new link now (this handoff's among them)
        let active =
            |f: &Flow| f.started && f.udp.is_none() && f.sender.state() != SenderState::Closed;
        let using = self
            .flows
            .iter()
            .filter(|f| active(f) && f.crossing(to).is_some())
            .count() as u32;
        let spec = &self.handoffs[h].plan.spec;
        let style = match spec.kind {
            NodeHandoffKind::MakeBeforeBreak => HandoffStyle::MakeBeforeBreak,
            NodeHandoffKind::BreakBeforeMake => HandoffStyle::BreakBeforeMake {
                disconnection: spec.disconnection(),
            },
        };
        let path = |net: &Network, d: Option<DirId>| {
            d.map_or(PathInfo::default(), |d| {
                let s = net.dirs[d as usize].settings_at(now);
                PathInfo {
                    rate: Some(s.rate),
                    delay: Some(s.delay),
                }
            })
        };
        let mut notified = 0;
        for (&f, &old_dir) in moved.iter().zip(&old) {
            if !active(&self.flows[f]) {
                continue;
            }
            let new_dir = self.flows[f].crossing(to).expect("moved onto the new link");
            let msg = Notification::Handoff(HandoffNotice {
                style,
                old: path(&self.net, old_dir),
                new: path(&self.net, Some(new_dir)),
                flows: using,
            });
            let notice = Notice {
                sent: now,
                msg,
                source: Source::Handoff {
                    index: h,
                    link: new_dir,
                },
            };
            self.notices
                .schedule(&mut self.q, f, now + notify.delay, notice);
            notified += 1;
        }
        self.handoffs[h].notified = notified;
    }

    /// Starts handoff `h`'s transfer measurement on the flows it moves that
    /// are sending: each is done once its cumulative ACK point is `packets`
    /// segments past where it is now ([`Simulation::check_transfer`]).
    /// Handoff `h` notifies the MPTCP connections with an end on its node:
    /// a notice to the subflow on the link it leaves (the connection's
    /// first subflow if none is), which removes and restores subflows when
    /// it arrives (`failover = "notice"`,
    /// [`Simulation::mptcp_notice`]).
    fn notify_mptcp(&mut self, h: usize, delay: Duration) {
        let now = self.now;
        let plan = &self.handoffs[h].plan;
        let (from, to, node) = (plan.from, plan.to, plan.spec.node.clone());
        let style = match plan.spec.kind {
            NodeHandoffKind::MakeBeforeBreak => HandoffStyle::MakeBeforeBreak,
            NodeHandoffKind::BreakBeforeMake => HandoffStyle::BreakBeforeMake {
                disconnection: plan.spec.disconnection(),
            },
        };
        for m in &self.mptcp {
            if m.node != node || m.failover != Failover::Notice {
                continue;
            }
            let k = m.links.iter().position(|&l| l == from).unwrap_or(0);
            let f = m.flows[k];
            if !self.flows[f].started {
                continue;
            }
            let notice = Notice {
                sent: now,
                msg: Notification::Handoff(HandoffNotice {
                    style,
                    old: PathInfo::default(),
                    new: PathInfo::default(),
                    flows: 0,
                }),
                source: Source::Handoff {
                    index: h,
                    link: (2 * to) as DirId,
                },
            };
            self.notices.schedule(&mut self.q, f, now + delay, notice);
        }
    }

    fn start_transfers(&mut self, h: usize, moved: &[usize]) {
        let Some(t) = self.handoffs[h].plan.spec.transfer.clone() else {
            return;
        };
        let mut measured = Vec::new();
        for &f in moved {
            let flow = &mut self.flows[f];
            if !flow.started || flow.udp.is_some() || flow.sender.state() == SenderState::Closed {
                continue;
            }
            let bytes = t.packets as u64 * flow.sender.config().mss as u64;
            flow.transfer = Some((flow.sender.bytes_acked() + bytes, h));
            measured.push((f, None));
        }
        self.handoffs[h].transfers = measured;
        self.end_if_measured();
    }

    /// Flow `f`'s transfer is measured if its sender's cumulative ACK point
    /// reached the target (after every ACK it takes).
    #[inline]
    pub(crate) fn check_transfer(&mut self, f: usize) {
        let flow = &self.flows[f];
        if let Some((target, h)) = flow.transfer {
            if flow.sender.bytes_acked() >= target {
                self.transfer_done(f, h);
            }
        }
    }

    #[cold]
    fn transfer_done(&mut self, f: usize, h: usize) {
        self.flows[f].transfer = None;
        let took = self.now - self.handoffs[h].plan.at;
        for t in &mut self.handoffs[h].transfers {
            if t.0 == f {
                t.1 = Some(took);
            }
        }
        self.end_if_measured();
    }

    /// Ends the run now if some handoff's transfer has `stop` and every such
    /// handoff happened and has all its flows measured.
    fn end_if_measured(&mut self) {
        let mut any = false;
        for ho in &self.handoffs {
            if ho.plan.spec.transfer.as_ref().is_some_and(|t| t.stop) {
                if !ho.done || ho.transfers.iter().any(|t| t.1.is_none()) {
                    return;
                }
                any = true;
            }
        }
        if any && self.now < self.end {
            self.end = self.now;
        }
    }

    /// Checks the steady-state rule of pending `"steady"` handovers at a sample.
    pub(crate) fn check_steady_handovers(&mut self) {
        let now = self.now;
        for h in 0..self.handovers.len() {
            let ho = &self.handovers[h];
            if ho.plan.time.is_some() || ho.plan.spec.at != LinkHandoverTime::Steady {
                continue;
            }
            let rule = ho.plan.spec.steady.clone();
            let f = rule.flow as usize;
            let delivered = self.flows[f].receiver.delivered();
            let link = ho.plan.link;
            // the old link's direction the flow's data crosses
            let dir = self.flows[f]
                .data_route()
                .iter()
                .copied()
                .find(|&d| d as usize / 2 == link)
                .unwrap_or((2 * link) as u32);
            let mss = self.flows[f].sender.config().mss as f64;
            let rate = self.net.dirs[dir as usize].settings_at(now).rate;
            let capacity = rate.as_bps() as f64 * mss / (mss + 40.0);
            let ho = &mut self.handovers[h];
            ho.history.push_back((now, delivered));
            while ho.history.len() > 1 && now - ho.history[1].0 >= rule.window {
                ho.history.pop_front();
            }
            let (t0, d0) = ho.history[0];
            let span = now - t0;
            let steady = now >= at(rule.earliest)
                && span >= rule.window
                && (delivered - d0) as f64 * 8.0 / span.as_secs_f64() >= rule.fraction * capacity;
            let overdue = rule.latest.is_some_and(|l| now >= at(l));
            if steady || overdue {
                ho.plan.time = Some(now);
                let spec = ho.plan.spec.clone();
                self.net
                    .apply(link, &switch_entry(&spec, now - Instant::ZERO));
                if !spec.outage.is_zero() {
                    for k in 0..2 {
                        self.net.add_outage(2 * link + k, now, now + spec.outage);
                    }
                }
            }
        }
    }
}
