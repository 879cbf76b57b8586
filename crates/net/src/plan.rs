//! What an emulation sets up, decided before anything is created: the
//! namespaces (one per node that ends a flow), their addresses, the kernel
//! settings each needs, and each flow's congestion control, ports and routes.
//!
//! A scenario is validated by the simulator's schema, with one difference:
//! a flow's `cc` names a congestion control of the **kernel**
//! (`/proc/sys/net/ipv4/tcp_available_congestion_control`), which may be one
//! wavelab does not know (`vegas`), and a wavelab algorithm the kernel does
//! not have (`newreno`, or `wave` until the BPF TCP Wave is loaded) is
//! refused with a message that says so. `wave` is the BPF TCP Wave of
//! `wavelab bpf load` (crates/bpf): an emulated Wave flow runs only if the
//! program was loaded with the flow's parameters (its variant and
//! overrides, or the defaults), so that it is the same Wave the simulator
//! runs; otherwise the error lists the differences and the command that
//! reloads it. TCP settings are mapped to what the
//! kernel offers (a socket option, a route attribute or a per-namespace
//! sysctl); what it cannot apply, if the scenario sets it, becomes a note in
//! the results. Every error names the field and the value.

use crate::mptcp::{MptcpPlan, SubflowEnd};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use wavelab_bpf_maps::Params as WaveBpfParams;
use wavelab_model::capture::{flow_ports, node_address};
use wavelab_model::rng::{Rng, Stream};
use wavelab_model::scenario::{
    link_name, subflow_plan, LinkHandoverTime, PingSpec, SubflowPlan, Transport, UdpPattern,
    UdpSpec, UDP_OVERHEAD, VIDEO_PACKET, VOICE_PACKET,
};
use wavelab_model::topology::{DirId, Topology};
use wavelab_model::udp::{load_udp_trace, TracePacket, UdpSource};
use wavelab_model::{Scenario, ScenarioError};
use wavelab_tcp::cc::is_builtin;
use wavelab_tcp::{CcConfig, Duration, Instant, LostRetransmissions, TcpConfig};

/// What the running kernel offers, read once per run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// `net.ipv4.tcp_available_congestion_control`, in the kernel's order.
    pub congestion_controls: Vec<String>,
    /// What a registered `wave` is.
    pub wave: BpfWave,
    /// Multipath TCP is on (`net.mptcp.enabled`).
    pub mptcp: bool,
}

/// What the congestion control `wave` is, when the kernel lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BpfWave {
    /// The BPF TCP Wave of `wavelab bpf load`, with these parameters.
    Loaded(WaveBpfParams),
    /// Nothing is pinned by `wavelab bpf load`: if the kernel lists `wave`,
    /// something else registered it.
    Foreign,
    /// Not checked (results read back on another machine).
    Unchecked,
}

impl Kernel {
    /// Reads the kernel's congestion controls.
    pub fn read() -> std::io::Result<Kernel> {
        let s = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")?;
        let pins = std::path::Path::new(wavelab_bpf_maps::PIN_DIR);
        let wave = match wavelab_bpf_maps::pinned_params(pins) {
            Ok(Some(p)) => BpfWave::Loaded(p),
            _ => BpfWave::Foreign,
        };
        Ok(Kernel {
            congestion_controls: s.split_whitespace().map(String::from).collect(),
            wave,
            mptcp: crate::mptcp::enabled(),
        })
    }

    fn has(&self, cc: &str) -> bool {
        self.congestion_controls.iter().any(|c| c == cc)
    }

    fn list(&self) -> String {
        self.congestion_controls.join(", ")
    }
}

/// A node that ends a flow: it gets a namespace, a TUN device and an address.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePlan {
    /// The node's name in the scenario.
    pub name: String,
    /// Its index among the scenario's nodes (order of first appearance).
    pub index: usize,
    /// Its address, as in the simulator's packet captures.
    pub address: [u8; 4],
    /// MTU of its TUN device.
    pub mtu: u32,
    /// Sysctls of its namespace, in the order they are written.
    pub sysctls: Vec<(String, String)>,
    /// Routes to other nodes with attributes (`initcwnd`, `rto_min`,
    /// `quickack`), as `ip route` arguments after the destination.
    pub routes: Vec<([u8; 4], Vec<String>)>,
    /// Its MPTCP endpoints: an address of its own on another access link
    /// (added to its device), the path manager's flag for it (`signal` or
    /// `subflow`) and whether it is `backup` ([`crate::mptcp`]).
    pub mptcp_endpoints: Vec<([u8; 4], &'static str, bool)>,
    /// It ends an MPTCP flow: its path manager's limits are raised.
    pub mptcp_limits: bool,
}

/// One flow (replicas expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowPlan {
    /// Its name (`base#k` for replicas).
    pub name: String,
    /// Index of the scenario flow it comes from.
    pub spec: usize,
    /// Sending and receiving node (indices into [`Plan::nodes`]).
    pub from: usize,
    /// Receiving node.
    pub to: usize,
    /// The kernel's congestion control (`None` for a command).
    pub cc: Option<String>,
    /// Source and destination ports.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// When it starts, stops writing, and how much it sends.
    pub start: Duration,
    /// When the application stops writing.
    pub stop: Option<Duration>,
    /// Bytes to send (`None`: until the end).
    pub size: Option<u64>,
    /// TCP settings as written (normalised).
    pub tcp: TcpConfig,
    /// The routes of its data (`[0]`) and of its ACKs (`[1]`), each a list
    /// of link directions, the initial one first; the handoffs of
    /// multi-homed nodes switch between them ([`Plan::switches`]).
    pub routes: [Vec<Vec<DirId>>; 2],
    /// A command instead of the built-in sender, and its server.
    pub cmd: Option<String>,
    /// The command run in the receiver's namespace.
    pub receiver_cmd: Option<String>,
    /// Log its packets.
    pub log: bool,
    /// A UDP or ping flow's datagrams (None: a TCP flow).
    pub datagrams: Option<Datagrams>,
    /// A Multipath TCP flow's subflows.
    pub mptcp: Option<MptcpPlan>,
    /// This row is subflow `.1` of the MPTCP flow at row `.0`, not a flow
    /// of its own: the kernel opens it, the wire thread routes and counts
    /// its packets, and the results read it from its connection.
    pub subflow_of: Option<(usize, usize)>,
}

