//! Compiling a scenario into what a driver runs: each link direction's
//! initial settings, loss model, outage windows, traces and ARQ; the changes
//! to come, in the order they apply; the routes of every flow and where the
//! handoffs of multi-homed nodes switch them. Both drivers use it: the
//! simulator builds its network from it, the emulator runs the clock-free
//! [`Link`] of every direction ([`link_models`]) and switches the routes at
//! the handoffs' instants ([`route_switches`]).
//!
//! Two kinds of handover compile here:
//! * a link's **handover** (DCNET 2016's model, [`LinkHandoverPlan`]): the
//!   path stays, its link changes in place: an outage plus a switch to new
//!   settings. One at a fixed time compiles into a schedule entry at T for
//!   both directions and an outage window [T, T + HT), so it inherits their
//!   documented effect on queued and in-flight packets; one at `"steady"`
//!   is decided by the driver during the run;
//! * a node's **handoff** (MobiWac 2009's model, [`NodeHandoffPlan`]): the
//!   node moves from one access link to another, so the routes change. A
//!   make-before-break handoff leaves the old link up; a break-before-make
//!   one takes the old link down until the node comes back to it (what it
//!   holds is lost, unless `held = "delivered"`) and keeps the new one down
//!   for the disconnection. Both compile into outage windows and a route
//!   switch per flow and side, so both engine modes apply them identically.

use crate::link::{
    outage_windows, Arq, CellReplay, CsvTrace, DelayInterpolation, LeoPlan, Link, LossModel,
    MahimahiTrace, Measured, Opportunities, Outages, Quantity, Settings, SizeDelays, Stepped,
    TrainTrace,
};
use crate::rng::{Rng, Stream};
use crate::scenario::{
    detached_links, handoff_order, link_index, Direction, Held, LinkHandoverSpec, LinkHandoverTime,
    NodeHandoffKind, NodeHandoffSpec, QdiscSpec, Scenario, ScenarioError, ScheduleEntry,
};
use crate::tables::NodeHandoffRecord;
use crate::topology::{DirId, Topology};
use wavelab_tcp::{Duration, Instant};

/// `d` after the start of the run, as an instant.
pub fn at(d: Duration) -> Instant {
    Instant::from_nanos(d.as_nanos())
}

/// The switch of a link handover, as a schedule entry for both directions.
pub fn switch_entry(h: &LinkHandoverSpec, when: Duration) -> ScheduleEntry {
    ScheduleEntry {
        at: when,
        direction: Direction::Both,
        rate: h.rate,
        delay: h.delay,
        queue: h.queue,
        loss: h.loss,
    }
}

/// Something scheduled: a change of a link's settings, or a node's handoff.
#[derive(Clone, Debug)]
pub struct Change {
    /// When it applies.
    pub at: Instant,
    /// What it changes.
    pub what: ChangeKind,
}

/// What a [`Change`] changes.
#[derive(Clone, Debug)]
pub enum ChangeKind {
    /// Link `link`'s settings.
    Link {
        /// The link's index.
        link: usize,
        /// The settings it takes.
        entry: ScheduleEntry,
    },
    /// The routes, at node handoff number `.0` (an index into the compiled
    /// handoffs).
    NodeHandoff(usize),
}

impl Change {
    /// Changes at one instant run in this order: the links' settings first
    /// (in file order), then the handoffs (which read the links as they are
    /// at that instant).
    pub fn rank(&self) -> (Instant, u8) {
        (
            self.at,
            matches!(self.what, ChangeKind::NodeHandoff(_)) as u8,
        )
    }
}

/// A node handoff of the scenario, compiled: when, between which access
/// links, and the route switches it makes.
#[derive(Clone, Debug)]
pub struct NodeHandoffPlan {
    /// What the scenario says.
    pub spec: NodeHandoffSpec,
    /// When it happens.
    pub at: Instant,
    /// The old access link.
    pub from: usize,
    /// The new access link.
    pub to: usize,
    /// The route switches: flow, side (0 data, 1 ACKs), route number.
    pub switches: Vec<(usize, usize, usize)>,
}

impl NodeHandoffPlan {
    /// The flows it moves, in order.
    pub fn moved(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.switches.iter().map(|s| s.0).collect();
        v.dedup();
        v
    }
}

/// A link handover of the scenario, compiled: its link, what it switches
/// to, and when (known here for a fixed time; a `"steady"` one is decided
/// by the driver during the run).
#[derive(Clone, Debug)]
pub struct LinkHandoverPlan {
    /// The link's index.
    pub link: usize,
    /// What the scenario says.
    pub spec: LinkHandoverSpec,
    /// When it happens, if known before the run.
    pub time: Option<Instant>,
}

