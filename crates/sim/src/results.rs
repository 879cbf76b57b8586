//! The simulator's results: what the engine, the endpoints and the links
//! hold, read into the model's tables ([`wavelab_model::tables`]).

use crate::endpoints::Flow;
use crate::engine::{key, Event};
use crate::notices::{Delivered, Source};
use crate::sim::Simulation;
use wavelab_model::histogram::Histogram;
use wavelab_model::link::{LinkCounters, Settings};
use wavelab_model::scenario::link_name;
use wavelab_model::tables::{
    handoff_table, handover_table, link_table, rtt_distribution, ColumnData, Results, RunStats,
    Table,
};
use wavelab_tcp::cc::{HandoffStyle, Notification, PathInfo};
use wavelab_tcp::{Duration, Instant};

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
            rtt_distribution: rtt_distribution(self.flows.iter().map(|f| &f.rtts)),
            run: RunStats {
                simulated: self.now - Instant::ZERO,
                events: self.q.processed(),
                packet_hops: self.net.hops(),
                peak_packets: self.net.peak,
                rtts: self.flows.iter().fold(Histogram::default(), |mut h, f| {
                    h.merge(&f.rtts);
                    h
                }),
            },
        }
    }

    fn flow_table(&self) -> Table {
        let nan = f64::NAN;
        let fl = &self.flows;
        let secs = |i: Instant| i.as_secs_f64();
        let mut t = Table::default();
        t.push("flow", ColumnData::U32((0..fl.len() as u32).collect()));
        t.push(
            "name",
            ColumnData::Str(fl.iter().map(|f| f.name.clone()).collect()),
        );
        t.push(
            "algorithm",
            ColumnData::Str(fl.iter().map(|f| f.algorithm.to_string()).collect()),
        );
        t.push(
            "from",
            ColumnData::Str(fl.iter().map(|f| f.from.clone()).collect()),
        );
        t.push(
            "to",
            ColumnData::Str(fl.iter().map(|f| f.to.clone()).collect()),
        );
        t.push(
            "start",
            ColumnData::F64(fl.iter().map(|f| secs(f.start)).collect()),
        );
        t.push(
            "stop",
            ColumnData::F64(fl.iter().map(|f| f.stop.map_or(nan, secs)).collect()),
        );
        t.push(
            "size",
            ColumnData::F64(
                fl.iter()
                    .map(|f| f.size.map_or(nan, |s| s as f64))
                    .collect(),
            ),
        );
        t.push(
            "completion_time",
            ColumnData::F64(
                fl.iter()
                    .map(|f| {
                        f.sender
                            .stats()
                            .completed_at
                            .map_or(nan, |c| (c - f.start).as_secs_f64())
                    })
                    .collect(),
            ),
        );
        let s = |g: fn(&Flow) -> u64| ColumnData::U64(fl.iter().map(g).collect());
        t.push("bytes_sent", s(|f| f.sender.stats().bytes_sent));
        t.push(
            "bytes_retransmitted",
            s(|f| f.sender.stats().bytes_retransmitted),
        );
        t.push("bytes_acked", s(|f| f.sender.bytes_acked()));
        t.push("bytes_delivered", s(|f| f.receiver.delivered()));
        t.push("segments_sent", s(|f| f.sender.stats().segments_sent));
        t.push("retransmissions", s(|f| f.sender.stats().retransmissions));
        t.push("fast_retransmits", s(|f| f.sender.stats().fast_retransmits));
        t.push("rto_expiries", s(|f| f.sender.stats().rto_expiries));
        t.push("loss_probes", s(|f| f.sender.stats().loss_probes));
        t.push("tlp_recoveries", s(|f| f.sender.stats().tlp_recoveries));
        t.push(
            "spurious_retransmissions",
            s(|f| f.sender.stats().spurious_retransmissions),
        );
        t.push("dsacks_received", s(|f| f.sender.stats().dsacks_received));
        t.push("dupacks_received", s(|f| f.sender.stats().dupacks_received));
        t.push("acks_received", s(|f| f.sender.stats().acks_received));
        t.push("acks_sent", s(|f| f.receiver.stats().acks_sent));
        t.push(
            "duplicate_segments",
            s(|f| f.receiver.stats().duplicate_segments),
        );
        t.push(
            "out_of_order_segments",
            s(|f| f.receiver.stats().out_of_order_segments),
        );
        let now = self.now;
        t.push(
            "goodput",
            ColumnData::F64(
                fl.iter()
                    .map(|f| {
                        let end = f.sender.stats().completed_at.unwrap_or(now);
                        let active = (end - f.start).as_secs_f64();
                        if f.started && active > 0.0 {
                            f.receiver.delivered() as f64 * 8.0 / active
                        } else {
                            nan
                        }
                    })
                    .collect(),
            ),
        );
        t.push(
            "min_rtt",
            ColumnData::F64(
                fl.iter()
                    .map(|f| f.sender.rtt().min_rtt().map_or(nan, |d| d.as_secs_f64()))
                    .collect(),
            ),
        );
        // every RTT sample of the sender, through a histogram (0.8 %)
        t.push(
            "rtt_mean",
            ColumnData::F64(fl.iter().map(|f| f.rtts.mean_secs()).collect()),
        );
        for (name, q) in [("rtt_p50", 0.5), ("rtt_p95", 0.95), ("rtt_p99", 0.99)] {
            t.push(
                name,
                ColumnData::F64(fl.iter().map(|f| f.rtts.quantile_secs(q)).collect()),
            );
        }
        t.push("rtt_samples", s(|f| f.rtts.count()));
        t
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
        handover_table(self.handovers.iter().map(|h| {
            let p = &h.plan;
            (link_name(&self.sc.links[p.link], p.link), &p.spec, p.time)
        }))
    }

    fn link_table(&self) -> Table {
        let dirs: Vec<(&LinkCounters, Settings)> = self
            .net
            .dirs
            .iter()
            .map(|d| (d.counters(), d.settings_at(self.now)))
            .collect();
        let waits: Vec<&Histogram> = self.net.dirs.iter().map(|d| d.waits()).collect();
        link_table(&self.sc, &self.topo, &dirs, Some(&waits))
    }
}
