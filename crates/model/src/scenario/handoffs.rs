//! Node handoffs: a multi-homed node moving between its access links
//! (MobiWac 2009's model of a vertical handoff); the schema, and the order
//! and attachments they give (their checks are a validation pass,
//! `validate::handoffs`).
//!
//! A node with several access links (a mobile node reachable through two
//! base stations) is attached to one of them at a time. A handoff moves it
//! from one access link to another at a given time: from then on, the routes
//! of every flow are the shortest ones over the links the node is attached
//! to, so the flows that crossed the old link switch to the new one, in both
//! directions. Before its first handoff a node is on that handoff's `from`
//! link; its other access links carry nothing.

use super::{link_name, Scenario};
use serde::{Deserialize, Serialize};
use std::fmt;
use wavelab_tcp::Duration;

/// How the node changes access links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeHandoffKind {
    /// The new link is used from the switch on; the old one delivers what
    /// it holds and what is still on its way to it (this reorders packets
    /// when the new path is faster).
    MakeBeforeBreak,
    /// The old link goes down at the switch; the new one comes up after the
    /// disconnection.
    BreakBeforeMake,
}

impl NodeHandoffKind {
    /// The name used in scenario files and result tables.
    pub fn name(self) -> &'static str {
        match self {
            NodeHandoffKind::MakeBeforeBreak => "make-before-break",
            NodeHandoffKind::BreakBeforeMake => "break-before-make",
        }
    }
}

/// What becomes of the packets the old link holds (queued, in service, in
/// flight, or still on their way to it) at a break-before-make handoff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Held {
    /// Lost: the old link is down from the switch until the node comes back
    /// to it (the default: the radio link is gone).
    #[default]
    Lost,
    /// Delivered: the old link stays up and drains, as in a make-before-break
    /// handoff (only the new link's disconnection remains).
    Delivered,
}

impl Held {
    /// The name used in scenario files and result tables.
    pub fn name(self) -> &'static str {
        match self {
            Held::Lost => "lost",
            Held::Delivered => "delivered",
        }
    }
}

impl fmt::Display for NodeHandoffKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A handoff of a multi-homed node from one access link to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a handoff such as { node = \"mobile\", at = \"10s\", from = \"wlan\", to = \"hsdpa\", kind = \"make-before-break\" }"
)]
pub struct NodeHandoffSpec {
    /// The multi-homed node.
    pub node: String,
    /// When the routes switch.
    pub at: Duration,
    /// The access link the node leaves (a link name).
    pub from: String,
    /// The access link it moves to.
    pub to: String,
    /// Make-before-break or break-before-make.
    pub kind: NodeHandoffKind,
    /// Break-before-make: how long the new link stays down after the switch
    /// (default 0).
    #[serde(default)]
    pub disconnection: Option<Duration>,
    /// Break-before-make: what becomes of the packets the old link holds
    /// (default `"lost"`).
    #[serde(default)]
    pub held: Option<Held>,
    /// Notify the senders of the flows it moves (default: no notification).
    #[serde(default)]
    pub notify: Option<NotifySpec>,
    /// Measure how long the flows it moves take to have a number of packets
    /// acknowledged after the switch (default: no measurement).
    #[serde(default)]
    pub transfer: Option<TransferSpec>,
}

/// A handoff's transfer measurement (MobiWac 2009, section 4.1: "the time
/// taken to transfer (to receive the acknowledgment) a specific number of
/// packets", after the handoff, for the slowest flow): for every flow the
/// handoff moves, the time from the switch until the sender's cumulative
/// ACK point has advanced `packets` full-sized segments (`packets` x MSS
/// payload bytes) past where it was at the switch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a transfer measurement such as { packets = 100, stop = true }"
)]
pub struct TransferSpec {
    /// Packets (full-sized segments) to be acknowledged after the switch.
    pub packets: u32,
    /// End the run once every measured flow of every handoff with `stop`
    /// has its packets acknowledged (default false: run to `duration`).
    #[serde(default)]
    pub stop: bool,
}

/// A handoff's notification to the senders of the flows it moves.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "a notification such as { delay = \"50ms\" }"
)]
pub struct NotifySpec {
    /// How long after the switch it reaches the senders (default 0).
    pub delay: Duration,
}

impl NodeHandoffSpec {
    /// The disconnection (zero for a make-before-break handoff).
    pub fn disconnection(&self) -> Duration {
        self.disconnection.unwrap_or(Duration::ZERO)
    }
    /// What becomes of what the old link holds (a make-before-break handoff
    /// delivers it).
    pub fn held(&self) -> Held {
        match self.kind {
            NodeHandoffKind::MakeBeforeBreak => Held::Delivered,
            NodeHandoffKind::BreakBeforeMake => self.held.unwrap_or_default(),
        }
    }
}

/// The handoffs in the order they happen: by time, then in file order.
pub fn handoff_order(sc: &Scenario) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sc.handoffs.len()).collect();
    order.sort_by_key(|&i| sc.handoffs[i].at);
    order
}

/// The index of the link called `name`.
pub(crate) fn link_index(sc: &Scenario, name: &str) -> Option<usize> {
    (0..sc.links.len()).find(|&i| link_name(&sc.links[i], i) == name)
}

