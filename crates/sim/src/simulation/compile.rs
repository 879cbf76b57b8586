//! Building a simulation from a scenario: the scenario compiled
//! ([`wavelab_model::compile`]: link directions, changes, routes, handoff
//! switches), each link direction in the model it runs in, flows with their
//! endpoints, and the first events.

use super::endpoints::{Flow, Wake};
use super::handovers::{LinkHandover, NodeHandoff};
use super::mptcp::MptcpConn;
use crate::engine::{Event, EventQueue};
use crate::notices::Notices;
use crate::recorder::Recorder;
use crate::routes::{Dir, Network};
use crate::simulation::{sync_period, Simulation};
use std::sync::Arc;
use wavelab_model::capture::{flow_ports, node_address};
use wavelab_model::compile::{
    at, compile_links, compile_routes, expand_switches, timeline, CompiledLinks,
};
use wavelab_model::flow_stats::FlowStats;
use wavelab_model::link::qdisc::flow_key;
use wavelab_model::link::{Link, Stepped};
use wavelab_model::rng::{Rng, Stream};
use wavelab_model::scenario::{
    flow_name, link_name, subflow_plan, LinkHandoverTime, NodeHandoffKind, Scenario, ScenarioError,
    Transport,
};
use wavelab_model::tables::series::{QueueSeries, Series};
use wavelab_model::udp::{load_udp_trace, TracePacket, UdpSource};
use wavelab_tcp::mptcp::{Connection, ConnectionConfig};
use wavelab_tcp::{Cc, CongestionControl, Instant, Receiver, Sender, SeqNum};

impl Simulation {
    /// Builds the network and the flows of a (validated) scenario.
    pub fn new(sc: Scenario) -> Result<Self, ScenarioError> {
        Self::build_with(sc, false, false)
    }

    /// The same simulation with every link direction in reference mode
    /// (explicit end-of-serialisation and arrival events, see
    /// [`crate::routes`]): slower, and bit-identical. The tests use it as the
    /// oracle of the virtual-time mode.
    pub fn new_reference(sc: Scenario) -> Result<Self, ScenarioError> {
        Self::build_with(sc, true, false)
    }

