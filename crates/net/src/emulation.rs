//! An emulation run: sets up the namespaces and devices of a [`Plan`],
//! starts the wire thread, the flows and the sampler, and gathers the
//! results. Everything it creates belongs to this process (anonymous
//! namespaces, non-persistent TUN devices, threads, commands tied to their
//! spawning thread), so it is gone when the run is dropped or the process
//! ends, however it ends.

use crate::clock::Clock;
use crate::driver::{Routing, Wire, WireConfig, WireOutput};
use crate::flows::{FlowState, Flows};
use crate::mptcp::{by_subflow, ConnInfo, MptcpPlan};
use crate::netns::{ip, sysctl, Namespace, SetupError};
use crate::network::Network;
use crate::plan::{NodePlan, Plan};
use crate::tables::{self, EmulationResults};
use crate::tcpinfo::{bbr_metrics, TcpInfo, BBR_METRICS};
use crate::wave::{wave_metrics, BurstLog, WAVE_METRICS};
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use wavelab_bpf_maps::SocketStates;
use wavelab_model::capture::Capture;
use wavelab_model::flow_stats::FlowStats;
use wavelab_model::histogram::Histogram;
use wavelab_model::tables::series::Series;
use wavelab_model::topology::DirId;
use wavelab_model::CaptureError;
use wavelab_tcp::{Duration, Instant};

/// Name of the TUN device in every node's namespace.
pub const DEVICE: &str = "wl0";

/// How a run is driven.
#[derive(Clone, Debug)]
pub struct Options {
    /// Ask for `SCHED_FIFO` on the wire thread (reported when refused).
    pub realtime: bool,
    /// Its priority.
    pub priority: i32,
    /// How long before a deadline the wire thread stops sleeping and spins.
    pub spin: Duration,
    /// The lateness a run may have at its 99th percentile before it is
    /// flagged.
    pub lateness_bound: Duration,
    /// Where commands' output goes (`cmd-FLOW.log`), if anywhere.
    pub logs: Option<PathBuf>,
    /// Make the devices with segmentation offload (TSO): the senders' stacks
    /// hand over up to 64 KB at once, which the emulator splits.
    pub offload: bool,
    /// Pin the wire thread to one CPU and steer the kernel's processing of
    /// the packets it writes to the others (receive packet steering).
    pub steer: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            realtime: true,
            priority: 50,
            spin: Duration::from_micros(50),
            lateness_bound: Duration::from_micros(500),
            logs: None,
            offload: true,
            steer: true,
        }
    }
}

/// The final figures of one flow, read when the run ends.
#[derive(Clone, Debug, Default)]
pub struct FlowEnd {
    /// The sender's TCP_INFO.
    pub sender: Option<TcpInfo>,
    /// The receiver's TCP_INFO.
    pub receiver: Option<TcpInfo>,
    /// When the FIN was acknowledged.
    pub completed_at: Option<Instant>,
    /// Errors and notes.
    pub errors: Vec<String>,
    /// Options the kernel refused.
    pub notes: Vec<String>,
    /// A ping flow's answers: every round-trip time, and the smallest.
    pub echoes: (Histogram, Option<Duration>),
    /// An MPTCP connection's `MPTCP_INFO` at its sender and its receiver
    /// (on the row of its first subflow).
    pub conn: Option<(Option<ConnInfo>, Option<ConnInfo>)>,
}

/// What the sampler thread hands back.
struct Gathered {
    wire: WireOutput,
    series: Series,
    bursts: BurstLog,
    flows: Vec<FlowEnd>,
    wall: std::time::Duration,
}

/// A run in progress.
pub struct Emulation {
    plan: Arc<Plan>,
    options: Options,
    captures: Vec<Capture>,
    stop: Arc<AtomicBool>,
    progress: Arc<AtomicU64>,
    control: Option<JoinHandle<Result<Gathered, String>>>,
    done: Arc<AtomicBool>,
    /// The namespaces, kept until the threads that use them are gone.
    namespaces: Vec<Namespace>,
    /// Where the wire thread and the kernel's work run (`None`: anywhere).
    cpus: Option<Cpus>,
    end: Instant,
}

