//! BBRv3's state and its state machine: draft-ietf-ccwg-bbr-06 sections
//! 5.2 (per-ACK organisation), 5.3 (Startup, Drain, ProbeBW's four phases,
//! ProbeRTT), 5.4 (restart from idle) and 5.5.1-5.5.7 (rounds, max_bw,
//! min_rtt). The loss-driven bounds are in `model`, the control
//! parameters in `control`.

use super::filters::{MaxBwFilter, RoundMaxFilter, SplitMix64};
use super::params::Bbr3Params;
use crate::cc::{CaState, WindowStart};
use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};

/// BBRv3's states (section 5.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Exponential search for the bandwidth (pacing gain 2.77, cwnd gain 2).
    Startup,
    /// Drains Startup's queue (pacing gain 0.5).
    Drain,
    /// ProbeBW's deceleration (pacing gain 0.9).
    ProbeBwDown,
    /// ProbeBW's cruising at the estimated bandwidth.
    ProbeBwCruise,
    /// One round at the estimated bandwidth to fill the pipe before probing.
    ProbeBwRefill,
    /// ProbeBW's acceleration (pacing gain 1.25, cwnd gain 2.25).
    ProbeBwUp,
    /// Half a BDP in flight for 200 ms and a round, to measure min_rtt.
    ProbeRtt,
}

impl State {
    /// Numeric code of the `state` metric: Startup 0, Drain 1, DOWN 2,
    /// CRUISE 3, REFILL 4, UP 5, ProbeRTT 6.
    pub fn code(self) -> u8 {
        self as u8
    }
    /// Name as in the draft.
    pub fn name(self) -> &'static str {
        match self {
            State::Startup => "startup",
            State::Drain => "drain",
            State::ProbeBwDown => "probe_bw_down",
            State::ProbeBwCruise => "probe_bw_cruise",
            State::ProbeBwRefill => "probe_bw_refill",
            State::ProbeBwUp => "probe_bw_up",
            State::ProbeRtt => "probe_rtt",
        }
    }
    /// True for the four ProbeBW phases (`IsInAProbeBWState`).
    pub fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }
    /// True while probing for bandwidth (`IsProbingBW`): Startup, REFILL, UP.
    pub fn is_probing_bw(self) -> bool {
        matches!(
            self,
            State::Startup | State::ProbeBwRefill | State::ProbeBwUp
        )
    }
}

/// What the ACKs arriving mean for bandwidth probing (section 2.14, `ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// All of BBRv3's state; `Bbr3` boxes it.
#[derive(Clone, Debug)]
pub(super) struct Machine {
    pub(super) p: Bbr3Params,
    pub(super) mss: u64,
    pub(super) initial_cwnd: u64,
    pub(super) rng: SplitMix64,

    // ----- connection state as the algorithm sees it
    pub(super) cwnd: u64,
    pub(super) pacing_rate: Rate,
    pub(super) in_flight: u64,
    pub(super) delivered: u64,
    pub(super) cwnd_limited: bool,
    pub(super) ca_state: CaState,
    pub(super) has_sack: bool,
    pub(super) has_seen_rtt: bool,
    pub(super) request_app_limited: bool,
    /// An ACK marked losses; noted once `C.delivered` counts it.
    pub(super) pending_loss: bool,

    // ----- state machine
    pub(super) state: State,
    pub(super) pacing_gain: f64,
    pub(super) cwnd_gain: f64,
    pub(super) round_count: u64,
    pub(super) round_start: bool,
    pub(super) next_round_delivered: u64,
    pub(super) idle_restart: bool,
    pub(super) drain_start_round: u64,

    // ----- model: bandwidth (bytes per second) and volumes (bytes)
    pub(super) max_bw: MaxBwFilter,
    pub(super) cycle_count: u64,
    pub(super) bw: f64,
    pub(super) bw_shortterm: f64,
    pub(super) inflight_shortterm: u64,
    pub(super) inflight_longterm: u64,
    pub(super) max_inflight: u64,
    pub(super) offload_budget: u64,
    pub(super) extra_acked: u64,
    pub(super) extra_acked_filter: RoundMaxFilter,
    pub(super) extra_acked_interval_start: Instant,
    pub(super) extra_acked_delivered: u64,

    // ----- congestion signals
    pub(super) bw_latest: f64,
    pub(super) inflight_latest: u64,
    pub(super) loss_round_delivered: u64,
    pub(super) loss_round_start: bool,
    pub(super) is_loss_in_round: bool,
    pub(super) loss_events_in_round: u32,
    /// C.delivered when the current fast recovery started.
    pub(super) recovery_start_delivered: Option<u64>,

