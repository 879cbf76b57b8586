//! BBRv3's parameters, as written in a scenario
//! (`cc = { algorithm = "bbr3", ... }`).
//!
//! The defaults are the constants of draft-ietf-ccwg-bbr-06 (sections 2.5 to
//! 2.16, the table of section 5.6.1 and the pseudo-code of section 5);
//! [`Bbr3Params::validate`] refuses values that would stall or break the
//! state machine.

use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// Parameters of BBRv3. Every field has a default; unknown fields are errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bbr3Params {
    /// Pacing gain of Startup, 4 ln 2 (section 2.5, `StartupPacingGain`;
    /// default 2.77).
    pub startup_pacing_gain: f64,
    /// Pacing gain of Drain (section 2.5, `DrainPacingGain`; default 0.5).
    pub drain_pacing_gain: f64,
    /// cwnd gain of every state but ProbeBW_UP and ProbeRTT (section 2.6,
    /// `DefaultCwndGain`; default 2).
    pub cwnd_gain: f64,
    /// Pacing gain of ProbeBW_DOWN (section 5.3.3.1; default 0.9).
    pub probe_down_pacing_gain: f64,
    /// Pacing gain of ProbeBW_UP (section 5.6.1; default 1.25).
    pub probe_up_pacing_gain: f64,
    /// cwnd gain of ProbeBW_UP (section 5.6.1; default 2.25).
    pub probe_up_cwnd_gain: f64,
    /// cwnd gain of ProbeRTT (section 2.16.2, `ProbeRTTCwndGain`; default 0.5).
    pub probe_rtt_cwnd_gain: f64,
    /// Pacing margin: pace this fraction below the bandwidth estimate
    /// (section 2.5, `PacingMarginPercent` / 100; default 0.01).
    pub pacing_margin: f64,
    /// Highest tolerated loss rate per round while probing (section 2.8,
    /// `LossThresh`; default 0.02).
    pub loss_thresh: f64,
    /// Multiplicative decrease per round with loss (section 2.8, `Beta`;
    /// default 0.7).
    pub beta: f64,
    /// Share of `inflight_longterm` left free for cross traffic (section
    /// 2.8, `Headroom`; default 0.15).
    pub headroom: f64,
    /// Growth of the bandwidth per round that Startup and ProbeBW_UP still
    /// count as growth (section 5.3.1.2; default 1.25).
    pub full_bw_growth: f64,
    /// Rounds without that growth after which the pipe is full (section
    /// 5.3.1.2; default 3).
    pub full_bw_rounds: u32,
    /// Loss events in a round that Startup's loss exit needs (section
    /// 5.3.1.3, `StartupFullLossCnt`; default 6).
    pub startup_full_loss_count: u32,
    /// Lifetime of the min RTT estimate (section 2.16.1, `MinRTTFilterLen`;
    /// default 10 s).
    pub min_rtt_window: Duration,
    /// Interval between ProbeRTTs: the lifetime of `probe_rtt_min_delay`
    /// (section 2.16.2, `ProbeRTTInterval`; default 5 s).
    pub probe_rtt_interval: Duration,
    /// Time ProbeRTT holds the window once in flight has fallen to it
    /// (section 2.16.2, `ProbeRTTDuration`; default 200 ms).
    pub probe_rtt_duration: Duration,
    /// The fixed part of the wait before probing for bandwidth (section
    /// 5.3.3.8, `PickProbeWait`; default 2 s).
    pub probe_wait_base: Duration,
    /// The random part of that wait: uniform in `[0, probe_wait_random)`
    /// (default 1 s).
    pub probe_wait_random: Duration,
    /// Upper bound of the Reno-coexistence probe interval in rounds
    /// (section 5.3.3.8, `IsRenoCoexistenceProbeTime`; default 63).
    pub max_reno_rounds: u32,
    /// Window of the aggregation (extra-acked) filter in rounds after
    /// Startup (section 2.12, `ExtraAckedFilterLen`; default 10); 0 turns
    /// the aggregation allowance off.
    pub extra_acked_rounds: u32,
    /// Floor of cwnd in segments (section 2.8, `MinPipeCwnd`; default 4).
    pub min_pipe_cwnd: u32,
    /// RTT assumed for the initial pacing rate before any RTT is measured
    /// (section 5.6.2; default 1 ms).
    pub initial_rtt: Duration,
    /// Seed of the generator that draws the randomized probe waits
    /// (mixed with the instant the connection opened; default 0).
    pub seed: u64,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Bbr3Params {
            startup_pacing_gain: 2.77,
            drain_pacing_gain: 0.5,
            cwnd_gain: 2.0,
            probe_down_pacing_gain: 0.9,
            probe_up_pacing_gain: 1.25,
            probe_up_cwnd_gain: 2.25,
            probe_rtt_cwnd_gain: 0.5,
            pacing_margin: 0.01,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            startup_full_loss_count: 6,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_interval: Duration::from_secs(5),
            probe_rtt_duration: Duration::from_millis(200),
            probe_wait_base: Duration::from_secs(2),
            probe_wait_random: Duration::from_secs(1),
            max_reno_rounds: 63,
            extra_acked_rounds: 10,
            min_pipe_cwnd: 4,
            initial_rtt: Duration::from_millis(1),
            seed: 0,
        }
    }
}

