//! Measured series as CSV traces of a link direction:
//! its rate, its per-packet loss probability or its one-way delay over time,
//! one `time,value` point per line.
//!
//! The format, chosen for what measurement tools write:
//! * one point per line, two fields separated by a comma (or, in a line
//!   without a comma, by white space); blank lines and lines starting with
//!   `#` are skipped; a first line neither of whose fields reads as a value
//!   is a header (`time,rate`) and skipped;
//! * the time is from the start of the run: a plain number is seconds, or a
//!   duration with its unit (`"250ms"`); times never decrease;
//! * a rate is a plain number of bit/s, or a rate with its unit
//!   (`"2Mbit/s"`), above zero; a delay is a plain number of seconds, or a
//!   duration with its unit (`"300ms"`); a loss is a probability per packet
//!   (0 to 1).
//!
//! Semantics: each value holds from its time until the next point's (a
//! step); the delay may instead be interpolated linearly between two points
//! (`delay_interpolation = "linear"`), where two points at the same time
//! make a step. Before the first point the direction's configured setting
//! applies; after the last one its value holds to the end of the run (a
//! series does not wrap around as a Mahimahi trace does: a measured series
//! has no period, and wrapping would join its last value to its first).
//! The rate applies at the start of a packet's serialisation, the delay and
//! the loss at its end (with link-layer ARQ, the loss of each attempt is
//! that at the start of the frame's first attempt), as the scheduled changes
//! of `schedule` do.

use super::trace_file::{csv_rows, data_lines, excerpt, read_trace_file, TraceError};
use super::LossModel;
use crate::link::{DelayInterpolation, DelayTraceFormat, LossSpec};
use wavelab_tcp::units::{parse_duration, parse_rate, MAX_DURATION};
use wavelab_tcp::{Duration, Instant, Rate};

/// What a CSV trace holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Rate (bit/s).
    Rate,
    /// One-way delay.
    Delay,
    /// Loss probability per packet.
    Loss,
}

/// A parsed series: times in nanoseconds from the start of the run, never
/// decreasing, and one value each (bit/s, nanoseconds, or a probability as
/// its bits).
#[derive(Clone, Debug, PartialEq)]
pub struct CsvTrace {
    times: Vec<u64>,
    values: Vec<f64>,
    /// Points with a time at or before the last instant read.
    seen: usize,
    last: u64,
}

/// A time or a delay field: a plain number of seconds, or a duration with a
/// unit.
pub(crate) fn duration(field: &str) -> Option<Duration> {
    match field.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 && s <= MAX_DURATION.as_secs_f64() => {
            Some(Duration::from_secs_f64(s))
        }
        Ok(_) => None,
        Err(_) => parse_duration(field).ok(),
    }
}

/// A rate field: a plain number of bit/s, or a rate with a unit.
fn rate(field: &str) -> Option<Rate> {
    match field.parse::<f64>() {
        Ok(b) if b.is_finite() && b >= 0.0 && b < u64::MAX as f64 => {
            Some(Rate::from_bps(b.round() as u64))
        }
        Ok(_) => None,
        Err(_) => parse_rate(field).ok(),
    }
}

impl Quantity {
    /// The value of a field, or the message saying what it should be.
    fn value(self, field: &str) -> Result<f64, String> {
        match self {
            Quantity::Rate => match rate(field) {
                Some(r) if r.as_bps() > 0 => Ok(r.as_bps() as f64),
                Some(_) => Err(format!(
                    "the rate {} is not above zero (a link at rate 0 never ends a packet; use \
                     outages for a link that stops)",
                    excerpt(field)
                )),
                None => Err(format!(
                    "{} is not a rate (bit/s, or a rate with its unit such as \"2Mbit/s\")",
                    excerpt(field)
                )),
            },
            Quantity::Delay => duration(field).map(|d| d.as_nanos() as f64).ok_or_else(|| {
                format!(
                    "{} is not a delay (seconds, or a duration with its unit such as \
                     \"300ms\")",
                    excerpt(field)
                )
            }),
            Quantity::Loss => match field.parse::<f64>() {
                Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
                _ => Err(format!(
                    "{} is not a loss probability (a number from 0 to 1)",
                    excerpt(field)
                )),
            },
        }
    }
}

