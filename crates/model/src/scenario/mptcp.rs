//! A flow's Multipath TCP settings (`mptcp = { ... }`, RFC 8684): the
//! scheduler, the coupled congestion control, the path manager and how a
//! subflow whose access link goes away is given up. The simulator runs it
//! ([`wavelab_tcp::mptcp`]); the emulator runs Linux's own MPTCP over the same
//! access links (`wavelab_net::mptcp`).

use serde::{Deserialize, Serialize};
pub use wavelab_tcp::mptcp::{Coupling, Scheduler};

/// `mptcp = { ... }` on a TCP flow between a node and a multi-homed node:
/// one subflow per access link of the multi-homed end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "MPTCP settings such as { scheduler = \"lowest-rtt\", paths = \"backup\" }"
)]
pub struct MptcpSpec {
    /// Which subflow carries the next data (default `lowest-rtt`).
    #[serde(default)]
    pub scheduler: Scheduler,
    /// `uncoupled` (each subflow runs the flow's `cc`), or `lia` (RFC
    /// 6356), `olia` or `balia` over a Reno-family `cc`.
    #[serde(default)]
    pub coupled: Coupling,
    /// The path manager: a regular subflow on every access link
    /// (`full-mesh`), or regular on the primary link only and `backup` on
    /// the others (RFC 8684 section 3.3.8).
    #[serde(default)]
    pub paths: PathManager,
    /// How a subflow whose access link went away is given up.
    #[serde(default)]
    pub failover: Failover,
    /// Retransmission timeouts without progress after which a subflow is
    /// stale (takes no data, its data reinjected), default 1.
    #[serde(default = "one")]
    pub stale_after: u32,
}

fn one() -> u32 {
    1
}

/// The path manager.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathManager {
    /// A regular subflow on every access link.
    #[default]
    FullMesh,
    /// A regular subflow on the primary access link, backup ones on the others.
    Backup,
}

/// How a subflow whose access link goes away is given up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Failover {
    /// By its own retransmission timeouts (`stale_after`).
    #[default]
    Timeouts,
    /// At once when the handoff's cross-layer notice (its `notify`) reaches
    /// the sender, as Linux's path manager reacts to an address removal;
    /// the timeouts still apply.
    Notice,
}

/// Where an MPTCP flow's subflows run: the multi-homed end, and per
/// subflow its access link (a link index), its routes (data, ACKs) and
/// whether it is a backup subflow. Subflow 0 is on the primary link: the
/// one the node is on at the start (its first handoff's `from`), else its
/// first access link in link order.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowPlan {
    /// The multi-homed node.
    pub node: String,
    /// Per subflow: access link, data route, ACK route, backup flag.
    pub subflows: Vec<(usize, Vec<DirId>, Vec<DirId>, bool)>,
}

use super::handoffs::{handoff_order, link_index};
use super::{link_name, FlowSpec, Scenario, ScenarioError};
use crate::topology::{DirId, Topology};

/// The subflows of MPTCP flow `i` (`f = &sc.flows[i]`), or an error naming
/// the field: neither end multi-homed, an explicit `path`, a UDP or ping
/// flow, LIA over a window that is not Reno's, `failover = "notice"`
/// without a notifying handoff of the node.
pub fn subflow_plan(
    sc: &Scenario,
    topo: &Topology,
    i: usize,
    f: &FlowSpec,
    m: &MptcpSpec,
) -> Result<SubflowPlan, ScenarioError> {
    let p = format!("flows[{i}]");
    if !f.transport.is_tcp() {
        return Err(ScenarioError::at(
            format!("{p}.mptcp"),
            "Multipath TCP runs over TCP: remove `mptcp` or use transport = \"tcp\"",
        ));
    }
    if f.path.is_some() {
        return Err(ScenarioError::at(
            format!("{p}.path"),
            "an MPTCP flow takes one route per access link: remove `path`",
        ));
    }
    if m.stale_after == 0 {
        return Err(ScenarioError::at(
            format!("{p}.mptcp.stale_after"),
            "must be at least 1 (retransmission timeouts)",
        ));
    }
    if m.coupled != Coupling::Uncoupled && !matches!(f.cc.name(), "reno" | "newreno" | "tahoe") {
        return Err(ScenarioError::at(
            format!("{p}.mptcp.coupled"),
            format!(
                "\"{}\" couples Reno-style windows ({}) and flows[{i}].cc is \"{}\": \
                 set cc = \"newreno\", or coupled = \"uncoupled\"",
                m.coupled.name(),
                m.coupled.source(),
                f.cc.name()
            ),
        ));
    }
    let access = |node: &str| -> Vec<usize> {
        (0..sc.links.len())
            .filter(|&l| sc.links[l].between.iter().any(|n| n == node))
            .collect()
    };
    let (node, links) = match [&f.to, &f.from].map(|n| (n, access(n))) {
        [(n, l), _] if l.len() > 1 => (n.clone(), l),
        [_, (n, l)] if l.len() > 1 => (n.clone(), l),
        _ => {
            return Err(ScenarioError::at(
                format!("{p}.mptcp"),
                format!(
                    "neither \"{}\" nor \"{}\" has more than one access link: MPTCP needs a \
                     multi-homed end (connect \"{}\" to a second link) or no `mptcp`",
                    f.from, f.to, f.to
                ),
            ))
        }
    };
    let primary = handoff_order(sc)
        .into_iter()
        .map(|h| &sc.handoffs[h])
        .find(|h| h.node == node)
        .and_then(|h| link_index(sc, &h.from))
        .unwrap_or(links[0]);
    if m.failover == Failover::Notice
        && !sc
            .handoffs
            .iter()
            .any(|h| h.node == node && h.notify.is_some())
    {
        return Err(ScenarioError::at(
            format!("{p}.mptcp.failover"),
            format!(
                "\"notice\" acts on a handoff's cross-layer notice and no handoff of \"{node}\" \
                 has `notify`: add notify = {{ delay = \"0s\" }} to one, or failover = \"timeouts\""
            ),
        ));
    }
    let mut order = vec![primary];
    order.extend(links.iter().copied().filter(|&l| l != primary));
    let mut subflows = Vec::new();
    for &l in &order {
        let avoid: Vec<bool> = (0..sc.links.len())
            .map(|k| k != l && links.contains(&k))
            .collect();
        let data = topo.shortest_route_avoiding(&f.from, &f.to, &avoid);
        let acks = topo.shortest_route_avoiding(&f.to, &f.from, &avoid);
        let (Some(data), Some(acks)) = (data, acks) else {
            return Err(ScenarioError::at(
                format!("{p}.mptcp"),
                format!(
                    "no route between \"{}\" and \"{}\" over access link \"{}\" of \"{node}\"",
                    f.from,
                    f.to,
                    link_name(&sc.links[l], l)
                ),
            ));
        };
        let backup = m.paths == PathManager::Backup && l != primary;
        subflows.push((l, data, acks, backup));
    }
    Ok(SubflowPlan { node, subflows })
}
