//! Unit tests of BBRv3's state machine and bounds, driven by hand-made ACK
//! events and rate samples: each round the driver plays delivers `acks`
//! segments at a given rate and RTT, the first one starting a new
//! packet-timed round (draft-ietf-ccwg-bbr-06 section 5.5.1).

use super::*;
use crate::testing::AckBuilder;

const MSS: u64 = 1000;
/// 8 Mbit/s = 1 000 000 B/s; × 100 ms = 100 000 bytes = 100 segments.
const BW: u64 = 8_000_000;
const BDP: u64 = 100_000;

fn ms(t: u64) -> Duration {
    Duration::from_millis(t)
}

/// One round as the sender would report it.
#[derive(Clone, Copy, Debug)]
struct Round {
    acks: u64,
    rate: u64,
    rtt: Duration,
    in_flight: u64,
    /// Bytes marked lost on each of the first `lossy_acks` ACKs.
    lost_per_ack: u64,
    lossy_acks: u64,
    app_limited: bool,
    cwnd_limited: bool,
}

impl Default for Round {
    fn default() -> Self {
        Round {
            acks: 100,
            rate: BW,
            rtt: ms(100),
            in_flight: BDP,
            lost_per_ack: 0,
            lossy_acks: 0,
            app_limited: false,
            cwnd_limited: true,
        }
    }
}

struct Drive {
    cc: Bbr3,
    now: Instant,
    delivered: u64,
    lost: u64,
    /// C.lost when the packets this round acknowledges were sent: at the
    /// start of the previous round.
    lost_at_send: u64,
    round_base: u64,
}

impl Drive {
    fn new() -> Self {
        Self::with(Bbr3Params::default())
    }

    fn with(p: Bbr3Params) -> Self {
        let start = WindowStart {
            mss: MSS as u32,
            initial_cwnd: 10,
            initial_ssthresh: None,
            abc_limit: 2,
        };
        let mut cc = Bbr3::new(&p, &start);
        let now = Instant::from_nanos(1_000_000_000);
        cc.on_established(now, Some(ms(100)));
        Drive {
            cc,
            now,
            delivered: 0,
            lost: 0,
            lost_at_send: 0,
            round_base: 0,
        }
    }

    /// Plays one round; `probe` sees the algorithm after each ACK.
    fn round_with(&mut self, r: Round, mut probe: impl FnMut(&Bbr3)) {
        let dt = r.rtt / r.acks.max(1);
        let lost_at_send = self.lost_at_send;
        self.lost_at_send = self.lost;
        for i in 0..r.acks {
            self.now += dt;
            self.delivered += MSS;
            let lost = if i < r.lossy_acks { r.lost_per_ack } else { 0 };
            self.lost += lost;
            let ack = AckBuilder::new(MSS as u32)
                .acked(MSS)
                .in_flight(r.in_flight, r.in_flight)
                .lost(lost)
                .rtt(r.rtt)
                .cwnd_limited(r.cwnd_limited)
                .build();
            self.cc.on_ack(self.now, &ack);
            let rs = RateSample {
                delivered: self.delivered - self.round_base,
                interval: r.rtt,
                rate: Some(Rate::from_bps(r.rate)),
                rtt: Some(r.rtt),
                app_limited: r.app_limited,
                prior_delivered: self.round_base,
                newly_delivered: MSS,
                newly_lost: lost,
                prior_in_flight: r.in_flight,
                total_delivered: self.delivered,
                tx_in_flight: r.in_flight,
                lost: self.lost - lost_at_send,
            };
            self.cc.on_rate_sample(self.now, &rs);
            probe(&self.cc);
        }
        self.round_base = self.delivered;
    }

    fn round(&mut self, r: Round) {
        self.round_with(r, |_| {});
    }

    /// Startup at a constant 8 Mbit/s with two BDPs in flight until the pipe
    /// is found full, then Drain, which ends after three rounds: ProbeBW_DOWN
    /// with a queue still to drain.
    fn enter_probe_bw(&mut self) {
        for _ in 0..12 {
            if self.cc.state().is_probe_bw() {
                break;
            }
            self.round(Round {
                in_flight: 2 * BDP,
                ..Round::default()
            });
        }
        assert_eq!(self.cc.state(), State::ProbeBwDown);
    }