impl Emulation {
    /// A run of `plan` (nothing is created until [`Emulation::start`]).
    pub fn new(plan: Plan, options: Options) -> Self {
        let end = Instant::ZERO + plan.scenario.duration;
        Emulation {
            plan: Arc::new(plan),
            options,
            captures: Vec::new(),
            stop: Arc::new(AtomicBool::new(false)),
            progress: Arc::new(AtomicU64::new(0)),
            control: None,
            done: Arc::new(AtomicBool::new(false)),
            namespaces: Vec::new(),
            cpus: None,
            end,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Captures `target` (as for a simulation: `flow:NAME`, `link:NAME`,
    /// ...) into `out`; call before [`Emulation::start`].
    pub fn add_capture(
        &mut self,
        target: &str,
        out: Box<dyn Write + Send>,
    ) -> Result<(), CaptureError> {
        let p = &self.plan;
        let names: Vec<[&str; 3]> = p
            .flows
            .iter()
            .map(|f| {
                [
                    f.name.as_str(),
                    p.nodes[f.from].name.as_str(),
                    p.nodes[f.to].name.as_str(),
                ]
            })
            .collect();
        let c = Capture::new(&p.scenario, &names, target, out)?;
        self.captures.push(c);
        Ok(())
    }

    /// When the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }

    /// The instant the run reached.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.progress.load(Ordering::Relaxed))
    }

    /// True once every thread has finished.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The flag [`Emulation::is_done`] reads, for a waiter on another thread.
    pub fn done_flag(&self) -> Arc<AtomicBool> {
        self.done.clone()
    }

    /// Asks the run to stop now (its results so far are kept).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Creates the namespaces and devices and starts the run.
    pub fn start(&mut self) -> Result<(), SetupError> {
        let plan = self.plan.clone();
        let commands = plan.flows.iter().any(|f| f.cmd.is_some());
        crate::preflight::check(commands).map_err(SetupError)?;
        self.cpus = self.options.steer.then(Cpus::choose).flatten();
        let mut devices = Vec::new();
        for node in &plan.nodes {
            let ns = Namespace::new(&node.name)?;
            let n = node.clone();
            let offload = self.options.offload;
            let rps = self.cpus.as_ref().map(|c| c.rps_mask.clone());
            devices.push(ns.run(move || configure(&n, offload, rps.as_deref()))?);
            self.namespaces.push(ns);
        }
        let addresses: Vec<[u8; 4]> = plan.nodes.iter().map(|n| n.address).collect();
        let (routes, routing) = routing(&plan);
        let network = Network::with_links(
            wavelab_model::wall_clock_links(&plan.scenario).expect("validated"),
            routes,
        );
        let clock = Clock::start();
        let sc = &plan.scenario;
        let config = WireConfig {
            end: self.end,
            interval: sc.output.interval,
            queues: sc.output.queues,
            spin: self.options.spin,
            realtime: self.options.realtime.then_some(self.options.priority),
            offload: self.options.offload,
            cpu: self.cpus.as_ref().map(|c| c.wire),
        };
        let mtu = plan.nodes.iter().map(|n| n.mtu).max().unwrap_or(1500) as usize;
        let wire = Wire::new(
            network,
            devices,
            routing,
            plan.flows.iter().map(|f| f.log).collect(),
            plan.flows
                .iter()
                .map(|f| FlowStats::with_deadline(f.datagrams.as_ref().and_then(|d| d.deadline())))
                .collect(),
            mtu.min(65535),
            clock,
            config,
            std::mem::take(&mut self.captures),
            self.progress.clone(),
        );
        let flows = Flows::start(
            &plan.flows,
            &self.namespaces,
            &addresses,
            clock,
            self.end,
            self.stop.clone(),
            self.options.logs.clone(),
        )?;
        let stop = self.stop.clone();
        let wire_thread = std::thread::Builder::new()
            .name("wavelab-wire".into())
            .spawn(move || wire.run(&stop))
            .map_err(|e| SetupError::io("spawning the wire thread", e))?;
        let (stop, done, end) = (self.stop.clone(), self.done.clone(), self.end);
        let started = std::time::Instant::now();
        let control = std::thread::Builder::new()
            .name("wavelab-sampler".into())
            .spawn(move || {
                let r = sample(&plan, flows, wire_thread, clock, end, &stop, started);
                done.store(true, Ordering::Release);
                r
            })
            .map_err(|e| SetupError::io("spawning the sampler thread", e))?;
        self.control = Some(control);
        Ok(())
    }

    /// Waits for the end of the run (or its stop) and returns its results.
    pub fn finish(mut self) -> Result<EmulationResults, String> {
        let control = self.control.take().ok_or("the run was not started")?;
        let g = control
            .join()
            .map_err(|_| "the emulation's sampler thread panicked".to_string())??;
        self.namespaces.clear();
        Ok(tables::build(
            &self.plan,
            &self.options,
            g.wire,
            g.series,
            &g.bursts,
            g.flows,
            g.wall,
        ))
    }
}

impl Drop for Emulation {
    fn drop(&mut self) {
        self.stop();
        if let Some(c) = self.control.take() {
            let _ = c.join();
        }
    }
}

/// Sets up a node's namespace (on a thread inside it): loopback up, IPv6
/// off, the TUN device with the node's address and MTU, the routes with
/// the flows' attributes, and the sysctls.
fn configure(
    node: &NodePlan,
    offload: bool,
    rps: Option<&str>,
) -> Result<tun_rs::SyncDevice, SetupError> {
    // no router solicitations or other IPv6 chatter on the devices
    let _ = sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let _ = sysctl("net.ipv6.conf.default.disable_ipv6", "1");
    ip(&["link", "set", "lo", "up"])?;
    let dev = tun_rs::DeviceBuilder::new()
        .name(DEVICE)
        .mtu(node.mtu.min(65535) as u16)
        .offload(offload)
        .build_sync()
        .map_err(|e| SetupError::io(format!("creating the TUN device of {}", node.name), e))?;
    let a = node.address;
    let cidr = format!("{}.{}.{}.{}/16", a[0], a[1], a[2], a[3]);
    ip(&["addr", "add", &cidr, "dev", DEVICE])?;
    ip(&["link", "set", DEVICE, "up", "txqueuelen", "1000"])?;
    // Multipath TCP: the node's addresses on its other access links, each
    // an endpoint of the kernel's path manager (crate::mptcp)
    if node.mptcp_limits {
        let n = crate::mptcp::MAX_SUBFLOWS.to_string();
        ip(&[
            "mptcp",
            "limits",
            "set",
            "subflows",
            &n,
            "add_addr_accepted",
            &n,
        ])?;
    }
    for (e, flag, backup) in &node.mptcp_endpoints {
        let addr = format!("{}.{}.{}.{}", e[0], e[1], e[2], e[3]);
        ip(&["addr", "add", &format!("{addr}/16"), "dev", DEVICE])?;
        let mut args = vec!["mptcp", "endpoint", "add", &addr, "dev", DEVICE, flag];
        if *backup {
            args.push("backup");
        }
        ip(&args)?;
    }
    if let Some(mask) = rps {
        steer(mask)?;
    }
    for (dst, attrs) in &node.routes {
        let to = format!("{}.{}.{}.{}/32", dst[0], dst[1], dst[2], dst[3]);
        let mut args = vec!["route", "add", &to, "dev", DEVICE];
        args.extend(attrs.iter().map(String::as_str));
        ip(&args)?;
    }
    // the kernel's metrics cache would carry one connection's ssthresh and
    // RTT to the next; the send buffer may grow to what a long fat path needs
    sysctl("net.ipv4.tcp_no_metrics_save", "1")?;
    sysctl("net.ipv4.tcp_wmem", "4096 16384 67108864")?;
    for (k, v) in &node.sysctls {
        sysctl(k, v)?;
    }
    dev.set_nonblocking(true)
        .map_err(|e| SetupError::io("the TUN device", e))?;
    Ok(dev)
}

/// Receive packet steering of the node's device onto the CPUs of `mask`
/// (hexadecimal, as in `rps_cpus`): what the wire thread writes to the
/// device is then processed by the kernel (the receiving TCP stack, its
/// ACKs, the sender's next segments) on those CPUs instead of inside the
/// wire thread's write. The setting lives in sysfs, which shows a
/// namespace's devices only when mounted from inside it, so this thread
/// takes a private mount namespace and mounts one there (both go when it
/// ends).
fn steer(mask: &str) -> Result<(), SetupError> {
    use nix::mount::{mount, MsFlags};
    let fail =
        |what: &str, e: nix::Error| SetupError::io(format!("steering the device: {what}"), e);
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)
        .map_err(|e| fail("unshare(CLONE_NEWNS)", e))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| fail("making / private", e))?;
    mount(
        Some("sysfs"),
        "/sys",
        Some("sysfs"),
        MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| fail("mounting sysfs", e))?;
    let path = format!("/sys/class/net/{DEVICE}/queues/rx-0/rps_cpus");
    std::fs::write(&path, mask).map_err(|e| SetupError::io(format!("writing {path}"), e))
}

