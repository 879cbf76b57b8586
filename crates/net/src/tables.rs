//! The results of an emulation as the simulator's tables (same names, same
//! columns), plus what only an emulation has: every release with its
//! lateness, and the run's figures (lateness percentiles, whether real-time
//! priority was granted, what the kernel could not apply).
//!
//! The tables a simulation has are built by the model's builders, from the
//! same record types ([`wavelab_model::tables`]). Per-flow counters come from
//! the kernel (`TCP_INFO` of the sender and the receiver): a counter the
//! kernel does not keep (fast retransmits, spurious retransmissions,
//! duplicate ACKs and segments) is a null.

use crate::driver::{Chunked, Release, WireOutput, NO_FLOW};
use crate::emulation::{FlowEnd, Options};
use crate::plan::{Datagrams, FlowPlan, Plan};
use crate::wave::BurstLog;
use wavelab_model::capture::Capture;
use wavelab_model::compile::node_handoffs_until;
use wavelab_model::flow_stats::FlowStats;
use wavelab_model::scenario::LinkHandoverTime;
use wavelab_model::tables::series::Series;
use wavelab_model::tables::{
    handoff_table, subflow_table, FlowCounters, FlowRecord, LinkDirectionRecord,
    LinkHandoverRecord, SubflowRecord,
};
use wavelab_model::{ColumnData, Results, RunStats, Table};
use wavelab_tcp::{Duration, Instant};

/// Percentiles of the releases' lateness (actual minus planned instant).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lateness {
    /// Releases measured.
    pub count: u64,
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// 99.9th percentile.
    pub p999: Duration,
    /// The latest.
    pub max: Duration,
    /// Mean (ns).
    pub mean_ns: f64,
}

impl Lateness {
    /// The percentiles of these releases (nearest rank).
    pub fn of<'a>(releases: impl Iterator<Item = &'a Release>) -> Lateness {
        let mut late: Vec<u64> = releases
            .map(|r| r.actual.as_nanos().saturating_sub(r.planned.as_nanos()))
            .collect();
        if late.is_empty() {
            return Lateness::default();
        }
        late.sort_unstable();
        let n = late.len();
        // the smallest value with at least `permille` / 1000 of them at or below it
        let rank = |permille: usize| {
            let k = (permille * n).div_ceil(1000);
            Duration::from_nanos(late[k.clamp(1, n) - 1])
        };
        Lateness {
            count: n as u64,
            p50: rank(500),
            p99: rank(990),
            p999: rank(999),
            max: Duration::from_nanos(late[n - 1]),
            mean_ns: late.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        }
    }
}

/// Figures about an emulation run.
#[derive(Clone, Debug)]
pub struct EmulationStats {
    /// Wall seconds from the start of the flows to the end of the threads.
    pub wall_seconds: f64,
    /// The instant the run reached (its duration, unless stopped early).
    pub emulated: Duration,
    /// Lateness of every release.
    pub lateness: Lateness,
    /// The bound on the 99th percentile, and whether it was exceeded.
    pub lateness_bound: Duration,
    /// True if the run's lateness exceeded its bound: its timings are not
    /// the scenario's.
    pub flagged: bool,
    /// Packets read from the devices, packets that went nowhere, failed
    /// reads and writes.
    pub read: u64,
    /// Packets of no emulated node.
    pub stray: u64,
    /// Failed reads.
    pub read_errors: u64,
    /// Failed writes.
    pub write_errors: u64,
    /// `SCHED_FIFO` priority granted, or why not.
    pub realtime: Result<i32, String>,
    /// Windows of 100 ms in which the wire thread gave up real-time
    /// priority to stay under the kernel's real-time limit.
    pub realtime_demotions: u64,
    /// Settings the kernel did not apply, and other notes.
    pub notes: Vec<String>,
    /// Errors of flows (a connection that never opened, ...).
    pub errors: Vec<String>,
    /// The kernel's release (`uname -r`).
    pub kernel: String,
    /// `/proc/loadavg` when the run ended: the machine's load, which the
    /// lateness depends on.
    pub loadavg: String,
}