/// What the built-in sender of a UDP or ping flow sends: the simulator's
/// sources ([`UdpSource`]), so both clocks send the same datagrams at the
/// same instants.
#[derive(Clone, Debug, PartialEq)]
pub enum Datagrams {
    /// A UDP flow: its pattern, the packets of its trace (pattern
    /// `trace`), and its random stream's seed (on/off periods).
    Udp {
        /// The flow's `udp` table.
        spec: UdpSpec,
        /// The trace's packets, read when the plan is made.
        trace: Option<Arc<[TracePacket]>>,
        /// The scenario's seed.
        seed: u64,
        /// The flow's index among the expanded flows (its random stream).
        index: u32,
    },
    /// A ping flow: an echo request of `size` bytes every `interval`,
    /// answered by the receiver.
    Ping(PingSpec),
}

impl Datagrams {
    /// The source of the flow's datagrams from `start` to `stop`.
    pub fn source(&self, start: Instant, stop: Option<Instant>) -> UdpSource {
        match self {
            Datagrams::Udp {
                spec,
                trace,
                seed,
                index,
            } => UdpSource::new(
                spec,
                start,
                stop,
                trace.clone(),
                Rng::derive(*seed, Stream::FlowApp(*index)),
            ),
            Datagrams::Ping(p) => UdpSource::periodic(p.size.0 as u32, p.interval, start, stop),
        }
    }

    /// The flows table's `algorithm` (the simulator's names).
    pub fn algorithm(&self) -> &'static str {
        match self {
            Datagrams::Udp { spec, .. } => spec.pattern.algorithm(),
            Datagrams::Ping(_) => "ping",
        }
    }

    /// Whether the receiver answers each datagram (a ping).
    pub fn echo(&self) -> bool {
        matches!(self, Datagrams::Ping(_))
    }

    /// The largest UDP payload (bytes) it sends.
    pub fn largest_payload(&self) -> u32 {
        match self {
            Datagrams::Udp { spec, trace, .. } => match (spec.pattern, trace) {
                (UdpPattern::Trace, Some(t)) => t.iter().map(|p| p.payload).max().unwrap_or(0),
                (UdpPattern::Voice, _) => VOICE_PACKET as u32,
                _ => spec.packet.map_or(VIDEO_PACKET, |b| b.0) as u32,
            },
            Datagrams::Ping(p) => p.size.0 as u32,
        }
    }

    /// The playout deadline of a UDP flow, if any.
    pub fn deadline(&self) -> Option<Duration> {
        match self {
            Datagrams::Udp { spec, .. } => spec.playout_deadline,
            Datagrams::Ping(_) => None,
        }
    }
}

/// An MPTCP subflow after the first, queued for a row of its own:
/// (connection row, subflow number, access link, routes, backup).
type Join = (usize, usize, usize, [Vec<Vec<DirId>>; 2], bool);

/// Everything an emulation sets up.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The scenario, validated (kernel-only algorithm names replaced by a
    /// placeholder the schema knows; the flows' [`FlowPlan::cc`] hold the
    /// real names).
    pub scenario: Scenario,
    /// The scenario as normalised JSON with the flows' kernel algorithm names.
    pub normalized: Value,
    /// Nodes and directions.
    pub topology: Topology,
    /// The nodes that get a namespace.
    pub nodes: Vec<NodePlan>,
    /// The flows.
    pub flows: Vec<FlowPlan>,
    /// Settings the scenario sets that the kernel does not apply, one line each.
    pub notes: Vec<String>,
    /// The handoffs' route switches: `(instant, flow, side, route number
    /// in the flow's routes)`, in time order.
    pub switches: Vec<(Instant, usize, usize, usize)>,
}

fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.into(),
        message: message.into(),
    }
}

/// The kernel algorithm of a flow whose `cc` was written as `raw` (`None`
/// when absent), or the error that names why it cannot be emulated.
fn kernel_cc(path: &str, raw: Option<&Value>, kernel: &Kernel) -> Result<String, ScenarioError> {
    let (name, params) = match raw {
        None => ("newreno".to_string(), false),
        Some(Value::String(s)) => (s.clone(), false),
        Some(Value::Object(m)) => match m.get("algorithm") {
            Some(Value::String(s)) => (s.clone(), m.len() > 1),
            _ => (String::new(), true), // the schema explains
        },
        Some(_) => (String::new(), false),
    };
    if name == "wave" && kernel.has("wave") {
        return bpf_wave(path, raw, kernel).map(|()| name);
    }
    if params {
        // explicit defaults are fine: the kernel's algorithm has its own
        let same = raw
            .and_then(|v| serde_json::from_value::<CcConfig>(v.clone()).ok())
            .is_some_and(|c| CcConfig::named(&name).is_ok_and(|d| d == c));
        if !same {
            return Err(err(
                path,
                format!(
                    "the kernel's congestion controls take no per-flow parameters; write cc = \"{name}\""
                ),
            ));
        }
    }
    if kernel.has(&name) {
        return Ok(name);
    }
    let what = if raw.is_none() {
        format!("\"{name}\" (the default)")
    } else {
        format!("\"{name}\"")
    };
    let message = if name == "wave" {
        format!(
            "{what} is not registered with this kernel (tcp_available_congestion_control: {}); \
             an emulated flow runs the kernel's TCP, so TCP Wave needs the BPF TCP Wave loaded \
             (`wavelab bpf load`), after which cc = \"wave\" selects it",
            kernel.list()
        )
    } else if is_builtin(&name) {
        format!(
            "{what} is a wavelab algorithm the kernel does not have (tcp_available_congestion_control: {}); \
             an emulated flow runs the kernel's TCP: choose one of those (the kernel's \"reno\" is \
             NewReno with SACK), e.g. --set {path}=cubic",
            kernel.list()
        )
    } else {
        format!(
            "{what} is not in the kernel's tcp_available_congestion_control ({})",
            kernel.list()
        )
    };
    Err(err(path, message))
}

