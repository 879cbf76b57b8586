//! A UDP sender's packets: when each is sent and its payload, from the
//! flow's pattern ([`UdpSpec`]). The source is a plain state machine the
//! driver asks for the next send time and then for the packets due; every
//! random draw (the on/off periods) comes from the flow's own stream of the
//! run's seeded generator, so a run is reproducible.
//!
//! * `cbr`: packet `k` (from 0) at `start + k x packet x 8 / rate`, computed
//!   from `k` each time so that the spacing does not drift.
//! * `onoff`: as ns-3's OnOffApplication: the flow starts with an off
//!   period; in an on period the next packet goes one packet time
//!   (`packet x 8 / rate`) after the previous one (or after the start of the
//!   period), less the part of a packet time the previous on period ended
//!   with (ns-3's residual bits), so the long-run rate while on is `rate`.
//! * `trace`: the file's packets, at `start` + their times.
//! * `voice`: 160 bytes every 20 ms (a `cbr` of 64 kbit/s of payload).
//! * `video`: frame `k` at `start + k / fps`, of `rate / (8 x fps)` bytes,
//!   split into packets of `packet` bytes (the last one the rest), all sent
//!   at the frame's time: a paced encoder would spread them, the burst is
//!   the harder case for the queue and the jitter.

use crate::link::trace_file::{csv_rows, excerpt, read_trace_file, TraceError};
use crate::link::Distribution;
use crate::rng::Rng;
use crate::scenario::{
    UdpPattern, UdpSpec, MAX_UDP_PAYLOAD, VIDEO_FPS, VIDEO_PACKET, VOICE_INTERVAL, VOICE_PACKET,
};
use wavelab_tcp::units::parse_size;
use wavelab_tcp::{Duration, Instant, Rate};

/// One packet of a trace: its send time from the flow's start and payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TracePacket {
    /// Send time, from the flow's start.
    pub at: Duration,
    /// UDP payload bytes.
    pub payload: u32,
}

/// Reads the UDP trace `path`: one packet a line, `time,size` (time in
/// seconds or a duration with its unit, size in bytes or with its unit,
/// from 1 to [`MAX_UDP_PAYLOAD`]), times not decreasing; blank lines, `#`
/// comments and a header line are skipped. Errors name the file and line.
pub fn load_udp_trace(path: &str) -> Result<Vec<TracePacket>, TraceError> {
    let text = read_trace_file(path)?;
    parse_udp_trace(path, &text)
}

/// Parses the text of a UDP trace (see [`load_udp_trace`]).
pub fn parse_udp_trace(file: &str, text: &str) -> Result<Vec<TracePacket>, TraceError> {
    let err = |line: usize, message: String| TraceError {
        file: file.to_string(),
        line,
        message,
    };
    let size = |f: &str| match f.parse::<u64>() {
        Ok(b) => Some(b),
        Err(_) => parse_size(f).ok().map(|b| b.0),
    };
    let mut out: Vec<TracePacket> = Vec::new();
    let header = move |fields: &[&str]| {
        fields
            .iter()
            .all(|f| crate::link::measured_duration(f).is_none() && size(f).is_none())
    };
    for (line, fields) in csv_rows(text, header) {
        let i = line - 1;
        if fields.len() != 2 {
            return Err(err(
                i + 1,
                format!("has {} fields; a packet is two: time,size", fields.len()),
            ));
        }
        let at = crate::link::measured_duration(fields[0]).ok_or_else(|| {
            err(
                i + 1,
                format!(
                    "{} is not a time (seconds from the flow's start, or a duration with its \
                     unit such as \"20ms\")",
                    excerpt(fields[0])
                ),
            )
        })?;
        let payload = match size(fields[1]) {
            Some(b) if (1..=MAX_UDP_PAYLOAD).contains(&b) => b as u32,
            Some(b) => {
                return Err(err(
                    i + 1,
                    format!("size {b} B is not from 1 to {MAX_UDP_PAYLOAD} B (a UDP payload in one 1,500-byte packet)"),
                ))
            }
            None => {
                return Err(err(
                    i + 1,
                    format!(
                        "{} is not a size (bytes, or with a unit such as \"160B\")",
                        excerpt(fields[1])
                    ),
                ))
            }
        };
        if let Some(last) = out.last() {
            if at < last.at {
                return Err(err(
                    i + 1,
                    format!("time {at} is before the previous packet's ({})", last.at),
                ));
            }
        }
        out.push(TracePacket { at, payload });
    }
    if out.is_empty() {
        return Err(err(0, "holds no packet".to_string()));
    }
    Ok(out)
}

