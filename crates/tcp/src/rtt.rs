//! Round-trip-time estimation and the retransmission timeout: RFC 6298 with
//! RFC 7323 Appendix G's scaling for per-ACK samples (the default), or
//! Linux's estimator ([`RtoFlavour`]).
//!
//! RFC 6298 assumes about one sample per round trip; the sender takes one
//! per ACK that advances `snd_una`, so with the RFC's gains RTTVAR forgets
//! its history within one flight: on a smooth path whose RTT sits far above
//! the minimum RTO, RTTVAR decays to almost nothing, the RTO settles a
//! millisecond (G) above SRTT and every queueing bump becomes a spurious
//! timeout (CUBIC on the DCNET L2 path with `min_rto = 200ms`: 13 timeouts
//! and 4 487 needless retransmissions in 330 s). RFC 7323 Appendix G divides
//! both gains by the number of samples a flight yields,
//! `ceil(FlightSize / (2 SMSS))`, so the estimator keeps about the history
//! RFC 6298 intends. Linux keeps the RFC's gains but never lets the
//! variation term fall below the minimum RTO, so its RTO is about SRTT +
//! `rto_min` (200 ms).

use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// Clock granularity G of RFC 6298 section 2: the smallest RTTVAR term.
pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

/// How the retransmission timeout is computed (`tcp.rto`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoFlavour {
    /// RFC 6298: RTO = max(`min_rto`, SRTT + max(G, 4 RTTVAR)), with the
    /// gains of each per-ACK sample divided by the samples a flight yields
    /// (RFC 7323 Appendix G: alpha' = 1/8 / ExpectedSamples, beta' = 1/4 /
    /// ExpectedSamples, ExpectedSamples = ceil(FlightSize / (2 SMSS))).
    /// Samples not taken per ACK (the handshake's, an algorithm's own) use
    /// the plain gains.
    #[default]
    #[serde(rename = "rfc6298")]
    Rfc6298,
    /// Linux (`tcp_rtt_estimator` and `__tcp_set_rto`, net/ipv4/tcp_input.c,
    /// unchanged from 3.x to 6.18): RFC 6298's gains on every sample, except
    /// that a sample below SRTT moves the deviation with a gain of 1/32
    /// instead of 1/4; the variation term is the largest 4 x deviation seen
    /// in the current flight, never below `min_rto`, and decays toward the
    /// last flight's largest by a quarter of the gap per flight. RTO = SRTT +
    /// that term (no separate floor), about SRTT + `min_rto` on a smooth path.
    Linux,
}

/// The connection's flight when a sample is taken: what RFC 7323 Appendix
/// G counts samples against and what Linux's estimator measures its rounds by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flight {
    /// Oldest unacknowledged offset (after the ACK that gave the sample).
    pub snd_una: u64,
    /// Next new offset to send.
    pub snd_nxt: u64,
    /// Bytes outstanding before the ACK (RFC 5681's FlightSize).
    pub flight_size: u64,
    /// Sender MSS.
    pub mss: u32,
}

/// Linux's extra state: the deviation as Linux keeps it (4 x the mean
/// deviation), its largest value in the current flight, the variation term
/// added to SRTT, and the offset that ends the current flight.
#[derive(Clone, Copy, Debug, Default)]
struct LinuxVar {
    mdev: Duration,
    mdev_max: Duration,
    var: Duration,
    round_end: u64,
}

/// SRTT / RTTVAR estimator with exponential backoff of the RTO.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    flavour: RtoFlavour,
    srtt: Option<Duration>,
    rttvar: Duration,
    linux: LinuxVar,
    latest: Option<Duration>,
    min_rtt: Option<Duration>,
    initial_rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    backoff: u32,
    samples: u64,
}