/// Checks that the registered `wave` is the BPF TCP Wave loaded with the
/// parameters of the flow's `cc` (written as `raw`).
fn bpf_wave(path: &str, raw: Option<&Value>, kernel: &Kernel) -> Result<(), ScenarioError> {
    let loaded = match kernel.wave {
        BpfWave::Loaded(p) => p,
        BpfWave::Unchecked => return Ok(()),
        BpfWave::Foreign => {
            return Err(err(
                path,
                format!(
                "\"wave\" is registered with this kernel, but not by `wavelab bpf load` (nothing \
                 is pinned at {}): its rules and parameters are unknown, so it is not emulated as \
                 TCP Wave",
                wavelab_bpf_maps::PIN_DIR
            ),
            ))
        }
    };
    let wanted = match raw.map(|v| serde_json::from_value::<CcConfig>(v.clone())) {
        Some(Ok(CcConfig::Wave(p))) => WaveBpfParams::from_wave(&p),
        _ => Ok(WaveBpfParams::default()), // "wave" alone; the schema checks the rest
    }
    .map_err(|e| err(path, e))?;
    let differences = loaded.differences(&wanted);
    if differences.is_empty() {
        return Ok(());
    }
    let mut load = String::from("wavelab bpf load");
    if let Some(Value::Object(m)) = raw {
        // the variant first: it sets the defaults the other options override
        let mut fields: Vec<_> = m.iter().filter(|(k, _)| *k != "algorithm").collect();
        fields.sort_by_key(|(k, _)| *k != "variant");
        for (k, v) in fields {
            let v = v.as_str().map_or_else(|| v.to_string(), String::from);
            load.push_str(&format!(" --{} {v}", k.replace('_', "-")));
        }
    }
    Err(err(
        path,
        format!(
            "the BPF TCP Wave is loaded with other parameters than this flow's ({}; loaded vs \
             the flow's): reload it with `wavelab bpf unload && {load}`",
            differences.join(", ")
        ),
    ))
}

/// Per-namespace settings (or a route's attributes): the value and the
/// field that asked for it (for conflicts).
type Settings = BTreeMap<String, (String, String)>;

/// Each node's routes: destination address to attributes.
type Routes = BTreeMap<[u8; 4], Settings>;

fn set(
    node: &mut Settings,
    node_name: &str,
    key: &str,
    value: String,
    path: &str,
) -> Result<(), ScenarioError> {
    match node.get(key) {
        Some((v, other)) if *v != value => Err(err(
            path,
            format!(
                "needs {key} = {value} in the namespace of \"{node_name}\", where {other} needs {v}; \
                 the kernel sets it per namespace, not per connection"
            ),
        )),
        _ => {
            node.insert(key.to_string(), (value, path.to_string()));
            Ok(())
        }
    }
}

/// True if the scenario as written sets `flows[i].tcp.<field>`.
fn written(raw: &Value, i: usize, field: &str) -> bool {
    raw.pointer(&format!("/flows/{i}/tcp/{field}"))
        .is_some_and(|v| !v.is_null())
}