    /// ProbeBW, then rounds within the BDP (CRUISE) until ProbeBW_UP.
    fn enter_probe_up(&mut self) {
        self.enter_probe_bw();
        for _ in 0..80 {
            self.round(Round {
                in_flight: 90_000,
                ..Round::default()
            });
            if self.cc.state() == State::ProbeBwUp {
                return;
            }
        }
        panic!("no ProbeBW_UP in 80 rounds");
    }

    /// Enters fast recovery as the sender does.
    fn enter_recovery(&mut self) {
        self.cc.on_congestion(
            self.now,
            &CongestionEvent {
                kind: CongestionKind::FastRetransmit,
                flight_size: BDP,
                ssthresh_basis: BDP,
                in_flight: BDP,
                mss: MSS as u32,
            },
        );
        self.cc.on_state(self.now, CaState::Recovery);
    }
}

#[test]
fn starts_in_startup_with_the_drafts_gains() {
    let d = Drive::new();
    assert_eq!(d.cc.state(), State::Startup);
    assert_eq!((d.cc.pacing_gain(), d.cc.cwnd_gain()), (2.77, 2.0));
    // 2.77 x 10 segments / 100 ms
    let r = d.cc.pacing_rate().unwrap().as_bps();
    assert!((2_210_000..2_220_000).contains(&r), "{r}");
}

/// Section 5.3.1.2: three non-app-limited rounds with less than 25 %
/// growth fill the pipe; growth restarts the count.
#[test]
fn startup_exits_after_three_rounds_without_growth() {
    let mut d = Drive::new();
    let mut rate = 1_000_000;
    for _ in 0..4 {
        rate = rate * 13 / 10; // 30 % growth each round
        d.round(Round {
            rate,
            in_flight: 1000,
            ..Round::default()
        });
        assert_eq!(d.cc.state(), State::Startup);
    }
    // 20 % above the last growth's rate: not enough
    let flat = rate * 12 / 10;
    for k in 0..3 {
        assert_eq!(d.cc.state(), State::Startup, "round {k}");
        d.round(Round {
            rate: flat,
            in_flight: BDP * 3,
            ..Round::default()
        });
    }
    assert!(d.cc.full_bw_reached());
    assert_eq!(d.cc.state(), State::Drain);
    assert_eq!(d.cc.pacing_gain(), 0.5);
}

/// App-limited rounds do not count toward the plateau.
#[test]
fn app_limited_rounds_do_not_fill_the_pipe() {
    let mut d = Drive::new();
    for _ in 0..10 {
        d.round(Round {
            app_limited: true,
            ..Round::default()
        });
    }
    assert_eq!(d.cc.state(), State::Startup);
}

/// Section 5.3.2: Drain ends when in flight is at most one BDP.
#[test]
fn drain_ends_when_in_flight_is_down_to_the_bdp() {
    let mut d = Drive::new();
    for _ in 0..5 {
        d.round(Round {
            in_flight: 2 * BDP,
            ..Round::default()
        });
    }
    assert_eq!(d.cc.state(), State::Drain);
    // a queue of half a BDP: still draining (for up to three rounds)
    d.round(Round {
        in_flight: 3 * BDP / 2,
        ..Round::default()
    });
    assert_eq!(d.cc.state(), State::Drain);
    let mut states = Vec::new();
    d.round_with(
        Round {
            in_flight: BDP,
            ..Round::default()
        },
        |c| states.push(c.state()),
    );
    // DOWN, and at once CRUISE: in flight is already within the BDP
    assert_eq!(states[0], State::ProbeBwCruise);
    assert!(d.cc.state().is_probe_bw());
}

