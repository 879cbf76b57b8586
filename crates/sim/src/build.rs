//! Building a simulation from a scenario: link directions in the mode they
//! run in, routes, flows with their endpoints, the changes and handovers to
//! come, and the first events.

use crate::endpoints::{Flow, Wake};
use crate::engine::{Event, EventQueue};
use crate::handover::{at, switch_entry, Change, ChangeKind, Handoff, Handover};
use crate::link::{
    outage_windows, Arq, CsvTrace, Link, LossModel, MahimahiTrace, Measured, Opportunities,
    Outages, Quantity, Settings, Stepped,
};
use crate::net::{Dir, Net};
use crate::notices::Notices;
use crate::recorder::Recorder;
use crate::rng::{Rng, Stream};
use crate::scenario::{
    detached_links, flow_name, handoff_order, link_index, HandoffKind, HandoverTime, Held,
    Scenario, ScenarioError, ScheduleEntry,
};
use crate::sim::{sync_period, Simulation};
use crate::tables::series::{QueueSeries, Series};
use crate::tables::Table;
use crate::topology::{DirId, Topology};
use wavelab_tcp::{Cc, CongestionControl, Instant, Receiver, Sender, SeqNum};

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
        sc.check_simulable()?;
        let topo = Topology::new(&sc);
        let (routes, handoffs) = compile_routes(&sc, &topo);
        let handoffs = expand_switches(handoffs, &sc);
        let Compiled {
            dirs,
            changes,
            handovers,
        } = compile_links(&sc, &handoffs);
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
            .map(|(d, (settings, loss, outages, wireless))| {
                // ARQ, Mahimahi traces and reordering run in the stepped
                // model only
                let stepped_only =
                    wireless.arq.is_some() || wireless.trace.is_some() || wireless.reorder;
                if stepped_only || reference || decided_live[d / 2] {
                    let mut s =
                        Stepped::new(settings, loss, outages).with_measured(wireless.measured);
                    if let Some(arq) = wireless.arq {
                        s = s.with_arq(arq);
                    }
                    if let Some(trace) = wireless.trace {
                        s = s.with_trace(trace);
                    }
                    if wireless.reorder {
                        s = s.reordering();
                    }
                    return Dir::stepped(s);
                }
                let timeline = timeline(&changes, d);
                Dir::timed(
                    Link::new(settings, loss, outages, timeline).with_measured(wireless.measured),
                )
            })
            .collect();

        let mut flows = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
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
                    name: flow_name(f, i, k),
                    algorithm: f.cc.name(),
                    from: f.from.clone(),
                    to: f.to.clone(),
                    sender: Sender::new(f.tcp.clone(), cc, iss),
                    receiver: Receiver::new(f.tcp.clone(), riss),
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
                });
            }
        }

        let end = at(sc.duration);
        let mut q = EventQueue::default();
        q.push(Instant::ZERO, Event::Sample(0));
        for (i, c) in changes.iter().enumerate() {
            if c.at <= end {
                q.push(c.at, Event::Change(i as u32));
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
        let net = Net::new(dirs, flows.iter().map(|f| f.routes.clone()).collect());
        let rec = Recorder::new(flows.iter().map(|f| f.log).collect());
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
            log_limit: crate::limits::MAX_LOG_ROWS,
            stopped: None,
            histories: Default::default(),
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
        let mut rng = Rng::derive(self.sc.seed, Stream::FlowIsn(flow as u32));
        let iss = SeqNum(rng.next_u64() as u32);
        f.algorithm = cc.name();
        f.sender = Sender::new(f.sender.config().clone(), cc, iss);
        self.series = Series::new(self.flows.iter().map(|f| f.sender.cc().metric_names()));
        Ok(())
    }
}

