//! CellReplay's replay of a cellular link direction (Sentosa, Chandrasekaran,
//! Godfrey and Hassanieh, "CellReplay: Towards accurate record-and-replay for
//! cellular networks", USENIX NSDI 2025, sections 3 and 4).
//!
//! Mahimahi replays a saturated link: every packet waits for the delivery
//! opportunities a saturating sender recorded, behind a fixed minimum delay.
//! CellReplay records two traces at once and replays with both:
//!
//! * the **packet-train trace** (light workload): at intervals, a small
//!   train of packets was sent; each line holds when, the base one-way delay
//!   its first packet saw, and the offsets from that first packet at which
//!   the train's packets were delivered (the *light* delivery opportunities,
//!   or PDOs);
//! * the **heavy PDO trace** (saturating workload, Mahimahi's format): the
//!   delivery opportunities of a link kept busy.
//!
//! A packet that finds the direction idle starts a *train*: it takes the base
//! delay of the trace at that instant (interpolated linearly between the two
//! lines around it) and the packets that follow it leave at the train's light
//! opportunities, 1500 bytes each. Once the light opportunities are used up,
//! packets go through a queue served by the heavy opportunities. So a short
//! burst sees the cellular network's response to a light load (a longer
//! base delay than the minimum, fewer opportunities), and a long transfer its
//! saturated capacity.
//!
//! The rules below are those of the authors' replay tool (`mm-cellular`),
//! read to confirm them, and written here in our words:
//!
//! * a packet starts a new train when the delay stage holds no packet: it
//!   arrives at or after the last release plus the idle timer
//!   (`cellreplay_idle`, 0 by default, the tool's default);
//! * the base delay is the train trace's delay interpolated at the packet's
//!   arrival; the trace repeats with its last line's time as its period;
//! * within a train, light opportunity `k` (its offset from the train's
//!   first packet) carries 1500 bytes; a packet takes the first one at or
//!   after its own arrival (offset) with room for it, and leaves at the
//!   train's start + base delay + that offset, bypassing the heavy queue;
//! * a packet that finds the light opportunities used up enters the heavy
//!   queue after waiting `max(base delay, last light offset)` from its
//!   arrival, and leaves at the heavy opportunity that carries its last byte
//!   (1500 bytes per opportunity, shared by small packets, as in Mahimahi);
//! * a light packet that finds packets in the heavy queue queues behind them;
//! * a packet-size latency offset (`cellreplay_size_delay`, optional) adds
//!   the delay the trace gives for its size (interpolated per 100 bytes)
//!   unless that would put it before the previous packet; releases never go
//!   backwards (a packet released before the previous one is held until
//!   then and queues in the heavy queue);
//! * the direction's queue limit is the heavy queue's.
//!
//! Differences from the tool, each a choice made here:
//!
//! * times are kept in nanoseconds where the tool counts whole
//!   milliseconds;
//! * the tool starts a new train when the packet's arrival plus the current
//!   base delay is later than the last release plus the idle timer. At the
//!   tool's millisecond resolution the packets of a burst share their
//!   arrival millisecond and continue the train; in continuous time every
//!   packet after the first arrives later than it and would start a train of
//!   its own, with no capacity limit at all. So a train starts here when the
//!   delay stage is empty, which is how the paper states the rule (section
//!   4: the light opportunities replay after an idle period);
//! * the train trace's times are taken relative to its first line;
//! * a heavy opportunity at the instant a packet enters the queue serves it
//!   (the tool takes the next one).

use super::trace::{MahimahiTrace, Opportunities, MAX_TIMESTAMP_MS, MTU};
use super::trace_file::{data_lines, excerpt, read_trace_file, TraceError};
use super::QueueLimit;
use std::collections::VecDeque;
use wavelab_tcp::{Duration, Instant};

/// One line of a packet-train trace.
#[derive(Clone, Debug, PartialEq)]
struct Train {
    /// When the train was sent, nanoseconds from the trace's first line.
    at: u64,
    /// The base one-way delay its first packet saw, nanoseconds.
    delay: f64,
    /// The light delivery opportunities: offsets from the first packet's
    /// delivery, nanoseconds, nondecreasing.
    offsets: Vec<u64>,
}

/// A CellReplay packet-train trace: each line `time delay offset...`, in
/// milliseconds separated by white space (whole milliseconds for the time,
/// fractions allowed for the delay and the offsets).
#[derive(Clone, Debug, PartialEq)]
pub struct TrainTrace {
    trains: Vec<Train>,
}