    // ----- Startup
    pub(super) full_bw_reached: bool,
    pub(super) full_bw_now: bool,
    pub(super) full_bw: f64,
    pub(super) full_bw_count: u32,

    // ----- ProbeBW
    pub(super) ack_phase: AckPhase,
    pub(super) is_bw_probe_sample: bool,
    pub(super) bw_probe_up_acked: u64,
    pub(super) probe_up_acked_per_inc: u64,
    pub(super) bw_probe_up_rounds: u32,
    pub(super) rounds_since_probe_up: u64,
    pub(super) bw_probe_wait: Duration,
    pub(super) cycle_stamp: Instant,
    pub(super) prev_probe_too_high: bool,
    pub(super) prev_probe_precautionary: bool,

    // ----- undo
    pub(super) prior_cwnd: u64,
    pub(super) undo_state: Option<State>,
    pub(super) undo_bw_shortterm: f64,
    pub(super) undo_inflight_shortterm: u64,
    pub(super) undo_inflight_longterm: u64,

    // ----- min_rtt and ProbeRTT
    pub(super) min_rtt: Option<Duration>,
    pub(super) min_rtt_stamp: Instant,
    pub(super) probe_rtt_min_delay: Option<Duration>,
    pub(super) probe_rtt_min_stamp: Instant,
    pub(super) probe_rtt_expired: bool,
    pub(super) probe_rtt_done_stamp: Option<Instant>,
    pub(super) probe_rtt_round_done: bool,
}

impl Machine {
    /// `OnInit` (section 5.2.1).
    pub(super) fn new(p: &Bbr3Params, start: &WindowStart) -> Self {
        let mss = start.mss.max(1) as u64;
        let initial_cwnd = start.initial_cwnd.max(1) as u64;
        let mut m = Machine {
            p: p.clone(),
            mss,
            initial_cwnd,
            rng: SplitMix64::new(p.seed),
            cwnd: initial_cwnd * mss,
            pacing_rate: Rate::ZERO,
            in_flight: 0,
            delivered: 0,
            cwnd_limited: false,
            ca_state: CaState::Open,
            has_sack: true,
            has_seen_rtt: false,
            request_app_limited: false,
            pending_loss: false,
            state: State::Startup,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.cwnd_gain,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            idle_restart: false,
            drain_start_round: 0,
            max_bw: MaxBwFilter::default(),
            cycle_count: 0,
            bw: 0.0,
            bw_shortterm: f64::INFINITY,
            inflight_shortterm: u64::MAX,
            inflight_longterm: u64::MAX,
            max_inflight: initial_cwnd * mss,
            offload_budget: 0,
            extra_acked: 0,
            extra_acked_filter: RoundMaxFilter::default(),
            extra_acked_interval_start: Instant::ZERO,
            extra_acked_delivered: 0,
            bw_latest: 0.0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            recovery_start_delivered: None,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0.0,
            full_bw_count: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: u64::MAX,
            bw_probe_up_rounds: 0,
            rounds_since_probe_up: 0,
            bw_probe_wait: Duration::ZERO,
            cycle_stamp: Instant::ZERO,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            prior_cwnd: 0,
            undo_state: None,
            undo_bw_shortterm: 0.0,
            undo_inflight_shortterm: 0,
            undo_inflight_longterm: 0,
            min_rtt: None,
            min_rtt_stamp: Instant::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Instant::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
        };
        m.pacing_rate = m.initial_pacing_rate(p.initial_rtt);
        m
    }

    /// The connection opened at `now`: the clocks of the min_rtt filters
    /// start here, and the instant seeds the probe-wait generator.
    pub(super) fn on_established(&mut self, now: Instant) {
        self.min_rtt_stamp = now;
        self.probe_rtt_min_stamp = now;
        self.extra_acked_interval_start = now;
        self.rng.mix(now.as_nanos());
    }

    /// `UpdateModelAndState` (section 5.2.3) for one rate sample.
    pub(super) fn update_model_and_state(&mut self, now: Instant, rs: &RateSample) {
        self.delivered = rs.total_delivered;
        self.update_latest_delivery_signals(rs);
        self.update_congestion_signals(rs);
        self.update_ack_aggregation(now, rs);
        self.check_full_bw_reached(rs);
        self.check_startup_done(rs);
        self.check_drain_done(now);
        self.update_probe_bw_cycle_phase(now, rs);
        self.update_min_rtt(now, rs);
        self.check_probe_rtt(now, rs);
        self.advance_latest_delivery_signals(rs);
        self.bound_bw_for_model();
    }