/// The clock-free model ([`Link`]) of every link direction of a scenario
/// (direction `2 i` is link `i` forward, `2 i + 1` reverse), with every
/// change and outage window known before the run: schedules, handovers at
/// a time, the outage windows of break-before-make handoffs; seeded as in a
/// simulation. This is what a driver on the wall clock runs (with the
/// routes switching at the handoffs' instants). A handover at `"steady"` is
/// decided during the run: its direction's model has no change for it.
///
/// CSV traces of a direction's rate, delay and loss are in it. Link-layer
/// ARQ, Mahimahi traces and reordering are not yet: a scenario with `arq`,
/// `trace` or `reorder = true` on a link is an error naming it.
pub fn link_models(sc: &Scenario) -> Result<Vec<Link>, ScenarioError> {
    sc.validate()?;
    for (i, l) in sc.links.iter().enumerate() {
        let stepped_only = [
            l.arq.is_some(),
            l.forward.arq.is_some(),
            l.reverse.arq.is_some(),
            l.forward.trace.is_some(),
            l.reverse.trace.is_some(),
            l.forward.reorder,
            l.reverse.reorder,
        ];
        if let Some(k) = stepped_only.iter().position(|&a| a) {
            let field = [
                "arq",
                "forward.arq",
                "reverse.arq",
                "forward.trace",
                "reverse.trace",
                "forward.reorder",
                "reverse.reorder",
            ][k];
            let what = match k {
                0..3 => {
                    "link-layer ARQ runs in the simulator's event-driven link model only; the \
                     clock-free model has no ARQ yet"
                }
                3..5 => {
                    "a Mahimahi trace runs in the simulator's event-driven link model only; the \
                     clock-free model has no Mahimahi traces yet (CSV rate, delay and loss traces \
                     it has)"
                }
                _ => {
                    "reordering runs in the simulator's event-driven link model only; the \
                     clock-free model's pipe is first in, first out"
                }
            };
            return Err(ScenarioError::at(format!("links[{i}].{field}"), what));
        }
    }
    let (_, handoffs) = compile_routes(sc, &Topology::new(sc));
    let c = compile_links(sc, &handoffs);
    Ok(c.dirs
        .into_iter()
        .enumerate()
        .map(|(d, (settings, loss, outages, wireless))| {
            Link::new(settings, loss, outages, timeline(&c.changes, d))
                .with_measured(wireless.measured)
        })
        .collect())
}

/// The routes of every flow of a scenario (replicas expanded) and when the
/// handoffs of multi-homed nodes switch them, as a simulation computes them:
/// what a driver on the wall clock applies to real packets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RouteSwitches {
    /// Per flow, per side (0: data, 1: ACKs), the routes it uses (link
    /// directions), the initial one first.
    pub routes: Vec<[Vec<Vec<DirId>>; 2]>,
    /// `(instant, flow, side, route number)`: from that instant on the
    /// flow's packets of that side take that route; in time order, file
    /// order among equal instants.
    pub switches: Vec<(Instant, usize, usize, usize)>,
}

/// The flows' routes and the handoffs' switches of a scenario
/// ([`RouteSwitches`]).
pub fn route_switches(sc: &Scenario) -> Result<RouteSwitches, ScenarioError> {
    sc.validate()?;
    let (routes, handoffs) = compile_routes(sc, &Topology::new(sc));
    let handoffs = expand_switches(handoffs, sc);
    let per_flow = sc
        .flows
        .iter()
        .zip(routes)
        .flat_map(|(f, r)| std::iter::repeat_n(r, f.count as usize))
        .collect();
    let mut switches: Vec<_> = handoffs
        .iter()
        .flat_map(|h| h.switches.iter().map(|&(f, s, r)| (h.at, f, s, r)))
        .collect();
    switches.sort_by_key(|s| s.0); // stable
    Ok(RouteSwitches {
        routes: per_flow,
        switches,
    })
}

/// The handoffs table of a run of `sc` on another clock (the emulator) that
/// reached `end`: a handoff at or before `end` happened; none notified a
/// sender (the kernel's TCP takes no notifications).
pub fn handoff_table_until(sc: &Scenario, end: Instant) -> Table {
    let (_, handoffs) = compile_routes(sc, &Topology::new(sc));
    let mut handoffs = expand_switches(handoffs, sc);
    for h in &mut handoffs {
        h.done = h.at <= end;
    }
    crate::tables::handoff_table(sc, &handoffs)
}