fn ms_ns(ms: f64) -> u64 {
    (ms * 1e6).round() as u64
}

impl TrainTrace {
    /// Reads the trace file `path` (bounded as every trace file,
    /// [`super::trace_file`]).
    pub fn load(path: &str) -> Result<Self, TraceError> {
        let text = read_trace_file(path)?;
        Self::parse(path, &text)
    }

    /// Parses a trace's text (`file` names it in errors). Blank lines and
    /// lines starting with `#` are skipped.
    pub fn parse(file: &str, text: &str) -> Result<Self, TraceError> {
        const FORMAT: &str = "CellReplay's packet-train format: a time in whole milliseconds, the \
                              base delay and the light delivery offsets in milliseconds, separated \
                              by spaces";
        let err = |line: usize, message: String| TraceError::new(file, line, message);
        let max_ms = MAX_TIMESTAMP_MS as f64;
        let mut trains: Vec<Train> = Vec::new();
        let mut first_ms = None;
        for (line, t) in data_lines(text) {
            let mut words = t.split_whitespace();
            let time = words.next().unwrap_or_default();
            let ms = match time.parse::<u64>() {
                Ok(ms) if ms <= MAX_TIMESTAMP_MS => ms,
                _ => {
                    return Err(err(
                        line,
                        format!("{} is not a time ({FORMAT})", excerpt(time)),
                    ))
                }
            };
            let first = *first_ms.get_or_insert(ms);
            let at = (ms.saturating_sub(first)) * 1_000_000;
            if ms < first || trains.last().is_some_and(|p| at < p.at) {
                return Err(err(
                    line,
                    format!("{ms} is before the previous line's time"),
                ));
            }
            let number = |w: &str, what: &str| match w.parse::<f64>() {
                Ok(v) if v.is_finite() && (0.0..=max_ms).contains(&v) => Ok(v),
                _ => Err(err(
                    line,
                    format!("{} is not {what} ({FORMAT})", excerpt(w)),
                )),
            };
            let Some(delay) = words.next() else {
                return Err(err(line, format!("has no base delay ({FORMAT})")));
            };
            let delay = number(delay, "a delay")? * 1e6;
            let mut offsets = Vec::new();
            for w in words {
                let o = ms_ns(number(w, "a delivery offset")?);
                if offsets.last().is_some_and(|&p| o < p) {
                    return Err(err(
                        line,
                        format!(
                            "the delivery offset {} is before the one before it",
                            excerpt(w)
                        ),
                    ));
                }
                offsets.push(o);
            }
            trains.push(Train { at, delay, offsets });
        }
        if trains.len() < 2 {
            return Err(err(
                0,
                "has fewer than two lines (the base delay is interpolated between two)".to_string(),
            ));
        }
        if trains.last().is_some_and(|t| t.at == 0) {
            return Err(err(
                0,
                "its last time is its first: a trace must span at least 1 ms (it repeats with the \
                 last line's time as its period)"
                    .to_string(),
            ));
        }
        Ok(TrainTrace { trains })
    }

    /// The lines (trains).
    pub fn len(&self) -> usize {
        self.trains.len()
    }

    /// True if there is none (never: a parsed trace has two).
    pub fn is_empty(&self) -> bool {
        self.trains.is_empty()
    }

    fn period(&self) -> u64 {
        self.trains.last().map_or(1, |t| t.at)
    }
}

/// CellReplay's packet-size latency offsets: each line `size offset`, the
/// sizes 100, 200, ... bytes in order, the offset in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeDelays {
    /// Offsets in nanoseconds for 100, 200, ... bytes.
    ns: Vec<f64>,
}

impl SizeDelays {
    /// Reads the file `path`.
    pub fn load(path: &str) -> Result<Self, TraceError> {
        let text = read_trace_file(path)?;
        Self::parse(path, &text)
    }

    /// Parses the text of a size-offset file.
    pub fn parse(file: &str, text: &str) -> Result<Self, TraceError> {
        let err = |line: usize, message: String| TraceError::new(file, line, message);
        let mut ns = Vec::new();
        for (line, t) in data_lines(text) {
            let mut words = t.split_whitespace();
            let size = words.next().unwrap_or_default();
            let want = 100 * (ns.len() + 1);
            if size.parse::<usize>().ok() != Some(want) {
                return Err(err(
                    line,
                    format!(
                        "{} is not {want}: the sizes go 100, 200, ... bytes, one per line",
                        excerpt(size)
                    ),
                ));
            }
            let offset = words.next().unwrap_or_default();
            match offset.parse::<f64>() {
                Ok(v) if v.is_finite() && v.abs() <= 1e6 => ns.push(v * 1e6),
                _ => {
                    return Err(err(
                        line,
                        format!("{} is not a delay offset in milliseconds", excerpt(offset)),
                    ))
                }
            }
        }
        if ns.is_empty() {
            return Err(err(0, "has no sizes".to_string()));
        }
        Ok(SizeDelays { ns })
    }

