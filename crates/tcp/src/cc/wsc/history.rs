//! WSC-TCP's best-start window (Srinivasan 2016, section 3.3): a host keeps a
//! record of past sessions on each path (the congestion window each reached
//! at steady state and when it ran); a new session on that path starts from
//! the window past sessions in the same time-of-day bucket reached, instead
//! of slow start.
//!
//! The thesis leaves open what "the window at steady state" is, how past
//! sessions are combined, and what happens without any; our choices
//! (docs/algorithms/wsc-tcp.md):
//!
//! * a session's window is the time-weighted mean of its congestion window
//!   from its first congestion event on (the sawtooth's mean); a session
//!   that never met one records the largest window it reached (what the path
//!   carried at least);
//! * the best-start window is the median of the last `history` records in
//!   the bucket of the session's start (robust to one unusual session),
//!   capped by `best_start_max`; the session starts with cwnd and ssthresh
//!   at that window (in congestion avoidance: the window is believed to be
//!   the path's);
//! * with no record in the bucket, the session falls back to the
//!   configured initial window and slow start, as NewReno.
//!
//! The records are the host's: the simulator keeps them per (sender node,
//! receiver node) pair across the flows of a run
//! ([`crate::CongestionControl::on_path_history`],
//! [`crate::CongestionControl::session_record`]).

use super::params::WscParams;
use crate::time::{Duration, Instant};

/// One past session on a path, as the sending host remembers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    /// When the session started (simulated time).
    pub started: Instant,
    /// The congestion window it reached at steady state, in segments.
    pub window: u32,
}

/// The best-start window in segments for a session starting at `now`, from
/// the `past` sessions on its path (oldest first), if the bucket holds any.
pub fn best_start(p: &WscParams, now: Instant, past: &[SessionRecord]) -> Option<u32> {
    let bucket = p.bucket_of(Duration::from_nanos(now.as_nanos()));
    let mut w: Vec<u32> = past
        .iter()
        .rev()
        .filter(|r| p.bucket_of(Duration::from_nanos(r.started.as_nanos())) == bucket)
        .take(p.history as usize)
        .map(|r| r.window.max(1))
        .collect();
    if w.is_empty() {
        return None;
    }
    w.sort_unstable();
    // the lower median for an even count: the cautious one
    let median = w[(w.len() - 1) / 2];
    Some(p.best_start_max.map_or(median, |m| median.min(m)))
}

/// The running measure of a session's steady-state window.
#[derive(Clone, Debug, Default)]
pub struct SteadyWindow {
    /// Time-weighted sum of cwnd (bytes × ns) since the first congestion event.
    area: f64,
    span: u64,
    last: Option<(Instant, u64)>,
    congested: bool,
    max_cwnd: u64,
}

impl SteadyWindow {
    /// The window is `cwnd` bytes from `now` on.
    pub fn observe(&mut self, now: Instant, cwnd: u64) {
        if let (true, Some((t, w))) = (self.congested, self.last) {
            let dt = now.saturating_since(t).as_nanos();
            self.area += w as f64 * dt as f64;
            self.span += dt;
        }
        self.max_cwnd = self.max_cwnd.max(cwnd);
        self.last = Some((now, cwnd));
    }

    /// A congestion event at `now`, after which the window is `cwnd` bytes.
    pub fn congestion(&mut self, now: Instant, cwnd: u64) {
        if !self.congested {
            self.congested = true;
            self.last = None;
        }
        self.observe(now, cwnd);
    }

    /// The steady-state window in segments of `mss` bytes (at least 1).
    pub fn segments(&self, mss: u64) -> u32 {
        let bytes = if self.span > 0 {
            self.area / self.span as f64
        } else {
            self.max_cwnd as f64
        };
        ((bytes / mss as f64).round() as u32).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(s: u64, window: u32) -> SessionRecord {
        SessionRecord {
            started: Instant::from_nanos(s * 1_000_000_000),
            window,
        }
    }

    #[test]
    fn the_median_of_the_same_bucket() {
        let p = WscParams::default(); // 1 h buckets from midnight
        let past = [rec(10, 40), rec(20, 10), rec(30, 30), rec(4000, 99)];
        // at 0:01 the bucket holds 40, 10, 30: median 30
        assert_eq!(
            best_start(&p, Instant::from_nanos(60_000_000_000), &past),
            Some(30)
        );
        // at 1:10 only the 99 of 1:06
        let t = Instant::from_nanos(4200 * 1_000_000_000);
        assert_eq!(best_start(&p, t, &past), Some(99));
        // at 2:00 nothing: slow start
        let t = Instant::from_nanos(7200 * 1_000_000_000);
        assert_eq!(best_start(&p, t, &past), None);
        let capped = WscParams {
            best_start_max: Some(20),
            ..WscParams::default()
        };
        assert_eq!(best_start(&capped, Instant::ZERO, &past), Some(20));
        // the last `history` records only
        let recent = WscParams {
            history: 1,
            ..WscParams::default()
        };
        assert_eq!(best_start(&recent, Instant::ZERO, &past), Some(30));
    }

    #[test]
    fn the_steady_window_is_the_time_mean_after_the_first_congestion() {
        let t = |ms: u64| Instant::from_nanos(ms * 1_000_000);
        let mut s = SteadyWindow::default();
        s.observe(t(0), 10_000);
        s.observe(t(100), 80_000);
        assert_eq!(s.segments(1000), 80, "no congestion yet: the largest");
        s.congestion(t(200), 40_000);
        s.observe(t(300), 60_000); // 40 for 100 ms
        s.observe(t(400), 60_000); // 60 for 100 ms
        assert_eq!(s.segments(1000), 50);
    }
}