impl Plan {
    /// The plan of a scenario given as JSON, on a kernel that offers `kernel`.
    pub fn new(json: &str, kernel: &Kernel) -> Result<Plan, ScenarioError> {
        let raw: Value =
            serde_json::from_str(json).map_err(|e| err("", format!("not valid JSON: {e}")))?;
        // kernel-only names pass the schema as a placeholder it knows
        let mut schema = raw.clone();
        let mut kernel_names = BTreeMap::new();
        if let Some(flows) = schema.get_mut("flows").and_then(Value::as_array_mut) {
            for (i, f) in flows.iter_mut().enumerate() {
                if let Some(Value::String(s)) = f.get("cc") {
                    if !is_builtin(s) {
                        kernel_names.insert(i, s.clone());
                        f["cc"] = Value::String("reno".into());
                    }
                }
            }
        }
        let scenario = Scenario::from_json_str(&schema.to_string())?;
        let mut normalized: Value =
            serde_json::from_str(&scenario.to_json()).expect("a scenario serialises");
        for (i, name) in &kernel_names {
            normalized["flows"][*i]["cc"] = Value::String(name.clone());
        }
        Self::check_links(&scenario)?;
        // what the wall-clock link models cannot run (link-layer ARQ,
        // Mahimahi traces, reordering) is refused here, naming its field,
        // rather than when the run starts
        wavelab_model::wall_clock_links::<()>(&scenario)?;
        let topology = scenario.topology();
        let all_nodes = scenario.node_names();
        let route_plan = wavelab_model::route_switches(&scenario)?;
        let mut notes = Vec::new();
        for (k, h) in scenario.handoffs.iter().enumerate() {
            if h.notify.is_some() {
                notes.push(format!(
                    "handoffs[{k}].notify: the kernel's TCP takes no cross-layer notifications; none were sent"
                ));
            }
        }

        // the nodes that end a flow, in scenario order
        let mut ends: Vec<usize> = scenario
            .flows
            .iter()
            .flat_map(|f| [&f.from, &f.to])
            .map(|n| topology.node(n).expect("validated"))
            .collect();
        ends.sort_unstable();
        ends.dedup();
        let node_of = |name: &str| {
            let k = topology.node(name).expect("validated");
            ends.iter().position(|&e| e == k).expect("an end")
        };
        let mut settings: Vec<Settings> = vec![Settings::new(); ends.len()];
        let mut routes: Vec<Routes> = vec![Routes::new(); ends.len()];
        let mut mtu = vec![1500u32; ends.len()];
        if scenario.output.delays {
            return Err(err(
                "output.delays".to_string(),
                "the delay series is the simulator's for now (`wavelab run`); the emulator \
                 does not time each packet from its sender to its receiver",
            ));
        }
        if !scenario.workloads.is_empty() {
            return Err(err(
                "workloads[0]".to_string(),
                "workloads of short transfers run only in the simulator for now (`wavelab run`); \
                 the emulator starts no connections of its own during a run",
            ));
        }
        let mut flows = Vec::new();
        // MPTCP subflows after the first: (connection row, subflow number,
        // access link, routes, backup), rows after every flow's
        let mut joins: Vec<Join> = Vec::new();
        let mut multipath: Vec<(usize, SubflowPlan)> = Vec::new();
        for (i, f) in scenario.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            let datagrams = Self::datagrams(&scenario, i)?;
            let subflows = match &f.mptcp {
                Some(m) => {
                    if !kernel.mptcp {
                        return Err(err(
                            format!("{p}.mptcp"),
                            "this kernel has Multipath TCP off or missing (net.mptcp.enabled is \
                             not 1; it needs CONFIG_MPTCP): `sysctl -w net.mptcp.enabled=1`, or \
                             remove `mptcp` to emulate the flow as single-path TCP",
                        ));
                    }
                    crate::mptcp::check(&p, m, &mut notes)?;
                    Some(subflow_plan(&scenario, &topology, i, f, m)?)
                }
                None => None,
            };
            let raw_flow = raw.pointer(&format!("/flows/{i}"));
            let cc = if f.cmd.is_some() || datagrams.is_some() {
                None
            } else {
                Some(kernel_cc(
                    &format!("{p}.cc"),
                    raw_flow.and_then(|v| v.get("cc")),
                    kernel,
                )?)
            };
            if let Some(name) = &cc {
                // the kernel's algorithm, which has no parameters here
                normalized["flows"][i]["cc"] = Value::String(name.clone());
            }
            let (from, to) = (node_of(&f.from), node_of(&f.to));
            let t = &f.tcp;
            if let Some(d) = &datagrams {
                // the largest datagram and its IP and UDP headers
                let need = d.largest_payload() + UDP_OVERHEAD;
                mtu[from] = mtu[from].max(need);
                mtu[to] = mtu[to].max(need);
                if f.log_packets {
                    notes.push(format!(
                        "{p}.log_packets: the emulator logs TCP segments only; this {} flow's datagrams are not logged",
                        d.algorithm()
                    ));
                }
            } else if f.cmd.is_none() {
                Self::map_tcp(
                    &raw,
                    i,
                    t,
                    [(from, &f.from), (to, &f.to)],
                    &mut settings,
                    &mut routes,
                    &mut notes,
                    ends.iter()
                        .map(|&k| node_address(k))
                        .collect::<Vec<_>>()
                        .as_slice(),
                )?;
                let need = t.mss + 40 + if t.timestamps { 12 } else { 0 };
                mtu[from] = mtu[from].max(need);
                mtu[to] = mtu[to].max(need);
            }
            let base = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
            for k in 0..f.count {
                let index = flows.len();
                let (sport, dport) = flow_ports(index);
                flows.push(FlowPlan {
                    name: if f.count > 1 {
                        format!("{base}#{k}")
                    } else {
                        base.clone()
                    },
                    spec: i,
                    from,
                    to,
                    cc: cc.clone(),
                    sport,
                    dport,
                    start: f.start,
                    stop: f.stop,
                    size: f.size.map(|s| s.0),
                    tcp: t.clone(),
                    routes: match &subflows {
                        // the connection's row is its first subflow's
                        Some(sp) => {
                            let (_, data, acks, _) = &sp.subflows[0];
                            [vec![data.clone()], vec![acks.clone()]]
                        }
                        None => route_plan.routes[index].clone(),
                    },
                    cmd: f.cmd.clone(),
                    receiver_cmd: f.receiver_cmd.clone(),
                    log: f.log_packets && datagrams.is_none(),
                    datagrams: datagrams.clone().map(|d| match d {
                        Datagrams::Udp {
                            spec, trace, seed, ..
                        } => Datagrams::Udp {
                            spec,
                            trace,
                            seed,
                            index: index as u32,
                        },
                        ping => ping,
                    }),
                    mptcp: None,
                    subflow_of: None,
                });
                if let Some(sp) = &subflows {
                    for (j, (link, data, acks, backup)) in sp.subflows.iter().enumerate().skip(1) {
                        joins.push((
                            index,
                            j,
                            *link,
                            [vec![data.clone()], vec![acks.clone()]],
                            *backup,
                        ));
                    }
                    multipath.push((index, sp.clone()));
                }
            }
        }
        let mut mptcp_endpoints: Vec<Vec<([u8; 4], &'static str, bool)>> =
            vec![Vec::new(); ends.len()];
        let mut mptcp_limits = vec![false; ends.len()];
        let mut paired: Vec<(usize, usize)> = Vec::new();
        for (row, sp) in &multipath {
            let conn = flows[*row].clone();
            let p = format!("flows[{}]", conn.spec);
            let node = node_of(&sp.node);
            let node_sends = node == conn.from;
            let pair = (conn.from.min(conn.to), conn.from.max(conn.to));
            if paired.contains(&pair) {
                return Err(err(
                    format!("{p}.mptcp"),
                    format!(
                        "a second MPTCP connection between \"{}\" and \"{}\": the emulator tells \
                         subflows apart by their addresses, so it runs one MPTCP connection per \
                         pair of nodes (count = 1, one such flow)",
                        all_nodes[ends[conn.from]], all_nodes[ends[conn.to]]
                    ),
                ));
            }
            paired.push(pair);
            mptcp_limits[conn.from] = true;
            mptcp_limits[conn.to] = true;
            let base = node_address(ends[node]);
            let mut ends_of = Vec::new();
            for (j, (link, _, _, backup)) in sp.subflows.iter().enumerate() {
                let address = crate::mptcp::subflow_address(base, j).ok_or_else(|| {
                    err(
                        format!("{p}.mptcp"),
                        "too many nodes or access links for the emulator's subflow addresses \
                         (at most 2,046 nodes and 16 access links)",
                    )
                })?;
                let row = if j == 0 {
                    *row
                } else {
                    flows.len()
                        + joins
                            .iter()
                            .position(|(r, k, ..)| r == row && *k == j)
                            .expect("queued")
                };
                if j > 0 {
                    let flag = if node_sends { "subflow" } else { "signal" };
                    if !mptcp_endpoints[node].iter().any(|(a, ..)| *a == address) {
                        mptcp_endpoints[node].push((address, flag, *backup));
                    }
                }
                ends_of.push(SubflowEnd {
                    link: link_name(&scenario.links[*link], *link),
                    row,
                    address,
                    backup: *backup,
                });
            }
            flows[*row].mptcp = Some(MptcpPlan {
                node,
                node_sends,
                subflows: ends_of,
            });
        }
        let first_join = flows.len();
        for (k, (row, j, _, routes, _)) in joins.into_iter().enumerate() {
            let conn = &flows[row];
            let link = &conn.mptcp.as_ref().expect("planned").subflows[j].link;
            let (sport, dport) = flow_ports(first_join + k);
            flows.push(FlowPlan {
                name: format!("{}/{link}", conn.name),
                spec: conn.spec,
                routes,
                sport,
                dport,
                cmd: None,
                receiver_cmd: None,
                log: false,
                datagrams: None,
                mptcp: None,
                subflow_of: Some((row, j)),
                ..conn.clone()
            });
        }
        let nodes = ends
            .iter()
            .enumerate()
            .map(|(n, &k)| NodePlan {
                name: all_nodes[k].clone(),
                index: k,
                address: node_address(k),
                mtu: mtu[n],
                sysctls: settings[n]
                    .iter()
                    .map(|(k, (v, _))| (k.clone(), v.clone()))
                    .collect(),
                routes: routes[n]
                    .iter()
                    .map(|(dst, attrs)| {
                        let args = attrs
                            .iter()
                            .flat_map(|(k, (v, _))| [k.clone(), v.clone()])
                            .collect();
                        (*dst, args)
                    })
                    .collect(),
                mptcp_endpoints: mptcp_endpoints[n].clone(),
                mptcp_limits: mptcp_limits[n],
            })
            .collect();
        Ok(Plan {
            scenario,
            normalized,
            topology,
            nodes,
            flows,
            notes,
            switches: route_plan.switches,
        })
    }