/// Section 5.3.1.3: with SACK, a fast recovery a round old, a round with
/// more than 2 % lost and at least six loss events exit Startup, with
/// inflight_longterm = max(BDP, the round's delivered volume).
#[test]
fn startup_exits_on_high_loss() {
    let mut d = Drive::new();
    // the rate grows 30 % a round: no plateau
    let mut rate = BW;
    let mut grow = || {
        rate = rate * 13 / 10;
        rate
    };
    for _ in 0..2 {
        d.round(Round {
            rate: grow(),
            in_flight: 50_000,
            ..Round::default()
        });
    }
    d.enter_recovery();
    // five loss events of 1 % each: not enough events
    d.round(Round {
        rate: grow(),
        lost_per_ack: MSS,
        lossy_acks: 5,
        ..Round::default()
    });
    d.round(Round {
        rate: grow(),
        ..Round::default()
    });
    assert_eq!(d.cc.state(), State::Startup);
    assert!(!d.cc.full_bw_reached());
    // seven events, 7 % of 100 000 bytes in flight
    d.round(Round {
        rate: grow(),
        lost_per_ack: MSS,
        lossy_acks: 7,
        ..Round::default()
    });
    assert_eq!(d.cc.state(), State::Startup, "checked at the round's end");
    let bdp = d.cc.bdp();
    d.round(Round {
        rate: grow(),
        ..Round::default()
    });
    assert!(d.cc.full_bw_reached());
    assert_ne!(d.cc.state(), State::Startup);
    let hi = d.cc.inflight_longterm().expect("set by the loss exit");
    // max(BDP, the lossy round's delivered volume of 100 segments)
    assert_eq!(hi, bdp.max(100 * MSS));
}

/// A rate growing 30 % a round with a lossy round of less than 2 %: no exit.
#[test]
fn startup_ignores_losses_below_the_threshold() {
    let mut d = Drive::new();
    d.round(Round::default());
    d.enter_recovery();
    let mut rate = BW;
    for _ in 0..3 {
        rate = rate * 13 / 10;
        d.round(Round {
            rate,
            lost_per_ack: 100,
            lossy_acks: 10, // 1 000 of 100 000 bytes: 1 %
            ..Round::default()
        });
    }
    assert_eq!(d.cc.state(), State::Startup);
    assert_eq!(d.cc.inflight_longterm(), None);
}

/// Section 5.3.3: DOWN -> CRUISE once in flight is at most the BDP (and
/// the headroom), CRUISE -> REFILL when the randomized wait has passed,
/// REFILL -> UP after one round, UP -> DOWN once the bandwidth stops
/// growing; each with the draft's gains.
#[test]
fn probe_bw_cycles_down_cruise_refill_up() {
    let mut d = Drive::new();
    d.enter_probe_bw();
    let wait = d.cc.probe_wait();
    assert!(wait >= ms(2000) && wait < ms(3000), "{wait}");
    let entered = d.now;
    let mut seen = vec![d.cc.state()];
    let mut gains = vec![(d.cc.pacing_gain(), d.cc.cwnd_gain())];
    let mut refill_at = None;
    for _ in 0..60 {
        d.round_with(
            Round {
                in_flight: 90_000,
                ..Round::default()
            },
            |c| {
                if seen.last() != Some(&c.state()) {
                    seen.push(c.state());
                    gains.push((c.pacing_gain(), c.cwnd_gain()));
                }
            },
        );
        if refill_at.is_none() && seen.contains(&State::ProbeBwRefill) {
            refill_at = Some(d.now);
        }
        if seen.len() >= 5 {
            break;
        }
    }
    use State::*;
    assert_eq!(
        seen[..5],
        [
            ProbeBwDown,
            ProbeBwCruise,
            ProbeBwRefill,
            ProbeBwUp,
            ProbeBwDown
        ]
    );
    assert_eq!(
        gains[..5],
        [(0.9, 2.0), (1.0, 2.0), (1.0, 2.0), (1.25, 2.25), (0.9, 2.0)]
    );
    // REFILL came by the wall-clock wait or the Reno-coexistence bound of
    // min(BDP in segments, 63) rounds, whichever first
    let waited = refill_at.unwrap() - entered;
    assert!(waited <= wait + ms(100), "{waited} > {wait}");
}

/// Section 5.3.3.8: the wait is drawn from the seeded generator: the same
/// seed gives the same wait, another seed (or another opening instant)
/// a different one.
#[test]
fn probe_wait_is_seeded() {
    let wait = |seed| {
        let mut d = Drive::with(Bbr3Params {
            seed,
            ..Bbr3Params::default()
        });
        d.enter_probe_bw();
        d.cc.probe_wait()
    };
    assert_eq!(wait(1), wait(1));
    assert_ne!(wait(1), wait(2));
}