    /// The offset for a packet of `size` bytes, nanoseconds: the first
    /// line's below 100 bytes, the last line's beyond it, linear between.
    fn offset(&self, size: u32) -> f64 {
        let k = (size / 100) as usize;
        let frac = (size % 100) as f64 / 100.0;
        match k {
            0 => self.ns[0],
            k if k >= self.ns.len() => self.ns[self.ns.len() - 1],
            k => self.ns[k - 1] + frac * (self.ns[k] - self.ns[k - 1]),
        }
    }
}

/// The train being replayed.
#[derive(Clone, Copy, Debug)]
struct Current {
    /// The train trace's line.
    line: usize,
    /// When its first packet arrived.
    start: Instant,
    /// Its base delay.
    base: Duration,
    /// The light opportunity in use, and the bytes left in it.
    k: usize,
    room: u32,
}

/// Where a packet offered to [`CellReplay::offer`] goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// It reaches the far end at `at`, after `wait` in the heavy queue.
    Delivered {
        /// When it arrives.
        at: Instant,
        /// Its time in the heavy queue (zero for a light packet).
        wait: Duration,
    },
    /// The heavy queue was full.
    Refused,
}

/// One direction replayed as CellReplay does. Offers come in time order; each
/// packet's fate is decided when it is offered (its release and its heavy
/// opportunity depend only on the packets before it).
#[derive(Clone, Debug)]
pub struct CellReplay {
    trains: TrainTrace,
    sizes: Option<SizeDelays>,
    idle: Duration,
    heavy: Opportunities,
    /// Start of the train trace's current period.
    cycle: Instant,
    /// The train trace's line at or before the last train's start.
    line: usize,
    current: Option<Current>,
    /// The last packet's release: none leaves the delay stage before it.
    end_release: Instant,
    /// The heavy queue: each packet's departure and size.
    queue: VecDeque<(Instant, u32)>,
    queued_bytes: u64,
    /// The heavy opportunity in use and the bytes left in it.
    opportunity: Instant,
    left: u32,
}

impl CellReplay {
    /// A direction replaying `trains` and `heavy`, with the optional
    /// packet-size offsets and the idle timer.
    pub fn new(
        trains: TrainTrace,
        heavy: MahimahiTrace,
        sizes: Option<SizeDelays>,
        idle: Duration,
    ) -> Self {
        CellReplay {
            trains,
            sizes,
            idle,
            heavy: Opportunities::new(heavy),
            cycle: Instant::ZERO,
            line: 0,
            current: None,
            end_release: Instant::ZERO,
            queue: VecDeque::new(),
            queued_bytes: 0,
            opportunity: Instant::ZERO,
            left: 0,
        }
    }

    /// The train trace's line in effect at `now` (advancing through the
    /// periods), and the base delay interpolated there.
    fn base_at(&mut self, now: Instant) -> (usize, Duration) {
        let period = self.trains.period();
        let t = &self.trains.trains;
        let behind = now.saturating_since(self.cycle).as_nanos();
        if behind >= 2 * period {
            self.cycle += Duration::from_nanos((behind / period - 1) * period);
            self.line = 0;
        }
        loop {
            let rel = now.saturating_since(self.cycle).as_nanos();
            if t[self.line + 1].at > rel {
                let (a, b) = (&t[self.line], &t[self.line + 1]);
                let ratio = (rel - a.at) as f64 / (b.at - a.at) as f64;
                let delay = a.delay + ratio * (b.delay - a.delay);
                return (
                    self.line,
                    Duration::from_nanos(delay.round().max(0.0) as u64),
                );
            }
            self.line += 1;
            if self.line == t.len() - 1 {
                self.cycle += Duration::from_nanos(period);
                self.line = 0;
            }
        }
    }

