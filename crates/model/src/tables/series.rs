//! Recorders of the sampled time series: per flow (bytes, window, RTT, state,
//! the algorithm's own variables) and per link direction (queue length).

use super::{ColumnData, Table};
use crate::link::qdisc::QueueState;
use crate::link::LinkCounters;
use wavelab_tcp::{CaState, CongestionControl, Instant, Receiver, Sender};

/// Windows at or above this are "not limiting" and recorded as NaN.
const UNLIMITED_CWND: u64 = 1 << 60;

const STATES: [CaState; 5] = [
    CaState::Open,
    CaState::Disorder,
    CaState::Cwr,
    CaState::Recovery,
    CaState::Loss,
];

/// One row of the per-flow series: bytes, window and RTT figures as the
/// sender (simulated, or a kernel's TCP_INFO) reports them. Windows and
/// sequence figures are bytes, times seconds, rates bit/s; NaN where the
/// sender has no such figure.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowSample {
    /// New data bytes sent.
    pub bytes_sent: u64,
    /// Bytes retransmitted.
    pub bytes_retransmitted: u64,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Bytes the receiver delivered in order.
    pub bytes_delivered: u64,
    /// Congestion window (NaN: not limiting).
    pub cwnd: f64,
    /// Slow-start threshold (NaN: unlimited).
    pub ssthresh: f64,
    /// Bytes in flight (the pipe).
    pub in_flight: u64,
    /// Bytes sent and not cumulatively acknowledged.
    pub outstanding: u64,
    /// Bytes SACKed.
    pub sacked: u64,
    /// Bytes marked lost.
    pub lost: u64,
    /// Smoothed RTT.
    pub srtt: f64,
    /// Latest RTT sample.
    pub rtt: f64,
    /// Minimum RTT.
    pub min_rtt: f64,
    /// Retransmission timeout.
    pub rto: f64,
    /// Recovery state ([`CaState::code`]).
    pub state: u8,
    /// Pacing rate.
    pub pacing_rate: f64,
}

/// The per-flow time series.
#[derive(Clone, Debug, Default)]
pub struct Series {
    time: Vec<f64>,
    flow: Vec<u32>,
    bytes_sent: Vec<u64>,
    bytes_retransmitted: Vec<u64>,
    bytes_acked: Vec<u64>,
    bytes_delivered: Vec<u64>,
    cwnd: Vec<f64>,
    ssthresh: Vec<f64>,
    in_flight: Vec<u64>,
    outstanding: Vec<u64>,
    sacked: Vec<u64>,
    lost: Vec<u64>,
    srtt: Vec<f64>,
    rtt: Vec<f64>,
    min_rtt: Vec<f64>,
    rto: Vec<f64>,
    state: Vec<u8>,
    pacing_rate: Vec<f64>,
    /// Names of the algorithm variables, the union over all flows.
    metric_names: Vec<&'static str>,
    metrics: Vec<Vec<f64>>,
    scratch: Vec<f64>,
}

fn secs(d: Option<wavelab_tcp::Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64())
}

impl Series {
    /// A recorder with a column for every algorithm variable any flow exposes.
    pub fn new<'a>(names: impl Iterator<Item = &'a [&'static str]>) -> Self {
        let mut metric_names: Vec<&'static str> = Vec::new();
        for list in names {
            for n in list {
                if !metric_names.contains(n) {
                    metric_names.push(n);
                }
            }
        }
        let metrics = vec![Vec::new(); metric_names.len()];
        Series {
            metric_names,
            metrics,
            ..Series::default()
        }
    }