/// Section 5.5.10.2: a probe that loses more than 2 % of what was in
/// flight cuts inflight_longterm to that flight (at least beta x target)
/// and goes DOWN; a loss rate under 2 % does not.
#[test]
fn loss_in_probe_up_cuts_inflight_longterm() {
    let mut d = Drive::new();
    d.enter_probe_up();
    assert_eq!(d.cc.inflight_longterm(), None);
    // 1 % lost: tolerated
    d.round(Round {
        rate: BW * 11 / 10,
        in_flight: 120_000,
        lost_per_ack: 100,
        lossy_acks: 12,
        ..Round::default()
    });
    assert_eq!(d.cc.state(), State::ProbeBwUp);
    assert_eq!(d.cc.inflight_longterm(), None);
    // 3 % of 120 000 lost
    d.round(Round {
        rate: BW * 11 / 10,
        in_flight: 120_000,
        lost_per_ack: MSS,
        lossy_acks: 4,
        ..Round::default()
    });
    assert_eq!(d.cc.state(), State::ProbeBwDown);
    let hi = d.cc.inflight_longterm().unwrap();
    // max(tx_in_flight, 0.7 x min(BDP, cwnd)) = 120 000
    assert_eq!(hi, 120_000);
    // DOWN's window is bounded by it
    assert!(d.cc.cwnd() <= hi);
}

/// A probe's loss cut below the flight is floored at beta x the target.
#[test]
fn inflight_longterm_is_at_least_beta_times_the_target() {
    let mut d = Drive::new();
    d.enter_probe_up();
    let target = d.cc.bdp().min(d.cc.cwnd());
    d.round(Round {
        in_flight: 20_000,
        lost_per_ack: MSS,
        lossy_acks: 2,
        ..Round::default()
    });
    let hi = d.cc.inflight_longterm().unwrap();
    assert_eq!(hi, (target as f64 * 0.7) as u64);
}

/// Section 5.5.10.3: outside the probing states a round with loss lowers
/// bw_shortterm and inflight_shortterm to max(latest, 0.7 x previous).
#[test]
fn loss_while_cruising_lowers_the_short_term_bounds() {
    let mut d = Drive::new();
    d.enter_probe_bw();
    d.round(Round {
        in_flight: 90_000,
        ..Round::default()
    });
    assert!(matches!(
        d.cc.state(),
        State::ProbeBwCruise | State::ProbeBwDown
    ));
    // the path slows to half: a round at 4 Mbit/s, then one with a loss
    d.round(Round {
        acks: 50,
        rate: BW / 2,
        in_flight: 90_000,
        ..Round::default()
    });
    let cwnd = d.cc.cwnd();
    d.round(Round {
        acks: 50,
        rate: BW / 2,
        in_flight: 90_000,
        lost_per_ack: MSS,
        lossy_acks: 1,
        ..Round::default()
    });
    d.round(Round {
        acks: 50,
        rate: BW / 2,
        in_flight: 60_000,
        ..Round::default()
    });
    let bw_lo = d.cc.bw_shortterm().expect("lowered").as_bps();
    // 0.7 x 8 Mbit/s = 5.6 Mbit/s (above the latest 4 Mbit/s)
    assert!((5_590_000..=5_600_000).contains(&bw_lo), "{bw_lo}");
    let lo = d.cc.inflight_shortterm().unwrap();
    assert_eq!(lo, (0.7 * cwnd as f64) as u64);
    assert!(d.cc.cwnd() <= lo);
    // BBR.bw follows the short-term bound
    assert!(d.cc.bw().unwrap().as_bps() <= bw_lo);
}

/// Section 5.3.4: when probe_rtt_min_delay is 5 s old, ProbeRTT holds
/// cwnd at half a BDP (at least 4 segments); it lasts 200 ms after the
/// flight is down to that, and a round; then CRUISE, with the window back.
#[test]
fn probe_rtt_holds_half_a_bdp_for_200_ms() {
    let mut d = Drive::new();
    d.enter_probe_bw();
    // RTTs 20 % above min_rtt from now on: nothing refreshes the estimate
    let high = Round {
        rtt: ms(120),
        in_flight: 90_000,
        ..Round::default()
    };
    let mut rounds = 0;
    loop {
        d.round(high);
        rounds += 1;
        assert!(rounds < 60, "no ProbeRTT");
        if d.cc.state() == State::ProbeRtt {
            break;
        }
    }
    let cwnd_before = d.cc.m.prior_cwnd;
    assert!(d.now.as_secs_f64() >= 1.0 + 5.0, "{}", d.now.as_secs_f64());
    assert_eq!((d.cc.pacing_gain(), d.cc.cwnd_gain()), (1.0, 0.5));
    let half_bdp = d.cc.bdp() / 2;
    assert!(d.cc.cwnd() <= half_bdp.max(4 * MSS));
    // flight down to half a BDP: 200 ms start
    let low = Round {
        acks: 10,
        rtt: ms(100),
        in_flight: half_bdp,
        ..Round::default()
    };
    let entered = d.now;
    let mut left = None;
    for _ in 0..10 {
        d.round_with(low, |c| {
            if left.is_none() && c.state() != State::ProbeRtt {
                left = Some(c.state());
            }
        });
        if left.is_some() {
            break;
        }
        assert!(d.cc.cwnd() <= half_bdp.max(4 * MSS));
    }
    assert_eq!(left, Some(State::ProbeBwCruise));
    let held = d.now - entered;
    assert!(held > ms(200) && held <= ms(400), "{held}");
    assert!(d.cc.cwnd() >= cwnd_before.min(d.cc.m.max_inflight) / 2);
}

