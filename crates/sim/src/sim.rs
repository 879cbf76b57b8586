//! The simulation: builds links and flows from a scenario and drives the TCP
//! endpoints with a virtual clock.
//!
//! After every call into an endpoint the engine drains its transmissions and
//! reads `poll_timeout()`; a wake-up is scheduled only when the deadline moved
//! earlier, with a generation number so that stale wake-ups are skipped when
//! popped. A wake-up that fires early (the deadline moved later) costs one
//! no-op `handle_timeout` call and is then rescheduled.

use crate::capture::{Capture, TapPoint};
use crate::engine::{key, Event, EventQueue};
use crate::link::{DropCause, LossModel, Outages};
use crate::net::{Ctx, Delivery, Dir, Net, Settings};
use crate::packet::Packet;
use crate::rng::{Rng, Stream};
use crate::scenario::{
    link_name, Direction, HandoverSpec, HandoverTime, Scenario, ScenarioError, ScheduleEntry,
};
use crate::series::{QueueSeries, Series};
use crate::topology::{DirId, Topology};
use crate::trace::{event, kind_code, ColumnData, Fnv, PacketEvent, PacketLog, Table};
use wavelab_tcp::{
    CongestionControl, Duration, Instant, Receiver, Sender, SeqNum, Transmit, TxKind,
};

#[derive(Clone, Copy, Debug, Default)]
struct Wake {
    scheduled: Option<Instant>,
    gen: u32,
}

/// A flow's endpoints and routes.
#[derive(Debug)]
pub(crate) struct Flow {
    pub name: String,
    pub algorithm: &'static str,
    pub from: String,
    pub to: String,
    pub sender: Sender,
    pub receiver: Receiver,
    data_route: Vec<DirId>,
    ack_route: Vec<DirId>,
    pub start: Instant,
    pub stop: Option<Instant>,
    pub size: Option<u64>,
    pub started: bool,
    log: bool,
    wake: [Wake; 2],
}

#[derive(Clone, Debug)]
struct Change {
    at: Instant,
    link: usize,
    entry: ScheduleEntry,
}

/// A handover of the scenario, and when it happened.
#[derive(Clone, Debug)]
struct Handover {
    link: usize,
    spec: HandoverSpec,
    /// When it happened (known at construction for a fixed time).
    time: Option<Instant>,
    /// Goodput history of the watched flow, for the steady-state rule.
    history: std::collections::VecDeque<(Instant, u64)>,
}

/// Figures about the run itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Simulated time reached.
    pub simulated: Duration,
    /// Events processed.
    pub events: u64,
    /// Packet transmissions on links (one per packet per hop).
    pub packet_hops: u64,
    /// Most packets alive at once.
    pub peak_packets: u64,
}

/// Everything a run produced, as tables.
#[derive(Clone, Debug)]
pub struct Results {
    /// Per-flow time series, one row per flow per sample.
    pub series: Table,
    /// Queue lengths per link direction per sample.
    pub queues: Table,
    /// Per-flow counters.
    pub flows: Table,
    /// Per-link-direction counters.
    pub links: Table,
    /// The packet log of flows with `log_packets`.
    pub packets: Table,
    /// When each handover happened.
    pub handovers: Table,
    /// Figures about the run.
    pub run: RunStats,
}

impl Results {
    /// A fingerprint of every table (series, queues, flows, links, packet log,
    /// handovers; not the run's own figures, which count events and may change
    /// with the engine's internals). Equal digests mean the same simulated
    /// behaviour, bit for bit.
    pub fn digest(&self) -> u64 {
        let mut h = Fnv::default();
        for t in [
            &self.series,
            &self.queues,
            &self.flows,
            &self.links,
            &self.packets,
            &self.handovers,
        ] {
            h.mix(t.digest());
        }
        h.0
    }
}