impl RttEstimator {
    /// A fresh RFC 6298 estimator: RTO = `initial_rto` until the first sample.
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        Self::with_flavour(RtoFlavour::Rfc6298, initial_rto, min_rto, max_rto)
    }

    /// A fresh estimator of the given flavour.
    pub fn with_flavour(
        flavour: RtoFlavour,
        initial_rto: Duration,
        min_rto: Duration,
        max_rto: Duration,
    ) -> Self {
        RttEstimator {
            flavour,
            srtt: None,
            rttvar: Duration::ZERO,
            linux: LinuxVar::default(),
            latest: None,
            min_rtt: None,
            initial_rto,
            min_rto,
            max_rto,
            backoff: 0,
            samples: 0,
        }
    }

    /// The flavour.
    pub fn flavour(&self) -> RtoFlavour {
        self.flavour
    }

    /// Feeds a measurement that is not one of a flight's per-ACK samples (the
    /// handshake's, or one an algorithm takes per burst): RFC 6298 sections
    /// 2.2 and 2.3 with the plain gains.
    pub fn on_sample(&mut self, r: Duration, flight: Flight) {
        self.update(r, 1, flight);
    }

    /// Feeds the sample of an ACK: in the RFC flavour the gains are divided
    /// by ceil(FlightSize / (2 SMSS)) (RFC 7323 Appendix G).
    pub fn on_ack_sample(&mut self, r: Duration, flight: Flight) {
        let per_flight = flight
            .flight_size
            .div_ceil(2 * flight.mss.max(1) as u64)
            .max(1);
        self.update(r, per_flight, flight);
    }

    fn update(&mut self, r: Duration, expected: u64, flight: Flight) {
        self.samples += 1;
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.flavour {
            RtoFlavour::Rfc6298 => self.update_rfc6298(r, expected),
            RtoFlavour::Linux => self.update_linux(r, flight),
        }
    }

    /// RTTVAR <- (1 - beta') RTTVAR + beta' |SRTT - R'|, SRTT <- (1 -
    /// alpha') SRTT + alpha' R', with alpha' = 1/(8 n), beta' = 1/(4 n) for
    /// `n` samples per flight (n = 1: RFC 6298 itself).
    fn update_rfc6298(&mut self, r: Duration, n: u64) {
        let Some(srtt) = self.srtt else {
            self.srtt = Some(r);
            self.rttvar = r / 2;
            return;
        };
        let n = n as u128;
        let (srtt_ns, r_ns) = (srtt.as_nanos() as u128, r.as_nanos() as u128);
        let diff = srtt_ns.abs_diff(r_ns);
        let var = self.rttvar.as_nanos() as u128;
        self.rttvar = nanos((var * (4 * n - 1) + diff) / (4 * n));
        self.srtt = Some(nanos((srtt_ns * (8 * n - 1) + r_ns) / (8 * n)));
    }

    /// Linux's rule (see [`RtoFlavour::Linux`]), in our words.
    fn update_linux(&mut self, r: Duration, flight: Flight) {
        let l = &mut self.linux;
        let Some(srtt) = self.srtt else {
            self.srtt = Some(r);
            l.mdev = r * 2;
            l.var = l.mdev.max(self.min_rto);
            l.mdev_max = l.var;
            l.round_end = flight.snd_nxt;
            self.rttvar = l.var / 4;
            return;
        };
        let err = r.as_nanos() as i128 - srtt.as_nanos() as i128;
        self.srtt = Some(nanos((srtt.as_nanos() as i128 + err / 8).max(1) as u128));
        let quarter = l.mdev.as_nanos() as i128 / 4;
        let mut step = err.abs() - quarter;
        if err < 0 && step > 0 {
            // a sample below SRTT raises the deviation with gain 1/32 only
            step /= 8;
        }
        l.mdev = nanos((l.mdev.as_nanos() as i128 + step).max(0) as u128);
        if l.mdev > l.mdev_max {
            l.mdev_max = l.mdev;
            l.var = l.var.max(l.mdev_max);
        }
        if flight.snd_una > l.round_end {
            // a flight ended: the term decays toward its largest deviation
            if l.mdev_max < l.var {
                l.var = l.var - (l.var - l.mdev_max) / 4;
            }
            l.round_end = flight.snd_nxt;
            l.mdev_max = self.min_rto;
        }
        self.rttvar = l.var / 4;
    }

    /// The RTO before backoff, clamped to at most `max_rto`: RFC 6298's
    /// max(`min_rto`, SRTT + max(G, 4 RTTVAR)), or Linux's SRTT + its
    /// variation term.
    pub fn base_rto(&self) -> Duration {
        let raw = match (self.srtt, self.flavour) {
            (None, _) => self.initial_rto.max(self.min_rto),
            (Some(srtt), RtoFlavour::Rfc6298) => {
                (srtt + CLOCK_GRANULARITY.max(self.rttvar * 4)).max(self.min_rto)
            }
            (Some(srtt), RtoFlavour::Linux) => srtt + self.linux.var,
        };
        raw.min(self.max_rto)
    }
    /// The current RTO: the base doubled once per backoff, capped at the maximum.
    pub fn rto(&self) -> Duration {
        let mut rto = self.base_rto();
        for _ in 0..self.backoff {
            rto = rto * 2;
            if rto >= self.max_rto {
                return self.max_rto;
            }
        }
        rto
    }

    /// Doubles the RTO (RFC 6298 section 5.5).
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// Clears the backoff (new data was acknowledged).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Raises the RTO used before the first sample (RFC 6298 section 5.7: after a
    /// timed-out SYN, data transmission starts with an RTO of at least 3 s).
    pub fn raise_initial_rto(&mut self, floor: Duration) {
        self.initial_rto = self.initial_rto.max(floor);
    }

    /// Re-initialises the estimator as for a new connection (RFC 6298
    /// section 2.1): no SRTT or RTTVAR, the initial RTO, no backoff; the next
    /// sample is a first measurement (section 2.2). The minimum RTT and the
    /// sample count are kept.
    pub fn reset(&mut self) {
        self.srtt = None;
        self.rttvar = Duration::ZERO;
        self.linux = LinuxVar::default();
        self.backoff = 0;
    }

    /// Sets the RTO's floor.
    pub fn set_min_rto(&mut self, min_rto: Duration) {
        self.min_rto = min_rto;
    }

    /// The RTO's floor.
    pub fn min_rto(&self) -> Duration {
        self.min_rto
    }

    /// Number of consecutive backoffs.
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// RTT variation: RFC 6298's RTTVAR, or for Linux a quarter of its
    /// variation term (so that RTO = SRTT + 4 RTTVAR in both).
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
    /// The smallest sample seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// Number of samples taken.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }
}

