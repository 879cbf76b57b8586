//! Multipath TCP connections in the simulator: each subflow is a flow of
//! its own (its sender, receiver, routes pinned to one access link of the
//! multi-homed end, its row in the flows table), and the connection's data
//! level ([`wavelab_tcp::mptcp::Connection`]) hands them data.
//!
//! * The first subflow (on the primary access link) opens at the flow's
//!   start, the others once it is established (MP_JOIN after MP_CAPABLE,
//!   RFC 8684 section 3.2).
//! * After every event of any subflow (an ACK, a delivery, a timeout, a
//!   notice) the connection takes in what changed and maps data to the
//!   subflows with window space; then every subflow sender is drained.
//! * Handoffs act on subflows through their links: a break-before-make
//!   handoff's outage windows make the old link's subflow time out (stale
//!   after `stale_after` timeouts, its data reinjected) and the new link's
//!   pause for the disconnection; a make-before-break one keeps both links
//!   up. With `failover = "notice"`, a handoff that notifies removes the
//!   subflow on the link the node leaves when the notice arrives, and
//!   restores the one on the link it moves to.

use super::endpoints::{Flow, SENDER};
use crate::simulation::Simulation;
use wavelab_model::scenario::{link_name, Failover};
use wavelab_model::tables::{subflow_table, SubflowRecord, Table};
use wavelab_tcp::mptcp::{Connection, Endpoints};
use wavelab_tcp::{Instant, SenderState};

/// One MPTCP connection of the run.
#[derive(Clone, Debug)]
pub(crate) struct MptcpConn {
    /// The flow's name (replicas expanded).
    pub name: String,
    /// Its data level.
    pub conn: Connection,
    /// Its subflows' flows, subflow 0 (the primary link's) first.
    pub flows: Vec<usize>,
    /// Each subflow's access link.
    pub links: Vec<usize>,
    /// How a subflow whose link goes away is given up.
    pub failover: Failover,
    /// The multi-homed node.
    pub node: String,
    /// When the flow started.
    pub start: Instant,
    /// When the DATA_FIN was acknowledged.
    pub completed: Option<Instant>,
}

/// The endpoints of flows `idx`, in that order.
fn endpoints<'a>(flows: &'a mut [Flow], idx: &[usize]) -> Vec<Endpoints<'a>> {
    let mut out: Vec<Option<Endpoints<'a>>> = idx.iter().map(|_| None).collect();
    for (i, f) in flows.iter_mut().enumerate() {
        if let Some(k) = idx.iter().position(|&x| x == i) {
            out[k] = Some(Endpoints {
                sender: &mut f.sender,
                receiver: &f.receiver,
            });
        }
    }
    out.into_iter()
        .map(|e| e.expect("a connection's subflows are flows"))
        .collect()
}

impl Simulation {
    /// Connection `c` takes in its subflows' news, maps data, opens its
    /// joins once the first subflow is established, and its subflow senders
    /// send.
    pub(crate) fn mptcp_step(&mut self, c: usize) {
        let now = self.now;
        let idx = self.mptcp[c].flows.clone();
        let done = {
            let mut eps = endpoints(&mut self.flows, &idx);
            self.mptcp[c].conn.update(&mut eps)
        };
        if done {
            self.mptcp[c].completed = Some(now);
        }
        let first_up = self.flows[idx[0]].sender.state() != SenderState::SynSent;
        for (k, &f) in idx.iter().enumerate() {
            if k > 0 && first_up && !self.flows[f].started && !self.mptcp[c].conn.finished() {
                self.flows[f].started = true;
                self.flows[f].start = now;
            }
            if self.flows[f].started {
                self.drain(f, SENDER);
            }
        }
    }

    /// The application of connection `c` stops writing: the data ends at
    /// what was mapped.
    pub(crate) fn mptcp_stop(&mut self, c: usize) {
        self.mptcp[c].conn.stop();
        self.mptcp_step(c);
    }

    /// The subflows table: one row per subflow, connection by connection.
    pub(crate) fn subflow_table(&self) -> Table {
        let mut rows = Vec::new();
        for m in &self.mptcp {
            let end = m.completed.unwrap_or(self.now);
            let active = end.saturating_since(m.start).as_secs_f64();
            let delivered = m.conn.delivered();
            for (k, (&f, &l)) in m.flows.iter().zip(&m.links).enumerate() {
                let s = m.conn.subflow_stats(k);
                rows.push(SubflowRecord {
                    flow: f as u32,
                    connection: m.name.clone(),
                    subflow: k as u32,
                    link: link_name(&self.sc.links[l], l),
                    backup: m.conn.is_backup(k),
                    mapped: s.mapped,
                    reinjected: s.reinjected,
                    failures: s.failures,
                    conn_delivered: delivered,
                    conn_duplicate: m.conn.duplicate(),
                    conn_completion_time: m.completed.map(|t| t - m.start),
                    conn_goodput: (active > 0.0).then(|| delivered as f64 * 8.0 / active),
                });
            }
        }
        subflow_table(&rows)
    }

    /// A handoff's notice reached subflow `f` of connection `c`: with
    /// `failover = "notice"`, the subflow on the link the node left is
    /// removed and the one on the link it moved to restored.
    pub(crate) fn mptcp_notice(&mut self, c: usize, from: usize, to: usize) {
        let m = &mut self.mptcp[c];
        if m.failover != Failover::Notice {
            return;
        }
        for k in 0..m.links.len() {
            if m.links[k] == from {
                m.conn.set_removed(k, true);
            } else if m.links[k] == to {
                m.conn.set_removed(k, false);
            }
        }
        self.mptcp_step(c);
    }
}
