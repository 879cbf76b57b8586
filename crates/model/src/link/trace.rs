//! Mahimahi delivery-opportunity traces as the rate source of a link
//! direction (Netravali et al., "Mahimahi: Accurate Record-and-Replay for
//! HTTP", USENIX ATC 2015, section 3.3, and mahimahi's `mm-link`): each
//! line of a trace is a millisecond timestamp at which the link can deliver
//! one MTU-sized packet; a timestamp repeated `n` times gives `n`
//! opportunities in that millisecond; the trace repeats with the last
//! timestamp as its period; an opportunity no packet is waiting for is lost.
//!
//! Here each opportunity carries one packet of any size up to the MTU (1500
//! bytes: a 12-line millisecond is 12 x 1500 B of capacity). A packet's
//! serialisation ends at the first unused opportunity at or after the start
//! of its service.

use super::trace_file::{excerpt, read_trace_file, TraceError};
use wavelab_tcp::units::MAX_DURATION;
use wavelab_tcp::{Duration, Instant};

/// The latest timestamp of a trace, in milliseconds: [`MAX_DURATION`], the
/// longest time a scenario may give (a later one would overflow the
/// simulator's nanosecond clock when the trace repeats).
pub const MAX_TIMESTAMP_MS: u64 = MAX_DURATION.as_nanos() / 1_000_000;

/// The bytes one delivery opportunity carries at most (mahimahi's MTU).
pub const MTU: u32 = 1500;

/// A parsed trace: the opportunities' offsets within one period.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MahimahiTrace {
    /// Offsets (milliseconds from the start of a period), sorted.
    times: Vec<u64>,
    /// The period, in milliseconds: the last timestamp.
    period: u64,
}

impl MahimahiTrace {
    /// Reads the trace file `path` (a regular file of at most
    /// [`super::trace_file::MAX_TRACE_BYTES`], see [`super::trace_file`]).
    pub fn load(path: &str) -> Result<Self, TraceError> {
        let text = read_trace_file(path)?;
        Self::parse(path, &text)
    }

    /// Parses a trace's text (`file` names it in errors). Blank lines are
    /// skipped.
    pub fn parse(file: &str, text: &str) -> Result<Self, TraceError> {
        let err = |line: usize, message: String| TraceError {
            file: file.to_string(),
            line,
            message,
        };
        let mut times = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let t = raw.trim();
            if t.is_empty() {
                continue;
            }
            // a timestamp beyond the clock's range (u64 or not) is too late,
            // anything else that is not a whole number is not a timestamp
            let ms = match t.parse::<u64>() {
                Ok(ms) => Some(ms).filter(|&ms| ms <= MAX_TIMESTAMP_MS),
                Err(_) if t.bytes().all(|b| b.is_ascii_digit()) => None,
                Err(_) => {
                    return Err(err(
                        i + 1,
                        format!(
                            "{} is not a timestamp (a whole number of milliseconds)",
                            excerpt(t)
                        ),
                    ))
                }
            };
            let ms = ms.ok_or_else(|| {
                err(
                    i + 1,
                    format!(
                        "{} is later than {MAX_TIMESTAMP_MS} ms (10^9 s, the longest time a \
                         scenario may give)",
                        excerpt(t)
                    ),
                )
            })?;
            if let Some(&last) = times.last() {
                if ms < last {
                    return Err(err(
                        i + 1,
                        format!("{ms} is before the previous timestamp ({last})"),
                    ));
                }
            }
            times.push(ms);
        }
        let period = *times
            .last()
            .ok_or_else(|| err(0, "has no timestamps".to_string()))?;
        if period == 0 {
            return Err(err(
                0,
                "its last timestamp is 0: a trace must span at least 1 ms (it repeats with the last timestamp as its period)".to_string(),
            ));
        }
        Ok(MahimahiTrace { times, period })
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True if there is none (never: a parsed trace has one).
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_millis(self.period)
    }

    /// The opportunities' offsets within a period, in milliseconds, sorted.
    pub fn offsets_ms(&self) -> &[u64] {
        &self.times
    }
}

/// A trace being consumed: the next unused opportunity.
#[derive(Clone, Debug)]
pub struct Opportunities {
    trace: MahimahiTrace,
    /// Index of the next opportunity within the period.
    next: usize,
    /// Start of the current period.
    base: Instant,
}

impl Opportunities {
    /// The trace's opportunities from the start of the run.
    pub fn new(trace: MahimahiTrace) -> Self {
        Opportunities {
            trace,
            next: 0,
            base: Instant::ZERO,
        }
    }