/// A simulation in progress.
#[derive(Debug)]
pub struct Simulation {
    sc: Scenario,
    now: Instant,
    end: Instant,
    interval: Duration,
    q: EventQueue,
    net: Net,
    topo: Topology,
    pub(crate) flows: Vec<Flow>,
    changes: Vec<Change>,
    handovers: Vec<Handover>,
    series: Series,
    queues: QueueSeries,
    log: PacketLog,
    /// Canonical key of the event being processed, and the rows it wrote.
    cur_key: u128,
    cur_rows: u32,
    samples: u64,
    /// The event count at which the network is next synced even if nothing
    /// reads its counters, and the events between two such syncs
    /// ([`sync_period`]).
    next_sync: u64,
    sync_every: u64,
    /// Packet captures (`capture.rs`); empty unless asked for.
    pub(crate) captures: Vec<Capture>,
}

/// Events between two syncs of the network that nothing asked for, at
/// least: a virtual-time direction keeps every packet it admitted until a
/// sync finds the clock past it, so without them (queue sampling off, or a
/// long sampling interval) its memory would grow with the run. A sync only
/// moves the counters to the clock and forgets what is behind it, so when it
/// happens changes no result. Packet captures write out what is before the
/// clock at the same points (else they would hold a whole `run()`'s records
/// until its end).
const SYNC_EVERY: u64 = 1 << 10;

/// Events between two unrequested syncs with `dirs` link directions: at
/// least [`SYNC_EVERY`], and 16 per direction so that a sync, which visits
/// every direction, stays a small share of the work.
fn sync_period(dirs: usize) -> u64 {
    SYNC_EVERY.max(16 * dirs as u64)
}

/// Endpoint sides (index into `Flow::wake`; endpoint id = 2 * flow + side).
const SENDER: usize = 0;
const RECEIVER: usize = 1;

fn at(d: Duration) -> Instant {
    Instant::from_nanos(d.as_nanos())
}