impl CsvTrace {
    /// Reads the CSV trace `path` of `what` (a regular file of at most
    /// [`super::trace_file::MAX_TRACE_BYTES`], see [`super::trace_file`]).
    pub fn load(path: &str, what: Quantity) -> Result<Self, TraceError> {
        let text = read_trace_file(path)?;
        Self::parse(path, &text, what)
    }

    /// Reads the delay trace `path` written as `format` (a regular file as
    /// [`CsvTrace::load`] reads): CSV points as they are, an RTT series
    /// halved, or LeoReplayer's one delay in milliseconds per 10 ms line.
    pub fn load_delay(path: &str, format: DelayTraceFormat) -> Result<Self, TraceError> {
        let text = read_trace_file(path)?;
        match format {
            DelayTraceFormat::Csv => Self::parse(path, &text, Quantity::Delay),
            DelayTraceFormat::Rtt => {
                let mut t = Self::parse(path, &text, Quantity::Delay)?;
                for v in &mut t.values {
                    *v = (*v / 2.0).floor();
                }
                Ok(t)
            }
            DelayTraceFormat::Leoreplayer => Self::parse_leoreplayer(path, &text),
        }
    }

    /// Parses LeoReplayer's delay format: one one-way delay in milliseconds
    /// (a plain number, fractions allowed) per line, line `k` (from 0,
    /// blank lines and `#` comments skipped) holding from `k` x 10 ms.
    pub fn parse_leoreplayer(file: &str, text: &str) -> Result<Self, TraceError> {
        const STEP_NS: u64 = 10_000_000;
        let (mut times, mut values) = (Vec::new(), Vec::new());
        for (line, t) in data_lines(text) {
            let ms = match t.parse::<f64>() {
                Ok(ms) if ms.is_finite() && ms >= 0.0 && ms <= MAX_DURATION.as_secs_f64() * 1e3 => {
                    ms
                }
                _ => {
                    return Err(TraceError {
                        file: file.to_string(),
                        line,
                        message: format!(
                            "{} is not a delay (LeoReplayer's format: one delay in milliseconds \
                             per line, each line 10 ms)",
                            excerpt(t)
                        ),
                    })
                }
            };
            times.push(times.len() as u64 * STEP_NS);
            values.push((ms * 1e6).round());
        }
        if times.is_empty() {
            return Err(TraceError {
                file: file.to_string(),
                line: 0,
                message: "has no delays (one number of milliseconds per line)".to_string(),
            });
        }
        Ok(CsvTrace::from_points(times, values))
    }

    /// Parses a CSV trace's text (`file` names it in errors).
    pub fn parse(file: &str, text: &str, what: Quantity) -> Result<Self, TraceError> {
        let err = |line: usize, message: String| TraceError {
            file: file.to_string(),
            line,
            message,
        };
        let (mut times, mut values) = (Vec::new(), Vec::new());
        let header = |fields: &[&str]| {
            fields
                .iter()
                .all(|f| duration(f).is_none() && rate(f).is_none())
        };
        for (line, fields) in csv_rows(text, header) {
            let i = line - 1;
            if fields.len() != 2 {
                return Err(err(
                    i + 1,
                    // (the line is not quoted: a file that is not a trace
                    // must not be printed back)
                    format!("has {} fields; a point is two: time,value", fields.len()),
                ));
            }
            let time = duration(fields[0]).ok_or_else(|| {
                err(
                    i + 1,
                    format!(
                        "{} is not a time (seconds from the start of the run, or a duration \
                         with its unit such as \"250ms\")",
                        excerpt(fields[0])
                    ),
                )
            })?;
            let value = what.value(fields[1]).map_err(|m| err(i + 1, m))?;
            let ns = time.as_nanos();
            if let Some(&last) = times.last() {
                if ns < last {
                    return Err(err(
                        i + 1,
                        format!(
                            "{time} is before the previous point's time ({})",
                            Duration::from_nanos(last)
                        ),
                    ));
                }
            }
            times.push(ns);
            values.push(value);
        }
        if times.is_empty() {
            return Err(err(0, "has no points (time,value lines)".to_string()));
        }
        Ok(CsvTrace::from_points(times, values))
    }

