//! A LEO satellite access link (Starlink-like): the terminal is moved to
//! another satellite on a global schedule, every `period` from `phase`, and
//! at each reconfiguration the path's base delay and capacity change, the
//! delay spikes while the queues built around the switch drain, and the
//! link may go dark for a moment; between reconfigurations it loses packets
//! that are not congestion.
//!
//! The model is a generator, not a new link type: before the run it draws,
//! from the link's own random stream, the series a measured link would have
//! ([`CsvTrace`]s of each direction's rate and one-way delay) and the
//! outage windows, so that both link models (the simulator's and the
//! emulator's, on the wall clock) run it unchanged, and a seed gives one
//! path.
//!
//! What the published measurements say, and where each default comes from:
//! * a reconfiguration every 15 s (Huston, "A transport protocol's view of
//!   Starlink", APNIC blog, May 2024: the minimum RTT changes every 15 s;
//!   Mohan et al., "A Multifaceted Look at Starlink Performance", WWW 2024:
//!   globally synchronised 15-second reconfiguration intervals). The
//!   satellite-identification tools published by the measurement community
//!   place them at 12, 27, 42 and 57 s past each UTC minute; a run starts at
//!   no particular second, so `phase` (default 12 s) is a parameter;
//! * a base RTT between 30 and 80 ms (Huston: the worst shift in his data
//!   set went from 30 to 80 ms): the one-way delay of each interval is drawn
//!   uniformly in `delay` (default 15 to 40 ms, both directions the same:
//!   one path);
//! * a latency spike of 30 to 50 ms of RTT at the switch (Huston): `spike`
//!   (default 20 ms one way, so 40 ms of RTT) added at the reconfiguration
//!   and falling linearly to the new base delay over `spike_duration`
//!   (default 1 s: the measurements give the spike's height, not its shape;
//!   the linear fall is our choice);
//! * 1 to 2 % of packets lost without congestion (Huston): Bernoulli loss of
//!   1 % per packet by default in each direction (`downlink_loss`,
//!   `uplink_loss`, any loss model of a link);
//! * capacity that swings between about 10 and 370 Mbit/s within tens of
//!   seconds: one rate per interval per direction, drawn log-uniformly (each
//!   factor of the range equally likely: our choice) in `downlink` (default
//!   10 to 370 Mbit/s) and `uplink` (default 5 to 30 Mbit/s, our choice of
//!   the order of magnitude; set both from your own measurements);
//! * an outage at each reconfiguration of `outage` (default none: the
//!   measurements report loss bursts at the switches but not their length).
//!
//! The forward direction of the link (from its first node to its second) is
//! the downlink: write `between = ["gateway", "dish"]`.

use super::{CsvTrace, LossSpec};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use wavelab_tcp::{Duration, Instant, Rate};

/// A range of one-way delays, drawn uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a delay range such as { min = \"15ms\", max = \"40ms\" }"
)]
pub struct DelayRange {
    /// Smallest delay.
    pub min: Duration,
    /// Largest delay.
    pub max: Duration,
}

/// A range of rates, drawn log-uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a rate range such as { min = \"10Mbit/s\", max = \"370Mbit/s\" }"
)]
pub struct RateRange {
    /// Lowest rate.
    pub min: Rate,
    /// Highest rate.
    pub max: Rate,
}

/// A LEO access link's reconfigurations (see the module for each default's
/// source).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "a LEO access model such as { period = \"15s\" } ({} for the defaults)"
)]
pub struct LeoSpec {
    /// Time between two reconfigurations.
    pub period: Duration,
    /// Time of the first reconfiguration (the run starts mid-interval).
    pub phase: Duration,
    /// Base one-way delay of an interval (both directions), drawn uniformly.
    pub delay: DelayRange,
    /// Extra one-way delay right after a reconfiguration.
    pub spike: Duration,
    /// Time over which the spike falls (linearly) to the new base delay.
    pub spike_duration: Duration,
    /// Outage at each reconfiguration (both directions).
    pub outage: Duration,
    /// Capacity of the downlink (forward) direction per interval.
    pub downlink: RateRange,
    /// Capacity of the uplink (reverse) direction per interval.
    pub uplink: RateRange,
    /// Loss of the downlink direction (besides the outages).
    pub downlink_loss: LossSpec,
    /// Loss of the uplink direction.
    pub uplink_loss: LossSpec,
}