/// Which links carry nothing because a multi-homed node is not attached to
/// them: at the start (`[0]`), then after each handoff in
/// [`handoff_order`] (`[k + 1]`). Indexed by link.
pub fn detached_links(sc: &Scenario) -> Vec<Vec<bool>> {
    let order = handoff_order(sc);
    let link = |name: &str| link_index(sc, name).expect("validated");
    let mut state = vec![false; sc.links.len()];
    // every access link is detached, but the one each node starts on
    for h in &sc.handoffs {
        state[link(&h.from)] = true;
        state[link(&h.to)] = true;
    }
    let mut seen: Vec<&str> = Vec::new();
    for &i in &order {
        let h = &sc.handoffs[i];
        if !seen.contains(&h.node.as_str()) {
            seen.push(&h.node);
            state[link(&h.from)] = false;
        }
    }
    let mut states = vec![state.clone()];
    for &i in &order {
        let h = &sc.handoffs[i];
        state[link(&h.from)] = true;
        state[link(&h.to)] = false;
        states.push(state.clone());
    }
    states
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    /// A mobile node behind two base stations.
    const BASE: &str = r#"
        duration = "30s"
        [[links]]
        name = "wired"
        between = ["server", "router"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        between = ["router", "bs1"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        between = ["router", "bs2"]
        rate = "100Mbit/s"
        delay = "2ms"
        [[links]]
        name = "wlan"
        between = ["bs1", "mobile"]
        rate = "11Mbit/s"
        delay = "10ms"
        [[links]]
        name = "hsdpa"
        between = ["bs2", "mobile"]
        rate = "2Mbit/s"
        delay = "50ms"
        [[flows]]
        from = "server"
        to = "mobile"
    "#;

    fn with(handoffs: &str) -> String {
        format!("{BASE}\n{handoffs}")
    }

    fn err(text: &str) -> String {
        Scenario::from_toml_str(text).unwrap_err().to_string()
    }

    #[test]
    fn a_handoff_parses_with_its_defaults() {
        let sc = Scenario::from_toml_str(&with(
            r#"[[handoffs]]
            node = "mobile"
            at = "10s"
            from = "wlan"
            to = "hsdpa"
            kind = "break-before-make"
            disconnection = "1s""#,
        ))
        .unwrap();
        let h = &sc.handoffs[0];
        assert_eq!(h.disconnection().as_secs_f64(), 1.0);
        assert_eq!(h.held(), super::Held::Lost);
        let again = Scenario::from_json_str(&sc.to_json()).unwrap();
        assert_eq!(again, sc);
    }

    #[test]
    fn errors_name_the_field() {
        let h = |fields: &str| {
            with(&format!(
                "[[handoffs]]\nnode = \"mobile\"\nat = \"10s\"\n{fields}"
            ))
        };
        let mbb = "kind = \"make-before-break\"";
        assert_eq!(
            err(&h(&format!("from = \"wlan\"\nto = \"umts\"\n{mbb}"))),
            "handoffs[0].to: \"umts\" is not a link; links are wired, link1, link2, wlan, hsdpa"
        );
        assert_eq!(
            err(&h(&format!("from = \"wired\"\nto = \"hsdpa\"\n{mbb}"))),
            "handoffs[0].from: links[0] (\"wired\") does not connect \"mobile\"; it is between \"server\" and \"router\""
        );
        assert_eq!(
            err(&h(&format!("from = \"wlan\"\nto = \"wlan\"\n{mbb}"))),
            "handoffs[0].to: \"wlan\" is also the link it leaves"
        );
        assert_eq!(
            err(&h(&format!(
                "from = \"wlan\"\nto = \"hsdpa\"\n{mbb}\ndisconnection = \"1s\""
            ))),
            "handoffs[0].disconnection: only a break-before-make handoff has one; a make-before-break handoff has no disconnection and delivers what the old link holds"
        );
        assert!(
            err(&h("from = \"wlan\"\nto = \"hsdpa\"\nkind = \"soft\"")).starts_with(
                "handoffs[0].kind: unknown variant `soft`, expected `make-before-break` or `break-before-make`"
            ),
            "{}",
            err(&h("from = \"wlan\"\nto = \"hsdpa\"\nkind = \"soft\""))
        );
        assert_eq!(
            err(&h("from = \"wlan\"\nto = \"hsdpa\"")),
            "handoffs[0].kind: missing (it is required)"
        );
        let two = with(
            r#"[[handoffs]]
            node = "mobile"
            at = "10s"
            from = "wlan"
            to = "hsdpa"
            kind = "make-before-break"
            [[handoffs]]
            node = "mobile"
            at = "5s"
            from = "hsdpa"
            to = "wlan"
            kind = "make-before-break""#,
        );
        // in time order the 5 s one comes first, from hsdpa: the 10 s one
        // must then leave wlan, which it does; but at 5 s the node starts on
        // hsdpa, and the 10 s one moves it from wlan, where it is
        Scenario::from_toml_str(&two).unwrap();
        let wrong = two.replacen("from = \"hsdpa\"", "from = \"wlan\"", 1);
        let wrong = wrong.replacen("to = \"wlan\"", "to = \"hsdpa\"", 1);
        assert_eq!(
            err(&wrong),
            "handoffs[0].from: \"mobile\" is on \"hsdpa\" at 10s (since handoffs[1] at 5s), not on \"wlan\""
        );
        let path = with(
            r#"[[handoffs]]
            node = "mobile"
            at = "10s"
            from = "wlan"
            to = "hsdpa"
            kind = "make-before-break""#,
        )
        .replace(
            "to = \"mobile\"\n",
            "to = \"mobile\"\npath = [\"server\", \"router\", \"bs1\", \"mobile\"]\n",
        );
        assert_eq!(
            err(&path),
            "flows[0].path: crosses \"wlan\", an access link of a handoff; leave path out so that the route follows the handoffs"
        );
    }
}