    /// When a packet of `size` bytes arriving at `now` leaves the delay
    /// stage, and whether it may bypass the heavy queue.
    fn release(&mut self, now: Instant, size: u32) -> (Instant, bool) {
        let starts = self.current.is_none() || now >= self.end_release + self.idle;
        let (release, light) = if starts {
            let (line, base) = self.base_at(now);
            self.current = Some(Current {
                line,
                start: now,
                base,
                k: 0,
                room: MTU.saturating_sub(size),
            });
            (now + base, true)
        } else {
            let c = self.current.as_mut().expect("a train");
            let offsets = &self.trains.trains[c.line].offsets;
            let since = now.saturating_since(c.start).as_nanos();
            while c.k < offsets.len() && since > offsets[c.k] {
                c.k += 1;
                c.room = MTU;
            }
            if c.room < size {
                c.k += 1;
                c.room = MTU;
            }
            c.room = c.room.saturating_sub(size);
            match offsets.get(c.k) {
                Some(&o) => (c.start + c.base + Duration::from_nanos(o), true),
                None => {
                    let last = offsets.last().copied().unwrap_or(0);
                    (now + c.base.max(Duration::from_nanos(last)), false)
                }
            }
        };
        let (mut release, mut light) = (release, light);
        if let Some(s) = &self.sizes {
            let off = s.offset(size);
            let moved = release.as_nanos() as f64 + off;
            if moved >= self.end_release.as_nanos() as f64 {
                release = Instant::from_nanos(moved.round().max(0.0) as u64);
            }
        }
        if release < self.end_release {
            release = self.end_release;
            light = false;
        }
        self.end_release = release;
        (release, light)
    }

    /// The heavy opportunity that carries the last byte of a packet of
    /// `size` bytes entering the heavy queue at `at`.
    fn serve(&mut self, at: Instant, size: u32) -> Instant {
        let mut need = size;
        if !self.queue.is_empty() && self.left > 0 {
            if self.left >= need {
                self.left -= need;
                return self.opportunity;
            }
            need -= self.left;
        }
        loop {
            let t = self.heavy.take(at.max(self.opportunity));
            self.opportunity = t;
            if need <= MTU {
                self.left = MTU - need;
                return t;
            }
            need -= MTU;
        }
    }

    /// Offers a packet of `size` bytes at `now` with the heavy queue limited
    /// to `limit`: when it arrives, or that the heavy queue refused it.
    pub fn offer(&mut self, now: Instant, size: u32, limit: QueueLimit) -> Replayed {
        let (release, light) = self.release(now, size);
        while let Some(&(d, s)) = self.queue.front() {
            if d > release {
                break;
            }
            self.queue.pop_front();
            self.queued_bytes -= s as u64;
        }
        if light && self.queue.is_empty() {
            return Replayed::Delivered {
                at: release,
                wait: Duration::ZERO,
            };
        }
        let fits = match limit {
            QueueLimit::Packets(k) => self.queue.len() < k as usize,
            QueueLimit::Bytes(b) => self.queued_bytes + size as u64 <= b,
        };
        if !fits {
            return Replayed::Refused;
        }
        let at = self.serve(release, size);
        self.queue.push_back((at, size));
        self.queued_bytes += size as u64;
        Replayed::Delivered {
            at,
            wait: at.saturating_since(release),
        }
    }

