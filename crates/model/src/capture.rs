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
//! Records are written in the order of their keys ([`crate::order`]: time,
//! then, in the simulator, the engine's canonical order of the event). A
//! virtual-time link direction knows when a packet's serialisation ends as
//! soon as the packet is admitted; its record waits in a buffer until the clock reaches
//! that instant, so the file is the same in both engine modes. A capture
//! added in the middle of a run starts with the packets admitted after it.

use crate::order::time_of;
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

/// A simulated packet as a capture sees it: the segment, and what the IP
/// header written around it needs.
#[derive(Clone, Copy, Debug)]
pub struct SimulatedSegment<'a> {
    /// The flow it belongs to.
    pub flow: u32,
    /// True for data travelling to the receiver, false for ACKs.
    pub to_receiver: bool,
    /// Hops crossed so far (lowers the TTL written).
    pub hop: u16,
    /// Bytes on the wire (IPv4 + TCP headers + payload).
    pub size: u32,
    /// The segment.
    pub seg: &'a wavelab_tcp::Segment,
    /// The ECN field of its IP header where it is seen (as sent, or CE
    /// once a queue discipline marked it): written into the TOS byte's two
    /// low bits (RFC 3168 section 5), where tshark reads `ip.dsfield.ecn`.
    pub ecn: wavelab_tcp::Ecn,
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

    /// Records `p` if this capture taps `point`; `key` is the ordering key
    /// of the event at which it is seen ([`crate::order`]: its time is in
    /// the high 64 bits). It is written by [`Capture::flush`] once the
    /// clock reaches that time.
    pub fn record(&mut self, key: u128, point: TapPoint, p: &SimulatedSegment<'_>) {
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
        buf.extend_from_slice(&[0x45, p.ecn as u8]);
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
        self.most_pending = self.most_pending.max(self.pending.len());
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
    pub fn flush_before(&mut self, now: Instant) {
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

    /// The most records it held at once, waiting for the clock to pass
    /// them (how much of a run it kept in memory).
    pub fn most_pending(&self) -> usize {
        self.most_pending
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
    use wavelab_tcp::{Segment, SeqNum};

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
