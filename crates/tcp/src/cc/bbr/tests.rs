//! Unit tests of BBR's state machine and control parameters, driven by
//! hand-made ACK events and rate samples (and, at the end, through the sender
//! with the synthetic ACK clock of [`crate::testing`]).

use super::*;
use crate::cc::{CcConfig, RecoveryStyle, SenderRequest};
use crate::config::TcpConfig;
use crate::testing::{AckBuilder, Harness};

const MSS: u64 = 1000;
/// 8 Mbit/s × 100 ms = 100 000 bytes = 100 segments.
const BW: u64 = 8_000_000;
const BDP: u64 = 100_000;

fn ms(t: u64) -> Duration {
    Duration::from_millis(t)
}

fn start() -> WindowStart {
    WindowStart {
        mss: MSS as u32,
        initial_cwnd: 10,
        initial_ssthresh: None,
        abc_limit: 2,
    }
}

/// One ACK as the sender would report it.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Bytes newly delivered (0: a duplicate ACK, no rate sample).
    bytes: u64,
    /// Measured delivery rate, bit/s.
    rate: Option<u64>,
    /// RTT of the newest acknowledged packet.
    rtt: Duration,
    /// The sender's (Karn) RTT sample; `None` when the ACK covered a retransmission.
    karn_rtt: Option<Duration>,
    in_flight: u64,
    prior_in_flight: u64,
    lost: u64,
    app_limited: bool,
    /// Delivered count when the newest acknowledged packet was sent; `None`:
    /// the start of the round the driver plays.
    prior_delivered: Option<u64>,
    state: CaState,
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            bytes: MSS,
            rate: Some(BW),
            rtt: ms(100),
            karn_rtt: Some(ms(100)),
            in_flight: BDP,
            prior_in_flight: BDP,
            lost: 0,
            app_limited: false,
            prior_delivered: None,
            state: CaState::Open,
        }
    }
}

/// A hand-played connection.
struct Drive {
    bbr: Bbr,
    now: Instant,
    delivered: u64,
    /// Delivered count at the end of the previous played round.
    round_base: u64,
}

impl Drive {
    fn new() -> Self {
        Self::with(BbrParams::default())
    }

    fn with(p: BbrParams) -> Self {
        Drive {
            bbr: Bbr::new(&p, &start()),
            now: Instant::from_nanos(1_000_000_000),
            delivered: 0,
            round_base: 0,
        }
    }

    /// Advances time by `dt` and delivers one ACK (and its rate sample).
    fn ack(&mut self, dt: Duration, s: Sample) {
        self.now += dt;
        let prior = s.prior_delivered.unwrap_or(self.round_base);
        self.delivered += s.bytes;
        let mut ack = AckBuilder::new(MSS as u32)
            .acked(s.bytes)
            .in_flight(s.prior_in_flight, s.in_flight)
            .lost(s.lost)
            .sample(s.karn_rtt)
            .srtt(Some(s.rtt))
            .min_rtt(Some(s.rtt))
            .state(s.state)
            .seq(self.delivered, self.delivered + s.in_flight);
        if s.bytes == 0 {
            ack = ack.dupack();
        }
        let ack = ack.build();
        self.bbr.on_ack(self.now, &ack);
        if s.bytes > 0 {
            let rs = RateSample {
                delivered: self.delivered - prior,
                interval: s.rtt,
                rate: s.rate.map(Rate::from_bps),
                rtt: s.karn_rtt,
                app_limited: s.app_limited,
                prior_delivered: prior,
                newly_delivered: s.bytes,
                newly_lost: s.lost,
                prior_in_flight: s.prior_in_flight,
                total_delivered: self.delivered,
                tx_in_flight: s.prior_in_flight,
                lost: s.lost,
            };
            self.bbr.on_rate_sample(self.now, &rs);
        }
    }

    /// One round trip: `n` ACKs spread over the sample's RTT, all for packets
    /// sent in the previous round, so exactly the first starts a new round.
    fn round(&mut self, n: u64, s: Sample) {
        let dt = s.rtt / n;
        for _ in 0..n {
            self.ack(dt, s);
        }
        self.round_base = self.delivered;
    }

    /// One STARTUP round of 10 ACKs at `rate` (bit/s), three BDPs in flight.
    fn startup_round(&mut self, rate: u64) {
        self.round(
            10,
            Sample {
                rate: Some(rate),
                in_flight: 3 * BDP,
                ..Sample::default()
            },
        )
    }

    /// STARTUP at rates doubling up to `BW`, three rounds at `BW`, DRAIN,
    /// then one ACK with one BDP in flight: PROBE_BW.
    fn reach_probe_bw(&mut self) {
        for rate in [BW / 8, BW / 4, BW / 2, BW, BW, BW, BW] {
            self.startup_round(rate);
        }
        assert_eq!(self.bbr.mode(), Mode::Drain);
        self.ack(ms(10), Sample::default());
        assert_eq!(self.bbr.mode(), Mode::ProbeBw);
    }

    /// [`Drive::reach_probe_bw`], then 150 ACKs: cwnd grows to its target,
    /// 2 BDP, which it returns.
    fn reach_full_window(&mut self) -> u64 {
        self.reach_probe_bw();
        for _ in 0..150 {
            self.ack(ms(1), Sample::default());
        }
        assert_eq!(self.bbr.cwnd(), 2 * BDP);
        self.bbr.cwnd()
    }

    fn metrics(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.bbr.metric_names().len()];
        self.bbr.metrics(&mut out);
        out
    }
}