/// A link direction as compiled: its initial settings, loss model and
/// outage windows, its ARQ and Mahimahi trace (the stepped model only), its
/// CSV traces, and whether it reorders (the stepped model only).
pub struct DirectionModel {
    /// Initial settings.
    pub settings: Settings,
    /// Random loss.
    pub loss: LossModel,
    /// Outage windows known before the run.
    pub outages: Outages,
    /// Link-layer ARQ.
    pub arq: Option<Arq>,
    /// A Mahimahi delivery-opportunity trace.
    pub trace: Option<Opportunities>,
    /// CellReplay's replay (its heavy trace is `trace`'s file).
    pub cellreplay: Option<CellReplay>,
    /// CSV traces of rate, delay and loss.
    pub measured: Measured,
    /// Packets may overtake each other when the delay drops.
    pub reorder: bool,
    /// Its queue discipline.
    pub qdisc: QdiscSpec,
}

impl DirectionModel {
    /// True if only the stepped model runs it (ARQ, a Mahimahi trace,
    /// reordering or a queue discipline other than drop-tail).
    pub fn stepped_only(&self) -> bool {
        self.arq.is_some()
            || self.trace.is_some()
            || self.cellreplay.is_some()
            || self.reorder
            || !self.qdisc.is_drop_tail()
    }
}

/// Every link direction compiled (direction `2 i` is link `i` forward,
/// `2 i + 1` reverse), the scheduled changes (the links' and the handoffs',
/// in the order they apply) and the link handovers.
pub struct CompiledLinks {
    /// The directions.
    pub dirs: Vec<DirectionModel>,
    /// The changes, in the order they apply ([`Change::rank`]).
    pub changes: Vec<Change>,
    /// The link handovers, in file order.
    pub handovers: Vec<LinkHandoverPlan>,
}

/// Refuses what the wall-clock drivers cannot run: link-layer ARQ,
/// Mahimahi traces, reordering, and (unless `allow_qdisc`) queue
/// disciplines, each an error naming its field.
fn check_wall_clock(sc: &Scenario, allow_qdisc: bool) -> Result<(), ScenarioError> {
    sc.validate()?;
    for (i, l) in sc.links.iter().enumerate() {
        let qdisc = |d: &Option<QdiscSpec>| !d.as_ref().unwrap_or(&l.qdisc).is_drop_tail();
        let stepped_only = [
            l.arq.is_some(),
            l.forward.arq.is_some(),
            l.reverse.arq.is_some(),
            l.forward.cellreplay_train.is_some(),
            l.reverse.cellreplay_train.is_some(),
            l.forward.trace.is_some(),
            l.reverse.trace.is_some(),
            l.forward.reorder,
            l.reverse.reorder,
            !allow_qdisc && qdisc(&l.forward.qdisc),
            !allow_qdisc && qdisc(&l.reverse.qdisc),
        ];
        if let Some(k) = stepped_only.iter().position(|&a| a) {
            let field = [
                "arq",
                "forward.arq",
                "reverse.arq",
                "forward.cellreplay_train",
                "reverse.cellreplay_train",
                "forward.trace",
                "reverse.trace",
                "forward.reorder",
                "reverse.reorder",
                "qdisc",
                "qdisc",
            ][k];
            let what = match k {
                0..3 => {
                    "link-layer ARQ runs in the simulator's event-driven link model only; the \
                     clock-free model has no ARQ yet"
                }
                3..5 => {
                    "CellReplay's replay runs in the simulator's event-driven link model only; \
                     the clock-free model has no CellReplay yet"
                }
                5..7 => {
                    "a Mahimahi trace runs in the simulator's event-driven link model only; the \
                     clock-free model has no Mahimahi traces yet (CSV rate, delay and loss traces \
                     it has)"
                }
                7..9 => {
                    "reordering runs in the simulator's event-driven link model only; the \
                     clock-free model's pipe is first in, first out"
                }
                _ => {
                    "a queue discipline other than drop_tail runs in the event-driven link \
                     model only; the clock-free model is drop-tail"
                }
            };
            return Err(ScenarioError::at(format!("links[{i}].{field}"), what));
        }
    }
    Ok(())
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
    check_wall_clock(sc, false)?;
    Ok(build_wall_clock_links::<()>(sc)?
        .into_iter()
        .map(|l| match l {
            WallClockLink::ClockFree(l) => l,
            WallClockLink::Stepped { .. } => unreachable!("queue disciplines were refused"),
        })
        .collect())
}