impl Default for LeoSpec {
    fn default() -> Self {
        LeoSpec {
            period: Duration::from_secs(15),
            phase: Duration::from_secs(12),
            delay: DelayRange {
                min: Duration::from_millis(15),
                max: Duration::from_millis(40),
            },
            spike: Duration::from_millis(20),
            spike_duration: Duration::from_secs(1),
            outage: Duration::ZERO,
            downlink: RateRange {
                min: Rate::from_bps(10_000_000),
                max: Rate::from_bps(370_000_000),
            },
            uplink: RateRange {
                min: Rate::from_bps(5_000_000),
                max: Rate::from_bps(30_000_000),
            },
            downlink_loss: LossSpec::Bernoulli { p: 0.01 },
            uplink_loss: LossSpec::Bernoulli { p: 0.01 },
        }
    }
}

/// One interval between two reconfigurations (the first starts at 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeoInterval {
    /// When it starts.
    pub start: Instant,
    /// Its base one-way delay.
    pub delay: Duration,
    /// Downlink capacity.
    pub downlink: Rate,
    /// Uplink capacity.
    pub uplink: Rate,
}

/// A LEO link's path over a run: its intervals and what each direction
/// runs.
#[derive(Clone, Debug, PartialEq)]
pub struct LeoPlan {
    /// The intervals in time order, the first at 0.
    pub intervals: Vec<LeoInterval>,
    /// Outage windows `[start, end)` at the reconfigurations.
    pub outages: Vec<(Instant, Instant)>,
}

impl LeoSpec {
    /// The reconfiguration instants before `end`.
    pub fn reconfigurations(&self, end: Instant) -> Vec<Instant> {
        let mut v = Vec::new();
        let mut t = Instant::ZERO + self.phase;
        while t < end {
            v.push(t);
            if self.period.is_zero() {
                break; // (refused by validation; never loop forever)
            }
            t = t.saturating_add(self.period);
        }
        v
    }

    /// Draws the path up to `end` from `rng` (the link's own stream): per
    /// interval the delay, then the downlink and uplink rates.
    pub fn plan(&self, end: Instant, rng: &mut Rng) -> LeoPlan {
        let mut draw = |start: Instant| {
            let u = rng.next_f64();
            let (lo, hi) = (self.delay.min.as_nanos(), self.delay.max.as_nanos());
            let delay = Duration::from_nanos(lo + ((hi - lo) as f64 * u) as u64);
            let mut rate = |r: RateRange| {
                let u = rng.next_f64();
                let (lo, hi) = (r.min.as_bps() as f64, r.max.as_bps() as f64);
                Rate::from_bps((lo * (hi / lo).powf(u)).round() as u64)
            };
            let downlink = rate(self.downlink);
            let uplink = rate(self.uplink);
            LeoInterval {
                start,
                delay,
                downlink,
                uplink,
            }
        };
        let starts = std::iter::once(Instant::ZERO).chain(self.reconfigurations(end));
        let intervals: Vec<LeoInterval> = starts.map(&mut draw).collect();
        let outages = if self.outage.is_zero() {
            Vec::new()
        } else {
            intervals[1..]
                .iter()
                .map(|i| (i.start, i.start.saturating_add(self.outage)))
                .collect()
        };
        LeoPlan { intervals, outages }
    }
}

impl LeoPlan {
    /// The rate series of direction `side` (0 downlink, 1 uplink): a step
    /// per interval.
    pub fn rate_trace(&self, side: usize) -> CsvTrace {
        let (times, values) = self
            .intervals
            .iter()
            .map(|i| {
                let r = if side == 0 { i.downlink } else { i.uplink };
                (i.start.as_nanos(), r.as_bps() as f64)
            })
            .unzip();
        CsvTrace::from_points(times, values)
    }