fn approx(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

// ----- initial state ------------------------------------------------------

#[test]
fn starts_in_startup_with_the_initial_window_and_pacing_rate() {
    let mut b = Bbr::new(&BbrParams::default(), &start());
    assert_eq!(b.name(), "bbr");
    assert_eq!(b.mode(), Mode::Startup);
    assert_eq!(b.cwnd(), 10 * MSS);
    assert_eq!(b.ssthresh(), u64::MAX, "BBR v1 has no slow-start threshold");
    assert_eq!(b.recovery_style(), RecoveryStyle::NewReno);
    assert!(approx(b.pacing_gain(), DEFAULT_HIGH_GAIN));
    assert!(approx(b.cwnd_gain(), DEFAULT_HIGH_GAIN));
    // 2.885 × 10 000 B / 1 ms (no RTT yet) = 230.8 Mbit/s.
    let r = b.pacing_rate().unwrap().as_bps() as f64;
    assert!(approx(r, (DEFAULT_HIGH_GAIN * 80e6).round()), "{r}");
    // The handshake's MSS rescales the window and the rate.
    b.set_mss(500);
    assert_eq!(b.cwnd(), 5000);
    let r = b.pacing_rate().unwrap().as_bps() as f64;
    assert!(approx(r, (DEFAULT_HIGH_GAIN * 40e6).round()), "{r}");
    assert_eq!(b.btl_bw(), None);
    assert_eq!(b.rt_prop(), None);
    assert_eq!(
        b.target_cwnd(),
        5000,
        "the initial window until the model exists"
    );
}

#[test]
fn the_first_srtt_re_initialises_the_pacing_rate() {
    let mut d = Drive::new();
    // A duplicate ACK: no rate sample, but an SRTT of 100 ms.
    d.ack(
        ms(1),
        Sample {
            bytes: 0,
            ..Sample::default()
        },
    );
    // 2.885 × 10 000 B / 100 ms = 2.308 Mbit/s.
    let r = d.bbr.pacing_rate().unwrap().as_bps() as f64;
    assert!(approx(r, (DEFAULT_HIGH_GAIN * 800_000.0).round()), "{r}");
    // Only once: a later SRTT does not change it.
    d.ack(
        ms(1),
        Sample {
            bytes: 0,
            rtt: ms(50),
            ..Sample::default()
        },
    );
    assert!(approx(d.bbr.pacing_rate().unwrap().as_bps() as f64, r));
}

#[test]
fn metrics_are_named_and_reported() {
    let mut d = Drive::new();
    assert_eq!(
        d.bbr.metric_names(),
        &[
            "btl_bw",
            "rt_prop",
            "mode",
            "pacing_gain",
            "cwnd_gain",
            "round_count",
            "full_pipe",
            "cycle_index"
        ]
    );
    let m = d.metrics();
    assert!(m[0].is_nan() && m[1].is_nan() && m[7].is_nan());
    assert_eq!((m[2], m[5], m[6]), (0.0, 0.0, 0.0));
    d.reach_probe_bw();
    let m = d.metrics();
    assert_eq!(m[0], BW as f64);
    assert!(approx(m[1], 0.1));
    assert_eq!(m[2], 2.0);
    assert_eq!(m[3], d.bbr.pacing_gain());
    assert_eq!(m[4], 2.0);
    assert_eq!(m[5], d.bbr.round_count() as f64);
    assert_eq!(m[6], 1.0);
    assert_eq!(m[7], d.bbr.cycle_index().unwrap() as f64);
    assert_eq!(
        [Mode::Startup, Mode::Drain, Mode::ProbeBw, Mode::ProbeRtt].map(Mode::code),
        [0, 1, 2, 3]
    );
}

// ----- STARTUP and DRAIN --------------------------------------------------

#[test]
fn startup_counts_rounds_grows_cwnd_by_delivered_and_paces_at_high_gain() {
    let mut d = Drive::new();
    d.round(
        10,
        Sample {
            rate: Some(BW / 8),
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.round_count(), 1);
    // cwnd grows by every delivered byte while below the target (or before
    // an initial window was delivered).
    assert_eq!(d.bbr.cwnd(), 20 * MSS);
    d.round(
        10,
        Sample {
            rate: Some(BW / 4),
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.round_count(), 2);
    assert_eq!(d.bbr.cwnd(), 30 * MSS);
    assert_eq!(d.bbr.btl_bw(), Some(Rate::from_bps(BW / 4)));
    // Pacing rate = high_gain × BtlBw once that exceeds the initial rate.
    let want = Rate::from_bps(BW / 4).scaled(DEFAULT_HIGH_GAIN);
    assert_eq!(d.bbr.pacing_rate(), Some(want));
    assert_eq!(d.bbr.mode(), Mode::Startup);
}

#[test]
fn startup_cwnd_stops_at_its_target() {
    let mut d = Drive::new();
    // BtlBw 0.8 Mbit/s × 100 ms = 10 000 B: target 2.885 × 10 000 = 28 853 B.
    // Three rounds: 30 segments delivered, two rounds without growth (the
    // pipe is not yet full).
    for _ in 0..3 {
        d.round(
            10,
            Sample {
                rate: Some(800_000),
                ..Sample::default()
            },
        );
    }
    assert_eq!(d.bbr.target_cwnd(), (10_000.0 * DEFAULT_HIGH_GAIN) as u64);
    // Grows by one segment per ACK until it reaches the target, then stops.
    assert_eq!(d.bbr.cwnd(), 29 * MSS);
    assert_eq!(d.bbr.mode(), Mode::Startup);
}

#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth() {
    let mut d = Drive::new();
    let round = Drive::startup_round;
    for rate in [1_000_000, 2_000_000, 4_000_000] {
        round(&mut d, rate);
    }
    // Growth below 25 % counts; 25 % or more restarts the count.
    round(&mut d, 4_900_000); // 1
    round(&mut d, 4_999_999); // 2
    round(&mut d, 5_000_000); // >= 1.25 × 4 Mbit/s: new baseline 5 Mbit/s
    round(&mut d, 6_000_000); // 1
    round(&mut d, 6_200_000); // 2
    assert!(!d.bbr.filled_pipe());
    assert_eq!(d.bbr.mode(), Mode::Startup);
    // The third round start without growth fills the pipe at once.
    d.ack(
        ms(10),
        Sample {
            rate: Some(6_200_000),
            in_flight: 3 * BDP,
            ..Sample::default()
        },
    );
    assert!(d.bbr.filled_pipe());
    assert_eq!(d.bbr.mode(), Mode::Drain);
    assert!(approx(d.bbr.pacing_gain(), 1.0 / DEFAULT_HIGH_GAIN));
    assert!(approx(d.bbr.cwnd_gain(), DEFAULT_HIGH_GAIN));
    // DRAIN paces below BtlBw even though the pipe is full.
    let want = Rate::from_bps(6_200_000).scaled(1.0 / DEFAULT_HIGH_GAIN);
    assert_eq!(d.bbr.pacing_rate(), Some(want));
}

#[test]
fn full_pipe_is_checked_once_per_round_and_not_on_app_limited_samples() {
    let mut d = Drive::new();
    d.round(
        10,
        Sample {
            rate: Some(BW),
            in_flight: 3 * BDP,
            ..Sample::default()
        },
    );
    // Many rounds of app-limited samples at the same rate: no verdict.
    for _ in 0..5 {
        d.round(
            10,
            Sample {
                rate: Some(BW),
                app_limited: true,
                in_flight: 3 * BDP,
                ..Sample::default()
            },
        );
    }
    assert!(!d.bbr.filled_pipe());
    // Thirty ACKs within one round do not count as three rounds.
    for _ in 0..30 {
        d.ack(
            ms(1),
            Sample {
                rate: Some(BW),
                in_flight: 3 * BDP,
                ..Sample::default()
            },
        );
    }
    assert!(!d.bbr.filled_pipe());
}

#[test]
fn app_limited_samples_count_only_when_they_raise_the_estimate() {
    let mut d = Drive::new();
    d.round(
        10,
        Sample {
            rate: Some(BW),
            ..Sample::default()
        },
    );
    let low = Sample {
        rate: Some(BW / 10),
        app_limited: true,
        ..Sample::default()
    };
    // With a one-round window a non-app-limited low sample would replace BW
    // at the next round; app-limited ones do not.
    let mut d1 = Drive::with(BbrParams {
        bw_window_rounds: 1,
        ..BbrParams::default()
    });
    d1.round(
        10,
        Sample {
            rate: Some(BW),
            ..Sample::default()
        },
    );
    d1.round(10, low);
    assert_eq!(d1.bbr.btl_bw(), Some(Rate::from_bps(BW)));
    d1.round(
        10,
        Sample {
            app_limited: false,
            ..low
        },
    );
    assert_eq!(d1.bbr.btl_bw(), Some(Rate::from_bps(BW / 10)));
    // An app-limited sample above the estimate is taken.
    d.round(
        10,
        Sample {
            rate: Some(2 * BW),
            app_limited: true,
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.btl_bw(), Some(Rate::from_bps(2 * BW)));
}

#[test]
fn bandwidth_samples_expire_after_the_window_of_rounds() {
    let mut d = Drive::new();
    d.round(
        10,
        Sample {
            rate: Some(BW),
            ..Sample::default()
        },
    );
    for i in 1..10 {
        d.round(
            10,
            Sample {
                rate: Some(BW / 2),
                ..Sample::default()
            },
        );
        assert_eq!(d.bbr.btl_bw(), Some(Rate::from_bps(BW)), "round {}", i + 1);
    }
    // Round 11: round 1's sample left the 10-round window.
    d.round(
        10,
        Sample {
            rate: Some(BW / 2),
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.btl_bw(), Some(Rate::from_bps(BW / 2)));
}

/// A sample without a rate (its interval below the minimum RTT: typically
/// an original's ACK credited to a retransmission sent milliseconds before)
/// ends no round, as in Linux's `bbr_update_bw`: ten such ACKs, each for a
/// packet sent after the last round start, leave the round count and the
/// bandwidth filter as they were.
#[test]
fn a_sample_without_a_rate_ends_no_round() {
    let mut d = Drive::new();
    d.round(10, Sample::default()); // at BW
    let rounds = d.bbr.round_count();
    for _ in 0..10 {
        // each ACK's packet was sent after the previous ACK
        let prior = d.delivered;
        d.ack(
            ms(2),
            Sample {
                rate: None,
                karn_rtt: None,
                prior_delivered: Some(prior),
                ..Sample::default()
            },
        );
    }
    assert_eq!(d.bbr.round_count(), rounds);
    assert_eq!(d.bbr.btl_bw(), Some(Rate::from_bps(BW)));
    // a sample with a rate for a packet sent after the round start does end one
    let prior = d.delivered;
    d.ack(
        ms(2),
        Sample {
            rate: Some(BW / 2),
            prior_delivered: Some(prior),
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.round_count(), rounds + 1);
}

/// An undo leaves the window alone and restarts STARTUP's count of rounds
/// without growth (Linux's `bbr_undo_cwnd`).
#[test]
fn an_undo_restarts_the_full_pipe_count() {
    let mut d = Drive::new();
    let round = Drive::startup_round;
    round(&mut d, BW);
    round(&mut d, BW); // 1 without growth
    round(&mut d, BW); // 2
    let cwnd = d.bbr.cwnd();
    let undo = UndoEvent {
        prior_cwnd: 4 * cwnd,
        prior_ssthresh: u64::MAX,
        mss: MSS as u32,
    };
    d.bbr.on_undo(d.now, &undo);
    assert_eq!(d.bbr.cwnd(), cwnd);
    round(&mut d, BW); // the first round of BW again: the baseline
    round(&mut d, BW); // 1
    round(&mut d, BW); // 2
    assert!(!d.bbr.filled_pipe(), "two rounds since the undo");
    round(&mut d, BW); // 3
    assert!(d.bbr.filled_pipe());
}

#[test]
fn drain_ends_when_in_flight_is_down_to_one_bdp() {
    let mut d = Drive::new();
    for rate in [BW / 8, BW / 4, BW / 2, BW, BW, BW, BW] {
        d.round(
            10,
            Sample {
                rate: Some(rate),
                in_flight: 3 * BDP,
                ..Sample::default()
            },
        );
    }
    assert_eq!(d.bbr.mode(), Mode::Drain);
    d.ack(
        ms(10),
        Sample {
            in_flight: BDP + 1,
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.mode(), Mode::Drain);
    d.ack(
        ms(10),
        Sample {
            in_flight: BDP,
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
    assert!(approx(d.bbr.cwnd_gain(), 2.0));
    // Randomised start phase, never the draining 0.75 one.
    let i = d.bbr.cycle_index().unwrap();
    assert_ne!(i, 1);
    assert_eq!(d.bbr.pacing_gain(), PROBE_BW_GAINS[i]);
}

// ----- PROBE_BW -----------------------------------------------------------

#[test]
fn probe_bw_cycles_through_the_eight_gains_one_rtprop_each() {
    let mut d = Drive::new();
    d.reach_probe_bw();
    // In flight before each ACK high enough for the 1.25 phase to end on
    // time, and above one BDP so that the 0.75 phase runs its full length.
    let s = Sample {
        prior_in_flight: 13 * BDP / 10,
        ..Sample::default()
    };
    let mut phases = vec![(d.now, d.bbr.cycle_index().unwrap())];
    let mut last_stamp = d.now;
    for _ in 0..(3 * 8 * 11) {
        d.ack(ms(10), s);
        let i = d.bbr.cycle_index().unwrap();
        // pacing rate = gain × BtlBw at every ACK
        let gain = PROBE_BW_GAINS[i];
        assert_eq!(d.bbr.pacing_gain(), gain);
        assert_eq!(d.bbr.pacing_rate(), Some(Rate::from_bps(BW).scaled(gain)));
        if i != phases.last().unwrap().1 {
            // A phase lasts more than RTprop (100 ms): the first ACK after it.
            assert_eq!(d.now - last_stamp, ms(110), "phase {i}");
            last_stamp = d.now;
            phases.push((d.now, i));
        }
    }
    let order: Vec<usize> = phases.iter().map(|p| p.1).collect();
    assert!(order.len() >= 24, "{order:?}");
    for w in order.windows(2) {
        assert_eq!(w[1], (w[0] + 1) % 8, "{order:?}");
    }
    // cwnd has grown to cwnd_gain × BDP and stays there (no quanta added).
    assert_eq!(d.bbr.cwnd(), 2 * BDP);
    assert_eq!(d.bbr.target_cwnd(), 2 * BDP);
}

/// Advances a PROBE_BW connection to the start of phase `want`.
fn to_phase(d: &mut Drive, want: usize) {
    let s = Sample {
        prior_in_flight: 13 * BDP / 10,
        ..Sample::default()
    };
    for _ in 0..200 {
        if d.bbr.cycle_index() == Some(want) {
            return;
        }
        d.ack(ms(10), s);
    }
    panic!("phase {want} never came");
}

#[test]
fn the_probing_phase_lasts_until_in_flight_reaches_its_gain_or_a_loss() {
    let mut d = Drive::new();
    d.reach_probe_bw();
    to_phase(&mut d, 0);
    let short = Sample {
        prior_in_flight: 124 * BDP / 100,
        ..Sample::default()
    };
    for _ in 0..30 {
        d.ack(ms(10), short);
    }
    assert_eq!(
        d.bbr.cycle_index(),
        Some(0),
        "1.24 BDP in flight: still probing"
    );
    d.ack(ms(10), Sample { lost: MSS, ..short });
    assert_eq!(d.bbr.cycle_index(), Some(1), "a loss ends the probe");
    // The draining phase ends early once in flight is down to one BDP.
    d.ack(
        ms(10),
        Sample {
            prior_in_flight: BDP + 1,
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.cycle_index(), Some(1));
    d.ack(
        ms(10),
        Sample {
            prior_in_flight: BDP,
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.cycle_index(), Some(2));
    // The cruising phase ignores in flight.
    d.ack(
        ms(10),
        Sample {
            prior_in_flight: 0,
            ..Sample::default()
        },
    );
    assert_eq!(d.bbr.cycle_index(), Some(2));
}

#[test]
fn losses_in_probe_bw_are_deducted_from_cwnd_but_do_not_halve_it() {
    let mut d = Drive::new();
    d.reach_full_window();
    d.ack(
        ms(1),
        Sample {
            lost: 3 * MSS,
            ..Sample::default()
        },
    );
    // cwnd - lost + delivered, capped by the target.
    assert_eq!(d.bbr.cwnd(), 2 * BDP - 2 * MSS);
}

// ----- PROBE_RTT ----------------------------------------------------------

#[test]
fn probe_rtt_starts_when_rtprop_is_older_than_ten_seconds_and_lasts_200_ms_and_a_round() {
    let mut d = Drive::new();
    let cwnd = d.reach_full_window();
    // The last 100 ms sample came now; from here on only 110 ms samples.
    let stamp = d.now;
    let slow = Sample {
        rtt: ms(110),
        karn_rtt: Some(ms(110)),
        ..Sample::default()
    };
    while d.now + ms(110) <= stamp + Duration::from_secs(10) {
        d.round(10, slow);
    }
    let left = (stamp + Duration::from_secs(10)) - d.now;
    d.ack(left, slow);
    assert_eq!(d.now, stamp + Duration::from_secs(10));
    assert_eq!(d.bbr.mode(), Mode::ProbeBw, "exactly 10 s old: not expired");
    assert_eq!(d.bbr.rt_prop(), Some(ms(100)));
    d.ack(Duration::from_nanos(1), slow);
    assert_eq!(d.bbr.mode(), Mode::ProbeRtt);
    assert_eq!(
        d.bbr.rt_prop(),
        Some(ms(110)),
        "the expired estimate is replaced"
    );
    assert_eq!(d.bbr.cwnd(), 4 * MSS);
    assert_eq!(d.bbr.pacing_gain(), 1.0);
    assert_eq!(d.bbr.cwnd_gain(), 1.0);
    assert_eq!(d.bbr.prior_cwnd(), cwnd);
    assert_eq!(d.bbr.pacing_rate(), Some(Rate::from_bps(BW)));

    // In flight above 4 segments: the 200 ms do not start.
    let draining = Sample {
        rtt: ms(105),
        karn_rtt: Some(ms(105)),
        in_flight: 5 * MSS,
        ..Sample::default()
    };
    for _ in 0..30 {
        d.ack(ms(10), draining);
    }
    assert_eq!(d.bbr.mode(), Mode::ProbeRtt);
    assert_eq!(d.bbr.cwnd(), 4 * MSS);
    // Down to 4 segments at t0: 200 ms and a round from here.
    let low = Sample {
        rtt: ms(100),
        in_flight: 4 * MSS,
        ..Sample::default()
    };
    d.ack(
        ms(10),
        Sample {
            prior_delivered: Some(0),
            ..low
        },
    );
    let t0 = d.now;
    let marker = d.delivered;
    // 200 ms pass with no round completed (old packets acknowledged).
    for _ in 0..25 {
        d.ack(
            ms(10),
            Sample {
                prior_delivered: Some(marker - 1),
                ..low
            },
        );
    }
    assert!(d.now > t0 + ms(200));
    assert_eq!(d.bbr.mode(), Mode::ProbeRtt, "no round yet");
    // A packet sent after t0 is acknowledged: the round is done, and 200 ms
    // have passed: back to PROBE_BW with the saved window.
    d.ack(
        ms(10),
        Sample {
            prior_delivered: Some(marker),
            ..low
        },
    );
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
    assert_eq!(
        d.bbr.rt_prop(),
        Some(ms(100)),
        "the lowest sample of PROBE_RTT"
    );
    assert_eq!(d.bbr.cwnd(), cwnd, "restored");
    // The estimate's lifetime restarted at the exit.
    assert_eq!(d.bbr.m.rtprop.stamp(), d.now);
}

/// A PROBE_RTT in which no ACK carries an RTT (every one covers
/// retransmitted data, as in the repair after a long outage) measured
/// nothing: it keeps its schedule, but the next RTT sample replaces the
/// estimate even when it is higher (a handover to a longer path), instead of
/// the stale value living another 10 s.
#[test]
fn a_probe_rtt_without_rtt_samples_leaves_rtprop_to_the_next_sample() {
    let mut d = Drive::new();
    d.reach_full_window();
    let stamp = d.now;
    // ten seconds of ACKs without an RTT (Karn), then PROBE_RTT
    let blind = Sample {
        karn_rtt: None,
        ..Sample::default()
    };
    while d.bbr.mode() != Mode::ProbeRtt {
        d.round(10, blind);
    }
    assert!(d.now > stamp + Duration::from_secs(10));
    assert_eq!(d.bbr.rt_prop(), Some(ms(100)), "nothing replaced it");
    let low = Sample {
        in_flight: 4 * MSS,
        ..blind
    };
    while d.bbr.mode() == Mode::ProbeRtt {
        d.round(10, low);
    }
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
    assert_eq!(d.bbr.rt_prop(), Some(ms(100)), "still the old estimate");
    // its lifetime restarted at the exit (within the last round played)
    assert!(d.bbr.m.rtprop.stamp() + ms(100) >= d.now);
    assert!(d.bbr.m.rtprop.is_unmeasured());
    // the first sample with an RTT, a longer one, replaces it at once
    let longer = Sample {
        rtt: ms(480),
        karn_rtt: Some(ms(480)),
        ..Sample::default()
    };
    d.ack(ms(10), longer);
    assert_eq!(d.bbr.rt_prop(), Some(ms(480)));
    assert_eq!(d.bbr.mode(), Mode::ProbeBw, "no second PROBE_RTT");
    // and from then on only lower samples do
    d.ack(
        ms(10),
        Sample {
            karn_rtt: Some(ms(500)),
            ..longer
        },
    );
    assert_eq!(d.bbr.rt_prop(), Some(ms(480)));
}

#[test]
fn probe_rtt_needs_200_ms_after_the_round() {
    let mut d = Drive::new();
    d.reach_probe_bw();
    let slow = Sample {
        rtt: ms(110),
        karn_rtt: Some(ms(110)),
        ..Sample::default()
    };
    while d.bbr.mode() != Mode::ProbeRtt {
        d.round(10, slow);
    }
    let low = Sample {
        in_flight: 4 * MSS,
        ..slow
    };
    d.ack(
        ms(1),
        Sample {
            prior_delivered: Some(0),
            ..low
        },
    );
    let t0 = d.now;
    let marker = d.delivered;
    // The round completes at once, the time has not passed.
    d.ack(
        ms(10),
        Sample {
            prior_delivered: Some(marker),
            ..low
        },
    );
    while d.now + ms(10) <= t0 + ms(200) {
        d.ack(
            ms(10),
            Sample {
                prior_delivered: Some(marker),
                ..low
            },
        );
        assert_eq!(d.bbr.mode(), Mode::ProbeRtt);
    }
    assert_eq!(d.now, t0 + ms(200));
    d.ack(
        ms(1),
        Sample {
            prior_delivered: Some(marker),
            ..low
        },
    );
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
}

#[test]
fn probe_rtt_without_a_full_pipe_returns_to_startup() {
    let mut d = Drive::new();
    // App-limited rounds never fill the pipe.
    let s = Sample {
        app_limited: true,
        rtt: ms(100),
        ..Sample::default()
    };
    d.round(
        10,
        Sample {
            app_limited: false,
            rtt: ms(90),
            karn_rtt: Some(ms(90)),
            ..s
        },
    );
    while d.bbr.mode() != Mode::ProbeRtt {
        d.round(10, s);
        assert!(d.now < Instant::from_nanos(13_000_000_000));
    }
    assert!(!d.bbr.filled_pipe());
    let low = Sample {
        in_flight: 4 * MSS,
        ..s
    };
    d.ack(
        ms(1),
        Sample {
            prior_delivered: Some(0),
            ..low
        },
    );
    let marker = d.delivered;
    for _ in 0..25 {
        d.ack(
            ms(10),
            Sample {
                prior_delivered: Some(marker),
                ..low
            },
        );
    }
    assert_eq!(d.bbr.mode(), Mode::Startup);
    assert!(approx(d.bbr.pacing_gain(), DEFAULT_HIGH_GAIN));
}

#[test]
fn probe_rtt_asks_the_sender_for_the_app_limited_mark() {
    let p = BbrParams {
        bw_window_rounds: 2,
        ..BbrParams::default()
    };
    let mut d = Drive::with(p);
    d.reach_probe_bw();
    while d.bbr.poll_request().is_some() {}
    let slow = Sample {
        rtt: ms(110),
        karn_rtt: Some(ms(110)),
        ..Sample::default()
    };
    loop {
        d.round(10, slow);
        if d.bbr.mode() == Mode::ProbeRtt {
            break;
        }
        assert_eq!(d.bbr.poll_request(), None, "no mark outside PROBE_RTT");
    }
    assert_eq!(d.bbr.poll_request(), Some(SenderRequest::MarkAppLimited));
    assert_eq!(d.bbr.poll_request(), None, "once per ACK");
    // Four segments per round trip while probing: the sender marks these
    // samples app-limited, and they do not lower the estimate.
    let low = Sample {
        rate: Some(320_000),
        in_flight: 4 * MSS,
        app_limited: true,
        ..slow
    };
    d.ack(ms(1), low);
    assert_eq!(d.bbr.poll_request(), Some(SenderRequest::MarkAppLimited));
    for _ in 0..3 {
        d.round(4, low);
    }
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
    assert_eq!(d.bbr.btl_bw(), Some(Rate::from_bps(BW)));
}

// ----- loss recovery ------------------------------------------------------

fn fast_retransmit(in_flight: u64) -> CongestionEvent {
    CongestionEvent {
        kind: CongestionKind::FastRetransmit,
        flight_size: in_flight,
        ssthresh_basis: in_flight,
        in_flight,
        mss: MSS as u32,
    }
}

#[test]
fn fast_recovery_conserves_packets_for_a_round_then_restores_the_window() {
    let mut d = Drive::new();
    let cwnd = d.reach_full_window();
    // Fast retransmit on an ACK that delivered 2 segments and had 1 marked
    // lost: the window is saved at once, the new state counts with the ACK.
    d.bbr.on_congestion(d.now, &fast_retransmit(150 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    assert_eq!(d.bbr.prior_cwnd(), cwnd);
    assert_eq!(d.bbr.cwnd(), cwnd);
    assert!(!d.bbr.packet_conservation());
    let rec = Sample {
        state: CaState::Recovery,
        karn_rtt: None,
        ..Sample::default()
    };
    d.ack(
        ms(1),
        Sample {
            bytes: 2 * MSS,
            lost: MSS,
            in_flight: 149 * MSS,
            ..rec
        },
    );
    // entry: 149 in flight + 2 delivered; then max(151 - 1 lost, 149 + 2)
    assert_eq!(d.bbr.cwnd(), 151 * MSS);
    assert!(d.bbr.packet_conservation());
    let marker = d.delivered;
    // Packet conservation: cwnd follows in flight + delivered, never more.
    d.ack(
        ms(1),
        Sample {
            in_flight: 100 * MSS,
            prior_delivered: Some(marker - 1),
            ..rec
        },
    );
    assert_eq!(d.bbr.cwnd(), 151 * MSS);
    d.ack(
        ms(1),
        Sample {
            lost: 60 * MSS,
            in_flight: 100 * MSS,
            prior_delivered: Some(marker - 1),
            ..rec
        },
    );
    assert_eq!(
        d.bbr.cwnd(),
        101 * MSS,
        "losses deducted, in flight + delivered kept"
    );
    assert!(d.bbr.packet_conservation());
    // A packet sent after the recovery's first ACK is acknowledged: the
    // first round is over and the window grows by what is delivered again.
    d.ack(
        ms(1),
        Sample {
            in_flight: 100 * MSS,
            prior_delivered: Some(marker),
            ..rec
        },
    );
    assert!(!d.bbr.packet_conservation());
    assert_eq!(d.bbr.cwnd(), 102 * MSS);
    // Leaving recovery restores the window saved at its start, with the ACK
    // that ended it.
    d.bbr.on_state(d.now, CaState::Open);
    assert_eq!(d.bbr.cwnd(), 102 * MSS);
    d.ack(ms(1), Sample::default());
    assert_eq!(d.bbr.cwnd(), cwnd);
}

#[test]
fn a_recovery_that_ends_and_starts_again_on_one_ack_is_one_recovery() {
    let mut d = Drive::new();
    let cwnd = d.reach_full_window();
    let rec = Sample {
        state: CaState::Recovery,
        karn_rtt: None,
        in_flight: 100 * MSS,
        ..Sample::default()
    };
    d.bbr.on_congestion(d.now, &fast_retransmit(100 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    d.ack(ms(1), rec);
    assert_eq!(d.bbr.cwnd(), 101 * MSS);
    // a packet sent after the recovery started is acknowledged: round over
    let next_round = Sample {
        prior_delivered: Some(d.delivered),
        ..rec
    };
    d.ack(ms(1), next_round);
    assert!(!d.bbr.packet_conservation());
    assert_eq!(d.bbr.cwnd(), 102 * MSS);
    // One ACK repairs the last hole (the sender leaves recovery) and shows
    // a new loss (it enters another): as in Linux, BBR sees no change of
    // state, so neither the restore nor a new packet conservation.
    d.bbr.on_state(d.now, CaState::Open);
    d.bbr.on_congestion(d.now, &fast_retransmit(100 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    assert_eq!(
        d.bbr.prior_cwnd(),
        cwnd,
        "the window saved before the first"
    );
    d.ack(ms(1), next_round);
    assert!(!d.bbr.packet_conservation());
    assert_eq!(d.bbr.cwnd(), 103 * MSS, "grows by what is delivered");
    // With an ACK in the Open state in between, the next fast retransmit
    // starts a new recovery, from what is in flight.
    d.bbr.on_state(d.now, CaState::Open);
    d.ack(ms(1), Sample::default());
    assert_eq!(d.bbr.cwnd(), cwnd);
    d.bbr.on_congestion(d.now, &fast_retransmit(100 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    d.ack(ms(1), rec);
    assert!(d.bbr.packet_conservation());
    assert_eq!(d.bbr.cwnd(), 101 * MSS);
}

#[test]
fn a_timeout_sets_one_segment_and_the_exit_restores_the_window() {
    let mut d = Drive::new();
    let cwnd = d.reach_full_window();
    let rto = CongestionEvent {
        kind: CongestionKind::Rto { repeated: false },
        flight_size: 150 * MSS,
        ssthresh_basis: 150 * MSS,
        in_flight: 150 * MSS,
        mss: MSS as u32,
    };
    d.bbr.on_congestion(d.now, &rto);
    d.bbr.on_state(d.now, CaState::Loss);
    assert_eq!(d.bbr.cwnd(), MSS);
    assert_eq!(d.bbr.prior_cwnd(), cwnd);
    assert_eq!(d.bbr.ssthresh(), u64::MAX);
    let loss = Sample {
        state: CaState::Loss,
        karn_rtt: None,
        in_flight: 0,
        ..Sample::default()
    };
    // Grows by what is delivered, never below the 4-segment floor.
    d.ack(ms(100), loss);
    assert_eq!(d.bbr.cwnd(), 4 * MSS);
    for _ in 0..3 {
        d.ack(ms(1), loss);
    }
    assert_eq!(d.bbr.cwnd(), 7 * MSS);
    // A second timeout in the Loss state keeps the larger saved window.
    d.bbr.on_congestion(d.now, &rto);
    assert_eq!(d.bbr.prior_cwnd(), cwnd);
    // The ACK that ends the Loss state restores it.
    d.bbr.on_state(d.now, CaState::Open);
    d.ack(ms(1), Sample::default());
    assert_eq!(d.bbr.cwnd(), cwnd);
}

#[test]
fn a_timeout_in_fast_recovery_ends_packet_conservation() {
    let mut d = Drive::new();
    d.reach_probe_bw();
    d.bbr.on_congestion(d.now, &fast_retransmit(50 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    d.ack(
        ms(1),
        Sample {
            in_flight: 50 * MSS,
            state: CaState::Recovery,
            karn_rtt: None,
            ..Sample::default()
        },
    );
    assert!(d.bbr.packet_conservation());
    let rto = CongestionEvent {
        kind: CongestionKind::Rto { repeated: false },
        ..fast_retransmit(0)
    };
    d.bbr.on_congestion(d.now, &rto);
    d.bbr.on_state(d.now, CaState::Loss);
    assert!(!d.bbr.packet_conservation());
    assert_eq!(d.bbr.cwnd(), MSS);
}

#[test]
fn a_sample_without_rtt_leaves_rtprop_alone() {
    let mut d = Drive::new();
    d.round(10, Sample::default());
    assert_eq!(d.bbr.rt_prop(), Some(ms(100)));
    d.bbr.on_congestion(d.now, &fast_retransmit(50 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    // The newest packet acknowledged was retransmitted: the sampler gives no
    // RTT (Karn), rather than the 1 ms since the retransmission.
    let bogus = Sample {
        rtt: ms(1),
        karn_rtt: None,
        state: CaState::Recovery,
        ..Sample::default()
    };
    d.ack(ms(1), bogus);
    assert_eq!(d.bbr.rt_prop(), Some(ms(100)));
    // A valid sample during recovery refreshes it as any other.
    d.ack(
        ms(1),
        Sample {
            karn_rtt: Some(ms(99)),
            ..bogus
        },
    );
    assert_eq!(d.bbr.rt_prop(), Some(ms(99)));
}

#[test]
fn an_ack_without_delivery_applies_only_the_recovery_rules() {
    let mut d = Drive::new();
    d.reach_probe_bw();
    let rounds = d.bbr.round_count();
    d.bbr.on_congestion(d.now, &fast_retransmit(50 * MSS));
    d.bbr.on_state(d.now, CaState::Recovery);
    // Third duplicate ACK without SACK: one segment marked lost, nothing delivered.
    d.ack(
        ms(1),
        Sample {
            bytes: 0,
            lost: MSS,
            in_flight: 49 * MSS,
            state: CaState::Recovery,
            ..Sample::default()
        },
    );
    // entry: 49 in flight + 1 segment; less the 1 lost; at least in flight
    assert_eq!(d.bbr.cwnd(), 49 * MSS);
    assert!(d.bbr.packet_conservation());
    assert_eq!(d.bbr.round_count(), rounds);
}

#[test]
fn restart_from_idle_paces_at_btl_bw_and_skips_probe_rtt_once() {
    let mut d = Drive::new();
    d.reach_probe_bw();
    to_phase(&mut d, 0);
    assert_eq!(d.bbr.pacing_rate(), Some(Rate::from_bps(BW).scaled(1.25)));
    // Everything acknowledged; the application has nothing more.
    d.ack(
        ms(1),
        Sample {
            in_flight: 0,
            ..Sample::default()
        },
    );
    d.bbr.on_app_limited(d.now);
    assert_eq!(
        d.bbr.pacing_rate(),
        Some(Rate::from_bps(BW)),
        "gain 1 on restart"
    );
    assert_eq!(d.bbr.pacing_gain(), 1.25, "the cycle itself is unchanged");
    // With data in flight, app-limited is no restart.
    let mut e = Drive::new();
    e.reach_probe_bw();
    to_phase(&mut e, 0);
    e.bbr.on_app_limited(e.now);
    assert_eq!(e.bbr.pacing_rate(), Some(Rate::from_bps(BW).scaled(1.25)));

    // Idle for 20 s: RTprop expired. The first ACK after the restart does
    // not enter PROBE_RTT: its sample replaces the expired estimate.
    let sent = SentInfo {
        offset: 0,
        len: MSS as u32,
        retransmission: false,
        in_flight: MSS,
    };
    let after_idle = Sample {
        rtt: ms(120),
        karn_rtt: Some(ms(120)),
        in_flight: 0,
        ..Sample::default()
    };
    d.bbr.on_packet_sent(d.now, &sent);
    d.ack(Duration::from_secs(20), after_idle);
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
    assert_eq!(d.bbr.rt_prop(), Some(ms(120)));
    d.ack(ms(1), after_idle);
    assert_eq!(d.bbr.mode(), Mode::ProbeBw);
    // The same ACK without the restart: PROBE_RTT.
    e.bbr.on_packet_sent(e.now, &sent);
    e.ack(Duration::from_secs(20), after_idle);
    assert_eq!(e.bbr.mode(), Mode::ProbeRtt);
}

// ----- parameters ---------------------------------------------------------

#[test]
fn parameters_have_defaults_units_and_checks() {
    let p = BbrParams::default();
    p.validate().unwrap();
    assert_eq!(p.cwnd_gain, 2.0);
    assert_eq!(p.probe_rtt_duration, ms(200));
    assert_eq!(p.min_rtt_window, Duration::from_secs(10));
    assert_eq!(p.bw_window_rounds, 10);
    assert!(approx(p.high_gain, 2.0 / core::f64::consts::LN_2));
    let c = CcConfig::named("bbr").unwrap();
    assert_eq!(c, CcConfig::Bbr(BbrParams::default()));
    let c: CcConfig = serde_json::from_str(
        r#"{"algorithm": "bbr", "cwnd_gain": 2.5, "probe_rtt_duration": "300ms", "min_rtt_window": "5s", "bw_window_rounds": 8}"#,
    )
    .unwrap();
    let CcConfig::Bbr(q) = c else { panic!() };
    assert_eq!(
        (
            q.cwnd_gain,
            q.probe_rtt_duration,
            q.min_rtt_window,
            q.bw_window_rounds
        ),
        (2.5, ms(300), Duration::from_secs(5), 8)
    );
    let json = serde_json::to_string(&q).unwrap();
    assert!(json.contains(r#""probe_rtt_duration":"300ms""#), "{json}");
    let e = serde_json::from_str::<CcConfig>(r#"{"algorithm": "bbr", "gain": 2}"#).unwrap_err();
    assert!(e.to_string().contains("unknown field `gain`"), "{e}");
    let e = serde_json::from_str::<CcConfig>(r#"{"algorithm": "bbr", "probe_rtt_duration": 200}"#)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("probe_rtt_duration: 200 has no unit"),
        "{e}"
    );

    let bad = |q: BbrParams| q.validate().unwrap_err();
    let d = BbrParams::default;
    assert!(bad(BbrParams {
        high_gain: 1.0,
        ..d()
    })
    .starts_with("high_gain: 1 is out of range"));
    assert!(bad(BbrParams {
        high_gain: f64::NAN,
        ..d()
    })
    .starts_with("high_gain: NaN"));
    assert!(bad(BbrParams {
        cwnd_gain: 0.5,
        ..d()
    })
    .starts_with("cwnd_gain: 0.5"));
    assert!(bad(BbrParams {
        full_bw_growth: 1.0,
        ..d()
    })
    .starts_with("full_bw_growth: 1"));
    assert_eq!(
        bad(BbrParams {
            probe_rtt_duration: Duration::ZERO,
            ..d()
        }),
        "probe_rtt_duration: must be above zero"
    );
    assert_eq!(
        bad(BbrParams {
            min_rtt_window: ms(200),
            ..d()
        }),
        "min_rtt_window: 200ms must be longer than probe_rtt_duration 200ms"
    );
    assert_eq!(
        bad(BbrParams {
            bw_window_rounds: 0,
            ..d()
        }),
        "bw_window_rounds: 0 is out of range 1..=1000"
    );
    assert_eq!(
        bad(BbrParams {
            probe_rtt_cwnd: 0,
            ..d()
        }),
        "probe_rtt_cwnd: must be at least 1 segment"
    );
    assert_eq!(
        bad(BbrParams {
            full_bw_rounds: 0,
            ..d()
        }),
        "full_bw_rounds: must be at least 1"
    );
    assert_eq!(
        bad(BbrParams {
            initial_rtt: Duration::ZERO,
            ..d()
        }),
        "initial_rtt: must be above zero"
    );
}

#[test]
fn the_state_is_boxed_so_the_cc_enum_stays_small() {
    assert_eq!(core::mem::size_of::<Bbr>(), core::mem::size_of::<usize>());
}

// ----- through the sender -------------------------------------------------

#[test]
fn the_sender_paces_the_initial_window_and_then_at_the_srtt_rate() {
    let cfg = TcpConfig {
        mss: 1000,
        ..TcpConfig::default()
    };
    let mut h = Harness::new(cfg, "bbr");
    // The initial window leaves paced at 2.885 × 10 000 B / 1 ms: one segment
    // of 1040 IP bytes every 36.05 us.
    let rate = h.tx.cc().pacing_rate().unwrap();
    let gap = rate.tx_time(1040);
    let mut times = Vec::new();
    for _ in 0..20 {
        let n = h.sent().len();
        times.extend(std::iter::repeat_n(h.now, n));
        if times.len() >= 10 {
            break;
        }
        h.now = h.tx.poll_timeout().unwrap();
    }
    assert_eq!(times.len(), 10, "the initial window");
    for w in times.windows(2) {
        assert_eq!(w[1] - w[0], gap);
    }
    // The first ACK (RTT 100 ms after the 100 ms handshake) brings SRTT.
    h.at(200);
    h.ack(2000, &[]);
    let srtt = h.tx.rtt().srtt().unwrap();
    let want = Rate::from_bytes_per(10_000, srtt).scaled(DEFAULT_HIGH_GAIN);
    assert_eq!(h.tx.cc().pacing_rate(), Some(want));
    assert!(h.cwnd() >= 12_000, "STARTUP grows by what was delivered");
}
