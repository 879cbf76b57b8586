//! The wire thread: reads every packet the nodes' TUN devices give it,
//! passes it through the emulated links ([`crate::network`]), and writes it
//! to its destination's TUN device at its planned instant.
//!
//! # Timing
//!
//! The thread sleeps in `ppoll` (nanosecond timeout, timer slack 1 ns) until
//! a spin margin before the next deadline, or until a packet arrives, then
//! spins (polling the devices without sleeping) until the deadline. With
//! permission it runs under `SCHED_FIFO`. Every release records its planned
//! and actual instant; a packet read is stamped with the instant it was read,
//! after everything due before that instant was done, so each link direction
//! is offered packets in time order.

use crate::clock::Clock;
use crate::network::{Network, PacketId, Report};
use crate::packet::{decrement_ttl, Ipv4, Placed, Stream};
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use tun_rs::SyncDevice;
use wavelab_sim::capture::{Capture, TapPoint};
use wavelab_sim::link::{LinkCounters, Settings};
use wavelab_sim::tables::series::QueueSeries;
use wavelab_sim::tables::{event, PacketEvent, PacketLog};
use wavelab_sim::topology::DirId;
use wavelab_tcp::{Duration, Instant, Segment};

/// No flow: a packet between two nodes that no flow of the scenario owns.
pub const NO_FLOW: u32 = u32::MAX;

/// Packets read from one device before the others get their turn.
const BATCH: usize = 32;

/// One release: a packet handed to its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// When the model said it arrives.
    pub planned: Instant,
    /// When it was written to the destination's device.
    pub actual: Instant,
    /// The last link direction it crossed.
    pub dir: DirId,
    /// Its flow, or [`NO_FLOW`].
    pub flow: u32,
    /// IP bytes.
    pub size: u32,
}

/// Source address, destination address, source port, destination port.
pub type FourTuple = ([u8; 4], [u8; 4], u16, u16);

/// How the routes are chosen: per flow and side, else per pair of nodes.
#[derive(Clone, Debug, Default)]
pub struct Routing {
    /// Node (device) of each address.
    pub nodes: HashMap<[u8; 4], usize>,
    /// Flow and side (true: data to the receiver) of each TCP four-tuple.
    pub flows: HashMap<FourTuple, (u32, bool)>,
    /// Route of each flow's data and ACKs (indices into the network's routes).
    pub flow_routes: Vec<[u32; 2]>,
    /// Route between each ordered pair of nodes, for packets of no flow.
    pub pair_routes: HashMap<(usize, usize), u32>,
    /// Routers each route crosses (its directions minus one).
    pub route_hops: Vec<u8>,
}

/// What the wire thread does besides moving packets.
#[derive(Clone, Copy, Debug)]
pub struct WireConfig {
    /// When the run ends.
    pub end: Instant,
    /// Sampling interval of the queue series.
    pub interval: Duration,
    /// Whether to sample the queues.
    pub queues: bool,
    /// How long before a deadline the thread stops sleeping and spins.
    pub spin: Duration,
    /// `SCHED_FIFO` priority to ask for, if any.
    pub realtime: Option<i32>,
}

/// What the wire thread measured.
#[derive(Debug)]
pub struct WireOutput {
    /// Every release, in order.
    pub releases: Vec<Release>,
    /// The queue series.
    pub queues: QueueSeries,
    /// The packet log of the logged flows.
    pub log: PacketLog,
    /// Each direction's counters at the end, and its settings then.
    pub links: Vec<(LinkCounters, Settings)>,
    /// Packets read from the devices.
    pub read: u64,
    /// Packets read that go nowhere (no emulated node has their address),
    /// dropped.
    pub stray: u64,
    /// Writes to a device that failed.
    pub write_errors: u64,
    /// Reads from a device that failed (other than finding nothing).
    pub read_errors: u64,
    /// Most packets held at once.
    pub peak_packets: u64,
    /// Whether real-time priority was granted, or why not.
    pub realtime: Result<i32, String>,
    /// When the thread stopped.
    pub stopped_at: Instant,
    /// The captures, flushed.
    pub captures: Vec<Capture>,
}

/// A packet's buffer and what the thread knows of it.
#[derive(Clone, Debug, Default)]
struct Slot {
    buf: Vec<u8>,
    len: usize,
    flow: u32,
    to_receiver: bool,
    /// The destination node.
    to: usize,
    placed: Placed,
}

/// The wire thread's state.
pub struct Wire {
    network: Network,
    devices: Vec<SyncDevice>,
    routing: Routing,
    logged: Vec<bool>,
    streams: Vec<Stream>,
    slots: Vec<Slot>,
    free: Vec<PacketId>,
    mtu: usize,
    clock: Clock,
    config: WireConfig,
    out: WireOutput,
    reports: Vec<Report>,
    /// The instant the emulation reached (read by the progress bar).
    progress: Arc<AtomicU64>,
}

