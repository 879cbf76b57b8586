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
use crate::packet::{decrement_ttl, set_ce, Ipv4, Placed, Stream};
use nix::poll::{ppoll, PollFd, PollFlags};
use nix::sys::time::TimeSpec;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use tun_rs::SyncDevice;
use wavelab_model::capture::{Capture, TapPoint};
use wavelab_model::flow_stats::FlowStats;
use wavelab_model::link::qdisc::flow_key;
use wavelab_model::link::{LinkCounters, Settings};
use wavelab_model::tables::series::QueueSeries;
use wavelab_model::tables::{event, PacketEvent, PacketLog};
use wavelab_model::topology::DirId;
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
    /// Flow and side of the packets between two addresses whatever their
    /// ports: the MPTCP subflows the kernel opens to or from a multi-homed
    /// node's address on another access link (their ports are the kernel's
    /// choice).
    pub pairs: HashMap<([u8; 4], [u8; 4]), (u32, bool)>,
    /// Route of each flow's data and ACKs (indices into the network's routes).
    pub flow_routes: Vec<[u32; 2]>,
    /// Route between each ordered pair of nodes, for packets of no flow.
    pub pair_routes: HashMap<(usize, usize), u32>,
    /// Routers each route crosses (its directions minus one).
    pub route_hops: Vec<u8>,
    /// The handoffs' switches of `flow_routes`: `(instant, flow, side,
    /// route)`, in time order; a packet read at or after the instant takes
    /// the new route (those already on their way keep theirs, as in a
    /// simulation).
    pub switches: Vec<(Instant, u32, usize, u32)>,
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
    /// Whether the devices were made with segmentation offload.
    pub offload: bool,
    /// The CPU to pin the thread to, if any.
    pub cpu: Option<usize>,
}

/// A growing list in fixed-size chunks: appending never moves what is
/// stored (a doubling `Vec` copies megabytes at once, which would stall
/// the wire thread for a millisecond).
#[derive(Debug)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new() }
    }
}

impl<T> Chunked<T> {
    const CHUNK: usize = 1 << 14;

    /// Appends `x`.
    #[inline]
    pub fn push(&mut self, x: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < Self::CHUNK => c.push(x),
            _ => {
                let mut c = Vec::with_capacity(Self::CHUNK);
                c.push(x);
                self.chunks.push(c);
            }
        }
    }

    /// Everything, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// What the wire thread measured.
#[derive(Debug)]
pub struct WireOutput {
    /// Every release, in order.
    pub releases: Chunked<Release>,
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
    /// Windows of 100 ms in which the thread gave up real-time priority to
    /// stay under the kernel's limit.
    pub demotions: u64,
    /// When the thread stopped.
    pub stopped_at: Instant,
    /// The captures, flushed.
    pub captures: Vec<Capture>,
    /// Each flow's data packets at the network (as a simulation counts
    /// them): sent when read from the sender's device, received when
    /// written to the receiver's, lost when a link drops them; the one-way
    /// delay from the one to the other.
    pub flow_stats: Vec<FlowStats>,
}

/// A packet's buffer and what the thread knows of it. With offload the
/// packet starts [`HEADROOM`] bytes into the buffer (room for the virtio-net
/// header the device reads and writes before each packet).
#[derive(Clone, Debug, Default)]
struct Slot {
    buf: Vec<u8>,
    len: usize,
    /// When it is due at its destination, and the last direction it crossed.
    planned: Instant,
    dir: DirId,
    flow: u32,
    to_receiver: bool,
    /// The destination node.
    to: usize,
    placed: Placed,
    /// When it was read from its sender's device.
    read_at: Instant,
}