    /// Records one row for flow `flow`.
    pub fn record(&mut self, now: Instant, flow: u32, tx: &Sender, rx: &Receiver) {
        let s = tx.snapshot();
        let sample = FlowSample {
            bytes_sent: tx.stats().bytes_sent,
            bytes_retransmitted: tx.stats().bytes_retransmitted,
            bytes_acked: s.bytes_acked,
            bytes_delivered: rx.delivered(),
            // An algorithm whose window never limits (TCP Wave) reports none.
            cwnd: if s.cwnd >= UNLIMITED_CWND {
                f64::NAN
            } else {
                s.cwnd as f64
            },
            ssthresh: if s.ssthresh == u64::MAX {
                f64::NAN
            } else {
                s.ssthresh as f64
            },
            in_flight: s.in_flight,
            outstanding: s.outstanding,
            sacked: s.sacked,
            lost: s.lost,
            srtt: secs(s.srtt),
            rtt: secs(s.latest_rtt),
            min_rtt: secs(s.min_rtt),
            rto: s.rto.as_secs_f64(),
            state: s.ca_state.code(),
            pacing_rate: s.pacing_rate.map_or(f64::NAN, |r| r.as_bps() as f64),
        };
        let cc = tx.cc();
        let names = cc.metric_names();
        let mut values = std::mem::take(&mut self.scratch);
        values.clear();
        values.resize(names.len(), f64::NAN);
        cc.metrics(&mut values);
        self.push(now, flow, &sample, names, &values);
        self.scratch = values;
    }