    /// Packets in the heavy queue after the releases so far (some of them
    /// released later than the caller's present).
    pub fn heavy_queued(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Instant {
        Instant::from_nanos(x * 1_000_000)
    }

    fn at(r: Replayed) -> Instant {
        match r {
            Replayed::Delivered { at, .. } => at,
            Replayed::Refused => panic!("refused"),
        }
    }

    fn replay(trains: &str, heavy: &str, idle_ms: u64) -> CellReplay {
        CellReplay::new(
            TrainTrace::parse("t", trains).unwrap(),
            MahimahiTrace::parse("h", heavy).unwrap(),
            None,
            Duration::from_millis(idle_ms),
        )
    }

    #[test]
    fn the_base_delay_is_interpolated_and_the_trace_repeats() {
        // 40 ms at 0, 60 ms at 100 ms, 20 ms at 200 ms (the period)
        let mut c = replay("0 40 0\n100 60 0\n200 20 0\n", "1\n2\n", 0);
        assert_eq!(c.base_at(ms(0)).1, Duration::from_millis(40));
        assert_eq!(c.base_at(ms(50)).1, Duration::from_millis(50));
        assert_eq!(c.base_at(ms(150)).1, Duration::from_millis(40));
        // the next period starts over at 40 ms
        assert_eq!(c.base_at(ms(200)).1, Duration::from_millis(40));
        assert_eq!(c.base_at(ms(250)).1, Duration::from_millis(50));
        // long idle: whole periods at once, same answer
        assert_eq!(c.base_at(ms(200_050)).1, Duration::from_millis(50));
    }

    #[test]
    fn a_train_uses_its_light_opportunities_then_the_heavy_queue() {
        // one train line: base 30 ms, light opportunities at 0, 5 and 10 ms;
        // heavy opportunities every millisecond
        let heavy: String = (1..=1000).map(|t| format!("{t}\n")).collect();
        let mut c = replay("0 30 0 5 10\n1000 30 0 5 10\n", &heavy, 0);
        let lim = QueueLimit::Packets(100);
        // four 1500-byte packets at once: the first starts the train (30 ms),
        // the next two take the light opportunities at 5 and 10 ms
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(30));
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(35));
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(40));
        // the fourth finds them used up: it waits max(base, last offset) =
        // 30 ms, held to the last release (40 ms), then the next heavy
        // opportunity at or after 40 ms
        let r = c.offer(ms(0), 1500, lim);
        assert_eq!(
            r,
            Replayed::Delivered {
                at: ms(40),
                wait: Duration::ZERO
            }
        );
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(41));
    }

    #[test]
    fn small_packets_share_an_opportunity() {
        let heavy: String = (1..=100).map(|t| format!("{}\n", t * 10)).collect();
        // no light opportunities: every packet after the first is heavy
        let mut c = replay("0 5\n1000 5\n", &heavy, 0);
        let lim = QueueLimit::Packets(100);
        assert_eq!(at(c.offer(ms(0), 100, lim)), ms(5));
        // three 500-byte packets: one heavy opportunity (at 10 ms) carries all
        // three; the fourth needs the next one (20 ms)
        for _ in 0..3 {
            assert_eq!(at(c.offer(ms(0), 500, lim)), ms(10));
        }
        assert_eq!(at(c.offer(ms(0), 500, lim)), ms(20));
    }

    #[test]
    fn an_idle_direction_starts_a_new_train_and_the_heavy_queue_is_bounded() {
        let heavy: String = (1..=100).map(|t| format!("{}\n", t * 10)).collect();
        let mut c = replay("0 5 0\n1000 25 0\n", &heavy, 0);
        let lim = QueueLimit::Packets(2);
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(5));
        // heavy: held 5 ms, then opportunities at 10, 20; the third is refused
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(10));
        assert_eq!(at(c.offer(ms(0), 1500, lim)), ms(20));
        assert_eq!(c.offer(ms(0), 1500, lim), Replayed::Refused);
        // at 500 ms the direction has long been idle: a new train, whose
        // base delay is interpolated (15 ms at 500 ms)
        assert_eq!(at(c.offer(ms(500), 1500, lim)), ms(515));
    }

    #[test]
    fn sizes_add_their_offset_without_reordering() {
        let mut c = replay("0 10 0 1 2\n1000 10 0 1 2\n", "1\n", 0);
        c.sizes = Some(SizeDelays::parse("s", "100 0\n200 2\n300 4\n").unwrap());
        let lim = QueueLimit::Packets(10);
        // 250 bytes: 3 ms more
        assert_eq!(at(c.offer(ms(0), 250, lim)), ms(13));
        // 100 bytes: no offset, 10 ms (light opportunity 0 has room) would go
        // before 13 ms: held to 13 ms, and queued behind nothing
        assert_eq!(at(c.offer(ms(0), 100, lim)), ms(13));
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        let e = TrainTrace::parse("t", "0 10 0\nx 10\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.starts_with("\"x\" is not a time"), "{e}");
        let e = TrainTrace::parse("t", "0 10 0\n5 -1\n").unwrap_err();
        assert!(e.message.starts_with("\"-1\" is not a delay"), "{e}");
        let e = TrainTrace::parse("t", "0 10 0 5 3\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("is before the one before it"), "{e}");
        let e = TrainTrace::parse("t", "10 10\n5 10\n").unwrap_err();
        assert!(e.message.contains("before the previous line's time"), "{e}");
        let e = TrainTrace::parse("t", "0 10\n").unwrap_err();
        assert!(e.message.contains("fewer than two lines"), "{e}");
        let e = TrainTrace::parse("t", "7\n8 1\n").unwrap_err();
        assert!(e.message.starts_with("has no base delay"), "{e}");
        let e = SizeDelays::parse("s", "100 1\n300 2\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s line 2: \"300\" is not 200: the sizes go 100, 200, ... bytes, one per line"
        );
    }
}
