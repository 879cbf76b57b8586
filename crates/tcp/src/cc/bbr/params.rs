//! BBR's parameters, as written in a scenario (`cc = { algorithm = "bbr", ... }`).
//!
//! The defaults are the constants of draft-cardwell-iccrg-bbr-congestion-control-00
//! (section "BBR Algorithm Details" and the state machine's sections) and of the
//! ACM Queue 2016 article; [`BbrParams::validate`] refuses values that would
//! stall or break the state machine.

use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// 2 / ln 2: the smallest gain that doubles the sending rate every round trip
/// (draft, "Startup"). Pacing and cwnd gain of STARTUP; its inverse is DRAIN's
/// pacing gain.
pub const DEFAULT_HIGH_GAIN: f64 = 2.885_390_081_777_926_8;

/// Largest `bw_window_rounds` accepted: the bandwidth filter keeps one entry per
/// round of its window.
pub const MAX_BW_WINDOW_ROUNDS: u32 = 1000;

/// Parameters of BBR v1. Every field has a default; unknown fields are errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrParams {
    /// Pacing and cwnd gain of STARTUP; DRAIN paces at its inverse
    /// (default 2/ln 2 = 2.885).
    pub high_gain: f64,
    /// cwnd gain of PROBE_BW: cwnd = `cwnd_gain` × BDP (default 2).
    pub cwnd_gain: f64,
    /// Time PROBE_RTT holds the window at `probe_rtt_cwnd` once in flight
    /// has fallen to it (default 200 ms).
    pub probe_rtt_duration: Duration,
    /// Lifetime of the min RTT estimate: PROBE_RTT starts when it was not
    /// lowered or matched for this long (default 10 s).
    pub min_rtt_window: Duration,
    /// Length of the bottleneck-bandwidth max filter in round trips
    /// (default 10).
    pub bw_window_rounds: u32,
    /// Window of PROBE_RTT and the floor of cwnd, in segments (draft's
    /// BBRMinPipeCwnd; default 4).
    pub probe_rtt_cwnd: u32,
    /// Bandwidth growth per round that STARTUP still counts as growth
    /// (default 1.25: 25 %).
    pub full_bw_growth: f64,
    /// Rounds without that growth after which the pipe is full (default 3).
    pub full_bw_rounds: u32,
    /// RTT assumed for the initial pacing rate while no RTT has been measured
    /// (default 1 ms, the draft's choice).
    pub initial_rtt: Duration,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            high_gain: DEFAULT_HIGH_GAIN,
            cwnd_gain: 2.0,
            probe_rtt_duration: Duration::from_millis(200),
            min_rtt_window: Duration::from_secs(10),
            bw_window_rounds: 10,
            probe_rtt_cwnd: 4,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            initial_rtt: Duration::from_millis(1),
        }
    }
}

impl BbrParams {
    /// Checks the values; the message is `"field: what is wrong"`.
    pub fn validate(&self) -> Result<(), String> {
        let gain = |name: &str, v: f64, min: f64, max: f64| {
            if v.is_finite() && v > min && v <= max {
                Ok(())
            } else {
                Err(format!(
                    "{name}: {v} is out of range, it must be above {min} and at most {max}"
                ))
            }
        };
        gain("high_gain", self.high_gain, 1.0, 100.0)?;
        // A cwnd gain below 1 could never hold one BDP in flight: DRAIN would
        // never end and PROBE_BW could not reach its pacing rate.
        if !(self.cwnd_gain.is_finite() && (1.0..=100.0).contains(&self.cwnd_gain)) {
            return Err(format!(
                "cwnd_gain: {} is out of range 1..=100",
                self.cwnd_gain
            ));
        }
        gain("full_bw_growth", self.full_bw_growth, 1.0, 10.0)?;
        if self.probe_rtt_duration.is_zero() {
            return Err("probe_rtt_duration: must be above zero".into());
        }
        if self.min_rtt_window <= self.probe_rtt_duration {
            return Err(format!(
                "min_rtt_window: {} must be longer than probe_rtt_duration {}",
                self.min_rtt_window, self.probe_rtt_duration
            ));
        }
        if !(1..=MAX_BW_WINDOW_ROUNDS).contains(&self.bw_window_rounds) {
            return Err(format!(
                "bw_window_rounds: {} is out of range 1..={MAX_BW_WINDOW_ROUNDS}",
                self.bw_window_rounds
            ));
        }
        if self.probe_rtt_cwnd == 0 {
            return Err("probe_rtt_cwnd: must be at least 1 segment".into());
        }
        if self.full_bw_rounds == 0 {
            return Err("full_bw_rounds: must be at least 1".into());
        }
        if self.initial_rtt.is_zero() {
            return Err("initial_rtt: must be above zero".into());
        }
        Ok(())
    }
}
