//! The built-in endpoints of UDP and ping flows: real UDP sockets in the
//! flows' namespaces, sending the datagrams the simulator's sources send
//! ([`Datagrams::source`]: the same sizes at the same instants of the run's
//! clock).
//!
//! The sender's socket is bound to the flow's ports, so the wire thread
//! routes and counts its datagrams as the flow's (the flows table's network
//! statistics: sent, received, lost, one-way delay, jitter and late
//! packets come from the wire, as a simulation counts them at the network).
//! Each datagram's payload starts with its sequence number (8 bytes, big
//! endian) where it has room. One receiving socket per (node, port) reads
//! and discards, and sends each request of a ping flow back to its source; the ping's sender
//! reads the answers and takes each one's round-trip time from the send
//! time it kept for that sequence number (so a ping's requests need at
//! least 8 bytes, checked when the plan is made).

use crate::clock::Clock;
use crate::flows::{spawn, FlowState, TICK};
use crate::netns::{Namespace, SetupError};
use crate::plan::{Datagrams, FlowPlan};
use std::collections::HashSet;
use std::io::ErrorKind;
use std::net::{SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;
use wavelab_model::histogram::Histogram;
use wavelab_tcp::{Duration, Instant};

/// Bytes of a datagram's sequence number.
pub const SEQ_BYTES: usize = 8;

/// A ping flow's answers: their round-trip times.
#[derive(Debug, Default)]
pub struct Echoes {
    /// Every answer's round-trip time.
    pub rtts: Histogram,
    /// The smallest.
    pub min: Option<Duration>,
}

impl Echoes {
    fn record(&mut self, rtt: Duration) {
        self.rtts.record(rtt);
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
    }
}

/// Opens a receiving socket for each (node, port) that UDP or ping flows
/// go to, in that node's namespace, and starts its thread: it reads and
/// discards, and sends back what comes from a ping flow's port.
pub fn start_receivers(
    flows: &[FlowPlan],
    namespaces: &[Namespace],
    addresses: &[[u8; 4]],
    stop: &Arc<AtomicBool>,
) -> Result<Vec<JoinHandle<()>>, SetupError> {
    let mut ends: Vec<((usize, u16), HashSet<u16>)> = Vec::new();
    for f in flows {
        let Some(d) = &f.datagrams else { continue };
        let i = match ends.iter().position(|(k, _)| *k == (f.to, f.dport)) {
            Some(i) => i,
            None => {
                ends.push(((f.to, f.dport), HashSet::new()));
                ends.len() - 1
            }
        };
        if d.echo() {
            ends[i].1.insert(f.sport);
        }
    }
    let mut threads = Vec::new();
    for ((node, port), echo) in ends {
        let local = SocketAddrV4::new(addresses[node].into(), port);
        let socket = namespaces[node].run(move || {
            UdpSocket::bind(local).map_err(|e| SetupError::io(format!("binding UDP {local}"), e))
        })?;
        socket
            .set_read_timeout(Some(TICK))
            .map_err(|e| SetupError::io("a UDP socket's timeout", e))?;
        let stop = stop.clone();
        threads.push(spawn("udp-receiver", move || {
            receive(&socket, &echo, &stop)
        })?);
    }
    Ok(threads)
}

/// Opens flow `f`'s sending socket in namespace `ns` at `from`, connected
/// to the receiver at `to`, and starts its sender (and for a ping the
/// reader of the answers).
#[allow(clippy::too_many_arguments)]
pub fn start_sender(
    f: &FlowPlan,
    d: &Datagrams,
    ns: &Namespace,
    (from, to): ([u8; 4], [u8; 4]),
    clock: Clock,
    end: Instant,
    state: Arc<FlowState>,
    stop: Arc<AtomicBool>,
) -> Result<Vec<JoinHandle<()>>, SetupError> {
    let (src, dst) = (
        SocketAddrV4::new(from.into(), f.sport),
        SocketAddrV4::new(to.into(), f.dport),
    );
    let sender = ns.run(move || {
        let s =
            UdpSocket::bind(src).map_err(|e| SetupError::io(format!("binding UDP {src}"), e))?;
        s.connect(dst)
            .map_err(|e| SetupError::io(format!("connecting UDP {src} to {dst}"), e))?;
        Ok(s)
    })?;
    sender
        .set_read_timeout(Some(TICK))
        .map_err(|e| SetupError::io("a UDP socket's timeout", e))?;
    let echo = d.echo();
    let sent: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let mut threads = Vec::new();
    if echo {
        let reader = sender
            .try_clone()
            .map_err(|e| SetupError::io("a UDP socket", e))?;
        let (sent, state, stop) = (sent.clone(), state.clone(), stop.clone());
        threads.push(spawn("ping-answers", move || {
            answers(&reader, &sent, clock, &state, &stop)
        })?);
    }
    let start = Instant::ZERO + f.start;
    let stop_at = f
        .stop
        .map(|s| Instant::ZERO + s)
        .map_or(end, |s| s.min(end));
    let source = d.source(start, Some(stop_at));
    threads.push(spawn("udp-sender", move || {
        send(&sender, source, clock, &sent, echo, &state, &stop)
    })?);
    Ok(threads)
}

/// Sends the source's datagrams, each at its instant (or as soon after as
/// the thread wakes), until the source has no more or the run stops;
/// keeps each ping request's send time.
fn send(
    socket: &UdpSocket,
    mut source: wavelab_model::udp::UdpSource,
    clock: Clock,
    sent: &Mutex<Vec<Instant>>,
    echo: bool,
    state: &FlowState,
    stop: &AtomicBool,
) {
    let mut buf = vec![0u8; 65_536];
    while let Some(next) = source.next_send() {
        while clock.now() < next {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let left = next.saturating_since(clock.now());
            std::thread::sleep(StdDuration::from_nanos(left.as_nanos()).min(TICK));
        }
        let now = clock.now();
        while let Some((seq, payload)) = source.poll(now) {
            let n = payload as usize;
            let room = n.min(SEQ_BYTES);
            buf[..room].copy_from_slice(&seq.to_be_bytes()[..room]);
            if echo {
                sent.lock().expect("not poisoned").push(now);
            }
            match socket.send(&buf[..n]) {
                Ok(_) => {}
                // a full socket buffer or an unreachable answer: the
                // datagram is lost on the host, as a sender's would be
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => {
                    state.error(format!("sending datagram {seq}: {e}"));
                    return;
                }
            }
        }
    }
}

/// Reads what arrives until the run stops, and sends what comes from the
/// ports in `echo` (ping flows) back to where it came from.
fn receive(socket: &UdpSocket, echo: &HashSet<u16>, stop: &AtomicBool) {
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(&mut buf) {
            Ok((n, peer)) if echo.contains(&peer.port()) => {
                let _ = socket.send_to(&buf[..n], peer);
            }
            Ok(_) => {}
            Err(_) => {} // the timeout: look at the stop flag
        }
    }
}

/// Reads a ping's answers until the run stops, each one's round-trip time
/// from its request's send time.
fn answers(
    socket: &UdpSocket,
    sent: &Mutex<Vec<Instant>>,
    clock: Clock,
    state: &FlowState,
    stop: &AtomicBool,
) {
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        let Ok(n) = socket.recv(&mut buf) else {
            continue;
        };
        let now = clock.now();
        if n < SEQ_BYTES {
            continue;
        }
        let seq = u64::from_be_bytes(buf[..SEQ_BYTES].try_into().expect("8 bytes"));
        let at = sent
            .lock()
            .expect("not poisoned")
            .get(seq as usize)
            .copied();
        if let Some(at) = at {
            state
                .echoes
                .lock()
                .expect("not poisoned")
                .record(now.saturating_since(at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_keep_every_rtt_and_the_smallest() {
        let mut e = Echoes::default();
        e.record(Duration::from_millis(50));
        e.record(Duration::from_millis(40));
        e.record(Duration::from_millis(60));
        assert_eq!(e.rtts.count(), 3);
        assert_eq!(e.min, Some(Duration::from_millis(40)));
    }
}