    fn at(&self) -> Instant {
        self.base + Duration::from_millis(self.trace.times[self.next])
    }

    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.trace.times.len() {
            self.next = 0;
            self.base += self.trace.period();
        }
    }

    /// Takes the first unused opportunity at or after `now` (those before
    /// it are lost) and returns its instant.
    pub fn take(&mut self, now: Instant) -> Instant {
        // whole periods at once when the link sat idle for long
        let period = self.trace.period().as_nanos();
        let behind = now.saturating_since(self.base).as_nanos();
        if behind >= 2 * period {
            self.base += Duration::from_nanos((behind / period - 1) * period);
            self.next = 0;
        }
        while self.at() < now {
            self.advance();
        }
        let t = self.at();
        self.advance();
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large last timestamp made the period overflow the nanosecond
    /// clock: a division by zero in the simulator, or (wrapped) a short
    /// period that turned a 2-packet trace into 25 Mbit/s; `validate` said ok.
    #[test]
    fn timestamps_beyond_the_clock_are_refused_naming_the_line() {
        let later = "is later than 1000000000000 ms (10^9 s, the longest time a scenario may give)";
        for last in [
            "18446744073709551",
            "18446744073709551615",
            "99999999999999999999999",
        ] {
            let e = MahimahiTrace::parse("t", &format!("0\n{last}\n")).unwrap_err();
            assert_eq!(e.line, 2);
            assert!(e.to_string().ends_with(later), "{e}");
        }
        let max = MAX_TIMESTAMP_MS;
        let t = MahimahiTrace::parse("t", &format!("0\n{max}\n")).unwrap();
        assert_eq!(t.period(), MAX_DURATION);
        // its opportunities are where the trace says, however long the run
        let mut o = Opportunities::new(t);
        assert_eq!(o.take(Instant::ZERO), Instant::ZERO);
        assert_eq!(o.take(ms(1)), Instant::ZERO + MAX_DURATION);
        assert!(MahimahiTrace::parse("t", &format!("0\n{}\n", max + 1)).is_err());
    }

    /// The first line of /etc/shadow, named as a trace, was printed whole.
    #[test]
    fn a_line_that_is_not_a_trace_is_quoted_as_a_short_excerpt() {
        let secret = "root:$6$saltsalt$hashhashhashhash:19000:0:99999:7:::\n";
        let e = MahimahiTrace::parse("/etc/shadow", secret).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/etc/shadow line 1: \"root:$6$salt...\" is not a timestamp (a whole number of \
             milliseconds)"
        );
    }

    fn ms(x: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(x)
    }

    #[test]
    fn twelve_lines_a_millisecond_give_twelve_packets_a_millisecond() {
        let text: String = (1..=1000)
            .flat_map(|t| std::iter::repeat_n(format!("{t}\n"), 12))
            .collect();
        let trace = MahimahiTrace::parse("c12.trace", &text).unwrap();
        assert_eq!(
            (trace.len(), trace.period()),
            (12_000, Duration::from_millis(1000))
        );
        let mut o = Opportunities::new(trace);
        // back to back from 0: 12 packets end in each millisecond
        let ends: Vec<Instant> = (0..24_000).map(|_| o.take(Instant::ZERO)).collect();
        assert_eq!(ends[0], ms(1));
        assert_eq!(ends[11], ms(1));
        assert_eq!(ends[12], ms(2));
        assert_eq!(ends[11_999], ms(1000));
        // the trace wraps: the next period repeats it
        assert_eq!(ends[12_000], ms(1001));
        assert_eq!(ends[23_999], ms(2000));
    }

    #[test]
    fn unused_opportunities_are_lost_and_the_trace_repeats() {
        let trace = MahimahiTrace::parse("t", "2\n2\n5\n").unwrap();
        let mut o = Opportunities::new(trace);
        assert_eq!(o.take(ms(0)), ms(2));
        // the second opportunity at 2 ms is lost: nothing waited for it
        assert_eq!(o.take(ms(3)), ms(5));
        // period 5 ms: opportunities at 7, 7, 10, 12, 12, 15 ...
        assert_eq!(o.take(ms(6)), ms(7));
        assert_eq!(o.take(ms(7)), ms(7));
        assert_eq!(o.take(ms(8)), ms(10));
        // after a long idle time, the same pattern at 1,000,002 ms
        assert_eq!(o.take(ms(1_000_001)), ms(1_000_002));
    }

    #[test]
    fn bad_traces_name_the_file_and_the_line() {
        let e = MahimahiTrace::parse("cell.down", "1\n2\nx3\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cell.down line 3: \"x3\" is not a timestamp (a whole number of milliseconds)"
        );
        let e = MahimahiTrace::parse("cell.down", "5\n4\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cell.down line 2: 4 is before the previous timestamp (5)"
        );
        let e = MahimahiTrace::parse("empty", "\n\n").unwrap_err();
        assert_eq!(e.to_string(), "empty: has no timestamps");
        let e = MahimahiTrace::load("/dev/zero").unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: is not a regular file (a trace is a file of text)"
        );
        let e = MahimahiTrace::load("/nonexistent/x.trace").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/x.trace: cannot be read"),
            "{e}"
        );
    }
}
