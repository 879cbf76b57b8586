//! The per-packet event log of the flows that asked for it.

use super::{ColumnData, Table};

/// Codes of the packet-log `event` column.
pub mod event {
    /// The sender transmitted new data.
    pub const SEND: u8 = 0;
    /// The sender retransmitted data.
    pub const RETRANSMIT: u8 = 1;
    /// Data reached the receiver.
    pub const DELIVER: u8 = 2;
    /// An ACK reached the sender.
    pub const ACK: u8 = 3;
    /// A packet was dropped (see `cause`).
    pub const DROP: u8 = 4;
    /// A cross-layer notification reached the sender (`link`: the link it
    /// concerns; `seq`: the reported segment's offset, or the sender's
    /// cumulative ACK point for a handoff; the `notifications` table has
    /// the content).
    pub const NOTIFY: u8 = 5;
    /// Labels of the codes.
    pub const NAMES: [&str; 6] = ["send", "retransmit", "deliver", "ack", "drop", "notify"];
}

/// Labels of the packet-log `kind` column (the last, empty, for rows that
/// are not about a packet: [`NO_KIND`]).
pub const KIND_NAMES: [&str; 6] = ["syn", "synack", "ack", "data", "retransmission", ""];

/// The `kind` code of a row that is not about a packet (a notification).
pub const NO_KIND: u8 = 5;

/// The code of a segment kind in the packet log's `kind` column.
pub fn kind_code(k: wavelab_tcp::TxKind) -> u8 {
    use wavelab_tcp::TxKind;
    match k {
        TxKind::Syn => 0,
        TxKind::SynAck => 1,
        TxKind::Ack => 2,
        TxKind::Data => 3,
        TxKind::Retransmission => 4,
    }
}

/// The per-packet event log of the flows that asked for it.
#[derive(Clone, Debug, Default)]
pub struct PacketLog {
    /// The canonical order of each row: the key of the event that wrote it
    /// ([`crate::order`]) and its rank among that event's rows.
    keys: Vec<(u128, u32)>,
    time: Vec<f64>,
    flow: Vec<u32>,
    event: Vec<u8>,
    seq: Vec<u64>,
    len: Vec<u32>,
    is_ack: Vec<bool>,
    kind: Vec<u8>,
    link: Vec<i64>,
    cause: Vec<u8>,
}

/// One packet-log row.
#[derive(Clone, Copy, Debug)]
pub struct PacketEvent {
    /// Seconds.
    pub time: f64,
    /// Flow index.
    pub flow: u32,
    /// One of [`event`].
    pub event: u8,
    /// Stream offset (data) or acknowledged offset (ACKs).
    pub seq: u64,
    /// Payload length.
    pub len: u32,
    /// True for an ACK packet.
    pub is_ack: bool,
    /// What the packet carries ([`kind_code`]).
    pub kind: u8,
    /// Link direction of a drop, or -1.
    pub link: i64,
    /// Drop cause code ([`crate::link::DropCause`]), or 255.
    pub cause: u8,
}

impl PacketLog {
    /// Appends the next row of the event with canonical key `key`, which has
    /// written `rows` rows so far (and counts this one).
    #[inline]
    pub fn push_next(&mut self, key: u128, rows: &mut u32, e: PacketEvent) {
        self.push(key, *rows, e);
        *rows += 1;
    }

    /// Appends a row written by the event with canonical key `key`, as its
    /// `rank`-th row.
    pub fn push(&mut self, key: u128, rank: u32, e: PacketEvent) {
        self.keys.push((key, rank));
        self.time.push(e.time);
        self.flow.push(e.flow);
        self.event.push(e.event);
        self.seq.push(e.seq);
        self.len.push(e.len);
        self.is_ack.push(e.is_ack);
        self.kind.push(e.kind);
        self.link.push(e.link);
        self.cause.push(e.cause);
    }

    /// Rows recorded.
    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// True if nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }

    /// The log as a table (`link` is the link-direction index, -1 if none),
    /// in the canonical order of the events that wrote the rows, without the
    /// rows of events after `upto` (an engine may write a row before the
    /// simulated clock reaches its time).
    pub fn to_table(&self, upto: u128) -> Table {
        let mut order: Vec<usize> = (0..self.keys.len())
            .filter(|&i| self.keys[i].0 <= upto)
            .collect();
        if !order.is_sorted_by_key(|&i| self.keys[i]) {
            order.sort_by_key(|&i| self.keys[i]);
        }
        fn pick<T: Copy>(v: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&i| v[i]).collect()
        }
        let mut t = Table::default();
        t.push("time", ColumnData::F64(pick(&self.time, &order)));
        t.push("flow", ColumnData::U32(pick(&self.flow, &order)));
        t.push(
            "event",
            ColumnData::Category {
                codes: pick(&self.event, &order),
                labels: event::NAMES.iter().map(|s| s.to_string()).collect(),
            },
        );
        t.push("seq", ColumnData::U64(pick(&self.seq, &order)));
        t.push("len", ColumnData::U32(pick(&self.len, &order)));
        t.push("is_ack", ColumnData::Bool(pick(&self.is_ack, &order)));
        t.push(
            "kind",
            ColumnData::Category {
                codes: pick(&self.kind, &order),
                labels: KIND_NAMES.iter().map(|s| s.to_string()).collect(),
            },
        );
        t.push("link", ColumnData::I64(pick(&self.link, &order)));
        // the labels of the drop causes before queue disciplines, then the
        // empty label of a packet not dropped, then "aqm" only in a run
        // that has such a drop: a drop-tail run's log (and its digest) is
        // what it was before the disciplines existed
        use crate::link::DropCause;
        let mut causes: Vec<String> = DropCause::NAMES[..DropCause::Aqm as usize]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let none = causes.len() as u8;
        causes.push("".into());
        let aqm = DropCause::Aqm as u8;
        if order.iter().any(|&i| self.cause[i] == aqm) {
            causes.push(DropCause::NAMES[aqm as usize].into());
        }
        let code = |c: u8| match c {
            c if c == aqm => none + 1,
            c if c < aqm => c,
            _ => none,
        };
        t.push(
            "cause",
            ColumnData::Category {
                codes: order.iter().map(|&i| code(self.cause[i])).collect(),
                labels: causes,
            },
        );
        t
    }
}
