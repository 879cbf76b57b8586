//! The simulator's results: what the engine, the endpoints and the links
//! hold, read into the model's tables ([`wavelab_model::tables`]).

use super::endpoints::Flow;
use crate::engine::{key, Event};
use crate::notices::{Delivered, Source};
use crate::simulation::Simulation;
use wavelab_model::flow_stats::FlowStats;
use wavelab_model::histogram::Histogram;
use wavelab_model::tables::{
    distribution_table, flow_table, handoff_table, handover_table, link_table, rtt_distribution,
    ColumnData, FlowCounters, FlowRecord, LinkDirectionRecord, LinkHandoverRecord, Results,
    RunStats, Table,
};
use wavelab_tcp::cc::{HandoffStyle, Notification, PathInfo};
use wavelab_tcp::{Duration, Instant};

/// The flows table's row of UDP flow `f` at `now`: payload bytes sent and
/// received as its `bytes_sent` and `bytes_delivered`, its goodput over its
/// time from start to now (or its stop), no TCP counters (its packets are
/// the network statistics' `packets_*`) and no RTT.
fn udp_record(f: &Flow, net: FlowStats, now: Instant) -> FlowRecord {
    let (sent, delivered) = net.udp_payload();
    let end = f.stop.map_or(now, |s| s.min(now));
    let active = end.saturating_since(f.start).as_secs_f64();
    FlowRecord {
        counters: FlowCounters {
            bytes_sent: Some(sent),
            bytes_delivered: Some(delivered),
            ..FlowCounters::default()
        },
        goodput: (f.started && active > 0.0).then(|| delivered as f64 * 8.0 / active),
        // a ping's answers
        min_rtt: f.min_echo,
        rtt: f.rtts.figures_secs(),
        rtt_samples: f.rtts.count(),
        ..record_of(f, net)
    }
}

/// The flows table's row of flow `f` with what every flow has (its name,
/// algorithm, ends, times, size and network statistics `net`) and nothing
/// measured by its endpoints.
fn record_of(f: &Flow, net: FlowStats) -> FlowRecord {
    FlowRecord {
        name: f.name.clone(),
        algorithm: f.algorithm.to_string(),
        from: f.from.clone(),
        to: f.to.clone(),
        start: f.start - Instant::ZERO,
        stop: f.stop.map(|s| s - Instant::ZERO),
        size: f.size,
        completion_time: None,
        counters: FlowCounters::default(),
        goodput: None,
        min_rtt: None,
        rtt: [None; 4],
        rtt_samples: 0,
        network: Some(net),
    }
}

impl Simulation {
    /// The results so far (callable at any time; a partial run gives partial results).
    pub fn results(&self) -> Results {
        Results {
            series: self.series.to_table(),
            queues: self.queues.to_table(),
            flows: self.flow_table(),
            links: self.link_table(),
            packets: self
                .rec
                .log
                .to_table(key(self.now, &Event::Sample(u64::MAX >> 27))),
            handovers: self.handover_table(),
            handoffs: self.handoff_table(),
            notifications: self.notification_table(),
            subflows: self.subflow_table(),
            rtt_distribution: rtt_distribution(self.flows.iter().map(|f| &f.rtts)),
            transfers: self.transfer_table(),
            delays: self.delays.to_table(),
            owd_distribution: if self.sc.output.delays {
                distribution_table(self.flows.iter().map(|f| &f.net.delay), "owd")
            } else {
                Table::default()
            },
            run: RunStats {
                simulated: self.now - Instant::ZERO,
                events: self.q.processed(),
                packet_hops: self.net.hops(),
                peak_packets: self.net.peak,
                // the TCP senders' samples (a ping flow's are its own)
                rtts: (self.flows.iter().filter(|f| !f.echo)).fold(
                    Histogram::default(),
                    |mut h, f| {
                        h.merge(&f.rtts);
                        h
                    },
                ),
            },
        }
    }