    /// Builds the simulation: every link direction in reference mode if
    /// `reference`, the links node handoffs touch if `forkable`, the others
    /// in virtual time where their model allows.
    pub(crate) fn build_with(
        sc: Scenario,
        reference: bool,
        forkable: bool,
    ) -> Result<Self, ScenarioError> {
        sc.validate()?;
        sc.check_simulable()?;
        let topo = sc.topology();
        let (routes, handoffs) = compile_routes(&sc, &topo);
        let handoffs = expand_switches(handoffs, &sc);
        let CompiledLinks {
            dirs,
            changes,
            handovers,
        } = compile_links(&sc, &handoffs)?;
        let handovers: Vec<LinkHandover> = handovers
            .into_iter()
            .map(|plan| LinkHandover {
                plan,
                history: Default::default(),
            })
            .collect();
        let handoffs: Vec<NodeHandoff> = handoffs.into_iter().map(NodeHandoff::new).collect();
        // Links whose handover is decided during the run stay in reference
        // mode; the others run in virtual time with their changes known.
        let mut decided_live: Vec<bool> = sc
            .links
            .iter()
            .map(|l| l.handovers.iter().any(|h| h.at == LinkHandoverTime::Steady))
            .collect();
        if forkable {
            // a break-before-make handoff puts outage windows on its links
            // (a make-before-break one only switches routes)
            for h in &handoffs {
                if h.plan.spec.kind == NodeHandoffKind::BreakBeforeMake {
                    decided_live[h.plan.from] = true;
                    decided_live[h.plan.to] = true;
                }
            }
        }
        let dirs: Vec<Dir> = dirs
            .into_iter()
            .enumerate()
            .map(|(d, m)| {
                // ARQ, Mahimahi traces, CellReplay, reordering and queue
                // disciplines other than drop-tail run in the stepped model only
                if m.stepped_only() || reference || decided_live[d / 2] {
                    let mut s = Stepped::new(m.settings, m.loss, m.outages)
                        .with_measured(m.measured)
                        .with_qdisc(&m.qdisc, Rng::derive(sc.seed, Stream::LinkQdisc(d as u32)));
                    if let Some(arq) = m.arq {
                        s = s.with_arq(arq);
                    }
                    if let Some(trace) = m.trace {
                        s = s.with_trace(trace);
                    }
                    if let Some(replay) = m.cellreplay {
                        s = s.with_cellreplay(replay);
                    }
                    if m.reorder {
                        s = s.reordering();
                    }
                    return Dir::stepped(s);
                }
                let timeline = timeline(&changes, d);
                Dir::timed(
                    Link::new(m.settings, m.loss, m.outages, timeline).with_measured(m.measured),
                )
            })
            .collect();

        let mut flows = Vec::new();
        // MPTCP: each connection's first subflow takes the flow's place,
        // the others follow every other flow
        let regular: usize = sc.flows.iter().map(|f| f.count as usize).sum();
        let mut joins: Vec<Flow> = Vec::new();
        let mut conns: Vec<MptcpConn> = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let udp = f.udp.as_ref().filter(|_| f.transport == Transport::Udp);
            let trace: Option<Arc<[TracePacket]>> = match udp.and_then(|u| u.file.as_ref()) {
                Some(file) => Some(
                    load_udp_trace(file)
                        .map_err(|e| ScenarioError {
                            path: format!("flows[{i}].udp.file"),
                            message: e.to_string(),
                        })?
                        .into(),
                ),
                None => None,
            };
            for k in 0..f.count {
                let idx = flows.len() as u32;
                let mut rng = Rng::derive(sc.seed, Stream::FlowIsn(idx));
                let iss = SeqNum(rng.next_u64() as u32);
                let riss = SeqNum(rng.next_u64() as u32);
                let cc = f.cc.build(
                    f.tcp.mss,
                    f.tcp.initial_cwnd,
                    f.tcp.initial_ssthresh.map(|b| b.0),
                    f.tcp.abc_limit,
                );
                let receiver = receiver_for(&cc, Receiver::new(f.tcp.clone(), riss));
                let echo = f.transport == Transport::Ping;
                let source = if echo {
                    let ping = f.ping.clone().unwrap_or_default();
                    Some(Box::new(UdpSource::periodic(
                        ping.size.0 as u32,
                        ping.interval,
                        at(f.start),
                        f.stop.map(at),
                    )))
                } else {
                    udp.map(|u| {
                        let rng = Rng::derive(sc.seed, Stream::FlowApp(idx));
                        Box::new(UdpSource::new(
                            u,
                            at(f.start),
                            f.stop.map(at),
                            trace.clone(),
                            rng,
                        ))
                    })
                };
                flows.push(Flow {
                    name: flow_name(f, i, k),
                    algorithm: if echo {
                        "ping"
                    } else {
                        udp.map_or(f.cc.name(), |u| u.pattern.algorithm())
                    },
                    from: f.from.clone(),
                    to: f.to.clone(),
                    sender: with_phase(Sender::new(f.tcp.clone(), cc, iss), &mut rng),
                    receiver,
                    routes: routes[i].clone(),
                    route: [0, 0],
                    start: at(f.start),
                    stop: f.stop.map(at),
                    size: f.size.map(|s| s.0),
                    started: false,
                    log: f.log_packets,
                    wake: [Wake::default(); 2],
                    recorded: false,
                    transfer: None,
                    rtts: Default::default(),
                    net: FlowStats::with_deadline(udp.and_then(|u| u.playout_deadline)),
                    udp: source,
                    echo,
                    min_echo: None,
                    conn: None,
                });
                if let Some(m) = &f.mptcp {
                    let plan = subflow_plan(&sc, &topo, i, f, m)?;
                    let c = conns.len() as u32;
                    let first = flows.last_mut().expect("just pushed");
                    let conn_name = first.name.clone();
                    let mut ids = Vec::new();
                    let mut links = Vec::new();
                    let mut backup = Vec::new();
                    for (j, (link, data, acks, b)) in plan.subflows.iter().enumerate() {
                        let id = if j == 0 {
                            idx as usize
                        } else {
                            regular + joins.len()
                        };
                        let mut sf = if j == 0 {
                            first.clone()
                        } else {
                            let mut rng = Rng::derive(sc.seed, Stream::FlowIsn(id as u32));
                            let iss = SeqNum(rng.next_u64() as u32);
                            let riss = SeqNum(rng.next_u64() as u32);
                            let cc = f.cc.build(
                                f.tcp.mss,
                                f.tcp.initial_cwnd,
                                f.tcp.initial_ssthresh.map(|b| b.0),
                                f.tcp.abc_limit,
                            );
                            Flow {
                                receiver: receiver_for(&cc, Receiver::new(f.tcp.clone(), riss)),
                                sender: with_phase(Sender::new(f.tcp.clone(), cc, iss), &mut rng),
                                ..first.clone()
                            }
                        };
                        sf.name = format!("{conn_name}/{}", link_name(&sc.links[*link], *link));
                        sf.routes = [vec![data.clone()], vec![acks.clone()]];
                        sf.size = None;
                        sf.conn = Some((c, j as u32));
                        if j == 0 {
                            *first = sf;
                        } else {
                            joins.push(sf);
                        }
                        ids.push(id);
                        links.push(*link);
                        backup.push(*b);
                    }
                    let cfg = ConnectionConfig {
                        scheduler: m.scheduler,
                        coupling: m.coupled,
                        stale_after: m.stale_after,
                    };
                    conns.push(MptcpConn {
                        name: conn_name,
                        conn: Connection::new(cfg, f.size.map(|s| s.0), &backup),
                        flows: ids,
                        links,
                        failover: m.failover,
                        node: plan.node,
                        start: at(f.start),
                        completed: None,
                    });
                }
            }
        }
        flows.extend(joins);

