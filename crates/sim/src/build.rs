//! Building a simulation from a scenario: link directions in the mode they
//! run in, routes, flows with their endpoints, the changes and handovers to
//! come, and the first events.

use crate::endpoints::{Flow, Wake};
use crate::engine::{Event, EventQueue};
use crate::handover::{at, switch_entry, Change, Handover};
use crate::link::{Link, LossModel, Outages, Settings, Stepped};
use crate::net::{Dir, Net};
use crate::recorder::Recorder;
use crate::rng::{Rng, Stream};
use crate::scenario::{HandoverTime, Scenario, ScenarioError};
use crate::sim::{sync_period, Simulation};
use crate::tables::series::{QueueSeries, Series};
use crate::topology::Topology;
use wavelab_tcp::{CongestionControl, Instant, Receiver, Sender, SeqNum};

impl Simulation {
    /// Builds the network and the flows of a (validated) scenario.
    pub fn new(sc: Scenario) -> Result<Self, ScenarioError> {
        Self::build(sc, false)
    }

    /// The same simulation with every link direction in reference mode
    /// (explicit end-of-serialisation and arrival events, see
    /// [`crate::net`]): slower, and bit-identical. The tests use it as the
    /// oracle of the virtual-time mode.
    pub fn new_reference(sc: Scenario) -> Result<Self, ScenarioError> {
        Self::build(sc, true)
    }

    fn build(sc: Scenario, reference: bool) -> Result<Self, ScenarioError> {
        sc.validate()?;
        let topo = Topology::new(&sc);
        let mut dirs = Vec::with_capacity(sc.links.len() * 2);
        let mut changes = Vec::new();
        let mut handovers = Vec::new();
        for (i, l) in sc.links.iter().enumerate() {
            let mut windows: Vec<(Instant, Instant)> = l
                .outages
                .iter()
                .map(|o| (at(o.start), at(o.start + o.duration)))
                .collect();
            for h in &l.handovers {
                let time = match h.at {
                    HandoverTime::At(t) => {
                        changes.push(Change {
                            at: at(t),
                            link: i,
                            entry: switch_entry(h, t),
                        });
                        if !h.outage.is_zero() {
                            windows.push((at(t), at(t + h.outage)));
                        }
                        Some(at(t))
                    }
                    HandoverTime::Steady => None,
                };
                handovers.push(Handover {
                    link: i,
                    spec: h.clone(),
                    time,
                    history: Default::default(),
                });
            }
            let outages = Outages::new(windows);
            for (k, ov) in [&l.forward, &l.reverse].into_iter().enumerate() {
                let dir = (2 * i + k) as u32;
                let loss = LossModel::new(
                    ov.loss.unwrap_or(l.loss),
                    Rng::derive(sc.seed, Stream::LinkLoss(dir)),
                );
                let settings = Settings {
                    rate: ov.rate.unwrap_or(l.rate),
                    delay: ov.delay.unwrap_or(l.delay),
                    limit: ov.queue.unwrap_or(l.queue),
                };
                dirs.push((settings, loss, outages.clone()));
            }
            for e in &l.schedule {
                changes.push(Change {
                    at: at(e.at),
                    link: i,
                    entry: e.clone(),
                });
            }
        }
        changes.sort_by_key(|c| c.at); // stable: file order among equal times

        // Links whose handover is decided during the run stay in reference
        // mode; the others run in virtual time with their changes known.
        let decided_live: Vec<bool> = sc
            .links
            .iter()
            .map(|l| l.handovers.iter().any(|h| h.at == HandoverTime::Steady))
            .collect();
        let dirs: Vec<Dir> = dirs
            .into_iter()
            .enumerate()
            .map(|(d, (settings, loss, outages))| {
                let link = d / 2;
                if reference || decided_live[link] {
                    return Dir::stepped(Stepped::new(settings, loss, outages));
                }
                let timeline = changes
                    .iter()
                    .filter(|c| c.link == link && c.entry.direction.covers(d % 2))
                    .map(|c| (c.at, c.entry.clone()))
                    .collect();
                Dir::timed(Link::new(settings, loss, outages, timeline))
            })
            .collect();

        let mut flows = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            let (data_route, ack_route) = match &f.path {
                Some(p) => {
                    let back: Vec<String> = p.iter().rev().cloned().collect();
                    (
                        topo.route_along(p).expect("validated"),
                        topo.route_along(&back).expect("validated"),
                    )
                }
                None => (
                    topo.shortest_route(&f.from, &f.to).expect("validated"),
                    topo.shortest_route(&f.to, &f.from).expect("validated"),
                ),
            };
            let base = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
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
                flows.push(Flow {
                    name: if f.count > 1 {
                        format!("{base}#{k}")
                    } else {
                        base.clone()
                    },
                    algorithm: f.cc.name(),
                    from: f.from.clone(),
                    to: f.to.clone(),
                    sender: Sender::new(f.tcp.clone(), cc, iss),
                    receiver: Receiver::new(f.tcp.clone(), riss),
                    data_route: data_route.clone(),
                    ack_route: ack_route.clone(),
                    start: at(f.start),
                    stop: f.stop.map(at),
                    size: f.size.map(|s| s.0),
                    started: false,
                    log: f.log_packets,
                    wake: [Wake::default(); 2],
                });
            }
        }

        let end = at(sc.duration);
        let mut q = EventQueue::default();
        q.push(Instant::ZERO, Event::Sample(0));
        for (i, c) in changes.iter().enumerate() {
            if c.at <= end {
                q.push(c.at, Event::LinkChange(i as u32));
            }
        }
        for (i, f) in flows.iter().enumerate() {
            q.push(f.start, Event::FlowStart(i as u32));
            if let Some(s) = f.stop {
                if s <= end {
                    q.push(s, Event::FlowStop(i as u32));
                }
            }
        }
        let series = Series::new(flows.iter().map(|f| f.sender.cc().metric_names()));
        let sync_every = sync_period(dirs.len());
        let net = Net::new(
            dirs,
            flows
                .iter()
                .map(|f| [vec![f.data_route.clone()], vec![f.ack_route.clone()]])
                .collect(),
        );
        let rec = Recorder::new(flows.iter().map(|f| f.log).collect());
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
            series,
            queues: QueueSeries::default(),
            rec,
            samples: 0,
            next_sync: sync_every,
            sync_every,
        })
    }
}
