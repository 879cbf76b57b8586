//! Packet capture: what crosses a link, or what a flow's sender sends and
//! receives, written as a pcap file with real IPv4 and TCP headers.
//!
//! # Format
//!
//! * Classic pcap with nanosecond timestamps (magic `0xa1b23c4d`, version
//!   2.4), link type `LINKTYPE_RAW` (101): every record is an IPv4 packet,
//!   no link-layer header. Timestamps are simulated time since 0 s.
//! * IPv4 header: 20 bytes, DF set and identification 0 (an atomic datagram,
//!   RFC 6864), TTL 64 at the sending host minus one per router crossed,
//!   protocol 6, total length = the packet's size on the links, a correct
//!   header checksum.
//! * TCP header: the segment exactly as the endpoint produced it, encoded by
//!   [`wavelab_tcp::Segment::encode`]: sequence and acknowledgment numbers
//!   (the flow's random initial sequence numbers included), flags, the raw
//!   window field, MSS / window-scale / SACK-permitted options on SYNs, SACK
//!   blocks (and DSACKs), timestamps when the flow has them on.
//! * Payload: simulated segments carry only a length, so the payload is not
//!   captured: a record's captured length stops at the end of the TCP header
//!   and its original length is the full IP packet (as `tcpdump -s` with a
//!   small snap length writes it). The TCP checksum is the one of a payload of
//!   zero bytes, so a tool that pads the payload with zeros verifies it.
//! * Addresses: node `k` (in order of first appearance in `links`) is
//!   `10.0.(k+1)/256.(k+1)%256`, e.g. the first node is 10.0.0.1. Ports: flow
//!   `i` (after replicas are expanded) goes from port `10000 + i % 50000` to
//!   port `5001 + i / 50000`, so every flow is a distinct connection.
//!
//! # Taps
//!
//! * a **link** direction records every packet when its serialisation on that
//!   direction ends (it is then on the wire: packets the loss model or an
//!   outage destroys afterwards are in the file, packets the full queue
//!   refused are not);
//! * a **flow** records, at its sender's host, every segment the sender emits
//!   (at the instant it emits it) and every segment that reaches the sender.
//!
//! Capturing only reads the packets: a run with captures gives exactly the
//! results of the same run without.
//!
//! # Order
//!
//! Records are written in the engine's canonical order (time, then the key
//! of the event, [`crate::engine`]). A virtual-time link direction
//! ([`crate::net`]) knows when a packet's serialisation ends as soon as the
//! packet is admitted; its record waits in a buffer until the clock reaches
//! that instant, so the file is the same in both engine modes. A capture
//! added in the middle of a run starts with the packets admitted after it.

use crate::engine::time_of;
use crate::packet::Packet;
use crate::scenario::{link_name, Scenario};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::io::{self, Write};
use wavelab_tcp::wire::{IPV4_HEADER_LEN, TCP_HEADER_LEN};
use wavelab_tcp::Instant;

/// `LINKTYPE_RAW`: records start with the IP header.
pub const LINKTYPE_RAW: u32 = 101;
/// The magic number of a pcap file with nanosecond timestamps.
pub const PCAP_MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// The snap length written in the file header: the largest IPv4 and TCP
/// headers (options included) fit.
pub const SNAPLEN: u32 = 120;
/// TTL of a packet leaving its host.
const TTL: u8 = 64;

/// Where a packet was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapPoint {
    /// Serialisation on a link direction ended.
    LinkTx(u32),
    /// The flow's sender emitted the packet.
    SenderOut,
    /// The packet reached the flow's sender.
    SenderIn,
}

/// A capture target that does not name anything in the scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureError(pub String);

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for CaptureError {}

/// What a finished capture wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// Records written.
    pub packets: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// What a capture records.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tap {
    /// These link directions (a mask indexed by direction).
    Links(Vec<bool>),
    /// These flows' senders (a mask indexed by flow).
    Flows(Vec<bool>),
}

/// Addresses and ports of one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Endpoints {
    sender: [u8; 4],
    receiver: [u8; 4],
    sport: u16,
    dport: u16,
}

/// The made-up IPv4 address of node `k`.
pub fn node_address(k: usize) -> [u8; 4] {
    let n = k + 1;
    [10, 0, (n >> 8) as u8, n as u8]
}