    /// `RS.delivery_rate` in bytes per second (0 without a rate).
    pub(super) fn sample_rate(rs: &RateSample) -> f64 {
        rs.rate.map_or(0.0, |r| r.as_bytes_per_sec_f64())
    }

    // ----- rounds and max_bw (sections 5.5.1-5.5.6)

    /// `UpdateRound`.
    fn update_round(&mut self, rs: &RateSample) {
        if rs.prior_delivered >= self.next_round_delivered {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_probe_up += 1;
            self.round_start = true;
        } else {
            self.round_start = false;
        }
    }

    /// `StartRound`.
    pub(super) fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    /// `UpdateMaxBw`.
    pub(super) fn update_max_bw(&mut self, rs: &RateSample) {
        self.update_round(rs);
        let rate = Self::sample_rate(rs);
        if rate > 0.0 && (rate >= self.max_bw.get() || !rs.app_limited) {
            self.max_bw.update(rate);
        }
    }

    /// `AdvanceMaxBwFilter`.
    pub(super) fn advance_max_bw_filter(&mut self) {
        self.cycle_count += 1;
        self.max_bw.advance();
    }

    // ----- Startup and Drain (sections 5.3.1, 5.3.2)

    /// `EnterStartup`.
    pub(super) fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.pacing_gain = self.p.startup_pacing_gain;
        self.cwnd_gain = self.p.cwnd_gain;
    }

    /// `ResetFullBW`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// `CheckFullBWReached` (section 5.3.1.2).
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || !self.round_start || rs.app_limited {
            return;
        }
        let rate = Self::sample_rate(rs);
        if rate >= self.full_bw * self.p.full_bw_growth {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= self.p.full_bw_rounds;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// `CheckStartupDone`.
    fn check_startup_done(&mut self, rs: &RateSample) {
        self.check_startup_high_loss(rs);
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// `EnterDrain`.
    fn enter_drain(&mut self) {
        self.state = State::Drain;
        self.pacing_gain = self.p.drain_pacing_gain;
        self.cwnd_gain = self.p.cwnd_gain;
        self.drain_start_round = self.round_count;
    }

    /// `CheckDrainDone`: in flight down to one BDP, or three rounds.
    fn check_drain_done(&mut self, now: Instant) {
        if self.state == State::Drain
            && (self.in_flight <= self.inflight(self.bw, 1.0)
                || self.round_count > self.drain_start_round + 3)
        {
            self.enter_probe_bw(now);
        }
    }

    // ----- ProbeBW (section 5.3.3)

    /// `EnterProbeBW`.
    fn enter_probe_bw(&mut self, now: Instant) {
        self.cwnd_gain = self.p.cwnd_gain;
        self.start_probe_bw_down(now);
    }

    /// `StartProbeBW_DOWN`.
    pub(super) fn start_probe_bw_down(&mut self, now: Instant) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = u64::MAX;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_state(State::ProbeBwDown);
    }

    /// `StartProbeBW_CRUISE`.
    fn start_probe_bw_cruise(&mut self) {
        self.set_state(State::ProbeBwCruise);
    }

    /// `StartProbeBW_REFILL`.
    pub(super) fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_state(State::ProbeBwRefill);
    }

    /// `StartProbeBW_UP`.
    fn start_probe_bw_up(&mut self, rs: &RateSample) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = Self::sample_rate(rs);
        self.set_state(State::ProbeBwUp);
        self.raise_inflight_longterm_slope();
    }

    /// Enters a ProbeBW phase with its gains (section 5.6.1's table).
    fn set_state(&mut self, s: State) {
        self.state = s;
        let p = &self.p;
        (self.pacing_gain, self.cwnd_gain) = match s {
            State::ProbeBwDown => (p.probe_down_pacing_gain, p.cwnd_gain),
            State::ProbeBwCruise | State::ProbeBwRefill => (1.0, p.cwnd_gain),
            State::ProbeBwUp => (p.probe_up_pacing_gain, p.probe_up_cwnd_gain),
            State::Startup => (p.startup_pacing_gain, p.cwnd_gain),
            State::Drain => (p.drain_pacing_gain, p.cwnd_gain),
            State::ProbeRtt => (1.0, p.probe_rtt_cwnd_gain),
        };
    }

    /// `UpdateProbeBWCyclePhase` (section 5.3.3.9).
    fn update_probe_bw_cycle_phase(&mut self, now: Instant, rs: &RateSample) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(rs) {
            return;
        }
        let state = self.state;
        match state {
            State::ProbeBwDown => {
                if self.is_time_to_probe_bw(now) {
                    return;
                }
                if self.is_time_to_cruise() {
                    self.start_probe_bw_cruise();
                }
            }
            State::ProbeBwCruise => {
                self.is_time_to_probe_bw(now);
            }
            // after one round of REFILL, UP
            State::ProbeBwRefill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_probe_bw_up(rs);
            }
            State::ProbeBwUp if self.is_time_to_go_down(rs) => {
                self.prev_probe_too_high = false;
                self.start_probe_bw_down(now);
            }
            _ => {}
        }
    }

    /// `IsTimeToCruise`: headroom left and no queue.
    fn is_time_to_cruise(&self) -> bool {
        self.in_flight <= self.inflight_with_headroom()
            && self.in_flight <= self.inflight(self.max_bw.get(), 1.0)
    }

    /// `IsTimeToGoDown`.
    fn is_time_to_go_down(&mut self, rs: &RateSample) -> bool {
        if self.prev_probe_too_high && self.in_flight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.cwnd_limited && self.cwnd >= self.inflight_longterm {
            self.reset_full_bw();
            self.full_bw = Self::sample_rate(rs);
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    /// `IsTimeToProbeBW` (section 5.3.3.8): the randomized wall-clock
    /// wait, or the Reno-coexistence round count.
    fn is_time_to_probe_bw(&mut self, now: Instant) -> bool {
        if now > self.cycle_stamp + self.bw_probe_wait || self.is_reno_coexistence_probe_time() {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// `PickProbeWait`: 0 or 1 rounds already counted, and a wall-clock
    /// bound of `probe_wait_base` plus a uniform draw below
    /// `probe_wait_random`.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe_up = self.rng.next_u64() & 1;
        let extra = self.p.probe_wait_random.as_secs_f64() * self.rng.next_f64();
        self.bw_probe_wait = self.p.probe_wait_base + Duration::from_secs_f64(extra);
    }

    /// `IsRenoCoexistenceProbeTime`: as many rounds as the target flight
    /// has segments (a Reno flow's time to grow one BDP), at most
    /// `max_reno_rounds`.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss;
        let rounds = reno_rounds.min(self.p.max_reno_rounds as u64);
        self.rounds_since_probe_up >= rounds
    }

    // ----- min_rtt and ProbeRTT (sections 5.3.4, 5.5.7)

    /// `UpdateMinRTT`.
    fn update_min_rtt(&mut self, now: Instant, rs: &RateSample) {
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + self.p.probe_rtt_interval;
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + self.p.min_rtt_window;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    /// `CheckProbeRTT`.
    fn check_probe_rtt(&mut self, now: Instant, rs: &RateSample) {
        if self.state != State::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state == State::ProbeRtt {
            self.handle_probe_rtt(now);
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `EnterProbeRTT`.
    fn enter_probe_rtt(&mut self) {
        self.set_state(State::ProbeRtt);
    }

    /// `HandleProbeRTT`.
    fn handle_probe_rtt(&mut self, now: Instant) {
        self.request_app_limited = true;
        match self.probe_rtt_done_stamp {
            None if self.in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_stamp = Some(now + self.p.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            Some(_) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
            None => {}
        }
    }

    /// `CheckProbeRTTDone`.
    pub(super) fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done_stamp.is_some_and(|d| now > d) {
            self.probe_rtt_min_stamp = now;
            self.restore_cwnd();
            self.exit_probe_rtt(now);
        }
    }

    /// `ExitProbeRTT` (section 5.3.4.4).
    fn exit_probe_rtt(&mut self, now: Instant) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(now);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// `HandleRestartFromIdle` (section 5.4.1), called when the sender has
    /// nothing to send.
    pub(super) fn on_app_limited(&mut self, now: Instant) {
        if self.in_flight == 0 {
            self.idle_restart = true;
            self.extra_acked_interval_start = now;
            if self.state.is_probe_bw() {
                self.set_pacing_rate_with_gain(1.0);
            } else if self.state == State::ProbeRtt {
                self.check_probe_rtt_done(now);
            }
        }
    }
}