/// The pattern's state.
#[derive(Clone, Debug)]
enum Kind {
    /// Packets of `payload` bytes, `k` from the start.
    Cbr { payload: u32, bits: u64, rate: Rate },
    /// Packets of `payload` bytes every `interval` (a ping's requests).
    Periodic { payload: u32, interval: Duration },
    /// On/off periods.
    OnOff(OnOff),
    /// The trace's packets.
    Trace {
        packets: std::sync::Arc<[TracePacket]>,
    },
    /// Frames of `frame` bytes at `fps`, cut into packets of `packet`.
    Video {
        fps: u64,
        frame: u64,
        packet: u64,
        sent_of_frame: u64,
        /// The index of the frame being sent.
        index: u64,
    },
}

/// The on/off pattern's state.
#[derive(Clone, Debug)]
struct OnOff {
    payload: u32,
    /// `payload x 8 / rate`.
    packet_time: Duration,
    /// Mean (or fixed) on and off periods, and how they are drawn.
    on: Duration,
    off: Duration,
    distribution: Distribution,
    /// The end of the current (or last) on period.
    on_end: Instant,
    /// The part of a packet time earned in on periods and not yet spent.
    carried: Duration,
    stop: Option<Instant>,
    rng: Box<Rng>,
}

impl OnOff {
    /// Draws the off period from `from`, then the on periods after it,
    /// until one holds its first packet (one packet time less what is
    /// carried, from its start); the packet's time (None: the flow stops
    /// before it).
    fn next_period(&mut self, from: Instant) -> Option<Instant> {
        let mut from = from;
        loop {
            let on_start = from.saturating_add(self.distribution.draw(self.off, &mut self.rng));
            if self.stop.is_some_and(|s| on_start >= s) || on_start == Instant::MAX {
                return None;
            }
            self.on_end = on_start.saturating_add(self.distribution.draw(self.on, &mut self.rng));
            let first = on_start.saturating_add(self.packet_time.saturating_sub(self.carried));
            if first < self.on_end {
                self.carried = Duration::ZERO;
                return Some(first);
            }
            self.carried += self.on_end - on_start;
            from = self.on_end;
        }
    }
}

/// A UDP flow's sender (see the module description).
#[derive(Clone, Debug)]
pub struct UdpSource {
    kind: Kind,
    start: Instant,
    stop: Option<Instant>,
    /// The next packet's send time (None: no more packets).
    next: Option<Instant>,
    /// Packets sent so far: the next packet's sequence number, and for cbr
    /// and trace the index of the next packet.
    k: u64,
}

impl UdpSource {
    /// The source of a (validated) UDP flow starting at `start`, stopping
    /// at `stop`; `trace` is the trace file's packets (pattern `trace`),
    /// `rng` the flow's own random stream.
    pub fn new(
        spec: &UdpSpec,
        start: Instant,
        stop: Option<Instant>,
        trace: Option<std::sync::Arc<[TracePacket]>>,
        rng: Rng,
    ) -> UdpSource {
        let bytes = |d: u64| spec.packet.map_or(d, |b| b.0);
        let rate = spec.rate.unwrap_or(Rate::from_bps(64_000));
        let (kind, next) = match spec.pattern {
            UdpPattern::Cbr | UdpPattern::Voice => {
                let (payload, rate) = if spec.pattern == UdpPattern::Voice {
                    let r = Rate::from_bytes_per(VOICE_PACKET, VOICE_INTERVAL);
                    (VOICE_PACKET, r)
                } else {
                    (bytes(VIDEO_PACKET), rate)
                };
                let k = Kind::Cbr {
                    payload: payload as u32,
                    bits: payload * 8,
                    rate,
                };
                (k, Some(start))
            }
            UdpPattern::Onoff => {
                let payload = bytes(VIDEO_PACKET);
                let mut o = OnOff {
                    payload: payload as u32,
                    packet_time: rate.tx_time(payload),
                    on: spec.on.unwrap_or(Duration::from_secs(1)),
                    off: spec.off.unwrap_or(Duration::from_secs(1)),
                    distribution: spec.distribution.unwrap_or_default(),
                    on_end: start,
                    carried: Duration::ZERO,
                    stop,
                    rng: Box::new(rng),
                };
                let first = o.next_period(start);
                (Kind::OnOff(o), first)
            }
            UdpPattern::Trace => {
                let packets = trace.expect("a trace flow has its packets");
                let next = start.saturating_add(packets[0].at);
                (Kind::Trace { packets }, Some(next))
            }
            UdpPattern::Video => {
                let fps = u64::from(spec.fps.unwrap_or(VIDEO_FPS));
                let frame = (rate.as_bps() / (8 * fps)).max(1);
                let k = Kind::Video {
                    fps,
                    frame,
                    packet: bytes(VIDEO_PACKET),
                    sent_of_frame: 0,
                    index: 0,
                };
                (k, Some(start))
            }
        };
        let mut s = UdpSource {
            kind,
            start,
            stop,
            next,
            k: 0,
        };
        s.clip();
        s
    }

