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

use std::fmt;
use std::path::Path;
use wavelab_tcp::{Duration, Instant};

/// The largest trace file read (about 15 million opportunities).
pub const MAX_TRACE_BYTES: u64 = 100_000_000;

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

/// A bad trace: the file, the line (1-based; 0 for the whole file) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The trace file as named in the scenario.
    pub file: String,
    /// The line, from 1; 0 when the problem is the whole file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{} line {}: {}", self.file, self.line, self.message)
        }
    }
}

/// The text of the trace file `path`: a regular file (not a device or a
/// pipe that would never end) of at most [`MAX_TRACE_BYTES`].
pub(crate) fn read_trace_file(path: &str) -> Result<String, TraceError> {
    let err = |message: String| TraceError {
        file: path.to_string(),
        line: 0,
        message,
    };
    let meta =
        std::fs::metadata(Path::new(path)).map_err(|e| err(format!("cannot be read ({e})")))?;
    if !meta.is_file() {
        return Err(err("is not a regular file".to_string()));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(err(format!(
            "is {} bytes, more than {MAX_TRACE_BYTES}",
            meta.len()
        )));
    }
    std::fs::read_to_string(Path::new(path)).map_err(|e| err(format!("cannot be read ({e})")))
}

impl MahimahiTrace {
    /// Reads the trace file `path` (a regular file of at most
    /// [`MAX_TRACE_BYTES`]: not a device or a pipe that would never end).
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
            let ms: u64 = t.parse().map_err(|_| {
                err(
                    i + 1,
                    format!("\"{t}\" is not a timestamp (a whole number of milliseconds)"),
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
        assert_eq!(e.to_string(), "/dev/zero: is not a regular file");
        let e = MahimahiTrace::load("/nonexistent/x.trace").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/x.trace: cannot be read"),
            "{e}"
        );
    }
}