/// Keeps the wire thread's use of real-time priority under the kernel's
/// limit. Linux lets real-time threads use `sched_rt_runtime_us` of every
/// `sched_rt_period_us` (950 ms of each second by default) and then stops
/// them until the period ends: a 50 ms stall. A thread that spins before
/// each deadline and does the packets' kernel work in its own system calls
/// can reach that at high rates, so the guard measures the thread's CPU
/// time in windows of 100 ms and, past 90 % of the limit's share, returns
/// it to normal priority (and stops it spinning) for the rest of the
/// window. Each such demotion is counted in the run's figures.
struct RtGuard {
    /// The granted priority (`None`: no real-time priority, no guard).
    priority: Option<i32>,
    /// CPU time the thread may use in a window under real-time priority.
    budget: u64,
    window_start: Instant,
    cpu_start: u64,
    next_check: Instant,
    demoted: bool,
    demotions: u64,
}

impl RtGuard {
    const WINDOW: u64 = 100_000_000;
    const CHECK_EVERY: u64 = 1_000_000;

    fn new(priority: Option<i32>) -> Self {
        let read = |k: &str| crate::netns::read_sysctl(k).ok()?.parse::<i64>().ok();
        let share = match (
            read("kernel.sched_rt_runtime_us"),
            read("kernel.sched_rt_period_us"),
        ) {
            (Some(r), Some(p)) if r >= 0 && p > 0 => r as f64 / p as f64,
            _ => 1.0, // no limit
        };
        RtGuard {
            priority,
            budget: (0.9 * share * Self::WINDOW as f64) as u64,
            window_start: Instant::ZERO,
            cpu_start: thread_cpu(),
            next_check: Instant::ZERO,
            demoted: false,
            demotions: 0,
        }
    }

    /// True while the thread runs at real-time priority (and may spin).
    fn check(&mut self, now: Instant) -> bool {
        if self.priority.is_none() || now < self.next_check {
            return !self.demoted && self.priority.is_some();
        }
        self.next_check = now + Duration::from_nanos(Self::CHECK_EVERY);
        let cpu = thread_cpu();
        if now.as_nanos() - self.window_start.as_nanos() >= Self::WINDOW {
            self.window_start = now;
            self.cpu_start = cpu;
            if self.demoted && crate::sys::set_fifo_priority(self.priority).is_ok() {
                self.demoted = false;
            }
        } else if !self.demoted
            && cpu - self.cpu_start > self.budget
            && crate::sys::set_fifo_priority(None).is_ok()
        {
            self.demoted = true;
            self.demotions += 1;
        }
        !self.demoted
    }
}

/// The calling thread's CPU time (ns).
fn thread_cpu() -> u64 {
    crate::clock::clock_ns(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).unwrap_or(0)
}

/// Buffers for reading a device with segmentation offload: the kernel hands
/// over up to 64 KB of one TCP connection at once (one read instead of one
/// per segment, and no segmentation in the sender's stack), which
/// [`tun_rs::SyncDevice::recv_multiple`] splits into MSS-sized segments with
/// their checksums. The link model still sees every segment.
struct Gso {
    input: Vec<u8>,
    segments: Vec<Vec<u8>>,
    sizes: Vec<usize>,
}

/// Room before each packet of a device with offload for its virtio-net
/// header (all zeros: no segmentation, no checksum to complete).
const HEADROOM: usize = tun_rs::VIRTIO_NET_HDR_LEN;

impl Slot {
    /// The packet, after the headroom `h`.
    fn data(&self, h: usize) -> &[u8] {
        &self.buf[h..h + self.len]
    }
}