/// The CPU the wire thread runs on, and the others, which process what it
/// writes.
#[derive(Clone, Debug)]
struct Cpus {
    wire: usize,
    rps_mask: String,
}

impl Cpus {
    /// With at least two CPUs: the wire thread on the last one this process
    /// may use, the kernel's work on the others.
    fn choose() -> Option<Cpus> {
        let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
        let cpus: Vec<usize> = (0..nix::sched::CpuSet::count())
            .filter(|&c| allowed.is_set(c).unwrap_or(false))
            .collect();
        let (&wire, others) = cpus.split_last()?;
        if others.is_empty() {
            return None;
        }
        let mut mask = vec![0u32; wire / 32 + 1];
        for &c in others {
            mask[c / 32] |= 1 << (c % 32);
        }
        let rps_mask = mask
            .iter()
            .rev()
            .map(|w| format!("{w:08x}"))
            .collect::<Vec<_>>()
            .join(",");
        Some(Cpus { wire, rps_mask })
    }
}

/// The network's routes and how packets find theirs: each flow's data and
/// ACK routes, then the shortest route between every ordered pair of nodes.
fn routing(plan: &Plan) -> (Vec<Vec<DirId>>, Routing) {
    let mut routes: Vec<Vec<DirId>> = Vec::new();
    let mut r = Routing::default();
    for (n, node) in plan.nodes.iter().enumerate() {
        r.nodes.insert(node.address, n);
        for (a, ..) in &node.mptcp_endpoints {
            r.nodes.insert(*a, n);
        }
    }
    // each flow's routes per side, as indices into `routes`
    let mut index: Vec<[Vec<u32>; 2]> = Vec::with_capacity(plan.flows.len());
    for (i, f) in plan.flows.iter().enumerate() {
        let (a, b) = (plan.nodes[f.from].address, plan.nodes[f.to].address);
        let mut mine: [Vec<u32>; 2] = Default::default();
        for (side, list) in f.routes.iter().enumerate() {
            for route in list {
                mine[side].push(routes.len() as u32);
                routes.push(route.clone());
            }
        }
        r.flow_routes.push([mine[0][0], mine[1][0]]);
        index.push(mine);
        if f.cmd.is_none() && f.subflow_of.is_none() {
            r.flows.insert((a, b, f.sport, f.dport), (i as u32, true));
            r.flows.insert((b, a, f.dport, f.sport), (i as u32, false));
        }
        if let Some(m) = &f.mptcp {
            // the subflows on the other access links, by their addresses
            for s in m.subflows.iter().skip(1) {
                let (x, y) = if m.node_sends {
                    (s.address, b)
                } else {
                    (a, s.address)
                };
                r.pairs.insert((x, y), (s.row as u32, true));
                r.pairs.insert((y, x), (s.row as u32, false));
            }
        }
    }
    r.switches = plan
        .switches
        .iter()
        .map(|&(at, flow, side, k)| (at, flow as u32, side, index[flow][side][k]))
        .collect();
    // packets of no flow take the shortest route over the links attached
    // at the start
    let detached = wavelab_model::scenario::detached_links(&plan.scenario).swap_remove(0);
    for (x, nx) in plan.nodes.iter().enumerate() {
        for (y, ny) in plan.nodes.iter().enumerate() {
            if x == y {
                continue;
            }
            if let Some(route) = plan
                .topology
                .shortest_route_avoiding(&nx.name, &ny.name, &detached)
            {
                r.pair_routes.insert((x, y), routes.len() as u32);
                routes.push(route);
            }
        }
    }
    r.route_hops = routes
        .iter()
        .map(|route| route.len().saturating_sub(1).min(255) as u8)
        .collect();
    (routes, r)
}