/// Everything an emulation produced.
pub struct EmulationResults {
    /// The tables a simulation has (`run.events` counts packets read).
    pub results: Results,
    /// Every release: planned instant, lateness, direction, flow, size.
    pub releases: Table,
    /// The bursts the BPF TCP Wave opened on the emulated flows, at the
    /// kernel's instants ([`crate::wave::BurstLog::to_table`]).
    pub bursts: Table,
    /// Figures about the run.
    pub stats: EmulationStats,
    /// The packet captures, flushed (call `finish` for their figures).
    pub captures: Vec<Capture>,
}

fn secs(i: Instant) -> f64 {
    i.as_secs_f64()
}

/// Builds the results of a run.
pub fn build(
    plan: &Plan,
    options: &Options,
    wire: WireOutput,
    series: Series,
    bursts: &BurstLog,
    flows: Vec<FlowEnd>,
    wall: std::time::Duration,
) -> EmulationResults {
    let end = wire.stopped_at;
    let lateness = Lateness::of(wire.releases.iter());
    let mut notes = plan.notes.clone();
    if bursts.missed() > 0 {
        notes.push(format!(
            "the bursts table misses up to {} bursts of a flow: they were opened and overwritten in the BPF Wave's ring between two samples (sample more often: output.interval)",
            bursts.missed()
        ));
    }
    for (f, e) in plan.flows.iter().zip(&flows) {
        if let (Some(_), Some((Some(c), _))) = (&f.mptcp, e.conn) {
            notes.push(format!(
                "{}: the connection retransmitted {} data bytes at its level (MPTCP_INFO's \
                 bytes_retrans: reinjections among them; the kernel does not count them per \
                 subflow)",
                f.name, c.bytes_retrans
            ));
        }
    }
    let mut errors = Vec::new();
    for (f, e) in plan.flows.iter().zip(&flows) {
        notes.extend(e.notes.iter().map(|n| format!("{}: {n}", f.name)));
        errors.extend(e.errors.iter().map(|n| format!("{}: {n}", f.name)));
        if f.cmd.is_some() {
            notes.push(format!(
                "{}: runs a command, whose sockets the emulator does not see: no series, no counters",
                f.name
            ));
        }
    }
    let packet_hops = wire.links.iter().map(|(c, _)| c.sent_packets).sum();
    let results = Results {
        series: series.to_table(),
        queues: wire.queues.to_table(),
        flows: flow_table(plan, &flows, &wire.flow_stats, end),
        links: link_table(plan, &wire),
        packets: wire.log.to_table(u128::MAX),
        handovers: handover_table(plan),
        handoffs: handoff_table(&node_handoffs_until(&plan.scenario, end)),
        // the kernel's TCP takes no cross-layer notifications
        notifications: Table::default(),
        subflows: subflow_rows(plan, &flows, end),
        // the kernel's RTT samples are not seen one by one: no distribution
        rtt_distribution: wavelab_model::tables::rtt_distribution(std::iter::empty()),
        // workloads are refused by the plan
        transfers: Table::default(),
        // the emulator measures no one-way delays of its own
        delays: Table::default(),
        owd_distribution: Table::default(),
        run: RunStats {
            simulated: end - Instant::ZERO,
            events: wire.read,
            packet_hops,
            peak_packets: wire.peak_packets,
            // the kernel's RTT samples are not seen one by one (NaN figures)
            rtts: Default::default(),
        },
    };
    let stats = EmulationStats {
        wall_seconds: wall.as_secs_f64(),
        emulated: end - Instant::ZERO,
        lateness,
        lateness_bound: options.lateness_bound,
        flagged: lateness.p99 > options.lateness_bound,
        read: wire.read,
        stray: wire.stray,
        read_errors: wire.read_errors,
        write_errors: wire.write_errors,
        realtime: wire.realtime.clone(),
        realtime_demotions: wire.demotions,
        notes,
        errors,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        loadavg: std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
    };
    EmulationResults {
        results,
        releases: release_table(&wire.releases),
        bursts: bursts.to_table(),
        stats,
        captures: wire.captures,
    }
}