/// (source port, destination port) of flow `i`.
pub fn flow_ports(i: usize) -> (u16, u16) {
    ((10_000 + i % 50_000) as u16, (5001 + i / 50_000) as u16)
}

/// One pcap capture in progress.
pub struct Capture {
    label: String,
    tap: Tap,
    flows: Vec<Endpoints>,
    out: Box<dyn Write + Send>,
    /// Records not yet written: (canonical key, arrival rank, bytes).
    pending: BinaryHeap<Reverse<(u128, u64, Vec<u8>)>>,
    recorded: u64,
    stats: CaptureStats,
    error: Option<io::Error>,
    /// The most records ever pending at once.
    #[cfg(test)]
    most_pending: usize,
}

impl fmt::Debug for Capture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Capture")
            .field("label", &self.label)
            .field("tap", &self.tap)
            .field("stats", &self.stats)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// The one's-complement sum (RFC 1071) of `bytes` added to `sum`, unfolded.
fn add_words(mut sum: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u32) << 8;
    }
    sum
}

fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The TCP checksum of a segment whose header is `header` (checksum field
/// zero) and whose `payload_len` payload bytes are all zero (zeros add
/// nothing to the sum; only the length in the pseudo-header counts).
pub fn tcp_checksum_zero_payload(
    src: [u8; 4],
    dst: [u8; 4],
    header: &[u8],
    payload_len: usize,
) -> u16 {
    let tcp_len = (header.len() + payload_len) as u32;
    let mut sum = add_words(0, &src);
    sum = add_words(sum, &dst);
    sum += 6;
    sum += tcp_len & 0xffff;
    sum += tcp_len >> 16;
    fold(add_words(sum, header))
}

/// The IPv4 header checksum of `header` (checksum field zero).
pub fn ipv4_checksum(header: &[u8]) -> u16 {
    fold(add_words(0, header))
}

impl Capture {
    /// A capture of `target` in the network of scenario `sc`, whose flows
    /// (after replicas are expanded) have these `[name, from, to]`, writing
    /// to `out`.
    ///
    /// `target` is `flow:NAME`, `link:NAME`, `link:NAME:forward`,
    /// `link:NAME:reverse` or a bare `NAME` that is either a flow or a link.
    /// A name may be an index; a flow's base name covers all its replicas; a
    /// link without a direction means both directions.
    pub fn new(
        sc: &Scenario,
        flows: &[[&str; 3]],
        target: &str,
        out: Box<dyn Write + Send>,
    ) -> Result<Capture, CaptureError> {
        let nodes = sc.node_names();
        let address = |name: &str| {
            node_address(
                nodes
                    .iter()
                    .position(|n| n == name)
                    .expect("flows connect nodes of the links"),
            )
        };
        let flow_names: Vec<&str> = flows.iter().map(|f| f[0]).collect();
        let flows = flows
            .iter()
            .enumerate()
            .map(|(i, &[_, from, to])| {
                let (sport, dport) = flow_ports(i);
                Endpoints {
                    sender: address(from),
                    receiver: address(to),
                    sport,
                    dport,
                }
            })
            .collect();
        let link_names: Vec<String> = sc
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| link_name(l, i))
            .collect();
        let tap = resolve(target, &flow_names, &link_names)?;
        let mut c = Capture {
            label: target.to_string(),
            tap,
            flows,
            out,
            pending: BinaryHeap::new(),
            #[cfg(test)]
            most_pending: 0,
            recorded: 0,
            stats: CaptureStats::default(),
            error: None,
        };
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&PCAP_MAGIC_NANOS.to_le_bytes());
        header.extend_from_slice(&2u16.to_le_bytes());
        header.extend_from_slice(&4u16.to_le_bytes());
        header.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        header.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        header.extend_from_slice(&SNAPLEN.to_le_bytes());
        header.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        c.write(&header);
        Ok(c)
    }

    /// The target as given.
    pub fn label(&self) -> &str {
        &self.label
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        match self.out.write_all(bytes) {
            Ok(()) => self.stats.bytes += bytes.len() as u64,
            Err(e) => self.error = Some(e),
        }
    }

    /// Records `p` if this capture taps `point`; `key` is the canonical key
    /// of the event at which it is seen ([`crate::engine::key`]: its time is
    /// in the high 64 bits). It is written by [`Capture::flush`] once the
    /// clock reaches that time.
    pub fn record(&mut self, key: u128, point: TapPoint, p: &Packet) {
        let wanted = match (&self.tap, point) {
            (Tap::Links(dirs), TapPoint::LinkTx(d)) => dirs.get(d as usize) == Some(&true),
            (Tap::Flows(flows), TapPoint::SenderOut | TapPoint::SenderIn) => {
                flows.get(p.flow as usize) == Some(&true)
            }
            _ => false,
        };
        if !wanted || self.error.is_some() {
            return;
        }
        let e = self.flows[p.flow as usize];
        let (src, dst, sport, dport) = if p.to_receiver {
            (e.sender, e.receiver, e.sport, e.dport)
        } else {
            (e.receiver, e.sender, e.dport, e.sport)
        };
        let mut buf = Vec::with_capacity(16 + IPV4_HEADER_LEN + 60);
        buf.resize(16, 0); // the record header, filled in below
        let ip = buf.len();
        buf.extend_from_slice(&[0x45, 0]);
        buf.extend_from_slice(&(p.size as u16).to_be_bytes());
        buf.extend_from_slice(&[0, 0, 0x40, 0]); // identification 0, DF
        buf.push(TTL.saturating_sub(p.hop.min(255) as u8));
        buf.push(6);
        buf.extend_from_slice(&[0, 0]);
        buf.extend_from_slice(&src);
        buf.extend_from_slice(&dst);
        let sum = ipv4_checksum(&buf[ip..ip + IPV4_HEADER_LEN]);
        buf[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
        let tcp = buf.len();
        if p.seg.encode(sport, dport, &mut buf).is_err() {
            // The sender never builds such a header; keep the file valid.
            buf.truncate(tcp);
            buf.resize(tcp + TCP_HEADER_LEN, 0);
        }
        let sum = tcp_checksum_zero_payload(src, dst, &buf[tcp..], p.seg.len as usize);
        buf[tcp + 16..tcp + 18].copy_from_slice(&sum.to_be_bytes());
        let captured = (buf.len() - ip) as u32;
        let nanos = time_of(key).as_nanos();
        buf[0..4].copy_from_slice(&((nanos / 1_000_000_000) as u32).to_le_bytes());
        buf[4..8].copy_from_slice(&((nanos % 1_000_000_000) as u32).to_le_bytes());
        buf[8..12].copy_from_slice(&captured.to_le_bytes());
        buf[12..16].copy_from_slice(&p.size.to_le_bytes());
        self.pending.push(Reverse((key, self.recorded, buf)));
        self.recorded += 1;
        #[cfg(test)]
        {
            self.most_pending = self.most_pending.max(self.pending.len());
        }
    }

    /// Records a real IPv4 packet `ip` seen at `at` at `point` (an
    /// emulator's: [`TapPoint::LinkTx`] at the end of its serialisation,
    /// [`TapPoint::SenderOut`] when the sender's host sent it,
    /// [`TapPoint::SenderIn`] when it reached it); `flow` is the flow it
    /// belongs to, if any. The record keeps the first [`SNAPLEN`] bytes and
    /// is written by [`Capture::flush`] once the clock reaches `at`
    /// (records of one instant in the order they were made).
    pub fn record_ip(&mut self, at: Instant, point: TapPoint, flow: Option<u32>, ip: &[u8]) {
        let wanted = match (&self.tap, point) {
            (Tap::Links(dirs), TapPoint::LinkTx(d)) => dirs.get(d as usize) == Some(&true),
            (Tap::Flows(flows), TapPoint::SenderOut | TapPoint::SenderIn) => {
                flow.is_some_and(|f| flows.get(f as usize) == Some(&true))
            }
            _ => false,
        };
        if !wanted || self.error.is_some() {
            return;
        }
        let captured = ip.len().min(SNAPLEN as usize);
        let mut buf = Vec::with_capacity(16 + captured);
        let nanos = at.as_nanos();
        buf.extend_from_slice(&((nanos / 1_000_000_000) as u32).to_le_bytes());
        buf.extend_from_slice(&((nanos % 1_000_000_000) as u32).to_le_bytes());
        buf.extend_from_slice(&(captured as u32).to_le_bytes());
        buf.extend_from_slice(&(ip.len() as u32).to_le_bytes());
        buf.extend_from_slice(&ip[..captured]);
        let key = (nanos as u128) << 64;
        self.pending.push(Reverse((key, self.recorded, buf)));
        self.recorded += 1;
    }

    /// Writes, in canonical order, the records of everything seen up to
    /// `now` (every event at `now` processed).
    pub fn flush(&mut self, now: Instant) {
        self.flush_while(|t| t <= now);
    }

    /// Writes, in canonical order, the records of everything before `now`,
    /// while events at `now` may still be pending: nothing recorded from now
    /// on is earlier than `now`, but a later event at `now` may record
    /// something that comes before a record of `now` already pending.
    pub(crate) fn flush_before(&mut self, now: Instant) {
        self.flush_while(|t| t < now);
    }

    fn flush_while(&mut self, due: impl Fn(Instant) -> bool) {
        while let Some(Reverse((key, _, _))) = self.pending.peek() {
            if !due(time_of(*key)) {
                break;
            }
            let Reverse((_, _, buf)) = self.pending.pop().expect("peeked");
            self.write(&buf);
            if self.error.is_none() {
                self.stats.packets += 1;
            }
        }
    }

    /// Flushes the file; returns what was written, or the first write error.
    pub fn finish(&mut self) -> io::Result<CaptureStats> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()?;
        Ok(self.stats)
    }
}