/// The sampler: reads every flow's TCP_INFO at each sampling instant until
/// the end, then stops everything and gathers what the threads measured.
fn sample(
    plan: &Plan,
    mut flows: Flows,
    wire: JoinHandle<WireOutput>,
    clock: Clock,
    end: Instant,
    stop: &AtomicBool,
    started: std::time::Instant,
) -> Result<Gathered, String> {
    let probes: Vec<Probe> = plan
        .flows
        .iter()
        .map(|f| match f.cc.as_deref() {
            Some("bbr") => Probe::Bbr,
            Some("wave") => Probe::Wave,
            _ => Probe::None,
        })
        .collect();
    // the BPF TCP Wave's socket storage, opened once (the plan checked that
    // it is loaded when a flow uses it)
    let wave_states = if probes.contains(&Probe::Wave) {
        SocketStates::open(Path::new(wavelab_bpf_maps::PIN_DIR))
            .ok()
            .flatten()
    } else {
        None
    };
    let mut series = Series::new(probes.iter().map(|p| p.columns()));
    let mut bursts = BurstLog::default();
    let interval = plan.scenario.output.interval;
    let mut t = Instant::ZERO;
    // a wire thread that ended early (it panicked) ends the run
    let halted = |stop: &AtomicBool| {
        if wire.is_finished() {
            stop.store(true, Ordering::Relaxed);
        }
        stop.load(Ordering::Relaxed)
    };
    while t <= end {
        while clock.now() < t && !halted(stop) {
            let left = t.saturating_since(clock.now()).as_nanos();
            std::thread::sleep(std::time::Duration::from_nanos(left.min(20_000_000)));
        }
        if halted(stop) {
            break;
        }
        for (i, state) in flows.state.iter().enumerate() {
            let f = &plan.flows[i];
            if let Some(m) = &f.mptcp {
                record_subflows(&mut series, t, m, state);
            } else if f.subflow_of.is_none() {
                let wave = wave_states.as_ref().map(|w| (w, &clock, &mut bursts));
                record(&mut series, t, i, state, probes[i], wave);
            }
        }
        t += interval;
    }
    while clock.now() < end && !halted(stop) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    let wire = wire.join();
    flows.join();
    let wire = wire.map_err(|e| {
        let what = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("the emulation's wire thread panicked: {what}")
    })?;
    let wall = started.elapsed();
    let mut ends: Vec<FlowEnd> = flows
        .state
        .iter()
        .map(|s| FlowEnd {
            sender: s.sender_info(),
            receiver: s.receiver_info(),
            completed_at: match s.completed_at.load(Ordering::Relaxed) {
                u64::MAX => None,
                ns => Some(Instant::from_nanos(ns)),
            },
            errors: s.errors.lock().map(|e| e.clone()).unwrap_or_default(),
            notes: s.notes.lock().map(|e| e.clone()).unwrap_or_default(),
            echoes: s
                .echoes
                .lock()
                .map(|e| (e.rtts.clone(), e.min))
                .unwrap_or_default(),
            conn: None,
        })
        .collect();
    // an MPTCP connection's rows: each subflow's TCP_INFO on both ends, and
    // the connection's figures on the row of its first subflow
    for (f, state) in plan.flows.iter().zip(&flows.state) {
        let Some(m) = &f.mptcp else { continue };
        let sender = state
            .sender
            .get()
            .map(|s| by_subflow(s.as_fd(), m, m.node_sends));
        let receiver = state
            .receiver
            .get()
            .map(|s| by_subflow(s.as_fd(), m, !m.node_sends));
        for (j, e) in m.subflows.iter().enumerate() {
            ends[e.row].sender = sender.as_ref().and_then(|v| v[j]);
            ends[e.row].receiver = receiver.as_ref().and_then(|v| v[j]);
        }
        let info = |s: Option<&std::net::TcpStream>| s.and_then(|s| ConnInfo::read(s.as_fd()).ok());
        ends[m.subflows[0].row].conn = Some((info(state.sender.get()), info(state.receiver.get())));
    }
    Ok(Gathered {
        wire,
        series,
        bursts,
        flows: ends,
        wall,
    })
}