/// The switch of a handover, as a schedule entry for both directions.
fn switch_entry(h: &HandoverSpec, when: Duration) -> ScheduleEntry {
    ScheduleEntry {
        at: when,
        direction: Direction::Both,
        rate: h.rate,
        delay: h.delay,
        queue: h.queue,
        loss: h.loss,
    }
}

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
                let timeline = (!reference && !decided_live[link]).then(|| {
                    changes
                        .iter()
                        .filter(|c| c.link == link && c.entry.direction.covers(d % 2))
                        .map(|c| (c.at, c.entry.clone()))
                        .collect()
                });
                Dir::new(settings, loss, outages, timeline)
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
                .map(|f| [f.data_route.clone(), f.ack_route.clone()])
                .collect(),
            flows.iter().map(|f| f.log).collect(),
        );
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
            log: PacketLog::default(),
            cur_key: 0,
            cur_rows: 0,
            samples: 0,
            next_sync: sync_every,
            sync_every,
            captures: Vec::new(),
        })
    }

    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
    /// Simulated time reached.
    pub fn now(&self) -> Instant {
        self.now
    }
    /// Simulated time at which the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }
    /// True once the run reached its end.
    pub fn is_done(&self) -> bool {
        self.now >= self.end
    }
    /// The sender of flow `i` (after replicas are expanded).
    pub fn sender(&self, i: usize) -> &Sender {
        &self.flows[i].sender
    }
    /// The receiver of flow `i`.
    pub fn receiver(&self, i: usize) -> &Receiver {
        &self.flows[i].receiver
    }
    /// Number of flows (after replicas are expanded).
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }
    /// Packet transmissions on links so far.
    pub fn packet_hops(&self) -> u64 {
        self.net.hops()
    }

    /// Runs every event up to `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Instant) {
        let until = t.min(self.end);
        while let Some((when, ev, key)) = self.q.pop_until(until) {
            debug_assert!(when >= self.now, "time never runs backwards");
            self.now = when;
            self.cur_key = key;
            self.cur_rows = 0;
            self.handle(ev);
            if self.q.processed() >= self.next_sync {
                self.periodic_sync();
            }
        }
        self.now = self.now.max(until);
        self.net.sync(self.now);
        for c in &mut self.captures {
            c.flush(self.now);
        }
    }

    /// The sync nothing asked for, every [`sync_period`] events: the
    /// network forgets what the clock has passed, the captures write it out.
    #[cold]
    #[inline(never)]
    fn periodic_sync(&mut self) {
        self.net.sync(self.now);
        for c in &mut self.captures {
            c.flush_before(self.now);
        }
        self.next_sync = self.q.processed() + self.sync_every;
    }

    /// Makes the unrequested syncs come every `events` events (at least
    /// one) instead of every [`SYNC_EVERY`] or more. For tests: when a sync
    /// happens must change no result, and a short period puts syncs between
    /// simultaneous events.
    #[doc(hidden)]
    pub fn set_sync_period(&mut self, events: u64) {
        self.sync_every = events.max(1);
        self.next_sync = self.q.processed() + self.sync_every;
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxDone { dir, .. } => {
                let (net, mut ctx) = self.net_ctx();
                net.on_tx_done(&mut ctx, dir);
            }
            Event::Arrive { dir, .. } => {
                let (net, mut ctx) = self.net_ctx();
                if let Some(d) = net.on_arrive(&mut ctx, dir) {
                    self.deliver(d);
                }
            }
            Event::Wake { ep, gen } => self.on_wake(ep, gen),
            Event::FlowStart(f) => self.on_flow_start(f as usize),
            Event::FlowStop(f) => {
                let f = f as usize;
                self.flows[f].sender.finish_now();
                self.drain(f, SENDER);
            }
            Event::LinkChange(i) => self.on_link_change(i as usize),
            Event::Sample(_) => self.on_sample(),
        }
    }

    // ----- links -------------------------------------------------------------

    /// The network and the context of the event being processed.
    fn net_ctx(&mut self) -> (&mut Net, Ctx<'_>) {
        (
            &mut self.net,
            Ctx {
                q: &mut self.q,
                log: &mut self.log,
                now: self.now,
                key: self.cur_key,
                rows: &mut self.cur_rows,
                captures: &mut self.captures,
            },
        )
    }

    /// Writes a packet-log row as the current event's next row.
    fn log_row(&mut self, e: PacketEvent) {
        self.log.push_next(self.cur_key, &mut self.cur_rows, e);
    }

    fn on_link_change(&mut self, i: usize) {
        let (link, entry) = (self.changes[i].link, self.changes[i].entry.clone());
        self.apply(link, &entry);
    }

    /// Applies a change to link `link`'s directions.
    fn apply(&mut self, link: usize, entry: &ScheduleEntry) {
        self.net.apply(link, entry);
    }

    /// Checks the steady-state rule of pending `"steady"` handovers at a sample.
    fn check_steady_handovers(&mut self) {
        let now = self.now;
        for h in 0..self.handovers.len() {
            let ho = &self.handovers[h];
            if ho.time.is_some() || ho.spec.at != HandoverTime::Steady {
                continue;
            }
            let rule = ho.spec.steady.clone();
            let f = rule.flow as usize;
            let delivered = self.flows[f].receiver.delivered();
            let link = ho.link;
            // the old link's direction the flow's data crosses
            let dir = self.flows[f]
                .data_route
                .iter()
                .copied()
                .find(|&d| d as usize / 2 == link)
                .unwrap_or((2 * link) as DirId);
            let mss = self.sc_flow_mss(f) as f64;
            let rate = self.net.dirs[dir as usize].settings_at(now).rate;
            let capacity = rate.as_bps() as f64 * mss / (mss + 40.0);
            let ho = &mut self.handovers[h];
            ho.history.push_back((now, delivered));
            while ho.history.len() > 1 && now - ho.history[1].0 >= rule.window {
                ho.history.pop_front();
            }
            let (t0, d0) = ho.history[0];
            let span = now - t0;
            let steady = now >= at(rule.earliest)
                && span >= rule.window
                && (delivered - d0) as f64 * 8.0 / span.as_secs_f64() >= rule.fraction * capacity;
            let overdue = rule.latest.is_some_and(|l| now >= at(l));
            if steady || overdue {
                ho.time = Some(now);
                let spec = ho.spec.clone();
                self.apply(link, &switch_entry(&spec, now - Instant::ZERO));
                if !spec.outage.is_zero() {
                    for k in 0..2 {
                        self.net.dirs[2 * link + k]
                            .outages
                            .insert(now, now + spec.outage);
                    }
                }
            }
        }
    }

    /// The configured MSS of flow `f`.
    fn sc_flow_mss(&self, f: usize) -> u32 {
        self.flows[f].sender.config().mss
    }

    // ----- endpoints ----------------------------------------------------------

    fn on_flow_start(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        flow.started = true;
        match flow.size {
            Some(n) => {
                flow.sender.write_virtual(n);
                flow.sender.close();
            }
            None => flow.sender.write_unlimited(),
        }
        self.drain(f, SENDER);
    }

    /// Hands the packet `d` to its endpoint, then lets the endpoint send.
    fn deliver(&mut self, d: Delivery) {
        let p = self.net.delivered(d);
        let f = p.flow as usize;
        let now = self.now;
        if self.flows[f].log {
            let e = PacketEvent {
                time: now.as_secs_f64(),
                flow: p.flow,
                event: if p.to_receiver {
                    event::DELIVER
                } else {
                    event::ACK
                },
                seq: p.offset,
                len: p.seg.len,
                is_ack: !p.to_receiver,
                kind: kind_code(p.kind),
                link: -1,
                cause: 255,
            };
            // (not log_row: `p` borrows the network)
            self.log.push_next(self.cur_key, &mut self.cur_rows, e);
        }
        let flow = &mut self.flows[f];
        let to_receiver = p.to_receiver;
        if to_receiver {
            flow.receiver.handle_segment(now, &p.seg, None);
        } else {
            for c in &mut self.captures {
                c.record(self.cur_key, TapPoint::SenderIn, p);
            }
            flow.sender.handle_segment(now, &p.seg);
        }
        // the packet is read where it waited; it leaves before anything else
        // enters the network
        self.net.release(d);
        self.drain(f, if to_receiver { RECEIVER } else { SENDER });
    }

    fn on_wake(&mut self, ep: u32, gen: u32) {
        let f = (ep / 2) as usize;
        let side = (ep % 2) as usize;
        let w = &mut self.flows[f].wake[side];
        if w.gen != gen {
            return; // superseded
        }
        w.scheduled = None;
        let now = self.now;
        if side == SENDER {
            self.flows[f].sender.handle_timeout(now);
        } else {
            self.flows[f].receiver.handle_timeout(now);
        }
        self.drain(f, side);
    }

    /// Sends everything endpoint `side` of flow `f` has to send, then schedules
    /// its next wake-up.
    fn drain(&mut self, f: usize, side: usize) {
        let now = self.now;
        // each segment goes into the network as it is polled (the endpoint
        // does not see the network, so the order is the same as polling all
        // first)
        loop {
            let flow = &mut self.flows[f];
            let t = if side == SENDER {
                flow.sender.poll_transmit(now)
            } else {
                flow.receiver.poll_transmit(now)
            };
            let Some(t) = t else { break };
            self.emit(f, side == SENDER, t);
        }
        let flow = &self.flows[f];
        let next = if side == SENDER {
            flow.sender.poll_timeout()
        } else {
            flow.receiver.poll_timeout()
        };
        self.reschedule(f, side, next);
    }

    fn reschedule(&mut self, f: usize, side: usize, next: Option<Instant>) {
        let Some(t) = next else { return };
        let t = t.max(self.now);
        let w = &mut self.flows[f].wake[side];
        if w.scheduled.is_none_or(|s| t < s) {
            w.gen = w.gen.wrapping_add(1);
            w.scheduled = Some(t);
            self.q.push(
                t,
                Event::Wake {
                    ep: (2 * f + side) as u32,
                    gen: w.gen,
                },
            );
        }
    }

    fn emit(&mut self, f: usize, from_sender: bool, t: Transmit) {
        if self.flows[f].log
            && from_sender
            && matches!(t.kind, TxKind::Data | TxKind::Retransmission)
        {
            self.log_row(PacketEvent {
                time: self.now.as_secs_f64(),
                flow: f as u32,
                event: if t.kind == TxKind::Data {
                    event::SEND
                } else {
                    event::RETRANSMIT
                },
                seq: t.offset,
                len: t.segment.len,
                is_ack: false,
                kind: kind_code(t.kind),
                link: -1,
                cause: 255,
            });
        }
        let mut p = Packet {
            flow: f as u32,
            to_receiver: from_sender,
            hop: 0,
            step: 0,
            n: 0,
            size: t.segment.ip_len() as u32,
            tx_start: self.now,
            arrival: self.now,
            kind: t.kind,
            offset: t.offset,
            seg: t.segment,
        };
        if from_sender {
            for c in &mut self.captures {
                c.record(self.cur_key, TapPoint::SenderOut, &p);
            }
        }
        let (net, mut ctx) = self.net_ctx();
        net.inject(&mut ctx, &mut p);
    }

    // ----- sampling and results ------------------------------------------------

    fn on_sample(&mut self) {
        self.check_steady_handovers();
        let now = self.now;
        for (i, f) in self.flows.iter().enumerate() {
            if f.started {
                self.series.record(now, i as u32, &f.sender, &f.receiver);
            }
        }
        if self.sc.output.queues {
            self.net.sync(now);
            for (i, d) in self.net.dirs.iter().enumerate() {
                let (packets, bytes) = d.queued();
                self.queues
                    .record(now, i as u32, packets, bytes, &d.counters);
            }
        }
        let next = now + self.interval;
        if next <= self.end {
            self.samples += 1;
            self.q.push(next, Event::Sample(self.samples));
        }
    }

    /// The results so far (callable at any time; a partial run gives partial results).
    pub fn results(&self) -> Results {
        Results {
            series: self.series.to_table(),
            queues: self.queues.to_table(),
            flows: self.flow_table(),
            links: self.link_table(),
            packets: self
                .log
                .to_table(key(self.now, &Event::Sample(u64::MAX >> 27))),
            handovers: self.handover_table(),
            run: RunStats {
                simulated: self.now - Instant::ZERO,
                events: self.q.processed(),
                packet_hops: self.net.hops(),
                peak_packets: self.net.peak,
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
        t
    }

    fn handover_table(&self) -> Table {
        let h = &self.handovers;
        let mut t = Table::default();
        t.push(
            "link",
            ColumnData::Str(
                h.iter()
                    .map(|x| link_name(&self.sc.links[x.link], x.link))
                    .collect(),
            ),
        );
        t.push(
            "planned",
            ColumnData::Str(
                h.iter()
                    .map(|x| match x.spec.at {
                        HandoverTime::At(d) => d.to_string(),
                        HandoverTime::Steady => "steady".to_string(),
                    })
                    .collect(),
            ),
        );
        t.push(
            "time",
            ColumnData::F64(
                h.iter()
                    .map(|x| x.time.map_or(f64::NAN, |t| t.as_secs_f64()))
                    .collect(),
            ),
        );
        t.push(
            "outage",
            ColumnData::F64(h.iter().map(|x| x.spec.outage.as_secs_f64()).collect()),
        );
        t
    }

    fn link_table(&self) -> Table {
        let dirs = &self.net.dirs;
        let n = dirs.len();
        let names: Vec<String> = (0..n)
            .map(|d| link_name(&self.sc.links[d / 2], d / 2))
            .collect();
        let node = |d: usize, end: usize| {
            let (a, b) = self.topo.ends(d as DirId);
            self.topo.nodes()[if end == 0 { a } else { b }].clone()
        };
        let mut t = Table::default();
        t.push("dir", ColumnData::U32((0..n as u32).collect()));
        t.push("link", ColumnData::Str(names));
        t.push(
            "direction",
            ColumnData::Str(
                (0..n)
                    .map(|d| if d % 2 == 0 { "forward" } else { "reverse" }.to_string())
                    .collect(),
            ),
        );
        t.push(
            "from",
            ColumnData::Str((0..n).map(|d| node(d, 0)).collect()),
        );
        t.push("to", ColumnData::Str((0..n).map(|d| node(d, 1)).collect()));
        t.push(
            "rate",
            ColumnData::U64(
                dirs.iter()
                    .map(|d| d.settings_at(self.now).rate.as_bps())
                    .collect(),
            ),
        );
        t.push(
            "delay",
            ColumnData::F64(
                dirs.iter()
                    .map(|d| d.settings_at(self.now).delay.as_secs_f64())
                    .collect(),
            ),
        );
        let c = |g: fn(&Dir) -> u64| ColumnData::U64(dirs.iter().map(g).collect());
        t.push("arrived", c(|d| d.counters.arrived));
        t.push("sent_packets", c(|d| d.counters.sent_packets));
        t.push("sent_bytes", c(|d| d.counters.sent_bytes));
        t.push("delivered_packets", c(|d| d.counters.delivered_packets));
        t.push("delivered_bytes", c(|d| d.counters.delivered_bytes));
        t.push(
            "dropped_queue",
            c(|d| d.counters.dropped[DropCause::Queue as usize]),
        );
        t.push(
            "dropped_random",
            c(|d| d.counters.dropped[DropCause::Random as usize]),
        );
        t.push(
            "dropped_outage",
            c(|d| d.counters.dropped[DropCause::Outage as usize]),
        );
        t.push("max_queue_packets", c(|d| d.counters.max_queue_packets));
        t.push("max_queue_bytes", c(|d| d.counters.max_queue_bytes));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DCNET path (8 Mbit/s, 240 ms, 100 packets) for `secs` seconds,
    /// with queue sampling on or off.
    fn dcnet(secs: u32, queues: bool) -> Scenario {
        let toml = format!(
            r#"
            name = "sync-bound"
            duration = "{secs}s"
            [output]
            interval = "{secs}s"
            queues = {queues}
            [[links]]
            between = ["s", "r1"]
            rate = "100Mbit/s"
            delay = "1ms"
            [[links]]
            between = ["r1", "r2"]
            rate = "8Mbit/s"
            delay = "240ms"
            queue = "100pkt"
            [[links]]
            between = ["r2", "d"]
            rate = "100Mbit/s"
            delay = "1ms"
            [[flows]]
            from = "s"
            to = "d"
            cc = "newreno"
            "#
        );
        Scenario::from_toml_str(&toml).expect("valid scenario")
    }

    /// With nothing reading the link counters during the run (queue
    /// sampling off, one sample at the end), the directions still forget
    /// the packets behind the clock, so their memory does not grow with the
    /// run; and the results are those of a run that samples its queues.
    #[test]
    fn fifos_stay_bounded_without_queue_sampling() {
        let mut sim = Simulation::new(dcnet(150, false)).expect("builds");
        sim.run();
        let quiet = sim.results();
        assert!(
            quiet.run.packet_hops > 400_000,
            "hops {}",
            quiet.run.packet_hops
        );
        // far fewer than the ~130,000 packets each data direction carried
        for cap in sim.net.fifo_capacities() {
            assert!(cap <= 1 << 16, "a fifo grew to {cap} entries");
        }
        let mut sampled = Simulation::new(dcnet(150, true)).expect("builds");
        sampled.run();
        let sampled = sampled.results();
        // (digests: the tables hold NaNs)
        for (a, b) in [
            (&quiet.links, &sampled.links),
            (&quiet.flows, &sampled.flows),
            (&quiet.series, &sampled.series),
        ] {
            assert_eq!(a.digest(), b.digest());
        }
    }
}