fn release_table(r: &Chunked<Release>) -> Table {
    let r: Vec<&Release> = r.iter().collect();
    let mut t = Table::default();
    t.push(
        "time",
        ColumnData::F64(r.iter().map(|x| secs(x.planned)).collect()),
    );
    t.push(
        "lateness",
        ColumnData::F64(
            r.iter()
                .map(|x| (x.actual.as_nanos() as f64 - x.planned.as_nanos() as f64) * 1e-9)
                .collect(),
        ),
    );
    t.push("dir", ColumnData::U32(r.iter().map(|x| x.dir).collect()));
    t.push(
        "flow",
        ColumnData::I64(
            r.iter()
                .map(|x| if x.flow == NO_FLOW { -1 } else { x.flow as i64 })
                .collect(),
        ),
    );
    t.push("size", ColumnData::U32(r.iter().map(|x| x.size).collect()));
    t
}

/// The flows table of a run that reached `now`: the counters the kernel
/// keeps in `TCP_INFO`, None for those it does not (and for every counter of
/// a flow that runs a command, whose sockets the emulator does not see);
/// every flow's network statistics as the wire thread counted its data
/// packets (`net`, by flow).
fn flow_table(plan: &Plan, ends: &[FlowEnd], net: &[FlowStats], now: Instant) -> Table {
    let rows: Vec<FlowRecord> = (plan.flows.iter().zip(ends).zip(net))
        .map(|((f, e), net)| {
            if let Some(d) = &f.datagrams {
                return datagram_record(plan, f, d, e, net.clone(), now);
            }
            let start = Instant::ZERO + f.start;
            let active = e
                .completed_at
                .unwrap_or(now)
                .saturating_since(start)
                .as_secs_f64();
            let (tx, rx) = (e.sender.as_ref(), e.receiver.as_ref());
            FlowRecord {
                // an MPTCP connection's row is its first subflow's: `flow/link`
                name: match &f.mptcp {
                    Some(m) => format!("{}/{}", f.name, m.subflows[0].link),
                    None => f.name.clone(),
                },
                algorithm: f.cc.clone().unwrap_or_else(|| "cmd".into()),
                from: plan.nodes[f.from].name.clone(),
                to: plan.nodes[f.to].name.clone(),
                start: f.start,
                stop: f.stop,
                size: f.size,
                completion_time: e.completed_at.map(|c| c - start),
                counters: FlowCounters {
                    bytes_sent: tx.map(|i| i.bytes_sent.saturating_sub(i.bytes_retrans)),
                    bytes_retransmitted: tx.map(|i| i.bytes_retrans),
                    bytes_acked: tx.map(|i| i.bytes_acked),
                    bytes_delivered: rx.map(|i| i.bytes_received),
                    segments_sent: tx.map(|i| i.data_segs_out.into()),
                    retransmissions: tx.map(|i| i.total_retrans.into()),
                    fast_retransmits: None,
                    rto_expiries: tx.and_then(|i| i.total_rto).map(u64::from),
                    // the kernel counts tail loss probes per namespace
                    // (TCPLossProbes), not per connection
                    loss_probes: None,
                    tlp_recoveries: None,
                    spurious_retransmissions: None,
                    dsacks_received: tx.map(|i| i.dsack_dups.into()),
                    dupacks_received: None,
                    acks_received: tx.map(|i| i.segs_in.into()),
                    acks_sent: rx.map(|i| i.segs_out.into()),
                    duplicate_segments: None,
                    out_of_order_segments: rx.map(|i| i.rcv_ooopack.into()),
                    // the kernel negotiates ECN (`tcp.ecn` sets the
                    // sender's net.ipv4.tcp_ecn) but TCP_INFO counts
                    // neither its ECE ACKs nor its reductions; the CE
                    // marks are the links table's `marked`
                    ecn_echoes: None,
                    ecn_reductions: None,
                    ce_received: None,
                },
                goodput: rx
                    .filter(|_| active > 0.0)
                    .map(|r| r.bytes_received as f64 * 8.0 / active),
                min_rtt: tx
                    .filter(|i| i.min_rtt != 0 && i.min_rtt != u32::MAX)
                    .map(|i| Duration::from_micros(i.min_rtt.into())),
                // the kernel's RTT samples are not seen one by one: no
                // distribution, and no samples counted
                rtt: [None; 4],
                rtt_samples: 0,
                network: Some(net.clone()),
            }
        })
        .collect();
    wavelab_model::tables::flow_table(&rows)
}