    /// A source of one packet of `payload` bytes every `interval` from
    /// `start` (packet `k` at `start + k x interval`), none at or after
    /// `stop`: a ping flow's echo requests.
    pub fn periodic(
        payload: u32,
        interval: Duration,
        start: Instant,
        stop: Option<Instant>,
    ) -> UdpSource {
        let mut s = UdpSource {
            kind: Kind::Periodic { payload, interval },
            start,
            stop,
            next: Some(start),
            k: 0,
        };
        s.clip();
        s
    }

    /// When the next packet is due (None: the flow sends no more).
    pub fn next_send(&self) -> Option<Instant> {
        self.next
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.k
    }

    /// The payload of the packet due now (`next_send() <= now`), with its
    /// sequence number, and moves on to the next one; None when none is due.
    pub fn poll(&mut self, now: Instant) -> Option<(u64, u32)> {
        let t = self.next.filter(|&t| t <= now)?;
        let seq = self.k;
        self.k += 1;
        let start = self.start;
        let payload = match &mut self.kind {
            Kind::Cbr {
                payload,
                bits,
                rate,
            } => {
                let ns = u128::from(self.k) * u128::from(*bits) * 1_000_000_000
                    / u128::from(rate.as_bps().max(1));
                self.next =
                    Some(start.saturating_add(Duration::from_nanos(
                        u64::try_from(ns).unwrap_or(u64::MAX),
                    )));
                *payload
            }
            Kind::Periodic { payload, interval } => {
                self.next = Some(start.saturating_add(interval.saturating_mul(self.k)));
                *payload
            }
            Kind::OnOff(o) => {
                let following = t.saturating_add(o.packet_time);
                self.next = if following < o.on_end {
                    Some(following)
                } else {
                    // the period ends first: carry the part of a packet
                    // time since this packet, as ns-3's residual bits
                    o.carried = o.on_end - t;
                    o.next_period(o.on_end)
                };
                o.payload
            }
            Kind::Trace { packets } => {
                let i = self.k as usize;
                self.next = packets.get(i).map(|p| start.saturating_add(p.at));
                packets[i - 1].payload
            }
            Kind::Video {
                fps,
                frame,
                packet,
                sent_of_frame,
                index,
            } => {
                let p = (*frame - *sent_of_frame).min(*packet);
                *sent_of_frame += p;
                if *sent_of_frame >= *frame {
                    *sent_of_frame = 0;
                    *index += 1;
                    let ns = u128::from(*index) * 1_000_000_000 / u128::from(*fps);
                    self.next = Some(start.saturating_add(Duration::from_nanos(ns as u64)));
                }
                p as u32
            }
        };
        self.clip();
        Some((seq, payload))
    }