        let end = at(sc.duration);
        let mut q = EventQueue::default();
        q.push(Instant::ZERO, Event::Sample(0));
        for (i, c) in changes.iter().enumerate() {
            if c.at <= end {
                q.push(c.at, Event::Change(i as u32));
            }
        }
        for (i, f) in flows.iter().enumerate() {
            if f.conn.is_some_and(|(_, k)| k > 0) {
                continue; // a join opens once the first subflow is established
            }
            q.push(f.start, Event::FlowStart(i as u32));
            if let Some(s) = f.stop {
                if s <= end {
                    q.push(s, Event::FlowStop(i as u32));
                }
            }
        }
        let series = Series::new(flows.iter().map(|f| f.sender.cc().metric_names()));
        let sync_every = sync_period(dirs.len());
        let mut net = Network::new(dirs, flows.iter().map(|f| f.routes.clone()).collect());
        net.set_flow_keys(flow_keys(&sc, &flows));
        let rec = Recorder::new(
            flows.iter().map(|f| f.log).collect(),
            flows.iter().map(|f| f.udp.is_some()).collect(),
        );
        let flow_count = flows.len();
        Ok(Simulation {
            interval: sc.output.interval,
            sc,
            now: Instant::ZERO,
            end,
            q,
            net,
            topo,
            flows,
            changes,
            handovers,
            handoffs,
            series,
            queues: QueueSeries::default(),
            rec,
            notices: Notices::new(flow_count),
            samples: 0,
            next_sync: sync_every,
            sync_every,
            log_limit: wavelab_model::limits::MAX_LOG_ROWS,
            notice_limit: wavelab_model::limits::MAX_NOTIFICATIONS as usize,
            interrupt: None,
            stopped: None,
            histories: Default::default(),
            mptcp: conns,
        })
    }

    /// Gives flow `flow` (after replicas are expanded) the congestion
    /// control `cc` instead of the scenario's: a user algorithm
    /// (`Cc::Custom`), or a built-in one with settings the scenario cannot
    /// express. Only before the run starts (its sender is rebuilt, with the
    /// same TCP settings and initial sequence number).
    pub fn set_algorithm(&mut self, flow: usize, cc: Cc) -> Result<(), String> {
        if self.q.processed() > 0 {
            return Err("the run has started: set algorithms before running it".into());
        }
        let Some(f) = self.flows.get_mut(flow) else {
            return Err(format!("flow {flow}: there are {} flows", self.flows.len()));
        };
        if f.udp.is_some() {
            return Err(format!(
                "flow {flow} ({}) is a UDP flow: it has no congestion control",
                f.name
            ));
        }
        let mut rng = Rng::derive(self.sc.seed, Stream::FlowIsn(flow as u32));
        let iss = SeqNum(rng.next_u64() as u32);
        let riss = SeqNum(rng.next_u64() as u32);
        f.algorithm = cc.name();
        f.receiver = receiver_for(&cc, Receiver::new(f.sender.config().clone(), riss));
        f.sender = with_phase(Sender::new(f.sender.config().clone(), cc, iss), &mut rng);
        self.series = Series::new(self.flows.iter().map(|f| f.sender.cc().metric_names()));
        Ok(())
    }
}

/// The receiver of a connection whose sender runs `cc`: with the
/// per-packet ECN echo when the algorithm asks for it (DCTCP and Prague:
/// both endpoints run the algorithm, RFC 8257 section 1).
fn receiver_for(cc: &Cc, mut receiver: Receiver) -> Receiver {
    if cc.ecn_style().per_packet_echo() {
        receiver.set_per_packet_echo();
    }
    receiver
}

/// Each flow's key for flow-queueing disciplines, per side (data, ACKs):
/// from the addresses and ports its packets carry in captures.
fn flow_keys(sc: &Scenario, flows: &[Flow]) -> Vec<[u64; 2]> {
    let nodes = sc.node_names();
    let address = |name: &str| {
        node_address(
            nodes
                .iter()
                .position(|n| n == name)
                .expect("flows connect nodes of the links"),
        )
    };
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (a, b) = (address(&f.from), address(&f.to));
            let (sport, dport) = flow_ports(i);
            let proto = match (f.udp.is_some(), f.echo) {
                (true, true) => ICMP,
                (true, false) => UDP,
                (false, _) => TCP,
            };
            [
                flow_key(a, b, sport, dport, proto),
                flow_key(b, a, dport, sport, proto),
            ]
        })
        .collect()
}

/// IP's protocol number of TCP.
const TCP: u8 = 6;
/// IP's protocol number of UDP.
const UDP: u8 = 17;
/// IP's protocol number of ICMP.
const ICMP: u8 = 1;

/// The flows table's `algorithm` of a UDP flow: its pattern.
/// The sender with its host's timer-wheel phase (`tcp.timer_hz`) drawn from
/// the flow's stream after its initial sequence numbers: anywhere in the
/// first 64 s of the jiffies counter, more than the widest granule a TCP
/// timer meets (2.048 s at level 3 with 250 Hz).
fn with_phase(mut sender: Sender, rng: &mut Rng) -> Sender {
    let phase = rng.next_u64() % 64_000_000_000;
    sender.set_timer_phase(wavelab_tcp::Duration::from_nanos(phase));
    sender
}
