//! BBRv3's control parameters (draft-ietf-ccwg-bbr-06 section 5.6): the
//! pacing rate, the send quantum's offload budget and the congestion window
//! with its loss-recovery, ProbeRTT and model bounds.

use super::state::{Machine, State};
use crate::cc::CaState;
use crate::rate::RateSample;
use crate::time::{Duration, Rate};

/// Largest send quantum (section 5.6.3): 64 KB.
const MAX_SEND_QUANTUM: u64 = 64 * 1024;

impl Machine {
    /// `InitPacingRate`: `startup_pacing_gain` × initial window / RTT.
    pub(super) fn initial_pacing_rate(&self, rtt: Duration) -> Rate {
        let rtt = rtt.max(Duration::from_micros(1));
        Rate::from_bytes_per(self.initial_cwnd * self.mss, rtt)
            .scaled(self.p.startup_pacing_gain)
            .max(Rate::from_bps(1))
    }

    /// The first RTT measurement replaces the assumed `initial_rtt`.
    pub(super) fn on_first_rtt(&mut self, srtt: Duration) {
        if !self.has_seen_rtt {
            self.has_seen_rtt = true;
            self.pacing_rate = self.initial_pacing_rate(srtt);
        }
    }

    /// `UpdateControlParameters` for one rate sample.
    pub(super) fn update_control(&mut self, rs: &RateSample) {
        self.set_pacing_rate_with_gain(self.pacing_gain);
        self.set_send_quantum();
        self.set_cwnd(rs.newly_delivered);
    }

    /// `SetPacingRateWithGain`: `gain` × bw less the pacing margin; below
    /// the current rate only once the pipe was found full.
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let bytes_per_sec = gain * self.bw * (1.0 - self.p.pacing_margin);
        let rate = Rate::from_bps((bytes_per_sec * 8.0) as u64);
        if rate > Rate::ZERO && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// `SetSendQuantum` and the TCP offload budget of section 5.5.8.1
    /// (three quanta). wavelab's sender still sends one segment at a time
    /// (see the module documentation); the budget only sets a floor under
    /// the window.
    fn set_send_quantum(&mut self) {
        let quantum = self
            .pacing_rate
            .bytes_in(Duration::from_millis(1))
            .min(MAX_SEND_QUANTUM)
            .max(2 * self.mss);
        self.offload_budget = 3 * quantum;
    }

    /// `SetCwnd` with the ACK's newly delivered bytes.
    pub(super) fn set_cwnd(&mut self, newly_acked: u64) {
        self.update_max_inflight();
        if self.full_bw_reached {
            self.cwnd = (self.cwnd + newly_acked).min(self.max_inflight);
        } else if self.cwnd < self.max_inflight || self.delivered < self.initial_cwnd * self.mss {
            self.cwnd += newly_acked;
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        self.bound_cwnd_for_probe_rtt();
        self.bound_cwnd_for_model();
    }

    /// `UpdateMaxInflight`.
    fn update_max_inflight(&mut self) {
        let cap = self.bdp_multiple(self.bw, self.cwnd_gain) + self.extra_acked;
        self.max_inflight = self.quantization_budget(cap);
    }

    /// `ProbeRTTCwnd`: half a BDP, at least MinPipeCwnd.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, self.p.probe_rtt_cwnd_gain)
            .max(self.min_pipe_cwnd())
    }

    /// `BoundCwndForProbeRTT`.
    pub(super) fn bound_cwnd_for_probe_rtt(&mut self) {
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `BoundCwndForModel` (section 5.6.4.7).
    pub(super) fn bound_cwnd_for_model(&mut self) {
        let mut cap = u64::MAX;
        if self.state.is_probe_bw() && self.state != State::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, State::ProbeRtt | State::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }

    /// `SaveCwnd` (section 5.6.4.4).
    pub(super) fn save_cwnd(&mut self) {
        if !in_loss_recovery(self.ca_state) && self.state != State::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `RestoreCwnd`.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// `OnEnterFastRecovery`: save the window and the model.
    pub(super) fn on_enter_fast_recovery(&mut self) {
        self.save_cwnd();
        self.save_state_upon_loss();
        self.recovery_start_delivered = Some(self.delivered);
    }

    /// `OnEnterRTO`: save, then one segment above what is in flight.
    pub(super) fn on_enter_rto(&mut self) {
        self.save_cwnd();
        self.save_state_upon_loss();
        self.cwnd = self.in_flight + self.mss;
    }

    /// The sender's recovery state changed: leaving recovery restores the
    /// window saved on entry (section 5.6.4.4), bounded by the model.
    pub(super) fn on_state(&mut self, state: crate::cc::CaState) {
        let was = self.ca_state;
        self.ca_state = state;
        if in_loss_recovery(was) && !in_loss_recovery(state) {
            self.recovery_start_delivered = None;
            self.restore_cwnd();
            self.bound_cwnd_for_probe_rtt();
            self.bound_cwnd_for_model();
        }
    }
}

fn in_loss_recovery(state: CaState) -> bool {
    matches!(state, CaState::Recovery | CaState::Loss)
}
