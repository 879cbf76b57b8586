//! BBRv3's network path model: the bandwidth-delay product, the aggregation
//! estimate, and the loss-driven bounds, long-term (`inflight_longterm`,
//! draft-ietf-ccwg-bbr-06 section 5.5.10.2; `inflight_hi` in earlier
//! revisions and in Linux) and short-term (`bw_shortterm` and
//! `inflight_shortterm`, section 5.5.10.3; `bw_lo` and `inflight_lo`),
//! with the spurious-recovery undo of section 5.5.11.

use super::state::{AckPhase, Machine, State};
use crate::rate::RateSample;
use crate::time::Instant;

impl Machine {
    // ----- volumes (sections 5.6.4.2, 5.3.3.8)

    /// `BDPMultiple(bw, gain)`: the initial window while no RTT is known.
    pub(super) fn bdp_multiple(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.initial_cwnd * self.mss,
            Some(rtt) => (gain * bw * rtt.as_secs_f64()) as u64,
        }
    }

    /// `BBR.bdp`: `BBR.bw` × `BBR.min_rtt` (0 before both exist).
    pub(super) fn bdp(&self) -> u64 {
        self.min_rtt
            .map_or(0, |rtt| (self.bw * rtt.as_secs_f64()) as u64)
    }

    /// `QuantizationBudget`: at least the offload budget and MinPipeCwnd,
    /// two segments more in ProbeBW_UP.
    pub(super) fn quantization_budget(&self, cap: u64) -> u64 {
        let mut cap = cap.max(self.offload_budget).max(self.min_pipe_cwnd());
        if self.state == State::ProbeBwUp {
            cap += 2 * self.mss;
        }
        cap
    }

    /// `Inflight(bw, gain)`.
    pub(super) fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// `BBR.MinPipeCwnd` in bytes.
    pub(super) fn min_pipe_cwnd(&self) -> u64 {
        self.p.min_pipe_cwnd as u64 * self.mss
    }

    /// `TargetInflight`: the BDP, unless congestion cut cwnd below it.
    pub(super) fn target_inflight(&self) -> u64 {
        self.bdp().min(self.cwnd)
    }

    /// `InflightWithHeadroom`: `inflight_longterm` less `headroom` of it.
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == u64::MAX {
            return u64::MAX;
        }
        let headroom = ((self.p.headroom * self.inflight_longterm as f64) as u64).max(self.mss);
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd())
    }

    /// `UpdateACKAggregation` (section 5.5.9).
    pub(super) fn update_ack_aggregation(&mut self, now: Instant, rs: &RateSample) {
        if self.p.extra_acked_rounds == 0 {
            return;
        }
        let interval = now.saturating_since(self.extra_acked_interval_start);
        let mut expected = (self.bw * interval.as_secs_f64()) as u64;
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = now;
            expected = 0;
        }
        self.extra_acked_delivered += rs.newly_delivered;
        let extra = (self.extra_acked_delivered.saturating_sub(expected)).min(self.cwnd);
        let len = if self.full_bw_reached {
            self.p.extra_acked_rounds
        } else {
            1
        };
        self.extra_acked = self.extra_acked_filter.update(self.round_count, extra, len);
    }

    // ----- congestion signals (section 5.5.10.3)

    /// `UpdateLatestDeliverySignals`.
    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(Self::sample_rate(rs));
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// `AdvanceLatestDeliverySignals`.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample) {
        if self.loss_round_start {
            self.bw_latest = Self::sample_rate(rs);
            self.inflight_latest = rs.delivered;
            self.loss_events_in_round = 0;
        }
    }

    /// `ResetCongestionSignals`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// `UpdateCongestionSignals`: once per round, lower the short-term
    /// bounds if the round saw loss.
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample) {
        self.update_max_bw(rs);
        if !self.loss_round_start {
            return;
        }
        if !self.state.is_probing_bw() && self.is_loss_in_round {
            // InitLowerBounds, then LossLowerBounds
            if self.bw_shortterm.is_infinite() {
                self.bw_shortterm = self.max_bw.get();
            }
            if self.inflight_shortterm == u64::MAX {
                self.inflight_shortterm = self.cwnd;
            }
            let beta = self.p.beta;
            self.bw_shortterm = self.bw_latest.max(beta * self.bw_shortterm);
            self.inflight_shortterm = self
                .inflight_latest
                .max((beta * self.inflight_shortterm as f64) as u64);
        }
        self.is_loss_in_round = false;
    }

    /// `ResetShortTermModel`.
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = f64::INFINITY;
        self.inflight_shortterm = u64::MAX;
    }

    /// `BoundBWForModel`.
    pub(super) fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw.get().min(self.bw_shortterm);
    }

    /// `NoteLoss` (section 5.5.10.2), once per ACK that marked losses, after
    /// `C.delivered` counts the ACK. A congestion signal of ECN counts as one
    /// too (section 3.7).
    /// The state is saved for an undo only outside loss recovery: the save
    /// at the start of the recovery (`OnEnterFastRecovery`) holds for
    /// every round of it, so that a cut made inside it can be undone.
    pub(super) fn note_loss(&mut self) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = self.delivered;
            if self.recovery_start_delivered.is_none() && self.ca_state == crate::cc::CaState::Open
            {
                self.save_state_upon_loss();
            }
        }
        self.is_loss_in_round = true;
        self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
    }

    // ----- the long-term bound (section 5.5.10.2, 5.3.3.9)

    /// `IsInflightTooHigh`: more than `loss_thresh` of what was in flight
    /// when the acknowledged packet left was lost since; without SACK, any
    /// loss.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        rs.lost as f64 > rs.tx_in_flight as f64 * self.p.loss_thresh
            || (rs.lost > 0 && !self.has_sack)
    }

    /// The loss check of `HandleLostPacket`, run on each rate sample that
    /// reports losses since its packet was sent.
    pub(super) fn check_loss_too_high(&mut self, now: Instant, rs: &RateSample) {
        if rs.lost > 0 && self.is_bw_probe_sample && self.is_inflight_too_high(rs) {
            self.handle_inflight_too_high(now, rs);
        }
    }

    /// `HandleInflightTooHigh`: cut `inflight_longterm` to what was in
    /// flight, at least `beta` × the target, and leave ProbeBW_UP.
    fn handle_inflight_too_high(&mut self, now: Instant, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        if !rs.app_limited {
            let target = (self.target_inflight() as f64 * self.p.beta) as u64;
            self.inflight_longterm = rs.tx_in_flight.max(target);
        }
        if self.state == State::ProbeBwUp {
            self.undo_state = Some(State::ProbeBwUp);
            self.start_probe_bw_down(now);
        }
    }

    /// `AdaptLongTermModel`; true if it decided a state transition.
    pub(super) fn adapt_long_term_model(&mut self, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !rs.app_limited {
                self.advance_max_bw_filter();
            }
            if self.state.is_probe_bw()
                && self.prev_probe_precautionary
                && !self.prev_probe_too_high
            {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if !self.is_inflight_too_high(rs) {
            if self.inflight_longterm == u64::MAX {
                return false;
            }
            if rs.tx_in_flight > self.inflight_longterm {
                self.inflight_longterm = rs.tx_in_flight;
            }
            if self.state == State::ProbeBwUp {
                self.probe_inflight_longterm_upward(rs);
            }
        }
        false
    }

    /// `RaiseInflightLongtermSlope`: the growth doubles each round of UP.
    pub(super) fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(self.mss);
    }

    /// `ProbeInflightLongtermUpward`.
    fn probe_inflight_longterm_upward(&mut self, rs: &RateSample) {
        if !self.cwnd_limited || self.cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += rs.newly_delivered;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self.inflight_longterm.saturating_add(delta * self.mss);
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// `CheckStartupHighLoss` (section 5.3.1.3), at the end of a round:
    /// with SACK, a fast recovery at least a round old, a round whose loss
    /// rate passed `loss_thresh`, and `startup_full_loss_count` loss events
    /// in it; without SACK, any loss in fast recovery.
    pub(super) fn check_startup_high_loss(&mut self, rs: &RateSample) {
        if self.state != State::Startup || !self.loss_round_start {
            return;
        }
        let Some(start) = self.recovery_start_delivered else {
            return;
        };
        let high = if self.has_sack {
            rs.prior_delivered >= start
                && self.loss_events_in_round >= self.p.startup_full_loss_count
                && self.is_inflight_too_high(rs)
        } else {
            self.loss_events_in_round > 0
        };
        if high {
            self.undo_state = Some(State::Startup);
            self.full_bw_reached = true;
            self.inflight_longterm = self.bdp().max(self.inflight_latest);
        }
    }

    // ----- undo (section 5.5.11)

    /// `SaveStateUponLoss`.
    pub(super) fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
    }

    /// `HandleSpuriousLossDetection`.
    pub(super) fn handle_spurious_loss(&mut self) {
        self.restore_cwnd();
        self.is_loss_in_round = false;
        self.reset_full_bw();
        self.bw_shortterm = self.bw_shortterm.max(self.undo_bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(self.undo_inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(self.undo_inflight_longterm);
        match self.undo_state {
            Some(State::Startup) if self.state != State::Startup => {
                self.full_bw_reached = false;
                if self.state != State::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(State::ProbeBwUp) if !matches!(self.state, State::ProbeBwUp | State::ProbeRtt) => {
                self.start_probe_bw_refill();
            }
            _ => {}
        }
        self.undo_state = None;
    }
}