fn index_or_name(what: &str, names: &[&str], key: &str) -> Option<Vec<usize>> {
    if let Some(i) = names.iter().position(|n| *n == key) {
        return Some(vec![i]);
    }
    // a flow's base name covers its replicas (`name#0`, `name#1`, ...)
    let replicas: Vec<usize> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            n.strip_prefix(key)
                .and_then(|r| r.strip_prefix('#'))
                .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|(i, _)| i)
        .collect();
    if what == "flow" && !replicas.is_empty() {
        return Some(replicas);
    }
    match key.parse::<usize>() {
        Ok(i) if i < names.len() => Some(vec![i]),
        _ => None,
    }
}

fn resolve(target: &str, flows: &[&str], links: &[String]) -> Result<Tap, CaptureError> {
    let links: Vec<&str> = links.iter().map(String::as_str).collect();
    let known = || format!("flows: {}; links: {}", flows.join(", "), links.join(", "));
    let err = |m: String| CaptureError(format!("--pcap \"{target}\": {m}"));
    let link_tap = |key: &str, direction: Option<&str>| -> Result<Tap, CaptureError> {
        let found = index_or_name("link", &links, key)
            .ok_or_else(|| err(format!("no link is called \"{key}\" ({})", known())))?;
        let mut mask = vec![false; 2 * links.len()];
        for i in found {
            match direction {
                None => {
                    mask[2 * i] = true;
                    mask[2 * i + 1] = true;
                }
                Some("forward") => mask[2 * i] = true,
                Some("reverse") => mask[2 * i + 1] = true,
                Some(d) => {
                    return Err(err(format!(
                        "\"{d}\" is not a direction; write forward or reverse"
                    )))
                }
            }
        }
        Ok(Tap::Links(mask))
    };
    let flow_tap = |key: &str| -> Result<Tap, CaptureError> {
        let found = index_or_name("flow", flows, key)
            .ok_or_else(|| err(format!("no flow is called \"{key}\" ({})", known())))?;
        let mut mask = vec![false; flows.len()];
        for i in found {
            mask[i] = true;
        }
        Ok(Tap::Flows(mask))
    };
    if target.is_empty() {
        return Err(err(format!("name a flow or a link ({})", known())));
    }
    if let Some(rest) = target.strip_prefix("flow:") {
        return flow_tap(rest);
    }
    if let Some(rest) = target.strip_prefix("link:") {
        return match rest.rsplit_once(':') {
            Some((name, dir)) if index_or_name("link", &links, rest).is_none() => {
                link_tap(name, Some(dir))
            }
            _ => link_tap(rest, None),
        };
    }
    let is_flow =
        index_or_name("flow", flows, target).is_some() && target.parse::<usize>().is_err();
    let is_link =
        index_or_name("link", &links, target).is_some() && target.parse::<usize>().is_err();
    match (is_flow, is_link) {
        (true, true) => Err(err(format!(
            "names both a flow and a link; write flow:{target} or link:{target}"
        ))),
        (true, false) => flow_tap(target),
        (false, true) => link_tap(target, None),
        (false, false) => Err(err(format!(
            "no flow or link is called \"{target}\" ({}); write flow:NAME, link:NAME or link:NAME:forward",
            known()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;
    use std::sync::{Arc, Mutex};
    use wavelab_tcp::{Segment, SeqNum};

    /// A writer whose bytes the test can read afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A writer that fails once `room` bytes are written (a full disk).
    struct Full {
        room: usize,
    }
    impl Write for Full {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            if b.len() > self.room {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.room -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    const LOSSY: &str = r#"
        duration = "4s"
        seed = 3
        [[links]]
        name = "access"
        between = ["s", "r"]
        rate = "100Mbit/s"
        delay = "1ms"
        [[links]]
        name = "bottleneck"
        between = ["r", "d"]
        rate = "10Mbit/s"
        delay = "20ms"
        queue = "30pkt"
        loss = { model = "bernoulli", p = 0.01 }
        [[flows]]
        name = "bulk"
        from = "s"
        to = "d"
        log_packets = true
        tcp = { timestamps = true }
    "#;

    struct Record {
        nanos: u64,
        data: Vec<u8>,
        orig: u32,
    }

    fn records(file: &[u8]) -> Vec<Record> {
        assert_eq!(&file[0..4], &PCAP_MAGIC_NANOS.to_le_bytes());
        assert_eq!(&file[20..24], &LINKTYPE_RAW.to_le_bytes());
        let mut out = Vec::new();
        let mut i = 24;
        let le = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        while i < file.len() {
            let h = &file[i..i + 16];
            let incl = le(&h[8..12]) as usize;
            out.push(Record {
                nanos: le(&h[0..4]) as u64 * 1_000_000_000 + le(&h[4..8]) as u64,
                data: file[i + 16..i + 16 + incl].to_vec(),
                orig: le(&h[12..16]),
            });
            i += 16 + incl;
        }
        assert_eq!(i, file.len(), "no partial record");
        out
    }

    fn capture(text: &str, targets: &[&str]) -> (crate::Results, Vec<Vec<u8>>) {
        let mut sim = Simulation::new(Scenario::from_toml_str(text).unwrap()).unwrap();
        let bufs: Vec<Shared> = targets.iter().map(|_| Shared::default()).collect();
        for (t, b) in targets.iter().zip(&bufs) {
            sim.add_capture(t, Box::new(b.clone())).unwrap();
        }
        sim.run();
        for (_, r) in sim.finish_captures() {
            r.unwrap();
        }
        let files = bufs.iter().map(|b| b.0.lock().unwrap().clone()).collect();
        (sim.results(), files)
    }

    /// A long run written in one go holds only a stretch of its records in
    /// memory (the engine writes what the clock has passed as it goes), and
    /// writes the same bytes as a run paused every five seconds.
    #[test]
    fn a_long_capture_is_written_as_it_goes() {
        let text = LOSSY.replace("duration = \"4s\"", "duration = \"200s\"");
        let sc = || Scenario::from_toml_str(&text).unwrap();
        let mut sim = Simulation::new(sc()).unwrap();
        let buf = Shared::default();
        sim.add_capture("bulk", Box::new(buf.clone())).unwrap();
        sim.run();
        let most = sim.rec.captures[0].most_pending;
        sim.finish_captures();
        let one_go = buf.0.lock().unwrap().clone();
        let n = records(&one_go).len();
        assert!(n > 60_000, "{n} records");
        assert!(most < n / 4, "{most} of {n} records pending at once");

        let mut sim = Simulation::new(sc()).unwrap();
        let buf = Shared::default();
        sim.add_capture("bulk", Box::new(buf.clone())).unwrap();
        for s in 1..=40 {
            sim.run_until(Instant::from_nanos(s * 5_000_000_000));
        }
        sim.finish_captures();
        assert!(*buf.0.lock().unwrap() == one_go, "identical bytes");
    }

    #[test]
    fn headers_are_valid_ipv4_and_tcp() {
        let (_, files) = capture(LOSSY, &["bulk"]);
        let recs = records(&files[0]);
        assert!(recs.len() > 1000, "{} records", recs.len());
        let mut last = 0;
        let (mut data, mut sacks, mut timestamps) = (0, 0, 0);
        for r in &recs {
            assert!(r.nanos >= last, "time never runs backwards");
            last = r.nanos;
            let ip = &r.data[..20];
            assert_eq!(ip[0], 0x45);
            assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as u32, r.orig);
            assert_eq!(ipv4_checksum(ip), 0, "a valid header sums to zero");
            let src: [u8; 4] = ip[12..16].try_into().unwrap();
            let dst: [u8; 4] = ip[16..20].try_into().unwrap();
            let tcp = &r.data[20..];
            let (sport, dport, seg, hlen) = Segment::decode(tcp).unwrap();
            assert_eq!(hlen, tcp.len(), "the payload is not captured");
            let payload = r.orig as usize - 20 - hlen;
            // the checksum verifies over the header and a zero payload
            let mut whole = tcp.to_vec();
            whole.resize(tcp.len() + payload, 0);
            assert_eq!(wavelab_tcp::wire::tcp_checksum_ipv4(src, dst, &whole), 0);
            if src == node_address(0) {
                assert_eq!((sport, dport, dst), (10_000, 5001, node_address(2)));
                assert_eq!(ip[8], 64, "leaves the sender with TTL 64");
                data += (payload > 0) as usize;
            } else {
                assert_eq!((sport, dport), (5001, 10_000));
                assert_eq!(ip[8], 63, "one router on the way back");
                sacks += (!seg.options.sack.is_empty()) as usize;
            }
            timestamps += seg.options.timestamps.is_some() as usize;
        }
        assert!(
            data > 500 && sacks > 10,
            "{data} data segments, {sacks} with SACK"
        );
        assert_eq!(timestamps, recs.len(), "timestamps on every segment");
    }

    #[test]
    fn a_flow_tap_sees_every_segment_the_sender_sends_and_receives() {
        let (r, files) = capture(LOSSY, &["flow:bulk"]);
        let recs = records(&files[0]);
        let log = &r.packets;
        let events = log.labels("event");
        let count = |e: u8| {
            let name = crate::tables::event::NAMES[e as usize];
            events.iter().filter(|&&l| l == name).count()
        };
        // data segments in the capture: every send and retransmission in the log
        let with_payload = recs
            .iter()
            .filter(|r| r.data[12..16] == node_address(0) && r.orig as usize > r.data.len())
            .count();
        assert_eq!(
            with_payload,
            count(crate::tables::event::SEND) + count(crate::tables::event::RETRANSMIT)
        );
        let to_sender = recs
            .iter()
            .filter(|r| r.data[16..20] == node_address(0))
            .count();
        assert_eq!(to_sender, count(crate::tables::event::ACK));
    }

    #[test]
    fn a_link_tap_sees_what_each_direction_serialised() {
        let (r, files) = capture(
            LOSSY,
            &[
                "link:bottleneck:forward",
                "link:bottleneck",
                "link:0:reverse",
            ],
        );
        let sent = r.links.u64s("sent_packets");
        let n = |f: &Vec<u8>| records(f).len() as u64;
        assert_eq!(n(&files[0]), sent[2]);
        assert_eq!(n(&files[1]), sent[2] + sent[3]);
        assert_eq!(n(&files[2]), sent[1]);
        // the loss model's victims were on the wire: more than what arrived
        assert!(sent[2] > r.links.u64s("delivered_packets")[2]);
    }

    #[test]
    fn capturing_changes_nothing() {
        let (with, _) = capture(LOSSY, &["bulk", "link:bottleneck"]);
        let mut sim = Simulation::new(Scenario::from_toml_str(LOSSY).unwrap()).unwrap();
        sim.run();
        let without = sim.results();
        for (a, b) in [
            (&with.series, &without.series),
            (&with.flows, &without.flows),
            (&with.links, &without.links),
            (&with.queues, &without.queues),
            (&with.packets, &without.packets),
        ] {
            // Debug prints every float exactly (and NaN equal to NaN)
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
        assert_eq!(with.run, without.run);
    }

    #[test]
    fn both_engine_modes_write_the_same_files() {
        let targets = ["bulk", "link:bottleneck", "link:access:reverse"];
        let (_, virtual_time) = capture(LOSSY, &targets);
        let sc = Scenario::from_toml_str(LOSSY).unwrap();
        let mut sim = Simulation::new_reference(sc).unwrap();
        let bufs: Vec<Shared> = targets.iter().map(|_| Shared::default()).collect();
        for (t, b) in targets.iter().zip(&bufs) {
            sim.add_capture(t, Box::new(b.clone())).unwrap();
        }
        // pauses flush what the clock has reached, nothing later
        for ms in [1_234, 5_000, 7_777] {
            sim.run_until(Instant::from_nanos(ms * 1_000_000));
        }
        sim.run();
        sim.finish_captures();
        for (v, r) in virtual_time.iter().zip(&bufs) {
            assert!(records(v).len() > 300, "{} records", records(v).len());
            let r = r.0.lock().unwrap();
            let (a, b) = (records(v), records(&r));
            for (i, (x, y)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (x.nanos, &x.data, x.orig) == (y.nanos, &y.data, y.orig),
                    "record {i}: {} {:?} vs {} {:?}",
                    x.nanos,
                    x.data,
                    y.nanos,
                    y.data
                );
            }
            assert_eq!(a.len(), b.len());
            assert!(*v == *r, "identical bytes");
        }
    }

    #[test]
    fn bad_targets_name_what_exists() {
        let mut sim = Simulation::new(Scenario::from_toml_str(LOSSY).unwrap()).unwrap();
        let e = |t: &str| {
            Capture::new(
                sim.scenario(),
                &[["bulk", "s", "d"]],
                t,
                Box::new(io::sink()),
            )
            .unwrap_err()
            .to_string()
        };
        assert_eq!(
            e("nope"),
            "--pcap \"nope\": no flow or link is called \"nope\" (flows: bulk; links: access, bottleneck); write flow:NAME, link:NAME or link:NAME:forward"
        );
        assert!(e("flow:3").contains("no flow is called \"3\""));
        assert!(e("link:bottleneck:sideways").contains("\"sideways\" is not a direction"));
        assert!(sim.add_capture("link:1", Box::new(io::sink())).is_ok());
    }

    #[test]
    fn a_name_of_both_kinds_is_ambiguous_and_replicas_share_a_base_name() {
        let flows = ["x#0", "x#1", "y"];
        let links = vec!["y".to_string()];
        assert_eq!(
            resolve("x", &flows, &links),
            Ok(Tap::Flows(vec![true, true, false]))
        );
        assert!(resolve("y", &flows, &links)
            .unwrap_err()
            .0
            .contains("names both a flow and a link"));
        assert_eq!(
            resolve("link:y", &flows, &links),
            Ok(Tap::Links(vec![true, true]))
        );
    }

    #[test]
    fn a_full_disk_is_reported_at_finish_and_stops_writing() {
        let mut sim = Simulation::new(Scenario::from_toml_str(LOSSY).unwrap()).unwrap();
        sim.add_capture("bulk", Box::new(Full { room: 5000 }))
            .unwrap();
        sim.run();
        let done = sim.finish_captures();
        let err = done[0].1.as_ref().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn checksum_of_a_zero_payload_matches_the_full_computation() {
        let seg = Segment {
            seq: SeqNum(0xfffffff0),
            ack: SeqNum(17),
            flags: wavelab_tcp::wire::Flags::ACK,
            window: 1000,
            len: 1447,
            ..Segment::default()
        };
        let mut h = Vec::new();
        seg.encode(1, 2, &mut h).unwrap();
        let (a, b) = ([10, 0, 0, 1], [10, 0, 1, 2]);
        let mut whole = h.clone();
        whole.resize(h.len() + 1447, 0);
        assert_eq!(
            tcp_checksum_zero_payload(a, b, &h, 1447),
            wavelab_tcp::wire::tcp_checksum_ipv4(a, b, &whole)
        );
        assert_eq!(node_address(0), [10, 0, 0, 1]);
        assert_eq!(node_address(299), [10, 0, 1, 44]);
        assert_eq!(flow_ports(50_001), (10_001, 5002));
    }
}
