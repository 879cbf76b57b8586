//! TCP Wave's variables of a connection that runs the BPF TCP Wave
//! (`wavelab bpf load`), read from the program's socket storage at each
//! sample and written under the simulator's Wave column names, so that
//! `cc_tx_time` of an emulated flow and of a simulated one are the same
//! quantity in the same unit; and the bursts it opened ([`BurstLog`]), from
//! the program's ring, with the kernel's own send instants.

use crate::clock::Clock;
use wavelab_bpf_maps::{BurstRecord, WaveSocket};
use wavelab_model::{ColumnData, Table};
use wavelab_tcp::Instant;

/// The columns, as the sans-IO Wave names them (`cc_<name>` in the series).
pub use wavelab_tcp::cc::wave::METRICS as WAVE_METRICS;

/// The values of [`WAVE_METRICS`] for `s` on a connection whose segments
/// carry `mss` bytes: durations in seconds (NaN while unknown), `rate` the
/// rate the schedule aims at (one burst of payload per TxTime, bit/s).
pub fn wave_metrics(s: &WaveSocket, mss: u32) -> [f64; 10] {
    let secs = |us: Option<u32>| us.map_or(f64::NAN, |v| v as f64 * 1e-6);
    let tx_time = s.tx_time_us as f64 * 1e-6;
    let delta = match (s.avg_rtt_us, s.min_rtt_us) {
        (Some(a), Some(m)) => a.saturating_sub(m) as f64 * 1e-6,
        _ => 0.0,
    };
    [
        s.burst as f64,
        tx_time,
        secs(s.dispersion_us),
        secs(s.min_rtt_us),
        secs(s.avg_rtt_us),
        delta,
        s.mode as f64,
        s.stability as f64,
        s.burst as f64 * mss as f64 * 8.0 / tx_time,
        s.max_rtt_us as f64 * 1e-6,
    ]
}

/// Every burst the BPF TCP Wave opened on the emulated flows, gathered from
/// the program's ring of its last 31 bursts at each sample: with samples
/// every 10 ms a ring of 31 misses none unless bursts are under 0.33 ms
/// apart, and [`BurstLog::missed`] counts the ones it did miss.
#[derive(Debug, Default)]
pub struct BurstLog {
    /// Flow, when it opened on this run's clock, and the ring's record.
    rows: Vec<(u32, Instant, BurstRecord)>,
    /// Per flow: the newest burst recorded (kernel ns) and how many.
    seen: Vec<(u64, u64)>,
    missed: u64,
}

impl BurstLog {
    /// Adds the bursts of flow `flow` not recorded yet; `opened` is the
    /// count of bursts the program opened on it (`WaveSocket::bursts`).
    pub fn add(&mut self, flow: u32, clock: &Clock, bursts: &[BurstRecord], opened: u32) {
        let f = flow as usize;
        if self.seen.len() <= f {
            self.seen.resize(f + 1, (0, 0));
        }
        let (newest, count) = &mut self.seen[f];
        for b in bursts {
            if b.opened_ns <= *newest {
                continue;
            }
            if let Some(t) = clock.from_monotonic(b.opened_ns) {
                self.rows.push((flow, t, *b));
            }
            *newest = b.opened_ns;
            *count += 1;
        }
        // the program counts a burst once its slot is written
        let missed = u64::from(opened).saturating_sub(*count);
        self.missed = self.missed.max(missed);
    }

    /// Bursts opened that the ring no longer held when it was read (at
    /// most, over the flows).
    pub fn missed(&self) -> u64 {
        self.missed
    }

    /// The `bursts` table: `time` (s, when the burst opened, i.e. when the
    /// kernel sent its first segment), `flow`, `seq` (its first byte, the
    /// kernel's absolute sequence number), `segments` (what it may send),
    /// `tx_time` (s, the TxTime it opened with: the next burst was due that
    /// long after it).
    pub fn to_table(&self) -> Table {
        let mut rows = self.rows.clone();
        rows.sort_by_key(|r| (r.1, r.0));
        let mut t = Table::default();
        t.push(
            "time",
            ColumnData::F64(rows.iter().map(|r| r.1.as_secs_f64()).collect()),
        );
        t.push("flow", ColumnData::U32(rows.iter().map(|r| r.0).collect()));
        t.push(
            "seq",
            ColumnData::U32(rows.iter().map(|r| r.2.start).collect()),
        );
        t.push(
            "segments",
            ColumnData::U32(rows.iter().map(|r| r.2.segments).collect()),
        );
        t.push(
            "tx_time",
            ColumnData::F64(rows.iter().map(|r| r.2.tx_time_us as f64 * 1e-6).collect()),
        );
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_the_simulators_in_seconds_and_bits_per_second() {
        let s = WaveSocket {
            next_burst_ns: 0,
            tx_time_us: 20_000,
            burst: 10,
            min_rtt_us: Some(50_000),
            avg_rtt_us: Some(56_000),
            max_rtt_us: 90_000,
            dispersion_us: None,
            stability: 2,
            mode: 1,
            bursts: 9,
            trains: 8,
        };
        let v = wave_metrics(&s, 1448);
        assert_eq!(v[0], 10.0);
        assert!((v[1] - 0.02).abs() < 1e-12);
        assert!(v[2].is_nan(), "no dispersion yet");
        assert!((v[5] - 0.006).abs() < 1e-12, "avg - min");
        assert!((v[8] - 10.0 * 1448.0 * 8.0 / 0.02).abs() < 1e-6);
        assert_eq!(WAVE_METRICS.len(), v.len());
    }

    fn record(opened_ns: u64) -> BurstRecord {
        BurstRecord {
            opened_ns,
            start: opened_ns as u32,
            segments: 10,
            tx_time_us: 12_000,
        }
    }

    #[test]
    fn bursts_seen_in_two_reads_are_recorded_once_in_time_order() {
        let clock = Clock::start();
        let base = 1u64 << 62; // far after the clock's origin
        let mut log = BurstLog::default();
        // the ring holds every burst opened so far (fewer than it holds)
        log.add(0, &clock, &[record(base), record(base + 10)], 2);
        log.add(0, &clock, &[record(base + 10), record(base + 20)], 3);
        log.add(1, &clock, &[record(base + 5)], 1);
        assert_eq!(log.missed(), 0);
        let t = log.to_table();
        assert_eq!(t.col::<u32>("flow"), &[0, 1, 0, 0]);
        assert!(t.col::<f64>("time").windows(2).all(|w| w[0] <= w[1]));
        // a ring read after more bursts than it holds: 40 opened, 4 seen
        log.add(0, &clock, &[record(base + 90)], 40);
        assert_eq!(log.missed(), 36);
    }
}
