//! The node handoffs pass: each handoff's node and access links, its
//! timing against the run and the node's other handoffs, and the routes of
//! the flows in every attachment it leads to.

use crate::scenario::{
    detached_links, handoff_order, link_index, link_name, NodeHandoffKind, Scenario, ScenarioError,
};
use crate::topology::Topology;

/// Checks the handoffs against the links, the flows and each other.
pub(super) fn check(sc: &Scenario, topo: &Topology) -> Result<(), ScenarioError> {
    let nodes = sc.node_names();
    let links: Vec<String> = (0..sc.links.len())
        .map(|i| link_name(&sc.links[i], i))
        .collect();
    for (i, h) in sc.handoffs.iter().enumerate() {
        let p = format!("handoffs[{i}]");
        if !nodes.contains(&h.node) {
            return Err(ScenarioError::at(
                format!("{p}.node"),
                format!(
                    "\"{}\" is not a node; nodes are {}",
                    h.node,
                    nodes.join(", ")
                ),
            ));
        }
        for (field, name) in [("from", &h.from), ("to", &h.to)] {
            let Some(k) = link_index(sc, name) else {
                return Err(ScenarioError::at(
                    format!("{p}.{field}"),
                    format!("\"{name}\" is not a link; links are {}", links.join(", ")),
                ));
            };
            if !sc.links[k].between.contains(&h.node) {
                return Err(ScenarioError::at(
                    format!("{p}.{field}"),
                    format!(
                        "links[{k}] (\"{name}\") does not connect \"{}\"; it is between \"{}\" and \"{}\"",
                        h.node, sc.links[k].between[0], sc.links[k].between[1]
                    ),
                ));
            }
        }
        if h.from == h.to {
            return Err(ScenarioError::at(
                format!("{p}.to"),
                format!("\"{}\" is also the link it leaves", h.to),
            ));
        }
        if let Some(t) = &h.transfer {
            if t.packets == 0 || t.packets > 100_000_000 {
                return Err(ScenarioError::at(
                    format!("{p}.transfer.packets"),
                    format!(
                        "{} is out of range; give 1 to 100000000 packets to acknowledge after the switch",
                        t.packets
                    ),
                ));
            }
        }
        if h.at >= sc.duration {
            return Err(ScenarioError::at(
                format!("{p}.at"),
                format!(
                    "{} is not before the end of the run ({})",
                    h.at, sc.duration
                ),
            ));
        }
        if h.kind == NodeHandoffKind::MakeBeforeBreak {
            for (field, set) in [
                ("disconnection", h.disconnection.is_some()),
                ("held", h.held.is_some()),
            ] {
                if set {
                    return Err(ScenarioError::at(
                        format!("{p}.{field}"),
                        "only a break-before-make handoff has one; a make-before-break handoff has no disconnection and delivers what the old link holds",
                    ));
                }
            }
        }
    }
    // each node's handoffs in time order: from the link it is on
    let order = handoff_order(sc);
    for (k, &i) in order.iter().enumerate() {
        let h = &sc.handoffs[i];
        let before = order[..k]
            .iter()
            .rev()
            .find(|&&j| sc.handoffs[j].node == h.node);
        let Some(&j) = before else { continue };
        let prev = &sc.handoffs[j];
        if prev.at == h.at {
            return Err(ScenarioError::at(
                format!("handoffs[{i}].at"),
                format!(
                    "handoffs[{j}] moves \"{}\" at the same instant ({})",
                    h.node, h.at
                ),
            ));
        }
        if prev.to != h.from {
            return Err(ScenarioError::at(
                format!("handoffs[{i}].from"),
                format!(
                    "\"{}\" is on \"{}\" at {} (since handoffs[{j}] at {}), not on \"{}\"",
                    h.node, prev.to, h.at, prev.at, h.from
                ),
            ));
        }
    }
    if sc.handoffs.is_empty() {
        return Ok(());
    }
    // routes: explicit paths may not cross an access link; every other flow
    // needs a route in every state
    let access: Vec<bool> = {
        let mut a = vec![false; sc.links.len()];
        for h in &sc.handoffs {
            for name in [&h.from, &h.to] {
                a[link_index(sc, name).expect("checked")] = true;
            }
        }
        a
    };
    let states = detached_links(sc);
    for (f, flow) in sc.flows.iter().enumerate() {
        if let Some(path) = &flow.path {
            let route = topo.route_along(path).expect("checked before");
            if let Some(&d) = route.iter().find(|&&d| access[d as usize / 2]) {
                let l = d as usize / 2;
                return Err(ScenarioError::at(
                    format!("flows[{f}].path"),
                    format!(
                        "crosses \"{}\", an access link of a handoff; leave path out so that the route follows the handoffs",
                        links[l]
                    ),
                ));
            }
            continue;
        }
        for (s, detached) in states.iter().enumerate() {
            for (a, b) in [(&flow.from, &flow.to), (&flow.to, &flow.from)] {
                if topo.shortest_route_avoiding(a, b, detached).is_some() {
                    continue;
                }
                let when = match s {
                    0 => "before the first handoff".to_string(),
                    _ => format!("after handoffs[{}]", order[s - 1]),
                };
                return Err(ScenarioError::at(
                    format!("flows[{f}].to"),
                    format!("no route from \"{a}\" to \"{b}\" {when}"),
                ));
            }
        }
    }
    Ok(())
}
