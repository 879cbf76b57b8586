//! The transfers table: one row per transfer of a workload
//! ([`crate::workload`]), with its completion time and slowdown.
//!
//! A transfer's completion time is from its arrival (its SYN) to the
//! acknowledgement of its FIN at the sender (the sender's
//! `completed_at`). Its **ideal** completion time is that of the same
//! transfer alone on the path as the run starts, with an unlimited window:
//! `2 x base RTT + size x 8 / bottleneck rate`, where the base RTT is the
//! sum of the propagation delays of the data route and the ACK route and
//! the bottleneck rate the smallest rate on the data route, both at the
//! start of the run. One RTT is the handshake (SYN, SYN-ACK: the data
//! leaves with the handshake's final ACK) and one the last byte's way out
//! and its ACK's way back; headers, slow start and queueing are left out,
//! so an uncongested short transfer's slowdown is above 1 by its slow-start
//! rounds. The **slowdown** is completion / ideal (as the normalised flow
//! completion time of Alizadeh et al., "pFabric", SIGCOMM 2013, section
//! 5.1, whose ideal has no handshake: ours counts it, because every
//! transfer here opens a connection).

use super::{ColumnData, Table};
use wavelab_tcp::{Duration, Rate};

/// One transfer as the transfers table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRecord {
    /// Its workload's name.
    pub workload: String,
    /// Its flow's name (`<workload>/<k>`).
    pub flow: String,
    /// Its flow's index in the flows table.
    pub flow_index: u32,
    /// Its arrival, from the start of the run.
    pub start: Duration,
    /// Payload bytes.
    pub size: u64,
    /// From arrival to the ACK of its FIN (None: not completed).
    pub completion_time: Option<Duration>,
    /// Its ideal completion time (module description).
    pub ideal: Duration,
}

/// The ideal completion time of `size` payload bytes on a path of base
/// round-trip time `base_rtt` and bottleneck rate `rate` (module
/// description): `2 base_rtt + size x 8 / rate`.
pub fn ideal_completion(size: u64, rate: Rate, base_rtt: Duration) -> Duration {
    let serial = if rate.as_bps() == 0 {
        0.0
    } else {
        size as f64 * 8.0 / rate.as_bps() as f64
    };
    base_rtt * 2 + Duration::from_secs_f64(serial)
}

/// The transfers table of `rows`: `workload`, `flow`, `flow_index`,
/// `start`, `size`, `completion_time`, `ideal` (seconds) and `slowdown`
/// (null while a transfer has not completed).
pub fn transfer_table(rows: &[TransferRecord]) -> Table {
    let mut t = Table::default();
    let text =
        |f: &dyn Fn(&TransferRecord) -> String| ColumnData::Str(rows.iter().map(f).collect());
    t.push("workload", text(&|r| r.workload.clone()));
    t.push("flow", text(&|r| r.flow.clone()));
    t.push(
        "flow_index",
        ColumnData::U32(rows.iter().map(|r| r.flow_index).collect()),
    );
    t.push(
        "start",
        ColumnData::F64(rows.iter().map(|r| r.start.as_secs_f64()).collect()),
    );
    t.push(
        "size",
        ColumnData::U64(rows.iter().map(|r| r.size).collect()),
    );
    t.push_nullable(
        "completion_time",
        rows.iter()
            .map(|r| r.completion_time.map(|c| c.as_secs_f64())),
    );
    t.push(
        "ideal",
        ColumnData::F64(rows.iter().map(|r| r.ideal.as_secs_f64()).collect()),
    );
    t.push_nullable(
        "slowdown",
        rows.iter().map(|r| {
            r.completion_time
                .map(|c| c.as_secs_f64() / r.ideal.as_secs_f64())
        }),
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ideal_is_two_base_rtts_and_the_serialisation() {
        // 125 kB at 10 Mbit/s is 100 ms; base RTT 40 ms
        let ideal = ideal_completion(125_000, Rate::from_mbps(10), Duration::from_millis(40));
        assert_eq!(ideal, Duration::from_millis(180));
    }

    #[test]
    fn slowdown_is_completion_over_ideal_and_null_until_done() {
        let row = |c: Option<u64>| TransferRecord {
            workload: "web".into(),
            flow: "web/0".into(),
            flow_index: 2,
            start: Duration::from_secs(1),
            size: 1000,
            completion_time: c.map(Duration::from_millis),
            ideal: Duration::from_millis(100),
        };
        let t = transfer_table(&[row(Some(250)), row(None)]);
        let s = t.get::<f64>("slowdown").unwrap();
        assert_eq!(s[0], 2.5);
        let col = t.columns.iter().find(|c| c.name == "slowdown").unwrap();
        assert_eq!(col.valid.as_deref(), Some(&[true, false][..]));
    }
}