/// The subflows table: a row per subflow of every MPTCP connection, with
/// what the kernel reports. It counts neither reinjections nor failures per
/// subflow (0 here; the connection's reinjected bytes are in the run's
/// notes), nor duplicate data; `mapped` is the data the subflow sent, its
/// retransmissions left out.
fn subflow_rows(plan: &Plan, ends: &[FlowEnd], now: Instant) -> Table {
    let mut rows = Vec::new();
    for (f, e) in plan.flows.iter().zip(ends) {
        let Some(m) = &f.mptcp else { continue };
        let (_, got) = e.conn.unwrap_or_default();
        let delivered = got.map_or(0, |c| c.bytes_received);
        let start = Instant::ZERO + f.start;
        let done = e.completed_at.map(|c| c - start);
        let active = e.completed_at.unwrap_or(now).saturating_since(start);
        for (j, s) in m.subflows.iter().enumerate() {
            let tx = ends[s.row].sender.as_ref();
            rows.push(SubflowRecord {
                flow: s.row as u32,
                connection: f.name.clone(),
                subflow: j as u32,
                link: s.link.clone(),
                backup: s.backup,
                mapped: tx.map_or(0, |i| i.bytes_sent.saturating_sub(i.bytes_retrans)),
                reinjected: 0,
                failures: 0,
                conn_delivered: delivered,
                conn_duplicate: 0,
                conn_completion_time: done,
                conn_goodput: (got.is_some() && !active.is_zero())
                    .then(|| delivered as f64 * 8.0 / active.as_secs_f64()),
            });
        }
    }
    subflow_table(&rows)
}

/// The flows table's row of a UDP or ping flow, as a simulation writes it:
/// the payload bytes of the datagrams the wire counted as `bytes_sent` and
/// `bytes_delivered`, the goodput over its time from start to `now` (or its
/// stop), no TCP counters, and a ping's round-trip times.
fn datagram_record(
    plan: &Plan,
    f: &FlowPlan,
    d: &Datagrams,
    e: &FlowEnd,
    net: FlowStats,
    now: Instant,
) -> FlowRecord {
    let (sent, delivered) = net.udp_payload();
    let start = Instant::ZERO + f.start;
    let end = f.stop.map_or(now, |s| (Instant::ZERO + s).min(now));
    let active = end.saturating_since(start).as_secs_f64();
    let (rtts, min) = &e.echoes;
    FlowRecord {
        name: f.name.clone(),
        algorithm: d.algorithm().to_string(),
        from: plan.nodes[f.from].name.clone(),
        to: plan.nodes[f.to].name.clone(),
        start: f.start,
        stop: f.stop,
        size: None,
        completion_time: None,
        counters: FlowCounters {
            bytes_sent: Some(sent),
            bytes_delivered: Some(delivered),
            ..FlowCounters::default()
        },
        goodput: (active > 0.0 && now > start).then(|| delivered as f64 * 8.0 / active),
        min_rtt: *min,
        rtt: rtts.figures_secs(),
        rtt_samples: rtts.count(),
        network: Some(net),
    }
}

fn link_table(plan: &Plan, wire: &WireOutput) -> Table {
    // per-packet queueing delays are not measured on real links
    let rows: Vec<_> = (wire.links.iter().enumerate())
        .map(|(d, (c, s))| LinkDirectionRecord::new(&plan.scenario, &plan.topology, d, c, *s, None))
        .collect();
    wavelab_model::tables::link_table(&rows)
}