/// Section 5.5.11: a spurious recovery puts back the bounds saved when it
/// began, and a probe cut short by it starts again at REFILL.
#[test]
fn spurious_loss_undoes_the_cut() {
    let mut d = Drive::new();
    d.enter_probe_up();
    d.enter_recovery();
    d.round(Round {
        in_flight: 120_000,
        lost_per_ack: MSS,
        lossy_acks: 4,
        ..Round::default()
    });
    assert_eq!(d.cc.state(), State::ProbeBwDown);
    assert!(d.cc.inflight_longterm().is_some());
    d.cc.on_undo(
        d.now,
        &UndoEvent {
            prior_cwnd: 0,
            prior_ssthresh: u64::MAX,
            mss: MSS as u32,
        },
    );
    assert_eq!(d.cc.inflight_longterm(), None);
    assert_eq!(d.cc.state(), State::ProbeBwRefill);
}

/// A timeout leaves one segment above the flight; leaving the Loss state
/// restores the window saved on entry (section 5.6.4.4).
#[test]
fn timeout_and_recovery_exit_restore_the_window() {
    let mut d = Drive::new();
    d.enter_probe_bw();
    d.round(Round {
        in_flight: 90_000,
        ..Round::default()
    });
    let before = d.cc.cwnd();
    d.cc.m.in_flight = 0;
    d.cc.on_state(d.now, CaState::Loss);
    d.cc.on_congestion(
        d.now,
        &CongestionEvent {
            kind: CongestionKind::Rto { repeated: false },
            flight_size: 90_000,
            ssthresh_basis: 90_000,
            in_flight: 0,
            mss: MSS as u32,
        },
    );
    assert_eq!(d.cc.cwnd(), MSS);
    d.cc.on_state(d.now, CaState::Open);
    assert_eq!(d.cc.cwnd(), before);
}

#[test]
fn metrics_match_their_names() {
    let mut d = Drive::new();
    d.enter_probe_bw();
    let mut out = vec![0.0; METRICS.len()];
    d.cc.metrics(&mut out);
    assert_eq!(out[3], State::ProbeBwDown.code() as f64);
    assert_eq!(out[4], 0.9);
    assert!(out[6].is_nan(), "no inflight_longterm yet");
    assert!((out[1] - BW as f64).abs() < 1.0);
}

/// Section 3.7: a CE mark counts as congestion: outside a probe, the round
/// with an ECN-Echo lowers the short-term bounds as a loss would.
#[test]
fn an_ecn_echo_counts_as_a_loss_in_the_round() {
    let mut d = Drive::new();
    d.enter_probe_bw();
    d.round(Round {
        in_flight: 90_000,
        ..Round::default()
    });
    assert_eq!(d.cc.inflight_shortterm(), None);
    d.cc.on_congestion(
        d.now,
        &CongestionEvent {
            kind: CongestionKind::Ecn,
            flight_size: 90_000,
            ssthresh_basis: 90_000,
            in_flight: 90_000,
            mss: MSS as u32,
        },
    );
    d.round(Round {
        in_flight: 90_000,
        ..Round::default()
    });
    d.round(Round {
        in_flight: 90_000,
        ..Round::default()
    });
    assert!(d.cc.inflight_shortterm().is_some());
    assert!(d.cc.bw_shortterm().is_some());
}