/// The series rows of an MPTCP connection's subflows at `t`: each one's
/// `TCP_INFO` from its connection's sockets (`MPTCP_TCPINFO`), with the
/// bytes its receiving end got.
fn record_subflows(series: &mut Series, t: Instant, m: &MptcpPlan, state: &FlowState) {
    let Some(s) = state.sender.get() else {
        return;
    };
    let sent = by_subflow(s.as_fd(), m, m.node_sends);
    let got = state
        .receiver
        .get()
        .map(|r| by_subflow(r.as_fd(), m, !m.node_sends));
    for (j, e) in m.subflows.iter().enumerate() {
        let Some(info) = &sent[j] else { continue };
        let delivered = got
            .as_ref()
            .and_then(|g| g[j].as_ref())
            .map_or(0, |r| r.bytes_received);
        series.push(t, e.row as u32, &info.sample(delivered), &[], &[]);
    }
}

/// The algorithm variables a flow's series records beside TCP_INFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    /// None.
    None,
    /// BBR's, from `TCP_CC_INFO`.
    Bbr,
    /// TCP Wave's, from the BPF program's socket storage.
    Wave,
}

impl Probe {
    fn columns(self) -> &'static [&'static str] {
        match self {
            Probe::None => &[],
            Probe::Bbr => BBR_METRICS,
            Probe::Wave => WAVE_METRICS,
        }
    }
}

/// One series row of flow `i` at `t`, if its sender has a socket.
fn record(
    series: &mut Series,
    t: Instant,
    i: usize,
    state: &FlowState,
    probe: Probe,
    wave: Option<(&SocketStates, &Clock, &mut BurstLog)>,
) {
    let Some(info) = state.sender_info() else {
        return;
    };
    let delivered = state.receiver_info().map_or(0, |r| r.bytes_received);
    let sample = info.sample(delivered);
    let values: Option<Vec<f64>> = match (probe, state.sender.get()) {
        (Probe::Bbr, Some(s)) => bbr_metrics(s.as_fd()).ok().map(Vec::from),
        (Probe::Wave, Some(s)) => wave.and_then(|(states, clock, log)| {
            let (w, bursts) = states.get_with_bursts(s.as_fd()).ok().flatten()?;
            log.add(i as u32, clock, &bursts, w.bursts);
            Some(Vec::from(wave_metrics(&w, info.snd_mss)))
        }),
        _ => None,
    };
    match values {
        Some(v) => series.push(t, i as u32, &sample, probe.columns(), &v),
        None => series.push(t, i as u32, &sample, &[], &[]),
    }
}
