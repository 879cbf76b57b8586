//! The flows pass: each flow's nodes, TCP and congestion-control settings,
//! start, stop and size, commands, and its routes (an explicit path, or a
//! route each way).

use super::check_before_end;
use crate::scenario::{Scenario, ScenarioError};
use crate::topology::Topology;

/// Checks every flow of `sc` on the graph of its links.
pub(super) fn check(sc: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let nodes = sc.node_names();
    for (i, f) in sc.flows.iter().enumerate() {
        let p = format!("flows[{i}]");
        for (field, n) in [("from", &f.from), ("to", &f.to)] {
            if !nodes.contains(n) {
                return Err(ScenarioError::at(
                    format!("{p}.{field}"),
                    format!("\"{n}\" is not a node; nodes are {}", nodes.join(", ")),
                ));
            }
        }
        if f.from == f.to {
            return Err(ScenarioError::at(
                format!("{p}.to"),
                "sender and receiver are the same node",
            ));
        }
        if f.count == 0 {
            return Err(ScenarioError::at(
                format!("{p}.count"),
                "must be at least 1",
            ));
        }
        super::udp::check(&p, f)?;
        f.tcp
            .validate()
            .map_err(|m| ScenarioError::at(format!("{p}.tcp.{}", field_of(&m)), rest_of(&m)))?;
        f.cc.validate()
            .map_err(|m| ScenarioError::at(format!("{p}.cc.{}", field_of(&m)), rest_of(&m)))?;
        check_before_end(sc, &format!("{p}.start"), f.start)?;
        if let Some(stop) = f.stop {
            if stop <= f.start {
                return Err(ScenarioError::at(
                    format!("{p}.stop"),
                    format!("{stop} is not after start ({})", f.start),
                ));
            }
        }
        if f.size.is_some_and(|s| s.0 == 0) {
            return Err(ScenarioError::at(format!("{p}.size"), "must be above zero"));
        }
        for (field, c) in [("cmd", &f.cmd), ("receiver_cmd", &f.receiver_cmd)] {
            if c.as_ref().is_some_and(|c| c.trim().is_empty()) {
                return Err(ScenarioError::at(format!("{p}.{field}"), "is empty"));
            }
        }
        if f.receiver_cmd.is_some() && f.cmd.is_none() {
            return Err(ScenarioError::at(
                format!("{p}.receiver_cmd"),
                "needs cmd: the built-in sender talks only to the built-in receiver",
            ));
        }
        match &f.path {
            Some(path) => {
                topo.route_along(path)
                    .map_err(|m| ScenarioError::at(format!("{p}.path"), m))?;
                if path.first() != Some(&f.from) || path.last() != Some(&f.to) {
                    return Err(ScenarioError::at(
                        format!("{p}.path"),
                        format!("must start at \"{}\" and end at \"{}\"", f.from, f.to),
                    ));
                }
            }
            None => {
                for (a, b) in [(&f.from, &f.to), (&f.to, &f.from)] {
                    if topo.shortest_route(a, b).is_none() {
                        return Err(ScenarioError::at(
                            format!("{p}.to"),
                            format!("no route from \"{a}\" to \"{b}\""),
                        ));
                    }
                }
            }
        }
        if let Some(m) = &f.mptcp {
            crate::scenario::subflow_plan(sc, topo, i, f, m)?;
        }
    }
    Ok(())
}

pub(super) fn field_of(m: &str) -> &str {
    m.split(':').next().unwrap_or("")
}
pub(super) fn rest_of(m: &str) -> String {
    m.split_once(": ")
        .map_or(m.to_string(), |(_, r)| r.to_string())
}