    /// The one-way delay series (both directions; read with linear
    /// interpolation): each interval's base delay, and after each
    /// reconfiguration a jump to the new base plus `spike` that falls
    /// linearly to the base over `spike_duration` (cut short by the next
    /// reconfiguration).
    pub fn delay_trace(&self, spec: &LeoSpec) -> CsvTrace {
        let mut times = Vec::new();
        let mut values = Vec::new();
        let mut point = |t: Instant, d: Duration| {
            times.push(t.as_nanos());
            values.push(d.as_nanos() as f64);
        };
        for (k, i) in self.intervals.iter().enumerate() {
            let next = self.intervals.get(k + 1).map(|n| n.start);
            if k == 0 || spec.spike.is_zero() {
                point(i.start, i.delay);
            } else {
                point(i.start, i.delay + spec.spike);
                let settled = i.start.saturating_add(spec.spike_duration);
                match next {
                    Some(n) if n <= settled => {
                        // the next switch comes first: where the fall is then
                        let f = n.saturating_since(i.start).as_secs_f64()
                            / spec.spike_duration.as_secs_f64();
                        let left = spec.spike.as_secs_f64() * (1.0 - f);
                        point(n, i.delay + Duration::from_secs_f64(left));
                    }
                    _ => point(settled, i.delay),
                }
            }
            // hold the base to the next switch, where the series jumps
            if let Some(n) = next {
                point(n, i.delay);
            }
        }
        CsvTrace::from_points(times, values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::DelayInterpolation;
    use crate::rng::Stream;

    fn at(s: f64) -> Instant {
        Instant::ZERO + Duration::from_secs_f64(s)
    }

    #[test]
    fn reconfigurations_follow_the_period_from_the_phase() {
        let spec = LeoSpec::default();
        let v = spec.reconfigurations(at(60.0));
        assert_eq!(v, vec![at(12.0), at(27.0), at(42.0), at(57.0)]);
    }

    #[test]
    fn each_interval_draws_its_delay_and_rates_in_range_and_a_seed_gives_one_path() {
        let spec = LeoSpec::default();
        let plan = |seed| spec.plan(at(600.0), &mut Rng::derive(seed, Stream::LinkLeo(0)));
        let p = plan(1);
        assert_eq!(p.intervals.len(), 41); // 0, then 12, 27, ..., 597
        assert_eq!(p, plan(1));
        assert_ne!(p, plan(2));
        for i in &p.intervals {
            assert!(i.delay >= spec.delay.min && i.delay <= spec.delay.max);
            assert!(i.downlink >= spec.downlink.min && i.downlink <= spec.downlink.max);
            assert!(i.uplink >= spec.uplink.min && i.uplink <= spec.uplink.max);
        }
        // log-uniform: about half the intervals below the geometric mean
        let gm = (10e6f64 * 370e6).sqrt();
        let below = p
            .intervals
            .iter()
            .filter(|i| (i.downlink.as_bps() as f64) < gm)
            .count();
        assert!(
            (10..=31).contains(&below),
            "{below} of 41 below the geometric mean"
        );
        assert!(p.outages.is_empty());
    }

    #[test]
    fn the_delay_jumps_by_the_spike_and_falls_to_the_new_base() {
        let spec = LeoSpec::default();
        let p = spec.plan(at(30.0), &mut Rng::derive(3, Stream::LinkLeo(0)));
        let mut d = p.delay_trace(&spec);
        let lin = DelayInterpolation::Linear;
        let (b0, b1) = (p.intervals[0].delay, p.intervals[1].delay);
        assert_eq!(
            d.delay(at(11.999_999), lin).unwrap().as_nanos() / 1000,
            b0.as_nanos() / 1000
        );
        assert_eq!(d.delay(at(12.0), lin), Some(b1 + spec.spike));
        let half = d.delay(at(12.5), lin).unwrap();
        let expected = b1 + spec.spike / 2u64;
        assert!(
            half.as_nanos().abs_diff(expected.as_nanos()) <= 1,
            "{half} vs {expected}"
        );
        assert_eq!(d.delay(at(13.0), lin), Some(b1));
        assert_eq!(d.delay(at(26.9), lin), Some(b1));
    }

    #[test]
    fn a_spike_longer_than_the_period_is_cut_at_the_next_switch() {
        let spec = LeoSpec {
            period: Duration::from_secs(1),
            spike_duration: Duration::from_secs(4),
            phase: Duration::from_secs(1),
            ..LeoSpec::default()
        };
        let p = spec.plan(at(3.0), &mut Rng::derive(3, Stream::LinkLeo(0)));
        let mut d = p.delay_trace(&spec);
        let lin = DelayInterpolation::Linear;
        // a quarter of the fall done when the next switch jumps again
        let b1 = p.intervals[1].delay;
        let before = d.delay(at(1.999_999_999), lin).unwrap();
        let expected = b1 + spec.spike * 3u64 / 4u64;
        assert!(
            before.as_nanos().abs_diff(expected.as_nanos()) <= 10,
            "{before} vs {expected}"
        );
        assert_eq!(
            d.delay(at(2.0), lin),
            Some(p.intervals[2].delay + spec.spike)
        );
    }

    #[test]
    fn outages_sit_at_the_reconfigurations() {
        let spec = LeoSpec {
            outage: Duration::from_millis(50),
            ..LeoSpec::default()
        };
        let p = spec.plan(at(30.0), &mut Rng::derive(3, Stream::LinkLeo(0)));
        assert_eq!(
            p.outages,
            vec![(at(12.0), at(12.05)), (at(27.0), at(27.05))]
        );
        let mut r = p.rate_trace(0);
        assert_eq!(r.rate(at(13.0)), Some(p.intervals[1].downlink));
        let mut r = p.rate_trace(1);
        assert_eq!(r.rate(at(28.0)), Some(p.intervals[2].uplink));
    }
}