/// A link direction as a wall-clock driver runs it.
// built once per run: the variants' sizes do not matter
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum WallClockLink<T> {
    /// Drop-tail: the clock-free model, whose packets' fates are known when
    /// they are offered.
    ClockFree(Link),
    /// A queue discipline: the stepped model, whose discipline decides at
    /// the head of the queue; the driver holds its events and applies its
    /// scheduled `changes` (in order) at their instants.
    Stepped {
        /// The direction.
        link: Box<Stepped<T>>,
        /// Its scheduled changes, in the order they apply.
        changes: Vec<(Instant, ScheduleEntry)>,
    },
}

/// [`link_models`] with queue disciplines: a direction that runs one is the
/// stepped model ([`Stepped`]) with the discipline seeded as in a
/// simulation, the others the clock-free model. This is what the emulator
/// runs.
pub fn wall_clock_links<T: Copy>(sc: &Scenario) -> Result<Vec<WallClockLink<T>>, ScenarioError> {
    check_wall_clock(sc, true)?;
    build_wall_clock_links(sc)
}

/// The directions of [`wall_clock_links`], once the scenario was checked.
fn build_wall_clock_links<T: Copy>(sc: &Scenario) -> Result<Vec<WallClockLink<T>>, ScenarioError> {
    let (_, handoffs) = compile_routes(sc, &sc.topology());
    let c = compile_links(sc, &handoffs)?;
    Ok(c.dirs
        .into_iter()
        .enumerate()
        .map(|(d, m)| {
            let changes = timeline(&c.changes, d);
            if m.qdisc.is_drop_tail() {
                return WallClockLink::ClockFree(
                    Link::new(m.settings, m.loss, m.outages, changes).with_measured(m.measured),
                );
            }
            let link = Stepped::new(m.settings, m.loss, m.outages)
                .with_measured(m.measured)
                .with_qdisc(&m.qdisc, Rng::derive(sc.seed, Stream::LinkQdisc(d as u32)));
            WallClockLink::Stepped {
                link: Box::new(link),
                changes,
            }
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
    let (routes, handoffs) = compile_routes(sc, &sc.topology());
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

/// The node handoffs of a run of `sc` on another clock (the emulator) that
/// reached `end`, as rows of the handoffs table: a handoff at or before
/// `end` happened; none notified a sender (the kernel's TCP takes no
/// notifications) or measured a transfer.
pub fn node_handoffs_until(sc: &Scenario, end: Instant) -> Vec<NodeHandoffRecord> {
    let (_, handoffs) = compile_routes(sc, &sc.topology());
    expand_switches(handoffs, sc)
        .iter()
        .map(|h| NodeHandoffRecord::new(sc, h, (h.at <= end).then_some(h.at), 0, &[]))
        .collect()
}

/// The path the LEO model of link `i` of `sc` draws (its intervals and
/// outages), if it has one: what its directions run, from the link's own
/// random stream.
pub fn leo_plan(sc: &Scenario, i: usize) -> Option<LeoPlan> {
    let spec = sc.links.get(i)?.leo?;
    let mut rng = Rng::derive(sc.seed, Stream::LinkLeo(i as u32));
    Some(spec.plan(at(sc.duration), &mut rng))
}

/// Compiles every link direction, the changes to come and the link
/// handovers, with the outage windows the node handoffs put on the links.
/// The trace files are read again (validation read them too): a file changed
/// since into one that is not a trace is an error naming its field, not a
/// panic.
pub fn compile_links(
    sc: &Scenario,
    handoffs: &[NodeHandoffPlan],
) -> Result<CompiledLinks, ScenarioError> {
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
        let leo = l.leo.zip(leo_plan(sc, i));
        if let Some((_, plan)) = &leo {
            windows.extend(plan.outages.iter().copied());
        }
        for h in &l.handovers {
            let time = match h.at {
                LinkHandoverTime::At(t) => {
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
                LinkHandoverTime::Steady => None,
            };
            handovers.push(LinkHandoverPlan {
                link: i,
                spec: h.clone(),
                time,
            });
        }
        let outages = Outages::new(windows);
        for (k, (side, ov)) in [("forward", &l.forward), ("reverse", &l.reverse)]
            .into_iter()
            .enumerate()
        {
            let dir = (2 * i + k) as u32;
            let at_field = |field: &str| format!("links[{i}].{side}.{field}");
            let heavy = ov
                .trace
                .as_ref()
                .map(|f| MahimahiTrace::load(f))
                .transpose()
                .map_err(|e| ScenarioError::at(at_field("trace"), e.to_string()))?;
            let (trace, cellreplay) = match (heavy, &ov.cellreplay_train) {
                (Some(heavy), Some(f)) => {
                    let trains = TrainTrace::load(f).map_err(|e| {
                        ScenarioError::at(at_field("cellreplay_train"), e.to_string())
                    })?;
                    let sizes = ov
                        .cellreplay_size_delay
                        .as_ref()
                        .map(|f| SizeDelays::load(f))
                        .transpose()
                        .map_err(|e| {
                            ScenarioError::at(at_field("cellreplay_size_delay"), e.to_string())
                        })?;
                    let idle = ov.cellreplay_idle.unwrap_or(Duration::ZERO);
                    (None, Some(CellReplay::new(trains, heavy, sizes, idle)))
                }
                (heavy, _) => (heavy.map(Opportunities::new), None),
            };
            let series = |field: &str, file: &Option<String>, what: Quantity| {
                file.as_ref()
                    .map(|f| CsvTrace::load(f, what))
                    .transpose()
                    .map_err(|e| ScenarioError::at(at_field(field), e.to_string()))
            };
            let (loss, measured) = match &leo {
                // the LEO model's series and loss (validation refused every
                // other source of them)
                Some((spec, plan)) => (
                    if k == 0 {
                        spec.downlink_loss
                    } else {
                        spec.uplink_loss
                    },
                    Measured::new(
                        Some(plan.rate_trace(k)),
                        Some(plan.delay_trace(spec)),
                        None,
                        DelayInterpolation::Linear,
                    ),
                ),
                None => (
                    ov.loss.unwrap_or(l.loss),
                    Measured::new(
                        series("rate_trace", &ov.rate_trace, Quantity::Rate)?,
                        ov.delay_trace
                            .as_ref()
                            .map(|f| CsvTrace::load_delay(f, ov.delay_trace_format))
                            .transpose()
                            .map_err(|e| {
                                ScenarioError::at(at_field("delay_trace"), e.to_string())
                            })?,
                        series("loss_trace", &ov.loss_trace, Quantity::Loss)?,
                        ov.delay_interpolation,
                    ),
                ),
            };
            dirs.push(DirectionModel {
                settings: Settings {
                    rate: ov.rate.unwrap_or(l.rate),
                    delay: ov.delay.unwrap_or(l.delay),
                    limit: ov.queue.unwrap_or(l.queue),
                },
                loss: LossModel::new(loss, Rng::derive(sc.seed, Stream::LinkLoss(dir))),
                outages: outages.clone(),
                arq: ov.arq.as_ref().or(l.arq.as_ref()).cloned().map(Arq::new),
                trace,
                cellreplay,
                measured,
                reorder: ov.reorder,
                qdisc: ov.qdisc.clone().unwrap_or_else(|| l.qdisc.clone()),
            });
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
            what: ChangeKind::NodeHandoff(i),
        });
    }
    // stable: file order among equal times, handoffs after links
    changes.sort_by_key(Change::rank);
    Ok(CompiledLinks {
        dirs,
        changes,
        handovers,
    })
}

/// Direction `d`'s scheduled changes, in order.
pub fn timeline(changes: &[Change], d: usize) -> Vec<(Instant, ScheduleEntry)> {
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
pub type Routes = [Vec<Vec<DirId>>; 2];

/// Each flow spec's routes, and the handoffs (in file order) with their
/// route switches given per flow spec ([`expand_switches`] turns them into
/// switches of the flows after replicas are expanded). A flow has a route
/// per attachment of the multi-homed nodes ([`detached_links`]); a handoff
/// switches the flows whose route differs after it.
pub fn compile_routes(sc: &Scenario, topo: &Topology) -> (Vec<Routes>, Vec<NodeHandoffPlan>) {
    let states = detached_links(sc);
    let mut routes = Vec::with_capacity(sc.flows.len());
    // per flow spec, per state: the route number of each side
    let mut by_state: Vec<Vec<[usize; 2]>> = Vec::with_capacity(sc.flows.len());
    for f in &sc.flows {
        let mut r: Routes = Default::default();
        let mut numbers = Vec::with_capacity(states.len());
        for detached in &states {
            let (data, acks) = topo.flow_routes(&f.from, &f.to, f.path.as_deref(), detached);
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
    let mut handoffs: Vec<NodeHandoffPlan> = sc
        .handoffs
        .iter()
        .map(|h| NodeHandoffPlan {
            spec: h.clone(),
            at: at(h.at),
            from: link_index(sc, &h.from).expect("validated"),
            to: link_index(sc, &h.to).expect("validated"),
            switches: Vec::new(),
        })
        .collect();
    for (k, &i) in handoff_order(sc).iter().enumerate() {
        for (spec, numbers) in by_state.iter().enumerate() {
            if sc.flows[spec].mptcp.is_some() {
                // its subflows are pinned to access links: no switches
                continue;
            }
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
pub fn expand_switches(mut handoffs: Vec<NodeHandoffPlan>, sc: &Scenario) -> Vec<NodeHandoffPlan> {
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
        if h.kind != NodeHandoffKind::BreakBeforeMake {
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
