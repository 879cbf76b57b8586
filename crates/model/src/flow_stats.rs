//! FlowMonitor-style statistics of one flow's data packets at the network,
//! without the packet log: packets and bytes (on the wire) sent, received
//! and dropped, the one-way delay of every received packet in a
//! [`Histogram`], and the interarrival jitter of RFC 3550 section 6.4.1.
//!
//! A UDP flow with a playout deadline also counts its late packets: those
//! received later than the deadline after they were sent, which a playout
//! buffer would discard; they stay counted as received.
//!
//! A TCP flow counts every data segment it puts on the network,
//! retransmissions included, so `lost` counts the segments the network
//! dropped, not the retransmissions the sender made.

use crate::histogram::Histogram;
use crate::scenario::UDP_OVERHEAD;
use wavelab_tcp::{Duration, Instant};

/// One flow's network statistics (see the module description).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowStats {
    /// Data packets and wire bytes put on the network.
    pub sent: [u64; 2],
    /// Data packets and wire bytes that reached the receiver.
    pub received: [u64; 2],
    /// Data packets and wire bytes a link or queue dropped.
    pub lost: [u64; 2],
    /// One-way delay (send to arrival) of every received data packet.
    pub delay: Histogram,
    /// The interarrival jitter estimate J, in seconds (RFC 3550 section
    /// 6.4.1).
    jitter: f64,
    /// The transit time of the last packet received, in seconds.
    last_transit: Option<f64>,
    /// A UDP flow's playout deadline: a packet received later than this
    /// after it was sent is late.
    deadline: Option<Duration>,
    /// Data packets and wire bytes received past the deadline (also counted
    /// in `received`).
    pub late: [u64; 2],
}

impl FlowStats {
    /// Statistics that also count the packets received later than
    /// `deadline` after they were sent (a UDP flow's playout deadline).
    pub fn with_deadline(deadline: Option<Duration>) -> Self {
        FlowStats {
            deadline,
            ..FlowStats::default()
        }
    }

    /// Packets received past the deadline (None: the flow has none).
    pub fn late_packets(&self) -> Option<u64> {
        self.deadline.map(|_| self.late[0])
    }

    /// A data packet of `bytes` on the wire enters the network.
    #[inline]
    pub fn on_send(&mut self, bytes: u32) {
        self.sent[0] += 1;
        self.sent[1] += u64::from(bytes);
    }

    /// A data packet of `bytes` sent at `sent` reaches the receiver at
    /// `now`: its one-way delay is counted and the jitter estimate moves by
    /// `(|D| - J) / 16`, where `D` is the change in transit time from the
    /// packet received before it (RFC 3550 section 6.4.1).
    #[inline]
    pub fn on_receive(&mut self, sent: Instant, now: Instant, bytes: u32) {
        self.received[0] += 1;
        self.received[1] += u64::from(bytes);
        let d: Duration = now - sent;
        self.delay.record(d);
        if self.deadline.is_some_and(|late| d > late) {
            self.late[0] += 1;
            self.late[1] += u64::from(bytes);
        }
        let transit = d.as_secs_f64();
        if let Some(last) = self.last_transit {
            self.jitter += ((transit - last).abs() - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
    }

    /// A data packet of `bytes` on the wire was dropped.
    #[inline]
    pub fn on_drop(&mut self, bytes: u32) {
        self.lost[0] += 1;
        self.lost[1] += u64::from(bytes);
    }

    /// A UDP flow's payload bytes sent and received: the wire bytes less
    /// each packet's IP and UDP headers ([`UDP_OVERHEAD`]).
    pub fn udp_payload(&self) -> (u64, u64) {
        let payload = |[packets, bytes]: [u64; 2]| bytes - packets * u64::from(UDP_OVERHEAD);
        (payload(self.sent), payload(self.received))
    }

    /// The interarrival jitter estimate in seconds (None: fewer than two
    /// packets received).
    pub fn jitter_secs(&self) -> Option<f64> {
        (self.received[0] >= 2).then_some(self.jitter)
    }

    /// Mean, median, 95th and 99th percentile of the one-way delay in
    /// seconds (None: no packet received).
    pub fn delay_secs(&self) -> [Option<f64>; 4] {
        self.delay.figures_secs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_packets_are_those_past_the_deadline() {
        let mut s = FlowStats::with_deadline(Some(Duration::from_millis(100)));
        for (i, owd) in [50, 100, 101, 300, 20].into_iter().enumerate() {
            let i = i as u64 * 20;
            s.on_receive(at_ms(i), at_ms(i + owd), 188);
        }
        // exactly at the deadline is in time
        assert_eq!(s.late, [2, 376]);
        assert_eq!(s.late_packets(), Some(2));
        assert_eq!(s.received[0], 5);
        assert_eq!(FlowStats::default().late_packets(), None);
    }

    fn at_ms(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn jitter_is_zero_on_a_constant_path() {
        let mut s = FlowStats::default();
        for i in 0..100 {
            s.on_receive(at_ms(20 * i), at_ms(20 * i + 30), 200);
        }
        assert_eq!(s.jitter_secs(), Some(0.0));
        assert_eq!(s.received, [100, 20_000]);
        let [mean, p50, ..] = s.delay_secs();
        assert!((mean.unwrap() - 0.030).abs() < 1e-12);
        assert!((p50.unwrap() - 0.030).abs() < 0.030 / 128.0);
    }

    #[test]
    fn jitter_follows_the_rfc3550_estimator_on_a_delay_step() {
        // 10 packets at 30 ms, then a step to 50 ms: D = 20 ms once, then 0
        let mut s = FlowStats::default();
        for i in 0..10 {
            s.on_receive(at_ms(20 * i), at_ms(20 * i + 30), 200);
        }
        s.on_receive(at_ms(200), at_ms(250), 200);
        let j1 = 0.020 / 16.0;
        assert!((s.jitter_secs().unwrap() - j1).abs() < 1e-12);
        for i in 11..15 {
            s.on_receive(at_ms(20 * i), at_ms(20 * i + 50), 200);
        }
        // four packets with D = 0: J decays by 15/16 each
        let j5 = j1 * (15.0f64 / 16.0).powi(4);
        assert!((s.jitter_secs().unwrap() - j5).abs() < 1e-12);
    }

    #[test]
    fn one_packet_has_no_jitter_and_drops_are_counted() {
        let mut s = FlowStats::default();
        assert_eq!(s.delay_secs(), [None; 4]);
        s.on_send(100);
        s.on_send(100);
        s.on_drop(100);
        s.on_receive(at_ms(0), at_ms(5), 100);
        assert_eq!(s.jitter_secs(), None);
        assert_eq!((s.sent, s.received, s.lost), ([2, 200], [1, 100], [1, 100]));
    }
}