    /// No packet at or after the stop time.
    fn clip(&mut self) {
        if let (Some(n), Some(s)) = (self.next, self.stop) {
            if n >= s {
                self.next = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;
    use crate::scenario::Scenario;

    fn spec(udp: &str) -> UdpSpec {
        let sc = Scenario::from_toml_str(&format!(
            r#"
            duration = "100s"
            [[links]]
            between = ["a", "b"]
            rate = "10Mbit/s"
            delay = "1ms"
            [[flows]]
            from = "a"
            to = "b"
            transport = "udp"
            udp = {udp}
            "#
        ))
        .unwrap();
        sc.flows[0].udp.clone().unwrap()
    }

    /// Every (time in ns, sequence number, payload) the source sends
    /// before `end_ms`, starting at 0.
    fn sends(
        spec: &UdpSpec,
        trace: Option<Arc<[TracePacket]>>,
        end_ms: u64,
    ) -> Vec<(u64, u64, u32)> {
        let rng = Rng::derive(1, Stream::FlowApp(0));
        let mut s = UdpSource::new(spec, Instant::ZERO, None, trace, rng);
        let end = Instant::ZERO + Duration::from_millis(end_ms);
        let mut out = Vec::new();
        while let Some(t) = s.next_send().filter(|&t| t < end) {
            let (seq, p) = s.poll(t).expect("due");
            out.push((t.as_nanos(), seq, p));
        }
        out
    }

    use std::sync::Arc;

    #[test]
    fn voice_is_160_bytes_every_20_ms() {
        let v = sends(&spec(r#"{ pattern = "voice" }"#), None, 1000);
        assert_eq!(v.len(), 50);
        for (k, &(t, seq, p)) in v.iter().enumerate() {
            assert_eq!((t, seq, p), (k as u64 * 20_000_000, k as u64, 160));
        }
    }

    #[test]
    fn cbr_spacing_does_not_drift() {
        // 1,000 B at 3 Mbit/s: 2.666... ms, computed from k each time
        let v = sends(
            &spec(r#"{ pattern = "cbr", rate = "3Mbit/s", packet = "1000B" }"#),
            None,
            60_000,
        );
        assert_eq!(v.len(), 22_500);
        assert_eq!(v[22_499].0, 22_499 * 8_000 * 1_000_000_000 / 3_000_000);
    }

    #[test]
    fn periodic_requests_are_interval_apart_until_the_stop() {
        let at = |ms| Instant::ZERO + Duration::from_millis(ms);
        let mut s = UdpSource::periodic(56, Duration::from_millis(200), at(100), Some(at(1000)));
        let mut v = Vec::new();
        while let Some(t) = s.next_send() {
            v.push((t.as_nanos() / 1_000_000, s.poll(t).unwrap()));
        }
        assert_eq!(
            v,
            [
                (100, (0, 56)),
                (300, (1, 56)),
                (500, (2, 56)),
                (700, (3, 56)),
                (900, (4, 56))
            ]
        );
    }

    #[test]
    fn nothing_is_sent_at_or_after_the_stop() {
        let sp = spec(r#"{ pattern = "voice" }"#);
        let rng = Rng::derive(1, Stream::FlowApp(0));
        let stop = Instant::ZERO + Duration::from_millis(100);
        let mut s = UdpSource::new(&sp, Instant::ZERO, Some(stop), None, rng);
        let mut n = 0;
        while let Some(t) = s.next_send() {
            assert!(t < stop);
            s.poll(t).unwrap();
            n += 1;
        }
        assert_eq!(n, 5);
        assert_eq!(s.poll(stop), None);
    }

    #[test]
    fn exponential_on_off_keeps_the_rate_while_on_and_half_the_time() {
        let sp = spec(
            r#"{ pattern = "onoff", rate = "1Mbit/s", packet = "125B", on = "200ms", off = "200ms" }"#,
        );
        // 1,000 packets a second while on, on half the time over 1,000 s
        let v = sends(&sp, None, 1_000_000);
        let n = v.len() as f64;
        assert!((n - 500_000.0).abs() < 15_000.0, "{n}");
        // within an on period, packets are one packet time apart
        let gaps = v
            .windows(2)
            .filter(|w| w[1].0 - w[0].0 == 1_000_000)
            .count();
        assert!(gaps as f64 > 0.99 * n, "{gaps}");
    }

    #[test]
    fn trace_lines_are_read_and_errors_name_the_file_and_line() {
        let t = parse_udp_trace("p.csv", "time,size\n0,100\n# c\n\n20ms,1kB\n1.5 1472\n").unwrap();
        let at = |ms| Duration::from_millis(ms);
        assert_eq!(
            t,
            vec![
                TracePacket {
                    at: at(0),
                    payload: 100
                },
                TracePacket {
                    at: at(20),
                    payload: 1000
                },
                TracePacket {
                    at: at(1500),
                    payload: 1472
                },
            ]
        );
        let bad = [
            (
                "0,100\n1,2,3\n",
                "p.csv line 2: has 3 fields; a packet is two: time,size",
            ),
            ("0,100\nsoon,100\n", "p.csv line 2: \"soon\" is not a time"),
            (
                "0,100\n1,0\n",
                "p.csv line 2: size 0 B is not from 1 to 1472 B",
            ),
            ("0,100\n1,big\n", "p.csv line 2: \"big\" is not a size"),
            (
                "1,100\n0.5,100\n",
                "p.csv line 2: time 500ms is before the previous packet's",
            ),
            ("# nothing\n", "p.csv: holds no packet"),
        ];
        for (text, want) in bad {
            let e = parse_udp_trace("p.csv", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
        let packets: Arc<[TracePacket]> = t.into();
        let v = sends(&spec(r#"{ pattern = "voice" }"#), None, 0);
        assert!(v.is_empty());
        let tr = spec(r#"{ pattern = "voice" }"#);
        let tr = UdpSpec {
            pattern: UdpPattern::Trace,
            ..tr
        };
        let v = sends(&tr, Some(packets), 10_000);
        assert_eq!(
            v,
            vec![(0, 0, 100), (20_000_000, 1, 1000), (1_500_000_000, 2, 1472)]
        );
    }
}