    /// Records one row for flow `flow` as a driver measured it, with the
    /// algorithm variables `names` (each of which must be among those given
    /// to [`Series::new`]) worth `values`; the other `cc_*` columns get NaN.
    pub fn push(
        &mut self,
        now: Instant,
        flow: u32,
        s: &FlowSample,
        names: &[&'static str],
        values: &[f64],
    ) {
        self.time.push(now.as_secs_f64());
        self.flow.push(flow);
        self.bytes_sent.push(s.bytes_sent);
        self.bytes_retransmitted.push(s.bytes_retransmitted);
        self.bytes_acked.push(s.bytes_acked);
        self.bytes_delivered.push(s.bytes_delivered);
        self.cwnd.push(s.cwnd);
        self.ssthresh.push(s.ssthresh);
        self.in_flight.push(s.in_flight);
        self.outstanding.push(s.outstanding);
        self.sacked.push(s.sacked);
        self.lost.push(s.lost);
        self.srtt.push(s.srtt);
        self.rtt.push(s.rtt);
        self.min_rtt.push(s.min_rtt);
        self.rto.push(s.rto);
        self.state.push(s.state);
        self.pacing_rate.push(s.pacing_rate);
        for (col, name) in self.metric_names.iter().enumerate() {
            let v = names
                .iter()
                .position(|n| n == name)
                .map_or(f64::NAN, |k| values[k]);
            self.metrics[col].push(v);
        }
    }

    /// The series as a table; algorithm variables are columns `cc_<name>`.
    pub fn to_table(&self) -> Table {
        let mut t = Table::default();
        t.push("time", ColumnData::F64(self.time.clone()));
        t.push("flow", ColumnData::U32(self.flow.clone()));
        t.push("bytes_sent", ColumnData::U64(self.bytes_sent.clone()));
        t.push(
            "bytes_retransmitted",
            ColumnData::U64(self.bytes_retransmitted.clone()),
        );
        t.push("bytes_acked", ColumnData::U64(self.bytes_acked.clone()));
        t.push(
            "bytes_delivered",
            ColumnData::U64(self.bytes_delivered.clone()),
        );
        t.push("cwnd", ColumnData::F64(self.cwnd.clone()));
        t.push("ssthresh", ColumnData::F64(self.ssthresh.clone()));
        t.push("in_flight", ColumnData::U64(self.in_flight.clone()));
        t.push("outstanding", ColumnData::U64(self.outstanding.clone()));
        t.push("sacked", ColumnData::U64(self.sacked.clone()));
        t.push("lost", ColumnData::U64(self.lost.clone()));
        t.push("srtt", ColumnData::F64(self.srtt.clone()));
        t.push("rtt", ColumnData::F64(self.rtt.clone()));
        t.push("min_rtt", ColumnData::F64(self.min_rtt.clone()));
        t.push("rto", ColumnData::F64(self.rto.clone()));
        t.push(
            "state",
            ColumnData::Category {
                codes: self.state.clone(),
                labels: STATES.iter().map(|s| s.name().to_string()).collect(),
            },
        );
        t.push("pacing_rate", ColumnData::F64(self.pacing_rate.clone()));
        for (name, col) in self.metric_names.iter().zip(&self.metrics) {
            t.push(format!("cc_{name}"), ColumnData::F64(col.clone()));
        }
        t
    }
}

/// Queue lengths, the bytes serialised and delivered so far, and the queue
/// discipline's state, of every link direction at each sample.
///
/// The discipline's columns ([`QueueState`]) hold NaN (floats) or 0
/// (counts) on a drop-tail direction.
#[derive(Clone, Debug, Default)]
pub struct QueueSeries {
    time: Vec<f64>,
    dir: Vec<u32>,
    packets: Vec<u64>,
    bytes: Vec<u64>,
    sent_bytes: Vec<u64>,
    delivered_bytes: Vec<u64>,
    sojourn: Vec<f64>,
    aqm_drops: Vec<u64>,
    aqm_marks: Vec<u64>,
    drop_prob: Vec<f64>,
    prob_l: Vec<f64>,
    codel_dropping: Vec<f64>,
    codel_count: Vec<f64>,
}

/// The queue table's columns that a queue discipline fills (NaN or 0 on a
/// drop-tail direction).
pub const QDISC_COLUMNS: [&str; 7] = [
    "sojourn",
    "aqm_drops",
    "aqm_marks",
    "drop_prob",
    "prob_l",
    "codel_dropping",
    "codel_count",
];

impl QueueSeries {
    /// Records direction `dir`: `packets` and `bytes` waiting, its
    /// counters, and its queue discipline's `state` (None: drop-tail).
    pub fn record(
        &mut self,
        now: Instant,
        dir: u32,
        packets: u64,
        bytes: u64,
        c: &LinkCounters,
        state: Option<&QueueState>,
    ) {
        self.time.push(now.as_secs_f64());
        self.dir.push(dir);
        self.packets.push(packets);
        self.bytes.push(bytes);
        self.sent_bytes.push(c.sent_bytes);
        self.delivered_bytes.push(c.delivered_bytes);
        let nan = f64::NAN;
        let s = state.copied().unwrap_or(QueueState {
            sojourn: nan,
            drops: 0,
            marks: 0,
            drop_prob: nan,
            prob_l: nan,
            codel_dropping: nan,
            codel_count: nan,
        });
        self.sojourn.push(s.sojourn);
        self.aqm_drops.push(s.drops);
        self.aqm_marks.push(s.marks);
        self.drop_prob.push(s.drop_prob);
        self.prob_l.push(s.prob_l);
        self.codel_dropping.push(s.codel_dropping);
        self.codel_count.push(s.codel_count);
    }

    /// The series as a table (`dir` indexes the links table).
    pub fn to_table(&self) -> Table {
        let mut t = Table::default();
        t.push("time", ColumnData::F64(self.time.clone()));
        t.push("dir", ColumnData::U32(self.dir.clone()));
        t.push("packets", ColumnData::U64(self.packets.clone()));
        t.push("bytes", ColumnData::U64(self.bytes.clone()));
        t.push("sent_bytes", ColumnData::U64(self.sent_bytes.clone()));
        t.push(
            "delivered_bytes",
            ColumnData::U64(self.delivered_bytes.clone()),
        );
        t.push("sojourn", ColumnData::F64(self.sojourn.clone()));
        t.push("aqm_drops", ColumnData::U64(self.aqm_drops.clone()));
        t.push("aqm_marks", ColumnData::U64(self.aqm_marks.clone()));
        t.push("drop_prob", ColumnData::F64(self.drop_prob.clone()));
        t.push("prob_l", ColumnData::F64(self.prob_l.clone()));
        t.push(
            "codel_dropping",
            ColumnData::F64(self.codel_dropping.clone()),
        );
        t.push("codel_count", ColumnData::F64(self.codel_count.clone()));
        t
    }
}