/// A duration from nanoseconds computed in 128 bits (saturating).
fn nanos(ns: u128) -> Duration {
    Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn first_sample_sets_srtt_and_half_var() {
        let mut e = est();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(Duration::from_millis(100), Flight::default());
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn follows_rfc6298_gains() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100), Flight::default());
        e.on_sample(Duration::from_millis(200), Flight::default());
        // rttvar = 3/4*50 + 1/4*100 = 62.5 ms; srtt = 7/8*100 + 1/8*200 = 112.5 ms
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        assert_eq!(e.min_rtt(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn reset_starts_over_and_the_floor_can_move() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100), Flight::default());
        e.on_sample(Duration::from_millis(300), Flight::default());
        e.back_off();
        e.reset();
        assert_eq!((e.srtt(), e.backoff_count()), (None, 0));
        assert_eq!(e.rto(), Duration::from_secs(1), "the initial RTO");
        e.on_sample(Duration::from_millis(40), Flight::default());
        // a first measurement: SRTT = R, RTTVAR = R / 2
        assert_eq!(e.srtt(), Some(Duration::from_millis(40)));
        assert_eq!(e.rttvar(), Duration::from_millis(20));
        assert_eq!(e.min_rtt(), Some(Duration::from_millis(40)));
        assert_eq!(e.rto(), Duration::from_millis(200), "40 + 80 ms, floored");
        e.set_min_rto(Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(120));
    }

    #[test]
    fn clamps_to_min_and_backs_off_to_cap() {
        let mut e = est();
        e.on_sample(Duration::from_millis(10), Flight::default());
        assert_eq!(e.rto(), Duration::from_millis(200));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(400));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.reset_backoff();
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// A flight of `segments` of 1000 bytes ending at `snd_nxt`.
    fn flight(snd_una: u64, snd_nxt: u64) -> Flight {
        Flight {
            snd_una,
            snd_nxt,
            flight_size: snd_nxt - snd_una,
            mss: 1000,
        }
    }

    /// RFC 7323 Appendix G: per-ACK samples of a flight of 100 segments
    /// (ExpectedSamples = 50) move SRTT and RTTVAR by 1/400 and 1/200 each,
    /// so one flight of samples moves them about as far as one RFC 6298
    /// sample would.
    #[test]
    fn per_ack_samples_are_scaled_by_the_samples_a_flight_yields() {
        let mut e = est();
        e.on_sample(ms(400), Flight::default());
        assert_eq!(e.rttvar(), ms(200));
        e.on_ack_sample(ms(600), flight(0, 100_000));
        // SRTT = 400 + 200/400 = 400.5 ms; RTTVAR = 200 + (200 - 200)/200
        assert_eq!(e.srtt(), Some(Duration::from_micros(400_500)));
        assert_eq!(e.rttvar(), ms(200));
        // a smooth path: 50 identical samples per flight. RTTVAR decays by
        // about (1 - 1/200)^50 = 0.78 per flight, not (3/4)^50 = 6e-7
        let mut e = est();
        e.on_sample(ms(400), Flight::default());
        for _ in 0..50 {
            e.on_ack_sample(ms(400), flight(0, 100_000));
        }
        let v = e.rttvar().as_secs_f64();
        assert!((0.155..0.157).contains(&v), "{v}");
        // unscaled (one sample per flight): the RFC 6298 gains
        let mut plain = est();
        plain.on_sample(ms(400), Flight::default());
        plain.on_ack_sample(ms(600), flight(0, 1_000));
        assert_eq!(plain.rttvar(), ms(200));
        assert_eq!(plain.srtt(), Some(ms(425)));
    }

    /// The DCNET L2 path (485 ms, smooth) with `min_rto = 200ms`: after 20
    /// flights of 500 per-ACK samples at a steady RTT, RFC 6298 alone would
    /// leave the RTO 1 ms (G) above SRTT; with Appendix G, 4 RTTVAR is still
    /// several milliseconds, and Linux keeps SRTT + 200 ms.
    #[test]
    fn a_smooth_path_keeps_a_margin_above_srtt() {
        let run = |flavour| {
            let mut e = RttEstimator::with_flavour(flavour, ms(1000), ms(200), ms(60_000));
            e.on_sample(ms(485), Flight::default());
            // a window of 500 segments, each ACK releasing one more
            let window = 500 * 1000;
            for k in 1..=20 * 500u64 {
                // a queueing ripple of +-2 ms within each flight
                let r = ms(483 + k % 5);
                let una = k * 1000;
                e.on_ack_sample(
                    r,
                    Flight {
                        snd_una: una,
                        snd_nxt: una + window,
                        flight_size: window,
                        mss: 1000,
                    },
                );
            }
            e.base_rto() - e.srtt().unwrap()
        };
        let rfc = run(RtoFlavour::Rfc6298);
        let linux = run(RtoFlavour::Linux);
        assert!(rfc >= ms(4), "RFC 6298 + Appendix G margin {rfc}");
        assert!((ms(200)..ms(210)).contains(&linux), "Linux margin {linux}");
    }

    /// Linux: the first sample gives RTO = 3 x RTT or RTT + `min_rto`; the
    /// variation term holds the largest deviation of the flight and decays
    /// by a quarter of the gap to the last flight's largest per flight;
    /// samples below SRTT raise the deviation with gain 1/32.
    #[test]
    fn linux_floors_the_variation_at_min_rto_and_decays_per_flight() {
        let mut e = RttEstimator::with_flavour(RtoFlavour::Linux, ms(1000), ms(200), ms(60_000));
        e.on_sample(ms(50), flight(0, 0));
        assert_eq!(e.rto(), ms(250), "50 + max(2 x 50, 200)");
        let mut e = RttEstimator::with_flavour(RtoFlavour::Linux, ms(1000), ms(200), ms(60_000));
        e.on_sample(ms(400), flight(0, 10_000));
        assert_eq!(e.rto(), ms(1200), "3 x RTT");
        // a jump within the flight: deviation 800/4*3 + 400 = 1000 ms (4x)
        e.on_ack_sample(ms(800), flight(1000, 10_000));
        assert_eq!(e.srtt(), Some(ms(450)));
        assert_eq!(e.rttvar(), ms(250));
        assert_eq!(e.rto(), ms(1450));
        // the next flights are smooth: the term decays a quarter of the way
        // to each flight's largest deviation (floored at 200 ms)
        let mut una = 1000;
        let mut nxt = 10_000;
        let mut rtos = vec![];
        for _ in 0..40 {
            una = nxt + 1000;
            nxt += 10_000;
            for _ in 0..10 {
                e.on_ack_sample(ms(450), flight(una, nxt));
            }
            rtos.push(e.rto());
        }
        assert!(rtos.windows(2).all(|w| w[1] <= w[0]), "{rtos:?}");
        let last = *rtos.last().unwrap();
        assert!(last >= ms(650) && last < ms(655), "{last}");
        // a sample far below SRTT barely moves the deviation (gain 1/32)
        let before = e.linux.mdev;
        e.on_ack_sample(ms(50), flight(una, nxt));
        // (Linux's deviation is 4 x the mean deviation: a 400 ms error adds
        // 400 / 8 = 50 ms to it, 12.5 ms to the mean deviation; RFC 6298's
        // gain would add 100 ms)
        let grown = e.linux.mdev.as_secs_f64() - before.as_secs_f64();
        assert!((grown - 0.05).abs() < 1e-3, "{grown}");
    }
}