impl Bbr3Params {
    /// Checks the values; the message is `"field: what is wrong"`.
    pub fn validate(&self) -> Result<(), String> {
        let range = |name: &str, v: f64, lo: f64, hi: f64| {
            if v.is_finite() && v > lo && v <= hi {
                Ok(())
            } else {
                Err(format!(
                    "{name}: {v} is out of range, it must be above {lo} and at most {hi}"
                ))
            }
        };
        range("startup_pacing_gain", self.startup_pacing_gain, 1.0, 100.0)?;
        range("drain_pacing_gain", self.drain_pacing_gain, 0.0, 1.0)?;
        // below 1 the window could never hold one BDP: Drain would not end
        range("cwnd_gain", self.cwnd_gain, 0.999_999, 100.0)?;
        range(
            "probe_down_pacing_gain",
            self.probe_down_pacing_gain,
            0.0,
            1.0,
        )?;
        range(
            "probe_up_pacing_gain",
            self.probe_up_pacing_gain,
            1.0,
            100.0,
        )?;
        range(
            "probe_up_cwnd_gain",
            self.probe_up_cwnd_gain,
            0.999_999,
            100.0,
        )?;
        range("probe_rtt_cwnd_gain", self.probe_rtt_cwnd_gain, 0.0, 1.0)?;
        if !(self.pacing_margin.is_finite() && (0.0..0.5).contains(&self.pacing_margin)) {
            return Err(format!(
                "pacing_margin: {} is out of range 0..0.5",
                self.pacing_margin
            ));
        }
        range("loss_thresh", self.loss_thresh, 0.0, 0.5)?;
        range("beta", self.beta, 0.0, 0.999_999)?;
        if !(self.headroom.is_finite() && (0.0..1.0).contains(&self.headroom)) {
            return Err(format!("headroom: {} is out of range 0..1", self.headroom));
        }
        range("full_bw_growth", self.full_bw_growth, 1.0, 10.0)?;
        if self.full_bw_rounds == 0 {
            return Err("full_bw_rounds: must be at least 1".into());
        }
        if self.startup_full_loss_count == 0 {
            return Err("startup_full_loss_count: must be at least 1".into());
        }
        if self.probe_rtt_duration.is_zero() {
            return Err("probe_rtt_duration: must be above zero".into());
        }
        if self.probe_rtt_interval <= self.probe_rtt_duration {
            return Err(format!(
                "probe_rtt_interval: {} must be longer than probe_rtt_duration {}",
                self.probe_rtt_interval, self.probe_rtt_duration
            ));
        }
        if self.min_rtt_window < self.probe_rtt_interval {
            return Err(format!(
                "min_rtt_window: {} must be at least probe_rtt_interval {}",
                self.min_rtt_window, self.probe_rtt_interval
            ));
        }
        if self.probe_wait_base.is_zero() {
            return Err("probe_wait_base: must be above zero".into());
        }
        if self.max_reno_rounds == 0 {
            return Err("max_reno_rounds: must be at least 1".into());
        }
        if self.extra_acked_rounds > 1000 {
            return Err(format!(
                "extra_acked_rounds: {} is out of range 0..=1000",
                self.extra_acked_rounds
            ));
        }
        if self.min_pipe_cwnd == 0 {
            return Err("min_pipe_cwnd: must be at least 1 segment".into());
        }
        if self.initial_rtt.is_zero() {
            return Err("initial_rtt: must be above zero".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_drafts_and_valid() {
        let p = Bbr3Params::default();
        assert!(p.validate().is_ok());
        assert_eq!(p.startup_pacing_gain, 2.77);
        assert_eq!((p.beta, p.loss_thresh, p.headroom), (0.7, 0.02, 0.15));
    }

    #[test]
    fn bad_values_name_the_field() {
        for (json, what) in [
            (r#"{"beta": 1.0}"#, "beta: 1 is out of range"),
            (r#"{"loss_thresh": 0}"#, "loss_thresh: 0 is out of range"),
            (r#"{"cwnd_gain": 0.5}"#, "cwnd_gain: 0.5 is out of range"),
            (r#"{"full_bw_rounds": 0}"#, "full_bw_rounds: must be"),
            (r#"{"probe_rtt_interval": "100ms"}"#, "probe_rtt_interval: "),
            (r#"{"min_pipe_cwnd": 0}"#, "min_pipe_cwnd: must be"),
        ] {
            let p: Bbr3Params = serde_json::from_str(json).unwrap();
            let e = p.validate().unwrap_err();
            assert!(e.contains(what), "{json}: {e}");
        }
    }
}