/// Each link direction's initial settings, loss model, outage windows and
/// ARQ, the scheduled changes (the links' and the handoffs', in the engine's
/// order) and the handovers.
struct Compiled {
    dirs: Vec<(Settings, LossModel, Outages, Wireless)>,
    changes: Vec<Change>,
    handovers: Vec<Handover>,
}

/// What a direction has beyond its settings: its ARQ and Mahimahi trace
/// (stepped model only), its CSV traces, and whether it reorders (stepped
/// model only).
struct Wireless {
    arq: Option<Arq>,
    trace: Option<Opportunities>,
    measured: Measured,
    reorder: bool,
}

fn compile_links(sc: &Scenario, handoffs: &[Handoff]) -> Compiled {
    let mut dirs = Vec::with_capacity(sc.links.len() * 2);
    let mut changes = Vec::new();
    let mut handovers = Vec::new();
    let mut handoff_windows = handoff_outages(sc);
    for (i, l) in sc.links.iter().enumerate() {
        let mut windows: Vec<(Instant, Instant)> = l
            .outages
            .iter()
            .map(|o| (at(o.start), at(o.start + o.duration)))
            .collect();
        windows.append(&mut handoff_windows[i]);
        if let Some(p) = &l.outage_process {
            let mut rng = Rng::derive(sc.seed, Stream::LinkOutages(i as u32));
            windows.extend(outage_windows(p, at(sc.duration), &mut rng));
        }
        for h in &l.handovers {
            let time = match h.at {
                HandoverTime::At(t) => {
                    changes.push(Change {
                        at: at(t),
                        what: ChangeKind::Link {
                            link: i,
                            entry: switch_entry(h, t),
                        },
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
            let wireless = Wireless {
                arq: ov.arq.as_ref().or(l.arq.as_ref()).cloned().map(Arq::new),
                trace: ov
                    .trace
                    .as_ref()
                    .map(|f| Opportunities::new(MahimahiTrace::load(f).expect("validated"))),
                measured: Measured::new(
                    series(&ov.rate_trace, Quantity::Rate),
                    series(&ov.delay_trace, Quantity::Delay),
                    series(&ov.loss_trace, Quantity::Loss),
                    ov.delay_interpolation,
                ),
                reorder: ov.reorder,
            };
            dirs.push((settings, loss, outages.clone(), wireless));
        }
        for e in &l.schedule {
            changes.push(Change {
                at: at(e.at),
                what: ChangeKind::Link {
                    link: i,
                    entry: e.clone(),
                },
            });
        }
    }
    for (i, h) in handoffs.iter().enumerate() {
        changes.push(Change {
            at: h.at,
            what: ChangeKind::Handoff(i),
        });
    }
    // stable: file order among equal times, handoffs after links
    changes.sort_by_key(Change::rank);
    Compiled {
        dirs,
        changes,
        handovers,
    }
}

/// The CSV trace `file` (validated), if any.
fn series(file: &Option<String>, what: Quantity) -> Option<CsvTrace> {
    file.as_ref()
        .map(|f| CsvTrace::load(f, what).expect("validated"))
}

/// Direction `d`'s scheduled changes, in order.
fn timeline(changes: &[Change], d: usize) -> Vec<(Instant, ScheduleEntry)> {
    changes
        .iter()
        .filter_map(|c| match &c.what {
            ChangeKind::Link { link, entry } if *link == d / 2 && entry.direction.covers(d % 2) => {
                Some((c.at, entry.clone()))
            }
            _ => None,
        })
        .collect()
}

/// A flow's routes per side (data, ACKs), in the order they are first used.
type Routes = [Vec<Vec<DirId>>; 2];

/// Each flow spec's routes, and the handoffs (in file order) with their
/// route switches given per flow spec (`expand_switches` turns them into
/// switches of the flows after replicas are expanded). A flow has a route
/// per attachment of the multi-homed nodes ([`detached_links`]); a handoff
/// switches the flows whose route differs after it.
fn compile_routes(sc: &Scenario, topo: &Topology) -> (Vec<Routes>, Vec<Handoff>) {
    let states = detached_links(sc);
    let mut routes = Vec::with_capacity(sc.flows.len());
    // per flow spec, per state: the route number of each side
    let mut by_state: Vec<Vec<[usize; 2]>> = Vec::with_capacity(sc.flows.len());
    for f in &sc.flows {
        let mut r: Routes = Default::default();
        let mut numbers = Vec::with_capacity(states.len());
        for detached in &states {
            let (data, acks) = topo.flow_routes(f, detached);
            let pair = [data, acks];
            let mut n = [0; 2];
            for (side, route) in pair.into_iter().enumerate() {
                n[side] = match r[side].iter().position(|x| *x == route) {
                    Some(k) => k,
                    None => {
                        r[side].push(route);
                        r[side].len() - 1
                    }
                };
            }
            numbers.push(n);
        }
        routes.push(r);
        by_state.push(numbers);
    }
    let mut handoffs: Vec<Handoff> = sc
        .handoffs
        .iter()
        .map(|h| Handoff {
            spec: h.clone(),
            at: at(h.at),
            from: link_index(sc, &h.from).expect("validated"),
            to: link_index(sc, &h.to).expect("validated"),
            switches: Vec::new(),
            done: false,
            notified: 0,
            transfers: Vec::new(),
        })
        .collect();
    for (k, &i) in handoff_order(sc).iter().enumerate() {
        for (spec, numbers) in by_state.iter().enumerate() {
            let (before, after) = (numbers[k], numbers[k + 1]);
            for (side, (b, a)) in before.into_iter().zip(after).enumerate() {
                if a != b {
                    handoffs[i].switches.push((spec, side, a));
                }
            }
        }
    }
    (routes, handoffs)
}

/// Turns switches given per flow spec into switches of every replica.
fn expand_switches(mut handoffs: Vec<Handoff>, sc: &Scenario) -> Vec<Handoff> {
    // the first expanded flow of each spec
    let mut first = Vec::with_capacity(sc.flows.len());
    let mut n = 0;
    for f in &sc.flows {
        first.push(n);
        n += f.count as usize;
    }
    for h in &mut handoffs {
        h.switches = h
            .switches
            .iter()
            .flat_map(|&(spec, side, route)| {
                let base = first[spec];
                (0..sc.flows[spec].count as usize).map(move |k| (base + k, side, route))
            })
            .collect();
        h.switches.sort();
    }
    handoffs
}

/// The outage windows the handoffs put on each link: at a break-before-make
/// handoff at T with disconnection D, the new link is down during [T, T + D)
/// and, unless `held = "delivered"`, the old link from T until the node
/// comes back to it.
fn handoff_outages(sc: &Scenario) -> Vec<Vec<(Instant, Instant)>> {
    let mut windows = vec![Vec::new(); sc.links.len()];
    let order = handoff_order(sc);
    for (k, &i) in order.iter().enumerate() {
        let h = &sc.handoffs[i];
        if h.kind != HandoffKind::BreakBeforeMake {
            continue;
        }
        let t = at(h.at);
        let (from, to) = (
            link_index(sc, &h.from).expect("validated"),
            link_index(sc, &h.to).expect("validated"),
        );
        if !h.disconnection().is_zero() {
            windows[to].push((t, t + h.disconnection()));
        }
        if h.held() == Held::Lost {
            let back = order[k + 1..]
                .iter()
                .map(|&j| &sc.handoffs[j])
                .find(|g| g.node == h.node && g.to == h.from)
                .map_or(Instant::MAX, |g| at(g.at));
            windows[from].push((t, back));
        }
    }
    windows
}
