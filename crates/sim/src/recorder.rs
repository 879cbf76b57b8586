//! What the simulation records as it runs, beside the sampled series: the
//! packet log of the flows that asked for it and the packet captures. The
//! network reports what happens to packets ([`Observer`]); this decides what
//! is written.

use crate::engine::key;
use crate::packet::Packet;
use crate::routes::{Observer, Row};
use wavelab_model::capture::{Capture, TapPoint};
use wavelab_model::link::DropCause;
use wavelab_model::tables::{event, kind_code, PacketEvent, PacketLog};
use wavelab_model::topology::DirId;
use wavelab_tcp::{Instant, TxKind};

/// The packet log, the captures, and which event is being processed (the
/// rows an event writes are ordered by its canonical key, then by rank).
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub log: PacketLog,
    /// Packet captures; empty unless asked for.
    pub captures: Vec<Capture>,
    /// Per flow: whether its packets are logged.
    logged: Vec<bool>,
    /// Per flow: whether it is a UDP flow, whose datagrams the captures
    /// (TCP segments in pcap files) leave out.
    datagrams: Vec<bool>,
    /// Per flow: its data packets and wire bytes dropped in the network.
    drops: Vec<[u64; 2]>,
    /// Drops a virtual-time direction reported ahead of their time (flow,
    /// wire bytes), counted once the clock reaches them, so that both engine
    /// modes count the same drops at every instant.
    ahead: Vec<(Instant, u32, u32)>,
    /// Canonical key of the event being processed, and the rows it wrote.
    key: u128,
    rows: u32,
}

/// A copy without the captures: they write to their outputs, which the
/// original keeps (capturing never changes the run).
impl Clone for Recorder {
    fn clone(&self) -> Self {
        Recorder {
            log: self.log.clone(),
            captures: Vec::new(),
            logged: self.logged.clone(),
            datagrams: self.datagrams.clone(),
            drops: self.drops.clone(),
            ahead: self.ahead.clone(),
            key: self.key,
            rows: self.rows,
        }
    }
}

impl Recorder {
    /// A recorder logging the flows whose flag is set in `logged`, and
    /// capturing the packets of those not set in `datagrams`.
    pub fn new(logged: Vec<bool>, datagrams: Vec<bool>) -> Self {
        Recorder {
            drops: vec![[0; 2]; logged.len()],
            ahead: Vec::new(),
            logged,
            datagrams,
            ..Recorder::default()
        }
    }

    /// The event with canonical key `key` starts.
    #[inline]
    pub fn begin(&mut self, key: u128) {
        self.key = key;
        self.rows = 0;
    }

    /// Writes a packet-log row as the current event's next row.
    #[inline]
    pub fn row(&mut self, e: PacketEvent) {
        self.log.push_next(self.key, &mut self.rows, e);
    }

    /// Shows packet `p` to the captures tapping `point`, now.
    #[inline]
    pub fn capture(&mut self, point: TapPoint, p: &Packet) {
        if self.captures.is_empty() || self.datagrams[p.flow as usize] {
            return;
        }
        let seen = p.captured();
        for c in &mut self.captures {
            c.record(self.key, point, &seen);
        }
    }
}

impl Recorder {
    /// Counts the drops reported so far whose time is at or before `now`.
    pub fn count_drops(&mut self, now: Instant) {
        let drops = &mut self.drops;
        self.ahead.retain(|&(at, flow, size)| {
            if at > now {
                return true;
            }
            let d = &mut drops[flow as usize];
            d[0] += 1;
            d[1] += u64::from(size);
            false
        });
    }

    /// Per flow: its data packets and wire bytes dropped up to `now`.
    pub fn drops(&self, now: Instant) -> Vec<[u64; 2]> {
        let mut out = self.drops.clone();
        for &(at, flow, size) in &self.ahead {
            if at <= now {
                out[flow as usize][0] += 1;
                out[flow as usize][1] += u64::from(size);
            }
        }
        out
    }
}

impl Observer for Recorder {
    #[inline]
    fn wants_tx(&self) -> bool {
        !self.captures.is_empty()
    }

    fn tx_end(&mut self, key: u128, dir: DirId, p: &Packet) {
        if self.datagrams[p.flow as usize] {
            return;
        }
        let seen = p.captured();
        for c in &mut self.captures {
            c.record(key, TapPoint::LinkTx(dir), &seen);
        }
    }

    #[inline]
    fn dropped(&mut self, p: &Packet, dir: DirId, cause: DropCause, at: Instant, row: Row) {
        if p.to_receiver && matches!(p.kind, TxKind::Data | TxKind::Retransmission) {
            self.ahead.push((at, p.flow, p.size));
        }
        if !self.logged[p.flow as usize] {
            return;
        }
        let e = PacketEvent {
            time: at.as_secs_f64(),
            flow: p.flow,
            event: event::DROP,
            seq: p.offset,
            len: p.seg.len,
            is_ack: !p.to_receiver,
            kind: kind_code(p.kind),
            link: dir as i64,
            cause: cause as u8,
        };
        match row {
            Row::Current => self.log.push_next(self.key, &mut self.rows, e),
            Row::Virtual(at, ev) => self.log.push(key(at, &ev), 0, e),
        }
    }
}