    fn flow_table(&self) -> Table {
        let now = self.now;
        let drops = self.rec.drops(now);
        let rows: Vec<FlowRecord> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f): (usize, &Flow)| {
                let mut net = f.net.clone();
                net.lost = drops[i];
                if f.udp.is_some() {
                    return udp_record(f, net, now);
                }
                let tx = f.sender.stats();
                let rx = f.receiver.stats();
                let end = tx.completed_at.unwrap_or(now);
                let active = (end - f.start).as_secs_f64();
                FlowRecord {
                    completion_time: tx.completed_at.map(|c| c - f.start),
                    counters: FlowCounters {
                        bytes_sent: Some(tx.bytes_sent),
                        bytes_retransmitted: Some(tx.bytes_retransmitted),
                        bytes_acked: Some(f.sender.bytes_acked()),
                        bytes_delivered: Some(f.receiver.delivered()),
                        segments_sent: Some(tx.segments_sent),
                        retransmissions: Some(tx.retransmissions),
                        fast_retransmits: Some(tx.fast_retransmits),
                        rto_expiries: Some(tx.rto_expiries),
                        loss_probes: Some(tx.loss_probes),
                        tlp_recoveries: Some(tx.tlp_recoveries),
                        spurious_retransmissions: Some(tx.spurious_retransmissions),
                        dsacks_received: Some(tx.dsacks_received),
                        dupacks_received: Some(tx.dupacks_received),
                        acks_received: Some(tx.acks_received),
                        acks_sent: Some(rx.acks_sent),
                        duplicate_segments: Some(rx.duplicate_segments),
                        out_of_order_segments: Some(rx.out_of_order_segments),
                        ecn_echoes: Some(tx.ecn_echoes),
                        ecn_reductions: Some(tx.ecn_reductions),
                        ce_received: Some(rx.ce_received),
                    },
                    goodput: (f.started && active > 0.0)
                        .then(|| f.receiver.delivered() as f64 * 8.0 / active),
                    min_rtt: f.sender.rtt().min_rtt(),
                    // every RTT sample of the sender, through a histogram (0.8 %)
                    rtt: f.rtts.figures_secs(),
                    rtt_samples: f.rtts.count(),
                    ..record_of(f, net)
                }
            })
            .collect();
        flow_table(&rows)
    }

    fn handoff_table(&self) -> Table {
        let rows: Vec<_> = self.handoffs.iter().map(|h| h.record(&self.sc)).collect();
        handoff_table(&rows)
    }

    fn notification_table(&self) -> Table {
        let d = &self.notices.delivered;
        let nan = f64::NAN;
        let secs = |x: Duration| x.as_secs_f64();
        let f64s = |f: &dyn Fn(&Delivered) -> f64| ColumnData::F64(d.iter().map(f).collect());
        let handoff = |x: &Delivered| match x.notice.msg {
            Notification::Handoff(h) => Some(h),
            Notification::LinkReport(_) | Notification::LinkDrop(_) => None,
        };
        let report = |x: &Delivered| x.notice.msg.link_report().copied();
        let rate = |p: PathInfo| p.rate.map_or(nan, |r| r.as_bps() as f64);
        let delay = |p: PathInfo| p.delay.map_or(nan, secs);
        let mut t = Table::default();
        t.push("time", f64s(&|x| x.time.as_secs_f64()));
        t.push("flow", ColumnData::U32(d.iter().map(|x| x.flow).collect()));
        t.push(
            "kind",
            ColumnData::Str(
                d.iter()
                    .map(|x| x.notice.msg.kind_name().to_string())
                    .collect(),
            ),
        );
        t.push("sent", f64s(&|x| x.notice.sent.as_secs_f64()));
        t.push(
            "link",
            ColumnData::I64(d.iter().map(|x| x.notice.source.link() as i64).collect()),
        );
        t.push(
            "handoff",
            ColumnData::I64(
                d.iter()
                    .map(|x| match x.notice.source {
                        Source::Handoff { index, .. } => index as i64,
                        Source::Link(_) => -1,
                    })
                    .collect(),
            ),
        );
        t.push(
            "style",
            ColumnData::Str(
                d.iter()
                    .map(|x| match handoff(x).map(|h| h.style) {
                        Some(HandoffStyle::MakeBeforeBreak) => "make-before-break".to_string(),
                        Some(HandoffStyle::BreakBeforeMake { .. }) => {
                            "break-before-make".to_string()
                        }
                        None => String::new(),
                    })
                    .collect(),
            ),
        );
        t.push(
            "disconnection",
            f64s(&|x| match handoff(x).map(|h| h.style) {
                Some(HandoffStyle::BreakBeforeMake { disconnection }) => secs(disconnection),
                Some(HandoffStyle::MakeBeforeBreak) => 0.0,
                None => nan,
            }),
        );
        t.push(
            "old_rate",
            f64s(&|x| handoff(x).map_or(nan, |h| rate(h.old))),
        );
        t.push(
            "old_delay",
            f64s(&|x| handoff(x).map_or(nan, |h| delay(h.old))),
        );
        t.push(
            "new_rate",
            f64s(&|x| handoff(x).map_or(nan, |h| rate(h.new))),
        );
        t.push(
            "new_delay",
            f64s(&|x| handoff(x).map_or(nan, |h| delay(h.new))),
        );
        t.push(
            "flows",
            ColumnData::U32(
                d.iter()
                    .map(|x| handoff(x).map_or(0, |h| h.flows))
                    .collect(),
            ),
        );
        t.push(
            "seq",
            ColumnData::U64(
                d.iter()
                    .map(|x| report(x).map_or(0, |r| r.offset))
                    .collect(),
            ),
        );
        t.push(
            "retries",
            ColumnData::U32(
                d.iter()
                    .map(|x| report(x).map_or(0, |r| r.retries))
                    .collect(),
            ),
        );
        t.push(
            "link_rto",
            f64s(&|x| report(x).map_or(nan, |r| secs(r.link_rto))),
        );
        t
    }

    fn handover_table(&self) -> Table {
        let rows: Vec<_> = self
            .handovers
            .iter()
            .map(|h| {
                let p = &h.plan;
                LinkHandoverRecord::new(&self.sc, p.link, &p.spec, p.time)
            })
            .collect();
        handover_table(&rows)
    }

    fn link_table(&self) -> Table {
        let rows: Vec<_> = (self.net.dirs.iter().enumerate())
            .map(|(i, d)| {
                let (c, s) = (d.counters(), d.settings_at(self.now));
                LinkDirectionRecord::new(&self.sc, &self.topo, i, c, s, Some(&d.waits()))
            })
            .collect();
        link_table(&rows)
    }
}