/// The wire thread's state.
pub struct Wire {
    network: Network,
    devices: Vec<SyncDevice>,
    routing: Routing,
    /// How many of the routing's switches are done.
    switched: usize,
    logged: Vec<bool>,
    streams: Vec<Stream>,
    slots: Vec<Slot>,
    free: Vec<PacketId>,
    mtu: usize,
    /// Offload buffers (`None`: the devices hand over one packet per read).
    gso: Option<Gso>,
    /// Bytes before each packet in its buffer ([`HEADROOM`] with offload).
    headroom: usize,
    /// Packets due, per destination device, written together at the end of
    /// [`Wire::due`]; with offload, consecutive segments of one connection
    /// go in one write (the receive side of segmentation offload).
    to_release: Vec<Vec<PacketId>>,
    gro: tun_rs::GROTable,
    batch: Vec<Vec<u8>>,
    clock: Clock,
    config: WireConfig,
    out: WireOutput,
    reports: Vec<Report>,
    /// The instant the emulation reached (read by the progress bar).
    progress: Arc<AtomicU64>,
}

impl Wire {
    /// A wire thread's state: the network, each node's device (non-blocking),
    /// the routing, which flows are logged, each flow's statistics (empty,
    /// with its playout deadline), and the captures.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        network: Network,
        devices: Vec<SyncDevice>,
        routing: Routing,
        logged: Vec<bool>,
        flow_stats: Vec<FlowStats>,
        mtu: usize,
        clock: Clock,
        config: WireConfig,
        captures: Vec<Capture>,
        progress: Arc<AtomicU64>,
    ) -> Self {
        let flows = logged.len();
        let headroom = if config.offload { HEADROOM } else { 0 };
        let gso = config.offload.then(|| Gso {
            input: vec![0; tun_rs::VIRTIO_NET_HDR_LEN + 65_535],
            segments: vec![vec![0; headroom + mtu]; 64],
            sizes: vec![0; 64],
        });
        let devs = devices.len();
        Wire {
            network,
            devices,
            routing,
            switched: 0,
            logged,
            streams: vec![Stream::default(); flows],
            slots: Vec::new(),
            free: Vec::new(),
            mtu,
            gso,
            headroom,
            to_release: vec![Vec::new(); devs],
            gro: tun_rs::GROTable::default(),
            batch: Vec::new(),
            clock,
            config,
            out: WireOutput {
                releases: Chunked::default(),
                queues: QueueSeries::default(),
                log: PacketLog::default(),
                links: Vec::new(),
                read: 0,
                stray: 0,
                write_errors: 0,
                read_errors: 0,
                peak_packets: 0,
                realtime: Err("not asked for".into()),
                demotions: 0,
                stopped_at: Instant::ZERO,
                captures,
                flow_stats,
            },
            reports: Vec::new(),
            progress,
        }
    }

    /// Runs until the end of the run or until `stop` is set.
    pub fn run(mut self, stop: &AtomicBool) -> WireOutput {
        // For the tests that check a panic leaves nothing behind: the
        // variable makes the wire thread panic once the run is set up.
        if std::env::var_os("WAVELAB_NET_TEST_PANIC").is_some() {
            std::thread::sleep(std::time::Duration::from_millis(500));
            panic!("WAVELAB_NET_TEST_PANIC is set");
        }
        self.out.realtime = match self.config.realtime {
            None => Err("not asked for (--no-realtime)".into()),
            Some(p) => crate::sys::set_fifo_priority(Some(p))
                .map(|_| p)
                .map_err(|e| format!("SCHED_FIFO {p} refused: {e}")),
        };
        let mut guard = RtGuard::new(self.out.realtime.clone().ok());
        // failure leaves the default slack (50 us), which the spin margin covers
        let _ = nix::sys::prctl::set_timerslack(1);
        if let Some(cpu) = self.config.cpu {
            let mut set = nix::sched::CpuSet::new();
            if set.set(cpu).is_ok() {
                let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
            }
        }
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
            let next = [self.network.next_due(), Some(next_sample), Some(end)]
                .into_iter()
                .flatten()
                .min()
                .expect("the end is a deadline");
            let now = self.clock.now();
            // spinning is for a thread at real-time priority: within the
            // margin the loop polls without sleeping
            let spin = if guard.check(now) {
                self.config.spin
            } else {
                Duration::ZERO
            };
            let ready = self.wait(next.saturating_since(now).saturating_sub(spin));
            for (d, r) in ready.into_iter().enumerate() {
                if r {
                    for _ in 0..BATCH {
                        if !self.read(d) {
                            break;
                        }
                    }
                }
            }
        }
        self.out.demotions = guard.demotions;
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
                let d = d as DirId;
                (
                    self.network.counters(d).clone(),
                    self.network.settings_at(d, stopped),
                )
            })
            .collect();
        // as a simulation's: what the links serialise after the end is not in
        for c in &mut self.out.captures {
            c.flush(stopped);
        }
        self.out.peak_packets = self.network.peak;
        self.out
    }

    /// Sleeps up to `d` (nothing: one look) or until a device is readable;
    /// which devices are.
    fn wait(&self, d: Duration) -> Vec<bool> {
        let mut fds: Vec<PollFd> = self
            .devices
            .iter()
            .map(|dev| PollFd::new(dev.as_fd(), PollFlags::POLLIN))
            .collect();
        let ns = d.as_nanos();
        let ts = TimeSpec::new((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as i64);
        let _ = ppoll(&mut fds, Some(ts), None);
        fds.iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect()
    }

    /// Does everything due at or before `now`, and releases the packets due.
    fn due(&mut self, now: Instant) {
        let mut reports = std::mem::take(&mut self.reports);
        while self.network.pop_due(now, &mut reports) {
            for r in reports.drain(..) {
                self.report(r);
            }
        }
        self.reports = reports;
        for d in 0..self.devices.len() {
            if !self.to_release[d].is_empty() {
                self.release(d);
            }
        }
    }

    fn alloc(&mut self) -> PacketId {
        match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Slot {
                    buf: vec![0; self.headroom + self.mtu],
                    ..Slot::default()
                });
                (self.slots.len() - 1) as PacketId
            }
        }
    }

    /// Reads one packet from device `d` (with offload, one segmentation
    /// offload packet, split into the segments it carries); false if there
    /// was none.
    fn read(&mut self, d: usize) -> bool {
        if let Some(gso) = &mut self.gso {
            let got = self.devices[d].recv_multiple(
                &mut gso.input,
                &mut gso.segments,
                &mut gso.sizes,
                HEADROOM,
            );
            let n = match got {
                Ok(n) => n,
                Err(e) => return self.read_failed(&e),
            };
            let at = self.clock.now();
            self.due(at);
            for i in 0..n {
                let id = self.alloc();
                let gso = self.gso.as_mut().expect("offload");
                std::mem::swap(&mut self.slots[id as usize].buf, &mut gso.segments[i]);
                let len = gso.sizes[i];
                self.out.read += 1;
                self.ingress(at, d, id, len);
            }
            return true;
        }
        let id = self.alloc();
        let slot = &mut self.slots[id as usize];
        let n = match self.devices[d].recv(&mut slot.buf[self.headroom..]) {
            Ok(n) => n,
            Err(e) => {
                self.free.push(id);
                return self.read_failed(&e);
            }
        };
        let at = self.clock.now();
        self.due(at);
        self.out.read += 1;
        self.ingress(at, d, id, n);
        true
    }

    /// Counts a failed read (finding nothing is not a failure); false.
    fn read_failed(&mut self, e: &std::io::Error) -> bool {
        if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted {
            self.out.read_errors += 1;
        }
        false
    }

    /// Routes the packet in slot `id` (`n` bytes, read from node `from` at
    /// `at`) into the network.
    fn ingress(&mut self, at: Instant, from: usize, id: PacketId, n: usize) {
        let h = self.headroom;
        let slot = &mut self.slots[id as usize];
        slot.len = n;
        let packet = &slot.buf[h..h + n];
        let Some(ip) = Ipv4::parse(packet) else {
            self.out.stray += 1;
            self.free.push(id);
            return;
        };
        let Some(&to) = self.routing.nodes.get(&ip.dst) else {
            self.out.stray += 1;
            self.free.push(id);
            return;
        };
        let ports = ip.ports(packet);
        let (flow, to_receiver) = ports
            .and_then(|(sp, dp)| self.routing.flows.get(&(ip.src, ip.dst, sp, dp)))
            .or_else(|| self.routing.pairs.get(&(ip.src, ip.dst)))
            .copied()
            .unwrap_or((NO_FLOW, true));
        // what a queue discipline reads: the ECN field and the flow
        let (sp, dp) = ports.unwrap_or((0, 0));
        let flow_key = flow_key(ip.src, ip.dst, sp, dp, ip.protocol);
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
            while let Some(&(t, f, side, r)) = self.routing.switches.get(self.switched) {
                if t > at {
                    break;
                }
                self.routing.flow_routes[f as usize][side] = r;
                self.switched += 1;
            }
            self.routing.flow_routes[flow as usize][!to_receiver as usize]
        };
        if flow != NO_FLOW && self.logged[flow as usize] {
            if let Ok((_, _, seg, _)) = Segment::decode(&packet[ip.header_len..]) {
                let stream = &mut self.streams[flow as usize];
                slot.placed = if to_receiver {
                    stream.sent(&seg)
                } else {
                    stream.acked(&seg)
                };
            }
        }
        slot.flow = flow;
        slot.to_receiver = to_receiver;
        slot.to = to;
        slot.read_at = at;
        if flow != NO_FLOW && to_receiver {
            self.out.flow_stats[flow as usize].on_send(n as u32);
        }
        decrement_ttl(
            &mut slot.buf[h..h + n],
            self.routing.route_hops[route as usize],
        );
        if flow != NO_FLOW && to_receiver {
            let slot = &self.slots[id as usize];
            let k = slot.placed.kind;
            if self.logged[flow as usize] && (k == DATA || k == RETRANSMISSION) {
                let ev = if k == DATA {
                    event::SEND
                } else {
                    event::RETRANSMIT
                };
                self.out.log.push(key(at), 0, row(at, flow, slot, ev));
            }
            for c in &mut self.out.captures {
                c.record_ip(at, TapPoint::SenderOut, Some(flow), slot.data(h));
            }
        }
        let mut reports = std::mem::take(&mut self.reports);
        self.network
            .inject(at, id, n as u32, route, ip.ecn, flow_key, &mut reports);
        for r in reports.drain(..) {
            self.report(r);
        }
        self.reports = reports;
    }

    fn report(&mut self, r: Report) {
        match r {
            Report::Marked { packet, .. } => {
                // the discipline marks ECN-capable packets only (it drops
                // the others), so the header takes the mark
                let h = self.headroom;
                let s = &mut self.slots[packet as usize];
                let marked = set_ce(&mut s.buf[h..h + s.len]);
                debug_assert!(marked, "a marked packet is ECN-capable");
            }
            Report::Transmitted {
                packet,
                dir,
                finish,
            } => {
                if !self.out.captures.is_empty() {
                    let s = &self.slots[packet as usize];
                    let flow = (s.flow != NO_FLOW).then_some(s.flow);
                    for c in &mut self.out.captures {
                        c.record_ip(finish, TapPoint::LinkTx(dir), flow, s.data(self.headroom));
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
                if s.flow != NO_FLOW && s.to_receiver {
                    self.out.flow_stats[s.flow as usize].on_drop(s.len as u32);
                }
                if s.flow != NO_FLOW && self.logged[s.flow as usize] {
                    let mut e = row(at, s.flow, s, event::DROP);
                    e.link = dir as i64;
                    e.cause = cause as u8;
                    self.out.log.push(key(at), 0, e);
                }
                self.free.push(packet);
            }
            Report::Deliver { packet, dir, at } => {
                let s = &mut self.slots[packet as usize];
                s.planned = at;
                s.dir = dir;
                self.to_release[s.to].push(packet);
            }
        }
    }

    /// Writes the packets due at device `d` now, and records each release.
    /// With offload, consecutive segments of one connection are coalesced
    /// into one write ([`tun_rs::SyncDevice::send_multiple`]), as a
    /// receiving NIC's GRO would; packets are only ever due together when
    /// the thread is behind, so this costs no lateness and lets it catch up.
    fn release(&mut self, d: usize) {
        let ids = std::mem::take(&mut self.to_release[d]);
        let h = self.headroom;
        let actual = self.clock.now();
        // recorded first: a coalescing write rewrites the first packet's header
        for &id in &ids {
            let s = &self.slots[id as usize];
            self.out.releases.push(Release {
                planned: s.planned,
                actual,
                dir: s.dir,
                flow: s.flow,
                size: s.len as u32,
            });
            if s.flow != NO_FLOW {
                if s.to_receiver {
                    self.out.flow_stats[s.flow as usize].on_receive(
                        s.read_at,
                        actual,
                        s.len as u32,
                    );
                }
                if self.logged[s.flow as usize] {
                    let ev = if s.to_receiver {
                        event::DELIVER
                    } else {
                        event::ACK
                    };
                    self.out
                        .log
                        .push(key(actual), 0, row(actual, s.flow, s, ev));
                }
                if !s.to_receiver {
                    for c in &mut self.out.captures {
                        c.record_ip(actual, TapPoint::SenderIn, Some(s.flow), s.data(h));
                    }
                }
            }
        }
        let failed = if h == 0 {
            ids.iter()
                .filter(|&&id| {
                    self.devices[d]
                        .send(self.slots[id as usize].data(0))
                        .is_err()
                })
                .count()
        } else {
            // the buffers move out of their slots for the write and back
            for &id in &ids {
                let s = &mut self.slots[id as usize];
                let mut buf = std::mem::take(&mut s.buf);
                buf.truncate(h + s.len);
                buf[..h].fill(0);
                self.batch.push(buf);
            }
            let failed = self.devices[d]
                .send_multiple(&mut self.gro, &mut self.batch, h)
                .is_err() as usize;
            for (&id, mut buf) in ids.iter().zip(self.batch.drain(..)) {
                buf.resize(h + self.mtu, 0);
                self.slots[id as usize].buf = buf;
            }
            failed
        };
        self.out.write_errors += failed as u64;
        self.free.extend_from_slice(&ids);
        self.to_release[d] = ids;
        self.to_release[d].clear();
    }

    /// The queue series row of every direction at `t`; the captures write
    /// what is before it.
    fn sample(&mut self, t: Instant) {
        if self.config.queues {
            self.network.sync(t);
            for d in 0..self.network.dirs() {
                let d = d as DirId;
                let (packets, bytes) = self.network.queued(d);
                let state = self.network.qdisc_state(d, t);
                self.out.queues.record(
                    t,
                    d,
                    packets,
                    bytes,
                    self.network.counters(d),
                    state.as_ref(),
                );
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

/// Packet-log kind codes of new data and of retransmissions
/// ([`wavelab_model::tables::kind_code`]).
const DATA: u8 = 3;
const RETRANSMISSION: u8 = 4;

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

#[cfg(test)]
mod tests {
    use super::*;
    use wavelab_model::tables::kind_code;
    use wavelab_tcp::TxKind;

    #[test]
    fn kind_codes_are_the_packet_logs() {
        assert_eq!(DATA, kind_code(TxKind::Data));
        assert_eq!(RETRANSMISSION, kind_code(TxKind::Retransmission));
    }

    #[test]
    fn chunks_keep_order_and_count() {
        let mut c = Chunked::default();
        for i in 0..40_000u32 {
            c.push(i);
        }
        assert_eq!(c.len(), 40_000);
        assert!(c.iter().copied().eq(0..40_000));
    }
}
