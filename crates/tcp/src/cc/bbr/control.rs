//! BBR's control parameters (draft, "BBR Control Parameters"): the pacing
//! rate, the congestion window with its loss-recovery and PROBE_RTT
//! modulations, and the restart from idle.

use super::state::{Machine, Mode};
use crate::cc::CaState;
use crate::rate::RateSample;
use crate::time::{Duration, Rate};

impl Machine {
    /// Draft `BBRMinPipeCwnd` (4 segments by default), in bytes.
    pub(super) fn min_pipe_cwnd(&self) -> u64 {
        self.p.probe_rtt_cwnd as u64 * self.mss
    }

    /// Draft `BBRInitPacingRate`: `high_gain` × initial window / RTT.
    pub(super) fn initial_pacing_rate(&self, rtt: Duration) -> Rate {
        let rtt = rtt.max(Duration::from_micros(1));
        Rate::from_bytes_per(self.initial_cwnd * self.mss, rtt)
            .scaled(self.p.high_gain)
            .max(Rate::from_bps(1))
    }

    /// The first RTT measurement replaces the assumed `initial_rtt` in the
    /// initial pacing rate (the draft initialises from SRTT when the
    /// connection has one; the sender reports it with the first ACK).
    pub(super) fn on_first_rtt(&mut self, srtt: Duration) {
        if !self.has_seen_rtt {
            self.has_seen_rtt = true;
            self.pacing_rate = self.initial_pacing_rate(srtt);
        }
    }

    /// Draft `BBRUpdateControlParameters` for an ACK with a rate sample.
    pub(super) fn update_control(&mut self, rs: &RateSample) {
        self.update_packet_conservation(rs);
        self.set_pacing_rate_with_gain(self.pacing_gain);
        self.set_cwnd(rs.newly_delivered, rs.newly_lost);
    }

    /// Draft `BBRSetPacingRateWithGain`: below the initial rate only once the
    /// pipe is full. The pacing rate applies to payload bytes as BBR measures
    /// them (see the module documentation on header overhead).
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let rate = Rate::from_bps(self.btl_bw()).scaled(gain);
        if rate > Rate::ZERO && (self.filled_pipe || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// Draft `BBRSetCwnd` with this ACK's delivered and lost bytes.
    pub(super) fn set_cwnd(&mut self, delivered: u64, lost: u64) {
        let target = self.inflight(self.cwnd_gain);
        self.modulate_cwnd_for_recovery(delivered, lost);
        if !self.packet_conservation {
            if self.filled_pipe {
                self.cwnd = (self.cwnd + delivered).min(target);
            } else if self.cwnd < target || self.delivered < self.initial_cwnd * self.mss {
                self.cwnd += delivered;
            }
            self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        }
        self.modulate_cwnd_for_probe_rtt();
    }

    /// Draft "Modulating cwnd in Loss Recovery", per ACK: deduct what was
    /// newly lost; during packet conservation send no more than was delivered.
    fn modulate_cwnd_for_recovery(&mut self, delivered: u64, lost: u64) {
        if lost > 0 {
            self.cwnd = self.cwnd.saturating_sub(lost).max(self.mss);
        }
        if self.packet_conservation {
            self.cwnd = self.cwnd.max(self.in_flight + delivered);
        }
    }

    /// Draft "Modulating cwnd in ProbeRTT".
    fn modulate_cwnd_for_probe_rtt(&mut self) {
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_pipe_cwnd());
        }
    }

    /// Packet conservation lasts the first round trip of a fast recovery: it
    /// ends when a packet sent after the recovery's first sample is acknowledged.
    fn update_packet_conservation(&mut self, rs: &RateSample) {
        if !self.packet_conservation {
            return;
        }
        match self.conservation_end {
            None => self.conservation_end = Some(rs.total_delivered),
            Some(end) if rs.prior_delivered >= end => self.packet_conservation = false,
            Some(_) => {}
        }
    }

    /// Draft `BBRSaveCwnd`: the last window before recovery or PROBE_RTT.
    /// "Before recovery" is judged on the state as of the last ACK, as in
    /// Linux: a recovery that starts again on the ACK that ended the previous
    /// one keeps the window saved before the first.
    pub(super) fn save_cwnd(&self) -> u64 {
        if !in_loss_recovery(self.prev_ca_state) && self.mode != Mode::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        }
    }

    /// Draft `BBRRestoreCwnd`.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// A fast retransmit: the window is saved; the new state takes effect
    /// with the ACK ([`Machine::on_ack_state`]).
    pub(super) fn on_fast_retransmit(&mut self) {
        self.prior_cwnd = self.save_cwnd();
    }

    /// Draft "upon retransmission timeout": cwnd = 1 packet. Packet
    /// conservation of an earlier fast recovery ends: every packet in flight
    /// is now presumed lost, and the window grows back by what is delivered.
    pub(super) fn on_enter_rto(&mut self) {
        self.prior_cwnd = self.save_cwnd();
        self.cwnd = self.mss;
        self.packet_conservation = false;
    }

    /// The sender's new recovery state. A timeout (`Loss`) counts at once;
    /// the other changes count at the end of the ACK that made them.
    pub(super) fn on_state(&mut self, state: CaState) {
        self.ca_state = state;
        if state == CaState::Loss {
            self.prev_ca_state = state;
        }
    }

    /// The recovery state at the end of an ACK that delivered `delivered`
    /// bytes, against the state at the end of the previous one (Linux's
    /// `bbr_set_cwnd_to_recover_or_restore`), so that a fast recovery that
    /// ends and starts again on one ACK is one recovery, as Linux sees it:
    ///
    /// * draft "upon entering Fast Recovery": cwnd = in flight + max(newly
    ///   delivered, 1 packet), packet conservation for the first round trip;
    /// * draft "upon exiting loss recovery": restore the saved window.
    pub(super) fn on_ack_state(&mut self, delivered: u64) {
        let (prev, state) = (self.prev_ca_state, self.ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.cwnd = self.in_flight + delivered.max(self.mss);
            self.packet_conservation = true;
            self.conservation_end = None;
        } else if in_loss_recovery(prev) && !in_loss_recovery(state) {
            self.packet_conservation = false;
            self.restore_cwnd();
            self.modulate_cwnd_for_probe_rtt();
        }
        self.prev_ca_state = state;
    }

    /// Draft "Restarting From Idle": when the application resumes sending
    /// into an empty pipe, pace at BtlBw (gain 1) in PROBE_BW, and do not
    /// enter PROBE_RTT on the first ACK. Detected when the sender reports it
    /// has nothing to send while nothing is in flight, so the rate applies
    /// to the first packet of the restart.
    pub(super) fn on_app_limited(&mut self) {
        if self.in_flight == 0 {
            self.idle_restart = true;
            if self.mode == Mode::ProbeBw {
                self.set_pacing_rate_with_gain(1.0);
            }
        }
    }
}

fn in_loss_recovery(state: CaState) -> bool {
    matches!(state, CaState::Recovery | CaState::Loss)
}
