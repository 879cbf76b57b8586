//! The flows of a scenario: endpoints, transport (TCP or a UDP pattern),
//! congestion control, TCP settings, start, stop, size, replicas and route.

use super::mptcp::MptcpSpec;
use super::udp::{PingSpec, Transport, UdpSpec};
use serde::{Deserialize, Serialize};
use wavelab_tcp::units::ByteSize;
use wavelab_tcp::{CcConfig, Duration, TcpConfig};

/// One flow (or `count` identical flows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a flow such as { from = \"a\", to = \"b\" }"
)]
pub struct FlowSpec {
    /// Name (default `flow<i>`; replicas get `#k`).
    #[serde(default)]
    pub name: Option<String>,
    /// Node of the sender.
    pub from: String,
    /// Node of the receiver.
    pub to: String,
    /// Transport protocol (default `tcp`; `udp` sends by the `udp` table).
    #[serde(default, skip_serializing_if = "Transport::is_tcp")]
    pub transport: Transport,
    /// What a UDP flow sends (with `transport = "udp"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<UdpSpec>,
    /// A ping flow's interval and size (with `transport = "ping"` only;
    /// default: one request of 56 bytes a second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping: Option<PingSpec>,
    /// Multipath TCP: one subflow per access link of the multi-homed end
    /// (see `docs/scenarios.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mptcp: Option<MptcpSpec>,
    /// Congestion control (default NewReno).
    #[serde(default)]
    pub cc: CcConfig,
    /// TCP parameters of both endpoints.
    #[serde(default)]
    pub tcp: TcpConfig,
    /// When the sender opens the connection (default 0 s).
    #[serde(default)]
    pub start: Duration,
    /// When the application stops writing (default: never).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Bytes to transfer (default: unlimited).
    #[serde(default)]
    pub size: Option<ByteSize>,
    /// Number of identical flows (default 1).
    #[serde(default = "one_u32")]
    pub count: u32,
    /// Explicit node path (default: the shortest path by hops).
    #[serde(default)]
    pub path: Option<Vec<String>>,
    /// Record every packet of this flow in the packet log.
    #[serde(default)]
    pub log_packets: bool,
    /// Emulation only: a shell command run in the sender node's namespace
    /// at `start` instead of the built-in sender (the simulator refuses
    /// it). See `docs/emulation.md`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
    /// Emulation only: a shell command run in the receiver node's namespace
    /// from the start of the run (a server for `cmd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_cmd: Option<String>,
}

fn one_u32() -> u32 {
    1
}

/// The name of replica `k` of flow `i` (its `name` or `flow<i>`, followed by
/// `#k` when the flow has `count > 1`).
pub fn flow_name(f: &FlowSpec, i: usize, k: u32) -> String {
    let base = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
    if f.count > 1 {
        format!("{base}#{k}")
    } else {
        base
    }
}
