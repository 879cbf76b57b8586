//! The delay series (`output.delays = true`): per flow per sampling
//! interval, the one-way delay of the data packets its receiver got in the
//! interval (their count, mean and largest), and for a ping flow the
//! round-trip times of the answers its sender got (count, mean, largest).
//! A row is written at each sample for every flow that received something
//! since the previous one, so an idle flow costs nothing; the row's `time`
//! is the sample's (the end of the interval).
//!
//! Aggregating per interval rather than per packet keeps the table as
//! large as the time series whatever the packet rate; the full
//! distributions over the run are the `owd_distribution` and
//! `rtt_distribution` tables.

use super::{ColumnData, Table};
use wavelab_tcp::{Duration, Instant};

/// One flow's delays since the last sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayWindow {
    owd: Acc,
    rtt: Acc,
}

/// A count, sum and maximum of durations in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Acc {
    n: u64,
    sum: u128,
    max: u64,
}

impl Acc {
    #[inline]
    fn add(&mut self, d: Duration) {
        let ns = d.as_nanos();
        self.n += 1;
        self.sum += u128::from(ns);
        self.max = self.max.max(ns);
    }

    /// Mean and maximum in seconds (None: empty).
    fn figures(&self) -> (Option<f64>, Option<f64>) {
        if self.n == 0 {
            return (None, None);
        }
        let mean = self.sum as f64 / self.n as f64 / 1e9;
        (Some(mean), Some(self.max as f64 / 1e9))
    }
}

impl DelayWindow {
    /// A data packet reached the receiver `owd` after it was sent.
    #[inline]
    pub fn on_owd(&mut self, owd: Duration) {
        self.owd.add(owd);
    }

    /// A ping's answer came back `rtt` after its request was sent.
    #[inline]
    pub fn on_rtt(&mut self, rtt: Duration) {
        self.rtt.add(rtt);
    }

    /// True if nothing arrived since the last sample.
    pub fn is_empty(&self) -> bool {
        self.owd.n == 0 && self.rtt.n == 0
    }
}

/// The recorder of the delay series.
#[derive(Clone, Debug, Default)]
pub struct DelaySeries {
    time: Vec<f64>,
    flow: Vec<u32>,
    packets: Vec<u64>,
    owd_mean: Vec<Option<f64>>,
    owd_max: Vec<Option<f64>>,
    rtt_samples: Vec<u64>,
    rtt_mean: Vec<Option<f64>>,
    rtt_max: Vec<Option<f64>>,
}

impl DelaySeries {
    /// Records flow `flow`'s window at `now` (if anything arrived in it)
    /// and empties it.
    pub fn record(&mut self, now: Instant, flow: u32, w: &mut DelayWindow) {
        if w.is_empty() {
            return;
        }
        let (owd_mean, owd_max) = w.owd.figures();
        let (rtt_mean, rtt_max) = w.rtt.figures();
        self.time.push(now.as_secs_f64());
        self.flow.push(flow);
        self.packets.push(w.owd.n);
        self.owd_mean.push(owd_mean);
        self.owd_max.push(owd_max);
        self.rtt_samples.push(w.rtt.n);
        self.rtt_mean.push(rtt_mean);
        self.rtt_max.push(rtt_max);
        *w = DelayWindow::default();
    }

    /// The table: `time`, `flow`, `packets`, `owd_mean`, `owd_max`,
    /// `rtt_samples`, `rtt_mean`, `rtt_max` (seconds; null where none).
    pub fn to_table(&self) -> Table {
        let mut t = Table::default();
        t.push("time", ColumnData::F64(self.time.clone()));
        t.push("flow", ColumnData::U32(self.flow.clone()));
        t.push("packets", ColumnData::U64(self.packets.clone()));
        t.push_nullable("owd_mean", self.owd_mean.iter().copied());
        t.push_nullable("owd_max", self.owd_max.iter().copied());
        t.push("rtt_samples", ColumnData::U64(self.rtt_samples.clone()));
        t.push_nullable("rtt_mean", self.rtt_mean.iter().copied());
        t.push_nullable("rtt_max", self.rtt_max.iter().copied());
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_gives_its_mean_and_largest_and_empties() {
        let mut s = DelaySeries::default();
        let mut w = DelayWindow::default();
        s.record(Instant::ZERO, 0, &mut w);
        for ms in [10, 30] {
            w.on_owd(Duration::from_millis(ms));
        }
        w.on_rtt(Duration::from_millis(50));
        let t1 = Instant::ZERO + Duration::from_millis(100);
        s.record(t1, 3, &mut w);
        assert!(w.is_empty());
        s.record(t1, 3, &mut w);
        let t = s.to_table();
        assert_eq!(t.rows(), 1);
        assert_eq!(t.col::<u32>("flow"), [3]);
        assert_eq!(t.col::<u64>("packets"), [2]);
        assert_eq!(t.options::<f64>("owd_mean"), [Some(0.020)]);
        assert_eq!(t.options::<f64>("owd_max"), [Some(0.030)]);
        assert_eq!(t.options::<f64>("rtt_max"), [Some(0.050)]);
    }
}
