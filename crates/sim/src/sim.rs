//! The simulation: builds links and flows from a scenario and drives the TCP
//! endpoints with a virtual clock.
//!
//! After every call into an endpoint the engine drains its transmissions and
//! reads `poll_timeout()`; a wake-up is scheduled only when the deadline moved
//! earlier, with a generation number so that stale wake-ups are skipped when
//! popped. A wake-up that fires early (the deadline moved later) costs one
//! no-op `handle_timeout` call and is then rescheduled.

use crate::capture::{Capture, TapPoint};
use crate::engine::{Event, EventQueue};
use crate::link::{Admit, DropCause, LinkDir, LossModel, Outages};
use crate::packet::{Arena, Packet, PacketId};
use crate::rng::{Rng, Stream};
use crate::scenario::{
    link_name, Direction, HandoverSpec, HandoverTime, Scenario, ScenarioError, ScheduleEntry,
};
use crate::series::{QueueSeries, Series};
use crate::topology::{DirId, Topology};
use crate::trace::{event, kind_code, ColumnData, PacketEvent, PacketLog, Table};
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

/// A simulation in progress.
#[derive(Debug)]
pub struct Simulation {
    sc: Scenario,
    now: Instant,
    end: Instant,
    interval: Duration,
    q: EventQueue,
    arena: Arena,
    dirs: Vec<LinkDir>,
    topo: Topology,
    pub(crate) flows: Vec<Flow>,
    changes: Vec<Change>,
    handovers: Vec<Handover>,
    series: Series,
    queues: QueueSeries,
    log: PacketLog,
    hops: u64,
    scratch: Vec<Transmit>,
    /// Packet captures (`capture.rs`); empty unless asked for.
    pub(crate) captures: Vec<Capture>,
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
                dirs.push(LinkDir::new(
                    ov.rate.unwrap_or(l.rate),
                    ov.delay.unwrap_or(l.delay),
                    ov.queue.unwrap_or(l.queue),
                    loss,
                    outages.clone(),
                ));
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
        q.push(Instant::ZERO, Event::Sample);
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
        Ok(Simulation {
            interval: sc.output.interval,
            sc,
            now: Instant::ZERO,
            end,
            q,
            arena: Arena::default(),
            dirs,
            topo,
            flows,
            changes,
            handovers,
            series,
            queues: QueueSeries::default(),
            log: PacketLog::default(),
            hops: 0,
            scratch: Vec::new(),
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
        self.hops
    }

    /// Runs every event up to `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Instant) {
        let until = t.min(self.end);
        while let Some((when, ev)) = self.q.pop_until(until) {
            debug_assert!(when >= self.now, "time never runs backwards");
            self.now = when;
            self.handle(ev);
        }
        self.now = self.now.max(until);
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::TxDone(d) => self.on_tx_done(d),
            Event::Arrive(d) => self.on_arrive(d),
            Event::Wake { ep, gen } => self.on_wake(ep, gen),
            Event::FlowStart(f) => self.on_flow_start(f as usize),
            Event::FlowStop(f) => {
                let f = f as usize;
                self.flows[f].sender.finish_now();
                self.drain_sender(f);
            }
            Event::LinkChange(i) => self.on_link_change(i as usize),
            Event::Sample => self.on_sample(),
        }
    }

    // ----- links -------------------------------------------------------------

    fn enqueue(&mut self, dir: DirId, id: PacketId) {
        let size = self.arena.get(id).size;
        match self.dirs[dir as usize].admit(id, size) {
            Admit::Start => self.start_tx(dir, id),
            Admit::Queued => {}
            Admit::Dropped => self.drop_packet(id, dir, DropCause::Queue),
        }
    }

    fn start_tx(&mut self, dir: DirId, id: PacketId) {
        let now = self.now;
        let p = self.arena.get_mut(id);
        p.tx_start = now;
        let done = now + self.dirs[dir as usize].rate.tx_time(p.size as u64);
        self.q.push(done, Event::TxDone(dir));
    }

    fn on_tx_done(&mut self, dir: DirId) {
        let d = &mut self.dirs[dir as usize];
        let id = d.busy.take().expect("a packet is in service");
        let size = self.arena.get(id).size as u64;
        d.counters.sent_packets += 1;
        d.counters.sent_bytes += size;
        self.hops += 1;
        for c in &mut self.captures {
            c.record(self.now, TapPoint::LinkTx(dir), self.arena.get(id));
        }
        if d.loss.lose() {
            d.counters.dropped[DropCause::Random as usize] += 1;
            self.drop_packet(id, dir, DropCause::Random);
        } else {
            let was_empty = d.pipe.is_empty();
            let arrival = d.propagate(id, self.now);
            self.arena.get_mut(id).arrival = arrival;
            if was_empty {
                self.q.push(arrival, Event::Arrive(dir));
            }
        }
        if let Some(next) = self.dirs[dir as usize].next_in_queue() {
            self.start_tx(dir, next);
        }
    }

    fn on_arrive(&mut self, dir: DirId) {
        let d = &mut self.dirs[dir as usize];
        let id = d.pipe.pop_front().expect("a packet is propagating");
        if let Some(&next) = d.pipe.front() {
            self.q
                .push(self.arena.get(next).arrival, Event::Arrive(dir));
        }
        let p = *self.arena.get(id);
        if d.outages.overlaps(p.tx_start, self.now) {
            d.counters.dropped[DropCause::Outage as usize] += 1;
            self.drop_packet(id, dir, DropCause::Outage);
            return;
        }
        d.counters.delivered_packets += 1;
        d.counters.delivered_bytes += p.size as u64;
        let flow = &self.flows[p.flow as usize];
        let route = if p.to_receiver {
            &flow.data_route
        } else {
            &flow.ack_route
        };
        let hop = p.hop as usize + 1;
        if hop < route.len() {
            let next = route[hop];
            self.arena.get_mut(id).hop = hop as u16;
            self.enqueue(next, id);
        } else {
            self.arena.free(id);
            self.deliver(p);
        }
    }

    fn drop_packet(&mut self, id: PacketId, dir: DirId, cause: DropCause) {
        let p = *self.arena.get(id);
        self.arena.free(id);
        if self.flows[p.flow as usize].log {
            self.log.push(PacketEvent {
                time: self.now.as_secs_f64(),
                flow: p.flow,
                event: event::DROP,
                seq: p.offset,
                len: p.seg.len,
                is_ack: !p.to_receiver,
                kind: kind_code(p.kind),
                link: dir as i64,
                cause: cause as u8,
            });
        }
    }

    fn on_link_change(&mut self, i: usize) {
        let (link, entry) = (self.changes[i].link, self.changes[i].entry.clone());
        self.apply(link, &entry);
    }

    /// Applies a change to link `link`'s directions.
    fn apply(&mut self, link: usize, entry: &ScheduleEntry) {
        let dirs: &[usize] = match entry.direction {
            Direction::Both => &[0, 1],
            Direction::Forward => &[0],
            Direction::Reverse => &[1],
        };
        for &k in dirs {
            let d = &mut self.dirs[2 * link + k];
            if let Some(r) = entry.rate {
                d.rate = r;
            }
            if let Some(delay) = entry.delay {
                d.delay = delay;
            }
            if let Some(q) = entry.queue {
                d.limit = q;
            }
            if let Some(l) = entry.loss {
                d.loss.set(l);
            }
        }
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
            let capacity = self.dirs[dir as usize].rate.as_bps() as f64 * mss / (mss + 40.0);
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
                        self.dirs[2 * link + k]
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
        self.drain_sender(f);
    }

    fn deliver(&mut self, p: Packet) {
        let f = p.flow as usize;
        let now = self.now;
        let flow = &mut self.flows[f];
        if flow.log {
            self.log.push(PacketEvent {
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
            });
        }
        if p.to_receiver {
            flow.receiver.handle_segment(now, &p.seg, None);
            self.drain_receiver(f);
        } else {
            for c in &mut self.captures {
                c.record(now, TapPoint::SenderIn, &p);
            }
            flow.sender.handle_segment(now, &p.seg);
            self.drain_sender(f);
        }
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

    fn drain_sender(&mut self, f: usize) {
        self.drain(f, SENDER);
    }

    fn drain_receiver(&mut self, f: usize) {
        self.drain(f, RECEIVER);
    }

    /// Sends everything endpoint `side` of flow `f` has to send, then schedules
    /// its next wake-up.
    fn drain(&mut self, f: usize, side: usize) {
        let mut out = std::mem::take(&mut self.scratch);
        let now = self.now;
        let flow = &mut self.flows[f];
        let next = if side == SENDER {
            out.extend(std::iter::from_fn(|| flow.sender.poll_transmit(now)));
            flow.sender.poll_timeout()
        } else {
            out.extend(std::iter::from_fn(|| flow.receiver.poll_transmit(now)));
            flow.receiver.poll_timeout()
        };
        for t in out.drain(..) {
            self.emit(f, side == SENDER, t);
        }
        self.scratch = out;
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
        let flow = &self.flows[f];
        if flow.log && from_sender && matches!(t.kind, TxKind::Data | TxKind::Retransmission) {
            self.log.push(PacketEvent {
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
        let route = if from_sender {
            &flow.data_route
        } else {
            &flow.ack_route
        };
        let first = route[0];
        let id = self.arena.alloc(Packet {
            flow: f as u32,
            to_receiver: from_sender,
            hop: 0,
            size: t.segment.ip_len() as u32,
            tx_start: self.now,
            arrival: self.now,
            kind: t.kind,
            offset: t.offset,
            seg: t.segment,
        });
        if from_sender {
            for c in &mut self.captures {
                c.record(self.now, TapPoint::SenderOut, self.arena.get(id));
            }
        }
        self.enqueue(first, id);
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
            for (i, d) in self.dirs.iter().enumerate() {
                self.queues.record(now, i as u32, d);
            }
        }
        let next = now + self.interval;
        if next <= self.end {
            self.q.push(next, Event::Sample);
        }
    }

    /// The results so far (callable at any time; a partial run gives partial results).
    pub fn results(&self) -> Results {
        Results {
            series: self.series.to_table(),
            queues: self.queues.to_table(),
            flows: self.flow_table(),
            links: self.link_table(),
            packets: self.log.to_table(),
            handovers: self.handover_table(),
            run: RunStats {
                simulated: self.now - Instant::ZERO,
                events: self.q.processed(),
                packet_hops: self.hops,
                peak_packets: self.arena.capacity() as u64,
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
        let n = self.dirs.len();
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
            ColumnData::U64(self.dirs.iter().map(|d| d.rate.as_bps()).collect()),
        );
        t.push(
            "delay",
            ColumnData::F64(self.dirs.iter().map(|d| d.delay.as_secs_f64()).collect()),
        );
        let c = |g: fn(&LinkDir) -> u64| ColumnData::U64(self.dirs.iter().map(g).collect());
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