    /// A series of the given points (times in nanoseconds, never
    /// decreasing; values as [`CsvTrace::points`] gives them), as a generator
    /// such as the LEO model ([`super::LeoSpec`]) draws them.
    pub fn from_points(times: Vec<u64>, values: Vec<f64>) -> Self {
        debug_assert!(times.len() == values.len() && !times.is_empty());
        debug_assert!(times.windows(2).all(|w| w[0] <= w[1]));
        CsvTrace {
            times,
            values,
            seen: 0,
            last: 0,
        }
    }

    /// The points in order: (seconds from the start of the run, value: bit/s
    /// for a rate as [`CsvTrace::rate`] applies it, nanoseconds for a
    /// delay, a probability for a loss).
    pub fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.times
            .iter()
            .zip(&self.values)
            .map(|(&t, &v)| (t as f64 / 1e9, v))
    }

    /// Points in the series.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True if there is none (never: a parsed series has one).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Moves to `at` (forward in the common case; any instant works) and
    /// returns the number of points at or before it.
    #[inline]
    fn seek(&mut self, at: Instant) -> usize {
        let t = at.as_nanos();
        if t < self.last {
            self.seen = self.times.partition_point(|&x| x <= t);
        } else {
            while self.seen < self.times.len() && self.times[self.seen] <= t {
                self.seen += 1;
            }
        }
        self.last = t;
        self.seen
    }

    /// The value in effect at `at` as a step (that of the last point at or
    /// before it), or `None` before the first point.
    #[inline]
    pub fn step(&mut self, at: Instant) -> Option<f64> {
        match self.seek(at) {
            0 => None,
            k => Some(self.values[k - 1]),
        }
    }

    /// The rate at `at`, or `None` before the first point.
    #[inline]
    pub fn rate(&mut self, at: Instant) -> Option<Rate> {
        self.step(at).map(|b| Rate::from_bps(b as u64))
    }

    /// The delay at `at` with `how`, or `None` before the first point.
    #[inline]
    pub fn delay(&mut self, at: Instant, how: DelayInterpolation) -> Option<Duration> {
        let k = self.seek(at);
        if k == 0 {
            return None;
        }
        let d0 = self.values[k - 1] as u64;
        if how == DelayInterpolation::Step || k == self.times.len() {
            return Some(Duration::from_nanos(d0));
        }
        // between points k - 1 and k, whose times differ (k counts those at
        // or before `at`)
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        let d1 = self.values[k] as u64;
        let x = (at.as_nanos() - t0) as i128;
        let d = d0 as i128 + (d1 as i128 - d0 as i128) * x / (t1 - t0) as i128;
        Some(Duration::from_nanos(d as u64))
    }
}

/// A direction's CSV traces: the sources of its rate, delay and loss where
/// it has them (the configured settings elsewhere, and before a series'
/// first point).
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Rate series.
    pub rate: Option<CsvTrace>,
    /// One-way delay series.
    pub delay: Option<CsvTrace>,
    /// Loss-probability series.
    pub loss: Option<CsvTrace>,
    /// How the delay is read between two points.
    pub interpolation: DelayInterpolation,
    /// The loss point last given to the loss model.
    loss_point: Option<usize>,
}

impl Measured {
    /// The traces of a direction.
    pub fn new(
        rate: Option<CsvTrace>,
        delay: Option<CsvTrace>,
        loss: Option<CsvTrace>,
        interpolation: DelayInterpolation,
    ) -> Self {
        Measured {
            rate,
            delay,
            loss,
            interpolation,
            loss_point: None,
        }
    }

    /// True if it has no series.
    pub fn is_empty(&self) -> bool {
        self.rate.is_none() && self.delay.is_none() && self.loss.is_none()
    }

    /// The rate at `at`: the series', or `configured`.
    #[inline]
    pub fn rate(&mut self, at: Instant, configured: Rate) -> Rate {
        self.rate
            .as_mut()
            .and_then(|s| s.rate(at))
            .unwrap_or(configured)
    }

    /// The delay at `at`: the series', or `configured`.
    #[inline]
    pub fn delay(&mut self, at: Instant, configured: Duration) -> Duration {
        let how = self.interpolation;
        self.delay
            .as_mut()
            .and_then(|s| s.delay(at, how))
            .unwrap_or(configured)
    }