/// The handovers, each at its time (the emulator has no `"steady"` ones).
fn handover_table(plan: &Plan) -> Table {
    let sc = &plan.scenario;
    let rows: Vec<_> = (sc.links.iter().enumerate())
        .flat_map(|(i, l)| {
            l.handovers.iter().map(move |h| {
                let at = match h.at {
                    LinkHandoverTime::At(d) => Some(Instant::ZERO + d),
                    LinkHandoverTime::Steady => None,
                };
                LinkHandoverRecord::new(sc, i, h, at)
            })
        })
        .collect();
    wavelab_model::tables::handover_table(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles_by_nearest_rank() {
        let r: Vec<Release> = (1..=1000u64)
            .map(|k| Release {
                planned: Instant::from_nanos(1_000_000),
                actual: Instant::from_nanos(1_000_000 + k * 1000),
                dir: 0,
                flow: 0,
                size: 1500,
            })
            .collect();
        let l = Lateness::of(r.iter());
        assert_eq!(l.count, 1000);
        assert_eq!(l.p50, Duration::from_micros(500));
        assert_eq!(l.p99, Duration::from_micros(990));
        assert_eq!(l.p999, Duration::from_micros(999));
        assert_eq!(l.max, Duration::from_micros(1000));
    }

    /// The emulator's flows table has the simulator's types: counters the
    /// kernel keeps are integers, those it does not keep and every counter
    /// of a side not seen are nulls, never NaN.
    #[test]
    fn counters_the_kernel_does_not_keep_are_nulls() {
        let plan = crate::plan::tests::plan("cc = \"cubic\"").unwrap();
        let info = crate::tcpinfo::TcpInfo {
            total_retrans: 7,
            bytes_sent: 5000,
            bytes_retrans: 1000,
            ..Default::default()
        };
        let end = FlowEnd {
            sender: Some(info),
            receiver: None,
            completed_at: None,
            errors: vec![],
            notes: vec![],
            echoes: Default::default(),
            conn: None,
        };
        let mut net = FlowStats::default();
        net.on_send(1500);
        net.on_send(1500);
        net.on_drop(1500);
        let t = flow_table(&plan, &[end], &[net], Instant::from_nanos(1_000_000_000));
        assert_eq!(t.options::<u64>("retransmissions"), [Some(7)]);
        assert_eq!(t.options::<u64>("bytes_sent"), [Some(4000)]);
        assert_eq!(t.options::<u64>("fast_retransmits"), [None]);
        assert_eq!(
            t.options::<u64>("bytes_delivered"),
            [None],
            "no receiver seen"
        );
        assert_eq!(t.options::<f64>("goodput"), [None]);
        assert_eq!(t.options::<f64>("completion_time"), [None]);
        assert_eq!(t.f64s("completion_time")[0].to_bits(), f64::NAN.to_bits());
        assert!(t.valid("flow").is_none(), "an index is never null");
        // the wire thread's counts of the flow's packets
        assert_eq!(t.options::<u64>("packets_sent"), [Some(2)]);
        assert_eq!(t.options::<u64>("packets_lost"), [Some(1)]);
        assert_eq!(t.options::<u64>("wire_bytes_sent"), [Some(3000)]);
        assert_eq!(t.options::<f64>("owd_p50"), [None], "nothing received");
    }

    /// A UDP flow's row is a simulation's: payload bytes from the wire's
    /// counts, no TCP counters, its packets late past the playout deadline.
    #[test]
    fn a_udp_flows_row_takes_its_bytes_from_the_wire() {
        let plan = crate::plan::tests::plan(
            "transport = \"udp\"\nudp = { pattern = \"voice\", playout_deadline = \"30ms\" }",
        )
        .unwrap();
        let mut net = FlowStats::with_deadline(Some(Duration::from_millis(30)));
        let t0 = Instant::ZERO;
        for k in 0..3u64 {
            net.on_send(188);
            let sent = t0 + Duration::from_millis(20 * k);
            net.on_receive(sent, sent + Duration::from_millis(20 + 10 * k), 188);
        }
        let t = flow_table(
            &plan,
            &[FlowEnd::default()],
            &[net],
            Instant::from_nanos(1_000_000_000),
        );
        assert_eq!(t.options::<u64>("bytes_sent"), [Some(480)]);
        assert_eq!(t.options::<u64>("bytes_delivered"), [Some(480)]);
        assert_eq!(t.options::<u64>("retransmissions"), [None]);
        assert_eq!(t.options::<u64>("packets_received"), [Some(3)]);
        // 20, 30 and 40 ms: one past 30 ms
        assert_eq!(t.options::<u64>("packets_late"), [Some(1)]);
        assert_eq!(t.options::<f64>("goodput"), [Some(480.0 * 8.0)]);
    }
}