    /// Refuses what the emulator cannot run yet: a handover decided during
    /// the run (the link model needs its changes in advance).
    /// The datagrams of scenario flow `i`, if it is a UDP or ping flow (a
    /// UDP trace is read here: its errors name the field, file and line).
    fn datagrams(sc: &Scenario, i: usize) -> Result<Option<Datagrams>, ScenarioError> {
        let f = &sc.flows[i];
        Ok(match f.transport {
            Transport::Tcp => None,
            Transport::Ping => {
                let ping = f.ping.clone().unwrap_or_default();
                if (ping.size.0 as usize) < crate::datagrams::SEQ_BYTES {
                    return Err(err(
                        format!("flows[{i}].ping.size"),
                        format!(
                            "{} B is too small for the emulator's echo requests, which carry an {}-byte sequence number; use at least {} B",
                            ping.size.0,
                            crate::datagrams::SEQ_BYTES,
                            crate::datagrams::SEQ_BYTES
                        ),
                    ));
                }
                Some(Datagrams::Ping(ping))
            }
            Transport::Udp => {
                let spec = f.udp.clone().expect("a validated UDP flow has its table");
                let trace = match &spec.file {
                    Some(file) => Some(
                        load_udp_trace(file)
                            .map_err(|e| err(format!("flows[{i}].udp.file"), e.to_string()))?
                            .into(),
                    ),
                    None => None,
                };
                Some(Datagrams::Udp {
                    spec,
                    trace,
                    seed: sc.seed,
                    index: 0, // set per replica
                })
            }
        })
    }