    /// Gives `model` the loss probability in effect at `at` (a Bernoulli
    /// loss), if the series has started: once per point, so that the model
    /// is left alone between points.
    #[inline]
    pub fn loss(&mut self, at: Instant, model: &mut LossModel) {
        let Some(s) = self.loss.as_mut() else { return };
        let k = s.seek(at);
        if k == 0 || self.loss_point == Some(k - 1) {
            return;
        }
        self.loss_point = Some(k - 1);
        let p = s.values[k - 1];
        model.set(if p > 0.0 {
            LossSpec::Bernoulli { p }
        } else {
            LossSpec::None
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(x)
    }

    #[test]
    fn a_leoreplayer_delay_file_is_one_delay_per_10_ms() {
        let text = "# delay_1.txt\n25.5\n30\n\n28.25\n";
        let mut s = CsvTrace::parse_leoreplayer("delay_1.txt", text).unwrap();
        assert_eq!(s.len(), 3);
        let step = DelayInterpolation::Step;
        assert_eq!(s.delay(ms(0), step), Some(Duration::from_micros(25_500)));
        assert_eq!(s.delay(ms(19), step), Some(Duration::from_millis(30)));
        assert_eq!(s.delay(ms(20), step), Some(Duration::from_micros(28_250)));
        // the last delay holds
        assert_eq!(s.delay(ms(5000), step), Some(Duration::from_micros(28_250)));
        let e = CsvTrace::parse_leoreplayer("d.txt", "25\n-3\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("\"-3\" is not a delay"), "{e}");
        let e = CsvTrace::parse_leoreplayer("d.txt", "25,1\n").unwrap_err();
        assert!(e.to_string().contains("d.txt line 1"), "{e}");
        assert!(CsvTrace::parse_leoreplayer("d.txt", "# nothing\n").is_err());
    }

    #[test]
    fn an_rtt_series_gives_half_its_rtt_as_the_one_way_delay() {
        let dir = std::env::temp_dir().join(format!("wavelab-rtt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("path.rtt");
        std::fs::write(&f, "time,rtt\n0,50ms\n2.5,0.081\n").unwrap();
        let f = f.to_str().unwrap();
        let mut s = CsvTrace::load_delay(f, DelayTraceFormat::Rtt).unwrap();
        let step = DelayInterpolation::Step;
        assert_eq!(s.delay(ms(100), step), Some(Duration::from_millis(25)));
        assert_eq!(s.delay(ms(2600), step), Some(Duration::from_micros(40_500)));
        let mut c = CsvTrace::load_delay(f, DelayTraceFormat::Csv).unwrap();
        assert_eq!(c.delay(ms(100), step), Some(Duration::from_millis(50)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rates_with_and_without_units_as_steps() {
        let text = "time,rate\n# measured\n0, 2Mbit/s\n1.5,500000\n\n3s 1e6\n";
        let mut s = CsvTrace::parse("r.csv", text, Quantity::Rate).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.rate(ms(0)), Some(Rate::from_mbps(2)));
        assert_eq!(s.rate(ms(1499)), Some(Rate::from_mbps(2)));
        assert_eq!(s.rate(ms(1500)), Some(Rate::from_bps(500_000)));
        assert_eq!(s.rate(ms(2999)), Some(Rate::from_bps(500_000)));
        // the last value holds: no wrap-around
        assert_eq!(s.rate(ms(1_000_000)), Some(Rate::from_mbps(1)));
        // reading back in time works too
        assert_eq!(s.rate(ms(10)), Some(Rate::from_mbps(2)));
    }

    #[test]
    fn before_the_first_point_there_is_no_value() {
        let mut s = CsvTrace::parse("l.csv", "1s,0.1\n2s,0\n", Quantity::Loss).unwrap();
        assert_eq!(s.step(ms(999)), None);
        assert_eq!(s.step(ms(1000)), Some(0.1));
        assert_eq!(s.step(ms(2000)), Some(0.0));
    }

    #[test]
    fn delays_as_steps_or_interpolated_and_a_repeated_time_is_a_jump() {
        let text = "0,300ms\n1,0.1\n2,0.1\n2,10ms\n";
        let mut s = CsvTrace::parse("d.csv", text, Quantity::Delay).unwrap();
        let step = DelayInterpolation::Step;
        let lin = DelayInterpolation::Linear;
        assert_eq!(s.delay(ms(500), step), Some(Duration::from_millis(300)));
        assert_eq!(s.delay(ms(500), lin), Some(Duration::from_millis(200)));
        assert_eq!(s.delay(ms(1999), lin), Some(Duration::from_millis(100)));
        // two points at 2 s: the later one from then on
        assert_eq!(s.delay(ms(2000), lin), Some(Duration::from_millis(10)));
        assert_eq!(s.delay(ms(2000), step), Some(Duration::from_millis(10)));
        assert_eq!(s.delay(ms(9000), lin), Some(Duration::from_millis(10)));
    }

    #[test]
    fn bad_series_name_the_file_and_the_line() {
        let e = |text: &str, q| CsvTrace::parse("m.csv", text, q).unwrap_err().to_string();
        assert_eq!(
            e("time,rate\n0,2Mbit/s\n1,fast\n", Quantity::Rate),
            "m.csv line 3: \"fast\" is not a rate (bit/s, or a rate with its unit such as \"2Mbit/s\")"
        );
        assert_eq!(
            e("0,2Mbit/s\n1,0\n", Quantity::Rate),
            "m.csv line 2: the rate \"0\" is not above zero (a link at rate 0 never ends a packet; use outages for a link that stops)"
        );
        assert_eq!(
            e("0,0.1\n1,1.5\n", Quantity::Loss),
            "m.csv line 2: \"1.5\" is not a loss probability (a number from 0 to 1)"
        );
        assert_eq!(
            e("0,10ms\n2,20ms\n1,30ms\n", Quantity::Delay),
            "m.csv line 3: 1s is before the previous point's time (2s)"
        );
        assert_eq!(
            e("0,10ms\nsoon,20ms\n", Quantity::Delay),
            "m.csv line 2: \"soon\" is not a time (seconds from the start of the run, or a duration with its unit such as \"250ms\")"
        );
        assert_eq!(
            e("0,10ms,3\n", Quantity::Delay),
            "m.csv line 1: has 3 fields; a point is two: time,value"
        );
        // a file that is not a trace is never printed back: the first line
        // of /etc/shadow named as a trace was printed whole
        // (its first line reads as a header)
        let shadow = "root:$6$saltsalt$hashhashhashhash:19000:0:99999:7:::\n\
                      daemon:*:19000:0:99999:7:::\n";
        for q in [Quantity::Rate, Quantity::Delay, Quantity::Loss] {
            assert_eq!(
                e(shadow, q),
                "m.csv line 2: has 1 fields; a point is two: time,value"
            );
        }
        assert_eq!(
            e("0,1\nsecret-token-abcdefgh, 1\n", Quantity::Loss),
            "m.csv line 2: \"secret-token...\" is not a time (seconds from the start of the run, or a duration with its unit such as \"250ms\")"
        );
        assert_eq!(
            e("0,1\n1,secret-token-abcdefgh\n", Quantity::Rate),
            "m.csv line 2: \"secret-token...\" is not a rate (bit/s, or a rate with its unit such as \"2Mbit/s\")"
        );
        // times and delays beyond the clock's range are refused
        assert!(e("2e9,1ms\n", Quantity::Delay).starts_with("m.csv line 1: \"2e9\" is not a time"));
        assert!(e("0,2e9\n", Quantity::Delay).starts_with("m.csv line 1: \"2e9\" is not a delay"));
        assert!(e("0,1e30\n", Quantity::Rate).starts_with("m.csv line 1: \"1e30\" is not a rate"));
        assert!(e("0,NaN\n", Quantity::Loss).starts_with("m.csv line 1: \"NaN\" is not a loss"));
        assert_eq!(
            e("-1,10ms\n", Quantity::Delay),
            "m.csv line 1: \"-1\" is not a time (seconds from the start of the run, or a duration with its unit such as \"250ms\")"
        );
        assert_eq!(
            e("time,delay\n# nothing\n", Quantity::Delay),
            "m.csv: has no points (time,value lines)"
        );
    }
}