impl Wire {
    /// A wire thread's state: the network, each node's device (non-blocking),
    /// the routing, which flows are logged, and the captures.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        network: Network,
        devices: Vec<SyncDevice>,
        routing: Routing,
        logged: Vec<bool>,
        mtu: usize,
        clock: Clock,
        config: WireConfig,
        captures: Vec<Capture>,
        progress: Arc<AtomicU64>,
    ) -> Self {
        let flows = logged.len();
        Wire {
            network,
            devices,
            routing,
            logged,
            streams: vec![Stream::default(); flows],
            slots: Vec::new(),
            free: Vec::new(),
            mtu,
            clock,
            config,
            out: WireOutput {
                releases: Vec::new(),
                queues: QueueSeries::default(),
                log: PacketLog::default(),
                links: Vec::new(),
                read: 0,
                stray: 0,
                write_errors: 0,
                read_errors: 0,
                peak_packets: 0,
                realtime: Err("not asked for".into()),
                stopped_at: Instant::ZERO,
                captures,
            },
            reports: Vec::new(),
            progress,
        }
    }

    /// Runs until the end of the run or until `stop` is set.
    pub fn run(mut self, stop: &AtomicBool) -> WireOutput {
        self.out.realtime = match self.config.realtime {
            None => Err("not asked for (--no-realtime)".into()),
            Some(p) => crate::sys::set_fifo_priority(p)
                .map(|_| p)
                .map_err(|e| format!("SCHED_FIFO {p} refused: {e}")),
        };
        // failure leaves the default slack (50 us), which the spin margin covers
        let _ = nix::sys::prctl::set_timerslack(1);
        let end = self.config.end;
        let mut next_sample = Instant::ZERO;
        loop {
            let now = self.clock.now();
            self.progress.store(now.as_nanos(), Ordering::Relaxed);
            if now >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            self.due(now);
            while next_sample <= now {
                self.sample(next_sample);
                next_sample += self.config.interval;
            }
            let mut busy = false;
            for d in 0..self.devices.len() {
                for _ in 0..BATCH {
                    if !self.read(d) {
                        break;
                    }
                    busy = true;
                }
            }
            if busy {
                continue;
            }
            let next = [self.network.next_due(), Some(next_sample), Some(end)]
                .into_iter()
                .flatten()
                .min()
                .expect("the end is a deadline");
            let now = self.clock.now();
            let sleep = next.saturating_since(now).saturating_sub(self.config.spin);
            self.wait(sleep);
        }
        let stopped = self.clock.now().min(end);
        self.out.stopped_at = stopped;
        self.due(stopped);
        while next_sample <= stopped {
            self.sample(next_sample);
            next_sample += self.config.interval;
        }
        self.network.sync(stopped);
        self.out.links = (0..self.network.dirs())
            .map(|d| {
                let l = self.network.link(d as DirId);
                (l.counters().clone(), l.settings_at(stopped))
            })
            .collect();
        for c in &mut self.out.captures {
            c.flush(Instant::MAX);
        }
        self.out.peak_packets = self.network.peak;
        self.out
    }

    /// Sleeps up to `d` (nothing: polls once) or until a device is readable.
    fn wait(&self, d: Duration) {
        let mut fds: Vec<PollFd> = self
            .devices
            .iter()
            .map(|dev| PollFd::new(dev.as_fd(), PollFlags::POLLIN))
            .collect();
        let ns = d.as_nanos();
        let ts = TimeSpec::new((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64);
        let _ = ppoll(&mut fds, Some(ts), None);
    }

    /// Does everything due at or before `now`.
    fn due(&mut self, now: Instant) {
        let mut reports = std::mem::take(&mut self.reports);
        while self.network.pop_due(now, &mut reports) {
            for r in reports.drain(..) {
                self.report(r);
            }
        }
        self.reports = reports;
    }

    fn alloc(&mut self) -> PacketId {
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Slot {
                    buf: vec![0; self.mtu],
                    ..Slot::default()
                });
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    /// Reads one packet from device `d`; false if there was none.
    fn read(&mut self, d: usize) -> bool {
        let id = self.alloc();
        let slot = &mut self.slots[id as usize];
        let n = match self.devices[d].recv(&mut slot.buf) {
            Ok(n) => n,
            Err(e) => {
                self.free.push(id);
                if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted {
                    self.out.read_errors += 1;
                }
                return false;
            }
        };
        let at = self.clock.now();
        self.due(at);
        self.out.read += 1;
        self.ingress(at, d, id, n);
        true
    }

    /// Routes the packet in slot `id` (`n` bytes, read from node `from` at
    /// `at`) into the network.
    fn ingress(&mut self, at: Instant, from: usize, id: PacketId, n: usize) {
        let slot = &mut self.slots[id as usize];
        slot.len = n;
        let Some(ip) = Ipv4::parse(&slot.buf[..n]) else {
            self.out.stray += 1;
            self.free.push(id);
            return;
        };
        let Some(&to) = self.routing.nodes.get(&ip.dst) else {
            self.out.stray += 1;
            self.free.push(id);
            return;
        };
        let (flow, to_receiver) = ip
            .ports(&slot.buf[..n])
            .and_then(|(sp, dp)| self.routing.flows.get(&(ip.src, ip.dst, sp, dp)))
            .copied()
            .unwrap_or((NO_FLOW, true));
        let route = if flow == NO_FLOW {
            match self.routing.pair_routes.get(&(from, to)) {
                Some(&r) => r,
                None => {
                    self.out.stray += 1;
                    self.free.push(id);
                    return;
                }
            }
        } else {
            self.routing.flow_routes[flow as usize][!to_receiver as usize]
        };
        slot.flow = flow;
        slot.to_receiver = to_receiver;
        slot.to = to;
        if flow != NO_FLOW && self.logged[flow as usize] {
            if let Ok((_, _, seg, _)) = Segment::decode(&slot.buf[ip.header_len..n]) {
                let stream = &mut self.streams[flow as usize];
                slot.placed = if to_receiver {
                    stream.sent(&seg)
                } else {
                    stream.acked(&seg)
                };
                use wavelab_sim::tables::kind_code;
                use wavelab_tcp::TxKind;
                let k = slot.placed.kind;
                if to_receiver
                    && (k == kind_code(TxKind::Data) || k == kind_code(TxKind::Retransmission))
                {
                    let e = row(
                        at,
                        flow,
                        slot,
                        if k == kind_code(TxKind::Data) {
                            event::SEND
                        } else {
                            event::RETRANSMIT
                        },
                    );
                    self.out.log.push(key(at), 0, e);
                }
            }
        }
        decrement_ttl(&mut slot.buf[..n], self.routing.route_hops[route as usize]);
        if flow != NO_FLOW && to_receiver {
            let slot = &self.slots[id as usize];
            for c in &mut self.out.captures {
                c.record_ip(at, TapPoint::SenderOut, Some(flow), &slot.buf[..slot.len]);
            }
        }
        let mut reports = std::mem::take(&mut self.reports);
        self.network.inject(at, id, n as u32, route, &mut reports);
        for r in reports.drain(..) {
            self.report(r);
        }
        self.reports = reports;
    }

    fn report(&mut self, r: Report) {
        match r {
            Report::Transmitted {
                packet,
                dir,
                finish,
            } => {
                if !self.out.captures.is_empty() {
                    let s = &self.slots[packet as usize];
                    let flow = (s.flow != NO_FLOW).then_some(s.flow);
                    for c in &mut self.out.captures {
                        c.record_ip(finish, TapPoint::LinkTx(dir), flow, &s.buf[..s.len]);
                    }
                }
            }
            Report::Dropped {
                packet,
                dir,
                cause,
                at,
            } => {
                let s = &self.slots[packet as usize];
                if s.flow != NO_FLOW && self.logged[s.flow as usize] {
                    let mut e = row(at, s.flow, s, event::DROP);
                    e.link = dir as i64;
                    e.cause = cause as u8;
                    self.out.log.push(key(at), 0, e);
                }
                self.free.push(packet);
            }
            Report::Deliver { packet, dir, at } => self.release(packet, dir, at),
        }
    }

    /// Writes packet `id` to its destination's device now (it was due at
    /// `planned`).
    fn release(&mut self, id: PacketId, dir: DirId, planned: Instant) {
        let s = &self.slots[id as usize];
        let actual = self.clock.now();
        if self.devices[s.to].send(&s.buf[..s.len]).is_err() {
            self.out.write_errors += 1;
        }
        self.out.releases.push(Release {
            planned,
            actual,
            dir,
            flow: s.flow,
            size: s.len as u32,
        });
        if s.flow != NO_FLOW {
            if self.logged[s.flow as usize] {
                let e = row(
                    actual,
                    s.flow,
                    s,
                    if s.to_receiver {
                        event::DELIVER
                    } else {
                        event::ACK
                    },
                );
                self.out.log.push(key(actual), 0, e);
            }
            if !s.to_receiver {
                for c in &mut self.out.captures {
                    c.record_ip(actual, TapPoint::SenderIn, Some(s.flow), &s.buf[..s.len]);
                }
            }
        }
        self.free.push(id);
    }

    /// The queue series row of every direction at `t`; the captures write
    /// what is before it.
    fn sample(&mut self, t: Instant) {
        if self.config.queues {
            self.network.sync(t);
            for d in 0..self.network.dirs() {
                let l = self.network.link(d as DirId);
                let (packets, bytes) = l.queued();
                self.out
                    .queues
                    .record(t, d as u32, packets, bytes, l.counters());
            }
        }
        // nothing offered from now on ends its serialisation before the
        // earliest packet still propagating arrives
        let safe = self.network.next_due().map_or(t, |n| n.min(t));
        for c in &mut self.out.captures {
            c.flush(safe);
        }
    }
}

/// The canonical key of a packet-log row at `t` (rows of one instant keep
/// the order they were written in).
fn key(t: Instant) -> u128 {
    (t.as_nanos() as u128) << 64
}

/// A packet-log row for the packet in `s` at `t`.
fn row(t: Instant, flow: u32, s: &Slot, ev: u8) -> PacketEvent {
    PacketEvent {
        time: t.as_secs_f64(),
        flow,
        event: ev,
        seq: s.placed.offset,
        len: s.placed.len,
        is_ack: !s.to_receiver,
        kind: s.placed.kind,
        link: -1,
        cause: 255,
    }
}