    fn check_links(sc: &Scenario) -> Result<(), ScenarioError> {
        for (i, l) in sc.links.iter().enumerate() {
            for (k, h) in l.handovers.iter().enumerate() {
                if h.at == LinkHandoverTime::Steady {
                    return Err(err(
                        format!("links[{i}].handovers[{k}].at"),
                        "\"steady\" is decided during a run, and the emulator computes each \
                         packet's fate when it arrives: give the handover a time (e.g. \"30s\")",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Maps flow `i`'s TCP settings onto sysctls of the two namespaces,
    /// attributes of the routes between them, and notes for what the kernel
    /// cannot apply.
    #[allow(clippy::too_many_arguments)]
    fn map_tcp(
        raw: &Value,
        i: usize,
        t: &TcpConfig,
        [(from, from_name), (to, to_name)]: [(usize, &String); 2],
        settings: &mut [Settings],
        routes: &mut [Routes],
        notes: &mut Vec<String>,
        address: &[[u8; 4]],
    ) -> Result<(), ScenarioError> {
        let p = format!("flows[{i}].tcp");
        let on = |b: bool| if b { "1" } else { "0" }.to_string();
        for (n, name) in [(from, from_name), (to, to_name)] {
            set(
                &mut settings[n],
                name,
                "net.ipv4.tcp_sack",
                on(t.sack),
                &format!("{p}.sack"),
            )?;
            set(
                &mut settings[n],
                name,
                "net.ipv4.tcp_timestamps",
                on(t.timestamps),
                &format!("{p}.timestamps"),
            )?;
            set(
                &mut settings[n],
                name,
                "net.ipv4.tcp_dsack",
                on(t.dsack),
                &format!("{p}.dsack"),
            )?;
        }
        // ECN: 1 requests it on the sender's SYNs; 2, the kernel's default,
        // accepts it when a peer asks but never requests it (RFC 3168
        // section 6.1.1). The receiver's side keeps 2 or 1, which both
        // accept.
        set(
            &mut settings[from],
            from_name,
            "net.ipv4.tcp_ecn",
            if t.ecn { "1" } else { "2" }.into(),
            &format!("{p}.ecn"),
        )?;
        set(
            &mut settings[from],
            from_name,
            "net.ipv4.tcp_reordering",
            t.dupthresh.to_string(),
            &format!("{p}.dupthresh"),
        )?;
        let recovery = match t.lost_retransmissions {
            LostRetransmissions::Rack => "1",
            LostRetransmissions::Rto => "0",
        };
        set(
            &mut settings[from],
            from_name,
            "net.ipv4.tcp_recovery",
            recovery.into(),
            &format!("{p}.lost_retransmissions"),
        )?;
        // the receive window: clamp it on the socket, and let the buffer grow that far
        let rmem = (2 * t.rcv_window.0).max(6 << 20);
        set(
            &mut settings[to],
            to_name,
            "net.ipv4.tcp_rmem",
            format!("4096 131072 {rmem}"),
            &format!("{p}.rcv_window"),
        )?;
        let mut route = |n: usize, dst: usize, key: &str, value: String, field: &str| {
            let attrs = routes[n].entry(address[dst]).or_default();
            match attrs.get(key) {
                Some((v, other)) if *v != value => Err(err(
                    format!("{p}.{field}"),
                    format!(
                        "needs {key} {value} on the route from \"{}\" to \"{}\", where {other} needs {v}; \
                         the kernel sets it per route",
                        [from_name, to_name][(n == to) as usize],
                        [from_name, to_name][(dst == to) as usize],
                    ),
                )),
                _ => {
                    attrs.insert(key.to_string(), (value, format!("{p}.{field}")));
                    Ok(())
                }
            }
        };
        route(
            from,
            to,
            "initcwnd",
            t.initial_cwnd.to_string(),
            "initial_cwnd",
        )?;
        route(
            from,
            to,
            "rto_min",
            format!("{}ms", t.min_rto.as_millis()),
            "min_rto",
        )?;
        if t.delayed_ack.is_none() {
            route(to, from, "quickack", "1".into(), "delayed_ack")?;
        }
        let note = |notes: &mut Vec<String>, field: &str, why: &str| {
            if written(raw, i, field) {
                notes.push(format!("{p}.{field}: {why}"));
            }
        };
        if let Some(d) = t.delayed_ack {
            if d != Duration::from_millis(200) {
                note(
                    notes,
                    "delayed_ack",
                    "the kernel's delayed ACKs apply (40-200 ms, adapted to the traffic); only `false` (an ACK per segment) maps, to `quickack`",
                );
            }
        }
        if t.initial_rto != Duration::from_secs(1) {
            note(
                notes,
                "initial_rto",
                "the kernel's initial RTO is 1 s, not settable per flow",
            );
        }
        note(
            notes,
            "initial_ssthresh",
            "the kernel starts with an unlimited ssthresh",
        );
        note(
            notes,
            "abc_limit",
            "the kernel's slow start applies (no RFC 3465 limit)",
        );
        note(
            notes,
            "limited_transmit",
            "the kernel always uses limited transmit (RFC 3042)",
        );
        note(
            notes,
            "partial_ack_timer",
            "the kernel's retransmission timer rules apply",
        );
        // the loss-recovery and receiver rules the linux profile names are
        // the kernel's own; written out for an emulated flow they change nothing
        for field in [
            "recovery_reduction",
            "ssthresh_basis",
            "frto",
            "undo",
            "hystart",
            "abc_limit_after_rto",
            "ca_per_ack",
            "receiver",
            "bbr_quantum",
            "tso",
        ] {
            note(
                notes,
                field,
                "the kernel's own rule applies (the linux profile describes it)",
            );
        }
        Ok(())
    }

    /// The normalised scenario as JSON text (what the results keep).
    pub fn normalized_json(&self) -> String {
        self.normalized.to_string()
    }

    /// Index into [`Plan::nodes`] of the node with scenario index `k`.
    pub fn node_by_index(&self, k: usize) -> Option<usize> {
        self.nodes.iter().position(|n| n.index == k)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn kernel() -> Kernel {
        Kernel {
            congestion_controls: vec!["reno".into(), "bbr".into(), "cubic".into(), "vegas".into()],
            wave: BpfWave::Foreign,
            mptcp: true,
        }
    }

    fn toml_json(extra_flow: &str) -> String {
        let t = format!(
            r#"
            duration = "5s"
            [[links]]
            between = ["s", "r"]
            rate = "10Mbit/s"
            delay = "10ms"
            [[links]]
            between = ["r", "d"]
            rate = "2Mbit/s"
            delay = "30ms"
            [[flows]]
            from = "s"
            to = "d"
            {extra_flow}
            "#
        );
        let v: toml::Value = toml::from_str(&t).unwrap();
        serde_json::to_string(&v).unwrap()
    }

    pub(crate) fn plan(extra: &str) -> Result<Plan, String> {
        Plan::new(&toml_json(extra), &kernel()).map_err(|e| e.to_string())
    }

    #[test]
    fn udp_and_ping_flows_plan_their_datagrams() {
        let p = plan("transport = \"udp\"\nudp = { pattern = \"voice\" }").unwrap();
        let d = p.flows[0].datagrams.as_ref().expect("a UDP flow");
        assert_eq!(d.algorithm(), "udp-voice");
        assert_eq!(d.largest_payload(), 160);
        assert!(!d.echo());
        assert_eq!(p.flows[0].cc, None);
        // the same datagrams at the same instants as the simulator's source
        let mut s = d.source(Instant::ZERO, None);
        assert_eq!(s.poll(Instant::ZERO), Some((0, 160)));
        assert_eq!(
            s.next_send(),
            Some(Instant::ZERO + Duration::from_millis(20))
        );
        let p =
            plan("transport = \"ping\"\nping = { interval = \"100ms\", size = \"64B\" }").unwrap();
        let d = p.flows[0].datagrams.as_ref().expect("a ping flow");
        assert!(d.echo());
        assert_eq!(d.algorithm(), "ping");
        assert_eq!(d.largest_payload(), 64);
        let e =
            plan("transport = \"udp\"\nudp = { pattern = \"trace\", file = \"/nonexistent.csv\" }")
                .unwrap_err();
        assert!(e.starts_with("flows[0].udp.file: "), "{e}");
    }

    /// Two links between `s` and `d`: `d` is multi-homed.
    fn two_links(flows: &str) -> Result<Plan, String> {
        let t = format!(
            r#"
            duration = "5s"
            [[links]]
            name = "a"
            between = ["s", "d"]
            rate = "10Mbit/s"
            delay = "10ms"
            [[links]]
            name = "b"
            between = ["s", "d"]
            rate = "10Mbit/s"
            delay = "10ms"
            {flows}
            "#
        );
        let v: toml::Value = toml::from_str(&t).unwrap();
        Plan::new(&serde_json::to_string(&v).unwrap(), &kernel()).map_err(|e| e.to_string())
    }

    const MPTCP_FLOW: &str = "[[flows]]\nname = \"mp\"\nfrom = \"s\"\nto = \"d\"\ncc = \"cubic\"\n";

    #[test]
    fn the_delay_series_is_refused_with_the_field() {
        let e = Plan::new(
            &toml_json("").replace("\"duration\"", "\"output\":{\"delays\":true},\"duration\""),
            &kernel(),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("output.delays: the delay series is the simulator's"),
            "{e}"
        );
    }

    #[test]
    fn workloads_are_refused_with_the_field() {
        let extra = "[[workloads]]\nfrom = \"s\"\nto = \"d\"\n\
                     arrivals = { process = \"poisson\", rate = 2 }\n\
                     sizes = { distribution = \"fixed\", size = \"10kB\" }";
        let e = plan(extra).unwrap_err();
        assert!(
            e.starts_with("workloads[0]: workloads of short transfers run only in the simulator"),
            "{e}"
        );
    }

    #[test]
    fn an_mptcp_flow_gets_a_row_and_an_address_per_access_link() {
        let p = two_links(&format!("{MPTCP_FLOW}mptcp = {{ paths = \"backup\" }}")).unwrap();
        assert_eq!(
            p.flows.len(),
            2,
            "the connection's row and its second subflow's"
        );
        let m = p.flows[0].mptcp.as_ref().unwrap();
        assert!(!m.node_sends, "d listens and announces");
        let d = p.nodes[m.node].address;
        assert_eq!(m.subflows[0].address, d);
        assert_eq!(m.subflows[1].address, [10, 0, 8, d[3]]);
        assert_eq!((m.subflows[0].backup, m.subflows[1].backup), (false, true));
        assert_eq!(p.flows[1].subflow_of, Some((0, 1)));
        assert_eq!(p.flows[1].name, "mp/b");
        // the subflows cross different links
        assert_ne!(p.flows[0].routes[0], p.flows[1].routes[0]);
        let node = &p.nodes[m.node];
        assert_eq!(node.mptcp_endpoints, [([10, 0, 8, d[3]], "signal", true)]);
        assert!(p.nodes.iter().all(|n| n.mptcp_limits));
    }

    #[test]
    fn what_the_kernel_cannot_do_is_refused_by_field() {
        let e = two_links(&format!(
            "{MPTCP_FLOW}mptcp = {{ scheduler = \"round-robin\" }}"
        ))
        .unwrap_err();
        assert!(e.starts_with("flows[0].mptcp.scheduler: "), "{e}");
        let e = two_links(
            &format!("{MPTCP_FLOW}cc = \"reno\"\nmptcp = {{ coupled = \"lia\" }}")
                .replace("cc = \"cubic\"\n", ""),
        )
        .unwrap_err();
        assert!(e.starts_with("flows[0].mptcp.coupled: "), "{e}");
        let twice = format!(
            "{MPTCP_FLOW}mptcp = {{}}\n{}mptcp = {{}}",
            MPTCP_FLOW.replace("\"mp\"", "\"mp2\"")
        );
        let e = two_links(&twice).unwrap_err();
        assert!(
            e.starts_with("flows[1].mptcp: a second MPTCP connection"),
            "{e}"
        );
        let mut k = kernel();
        k.mptcp = false;
        let t = r#"
            duration = "5s"
            [[links]]
            between = ["s", "d"]
            rate = "10Mbit/s"
            delay = "10ms"
            [[links]]
            between = ["s", "d"]
            rate = "10Mbit/s"
            delay = "10ms"
            [[flows]]
            from = "s"
            to = "d"
            cc = "cubic"
            mptcp = {}
            "#;
        let v: toml::Value = toml::from_str(t).unwrap();
        let e = Plan::new(&serde_json::to_string(&v).unwrap(), &k)
            .map_err(|e| e.to_string())
            .unwrap_err();
        assert!(
            e.starts_with("flows[0].mptcp: this kernel has Multipath TCP off"),
            "{e}"
        );
    }

    #[test]
    fn nodes_that_end_flows_get_namespaces_and_capture_addresses() {
        let p = plan("cc = \"cubic\"").unwrap();
        let names: Vec<_> = p.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["s", "d"], "the router gets none");
        assert_eq!(p.nodes[0].address, [10, 0, 0, 1]);
        assert_eq!(p.nodes[1].address, [10, 0, 0, 3]);
        let f = &p.flows[0];
        assert_eq!(
            (f.cc.as_deref(), f.sport, f.dport),
            (Some("cubic"), 10000, 5001)
        );
        assert_eq!(f.routes.clone(), [vec![vec![0, 2]], vec![vec![3, 1]]]);
    }

    #[test]
    fn kernel_algorithms_pass_and_wavelab_only_ones_are_refused() {
        let p = plan("cc = \"vegas\"").unwrap();
        assert_eq!(p.flows[0].cc.as_deref(), Some("vegas"));
        assert_eq!(p.normalized["flows"][0]["cc"], "vegas");
        let e = plan("").unwrap_err();
        assert!(
            e.starts_with("flows[0].cc: \"newreno\" (the default) is a wavelab algorithm"),
            "{e}"
        );
        let e = plan("cc = \"wave\"").unwrap_err();
        assert!(e.contains("BPF TCP Wave"), "{e}");
        let e = plan("cc = \"htcp\"").unwrap_err();
        assert_eq!(
            e,
            "flows[0].cc: \"htcp\" is not in the kernel's tcp_available_congestion_control (reno, bbr, cubic, vegas)"
        );
        let e = plan("cc = { algorithm = \"cubic\", beta = 0.5 }").unwrap_err();
        assert!(e.contains("take no per-flow parameters"), "{e}");
        // written defaults are the bare name
        plan("cc = { algorithm = \"cubic\" }").unwrap();
    }

    #[test]
    fn wave_is_accepted_once_the_bpf_wave_is_loaded_with_the_flows_parameters() {
        let mut k = kernel();
        k.congestion_controls.push("wave".into());
        let e = Plan::new(&toml_json("cc = \"wave\""), &k)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not by `wavelab bpf load`"), "{e}");
        k.wave = BpfWave::Loaded(WaveBpfParams::default());
        let p = Plan::new(&toml_json("cc = \"wave\""), &k).unwrap();
        assert_eq!(p.flows[0].cc.as_deref(), Some("wave"));
        // the variant's values written out are the same Wave
        let same = "cc = { algorithm = \"wave\", variant = \"dcnet2016\", beta = \"350ms\" }";
        Plan::new(&toml_json(same), &k).unwrap();
        let other = "cc = { algorithm = \"wave\", variant = \"linux-4.12\", burst = 12 }";
        let e = Plan::new(&toml_json(other), &k).unwrap_err().to_string();
        assert_eq!(
            e,
            "flows[0].cc: the BPF TCP Wave is loaded with other parameters than this flow's \
             (burst: 10 vs 12, beta: 350000 us vs 150000 us, dispersion_scaling: true vs false, \
             dispersion_filter: mean vs rtt-weighted; loaded vs the flow's): reload it with \
             `wavelab bpf unload && wavelab bpf load --variant linux-4.12 --burst 12`"
        );
        k.wave = BpfWave::Unchecked;
        Plan::new(&toml_json(other), &k).unwrap();
    }

    #[test]
    fn tcp_settings_map_to_sysctls_and_routes() {
        let p = plan(
            "cc = \"reno\"\ntcp = { mss = 960, initial_cwnd = 1, sack = false, delayed_ack = false, abc_limit = 1 }",
        )
        .unwrap();
        let s = &p.nodes[0];
        assert!(s
            .sysctls
            .contains(&("net.ipv4.tcp_sack".into(), "0".into())));
        assert!(s.sysctls.contains(&("net.ipv4.tcp_ecn".into(), "2".into())));
        let ecn = plan("cc = \"cubic\"\ntcp = { ecn = true }").unwrap();
        assert!(ecn.nodes[0]
            .sysctls
            .contains(&("net.ipv4.tcp_ecn".into(), "1".into())));
        assert!(s
            .sysctls
            .contains(&("net.ipv4.tcp_recovery".into(), "0".into())));
        assert_eq!(
            s.routes,
            [(
                [10, 0, 0, 3],
                vec![
                    "initcwnd".into(),
                    "1".into(),
                    "rto_min".into(),
                    "1000ms".into()
                ]
            )]
        );
        assert_eq!(
            p.nodes[1].routes,
            [([10, 0, 0, 1], vec!["quickack".into(), "1".into()])]
        );
        assert_eq!(
            p.notes,
            ["flows[0].tcp.abc_limit: the kernel's slow start applies (no RFC 3465 limit)"]
        );
    }

    #[test]
    fn per_namespace_conflicts_name_both_flows() {
        let t = toml_json("cc = \"reno\"\ntcp = { sack = false }");
        let mut v: Value = serde_json::from_str(&t).unwrap();
        let mut second = v["flows"][0].clone();
        second["tcp"] = serde_json::json!({ "sack": true });
        v["flows"].as_array_mut().unwrap().push(second);
        let e = Plan::new(&v.to_string(), &kernel())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("flows[1].tcp.sack: needs net.ipv4.tcp_sack = 1 in the namespace of \"s\", where flows[0].tcp.sack needs 0"),
            "{e}"
        );
    }

    #[test]
    fn link_layer_arq_is_refused_with_its_field() {
        let t = toml_json("cc = \"reno\"");
        let mut v: Value = serde_json::from_str(&t).unwrap();
        v["links"][1]["arq"] = serde_json::json!({ "retries": 3 });
        let e = Plan::new(&v.to_string(), &kernel())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("links[1].arq: link-layer ARQ runs in the simulator's"),
            "{e}"
        );
    }

    /// CSV traces are in the link model the emulator runs; reordering is
    /// not, and is refused naming its field.
    #[test]
    fn csv_traces_are_planned_and_reordering_is_refused() {
        let file = std::env::temp_dir().join(format!("wavelab-plan-{}.csv", std::process::id()));
        std::fs::write(&file, "time,delay\n0,30ms\n1,5ms\n").unwrap();
        let t = toml_json("cc = \"reno\"");
        let mut v: Value = serde_json::from_str(&t).unwrap();
        v["links"][1]["forward"] = serde_json::json!({ "delay_trace": file.to_str().unwrap() });
        Plan::new(&v.to_string(), &kernel()).unwrap();
        v["links"][1]["forward"]["reorder"] = serde_json::json!(true);
        let e = Plan::new(&v.to_string(), &kernel())
            .unwrap_err()
            .to_string();
        std::fs::remove_file(&file).ok();
        assert!(
            e.starts_with("links[1].forward.reorder: reordering runs in the simulator's"),
            "{e}"
        );
    }

    #[test]
    fn steady_handovers_are_refused_with_their_field() {
        let t = toml_json("cc = \"reno\"");
        let mut v: Value = serde_json::from_str(&t).unwrap();
        v["links"][1]["handovers"] =
            serde_json::json!([{ "at": "steady", "outage": "1s", "steady": { "earliest": "1s" } }]);
        let e = Plan::new(&v.to_string(), &kernel())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("links[1].handovers[0].at: \"steady\""), "{e}");
    }
}
