//! Linux's rules for when a receiver acknowledges (`tcp.receiver =
//! "linux"`), as net/ipv4/tcp_input.c, tcp_output.c and tcp_timer.c of Linux
//! 6.18 apply them to a receiver that sends no data:
//!
//! * **Quick-ACK mode** (`tcp_incr_quickack`, `tcp_enter_quickack_mode`): an
//!   ACK for every segment while a count lasts. The first data segment sets
//!   the count to the receive window over two segments, at most
//!   `TCP_MAX_QUICKACKS` = 16 (at least 2); so does a segment after an idle
//!   gap longer than the RTO, and a duplicate segment (the sender lost an
//!   ACK, `tcp_send_dupack`). Each ACK of received data uses one
//!   (`tcp_dec_quickack_mode`); when the count runs out the ACK timeout
//!   (ATO) falls back to `TCP_ATO_MIN`. Interactive ("pingpong") mode needs
//!   the receiver to send data, which this one never does.
//! * **The ATO** (`tcp_event_data_recv`): 40 ms (`TCP_ATO_MIN`) at the first
//!   segment; then for a gap `m` since the last segment: m <= 20 ms gives
//!   ATO / 2 + 20 ms, m below the ATO gives min(ATO / 2 + m, RTO,
//!   `TCP_DELACK_MAX`); a delayed-ACK timer that fires doubles it (same
//!   bounds, `tcp_delack_timer_handler`).
//! * **The ACK timer** (`__tcp_ack_snd_check`, `tcp_send_delayed_ack`): an
//!   ACK goes out at once for more than one full segment unacknowledged or in
//!   quick-ACK mode; else the timer is set ATO ahead, the ATO bounded (once
//!   above 40 ms) by 500 ms and the smoothed RTT, and always by
//!   `TCP_DELACK_MAX` (`tcp.delayed_ack`, 200 ms in Linux); a timer already
//!   running keeps its earlier deadline, and one due within a quarter of the
//!   ATO sends the ACK now.
//! * The receiver's RTT and RTO come from its only sample, the handshake's
//!   (SYN-ACK to the ACK that completes it): RTO = RTT + max(2 RTT, 200 ms)
//!   (`tcp_rtt_estimator`'s first sample, `TCP_RTO_MIN`), 1 s without one
//!   (`TCP_TIMEOUT_INIT`).
//!
//! Not modelled: SACK compression of duplicate ACKs after the third
//! (`tcp_comp_sack_nr`, at most one per millisecond at these rates), the
//! quick ACKs Linux adds while receive autotuning grows the window
//! (`tcp_grow_window`), and `ICSK_ACK_PUSHED` for short segments.

use crate::time::{Duration, Instant};

/// `TCP_ATO_MIN` and `TCP_DELACK_MIN`.
const ATO_MIN: Duration = Duration::from_millis(40);
/// `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;
/// `tcp_send_delayed_ack`'s bound for a receiver that is not interactive.
const MAX_ATO_BULK: Duration = Duration::from_millis(500);
/// `TCP_RTO_MIN`.
const RTO_MIN: Duration = Duration::from_millis(200);
/// `TCP_TIMEOUT_INIT`.
const RTO_INIT: Duration = Duration::from_secs(1);

/// The state of Linux's delayed-ACK engine.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinuxAck {
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// The ACK timeout; `None` before the first data segment.
    ato: Option<Duration>,
    /// When the last in-order data segment arrived (`lrcvtime`).
    last_data: Option<Instant>,
    srtt: Option<Duration>,
    rto: Duration,
}

impl LinuxAck {
    /// The engine of a connection whose handshake measured `rtt`.
    pub(super) fn new(rtt: Option<Duration>) -> Self {
        LinuxAck {
            quick: 0,
            ato: None,
            last_data: None,
            srtt: rtt,
            rto: rtt.map_or(RTO_INIT, |r| r + (r * 2).max(RTO_MIN)),
        }
    }

    /// True in quick-ACK mode.
    pub(super) fn quick(&self) -> bool {
        self.quick > 0
    }

    /// `tcp_incr_quickack`: at least as many quick ACKs as half the window
    /// in segments, at most 16.
    fn incr_quickack(&mut self, window: u64, mss: u32) {
        let n = (window / (2 * mss.max(1) as u64)).min(MAX_QUICKACKS as u64) as u32;
        self.quick = self.quick.max(if n == 0 { 2 } else { n });
    }

    /// `tcp_enter_quickack_mode` (a duplicate segment arrived).
    pub(super) fn enter_quickack_mode(&mut self, window: u64, mss: u32) {
        self.incr_quickack(window, mss);
        self.ato = Some(ATO_MIN);
    }

    /// New in-order data at `now` (`tcp_event_data_recv`); `delack_max` is
    /// `tcp.delayed_ack`.
    pub(super) fn on_data(
        &mut self,
        now: Instant,
        window: u64,
        mss: u32,
        delack_max: Option<Duration>,
    ) {
        let max = delack_max.unwrap_or(ATO_MIN);
        match (self.ato, self.last_data) {
            (Some(ato), Some(last)) => {
                let m = now.saturating_since(last);
                if m <= ATO_MIN / 2 {
                    self.ato = Some(ato / 2 + ATO_MIN / 2);
                } else if m < ato {
                    self.ato = Some((ato / 2 + m).min(self.rto).min(max));
                } else if m > self.rto {
                    // a long silence: the sender restarts, ACK quickly
                    self.incr_quickack(window, mss);
                }
            }
            _ => {
                // the first data segment starts the engine
                self.incr_quickack(window, mss);
                self.ato = Some(ATO_MIN);
            }
        }
        self.last_data = Some(now);
    }

    /// An ACK of received data went out (`tcp_dec_quickack_mode`).
    pub(super) fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = Some(ATO_MIN);
            }
        }
    }

    /// The delayed-ACK timer fired with an ACK owed: the ATO grows
    /// (`tcp_delack_timer_handler`).
    pub(super) fn on_timer_expired(&mut self, delack_max: Option<Duration>) {
        let max = delack_max.unwrap_or(ATO_MIN);
        let ato = self.ato.unwrap_or(ATO_MIN);
        self.ato = Some((ato * 2).min(self.rto).min(max));
    }

    /// `tcp_send_delayed_ack`: the deadline for an ACK owed now, given the
    /// timer's current deadline; `None` to send it at once.
    pub(super) fn delayed_ack_deadline(
        &self,
        now: Instant,
        pending: Option<Instant>,
        delack_max: Duration,
    ) -> Option<Instant> {
        let mut ato = self.ato.unwrap_or(ATO_MIN);
        if ato > ATO_MIN {
            let mut max_ato = MAX_ATO_BULK;
            if let Some(srtt) = self.srtt {
                max_ato = max_ato.min(srtt.max(ATO_MIN));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(delack_max);
        let deadline = now + ato;
        match pending {
            Some(p) if p <= now + ato / 4 => None,
            Some(p) => Some(p.min(deadline)),
            None => Some(deadline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Instant {
        Instant::from_nanos(t * 1_000_000)
    }

    #[test]
    fn the_first_segment_starts_sixteen_quick_acks_at_most() {
        let mut l = LinuxAck::new(Some(Duration::from_millis(60)));
        l.on_data(ms(0), 6 << 20, 1448, Some(Duration::from_millis(200)));
        assert_eq!((l.quick, l.ato), (16, Some(ATO_MIN)));
        for _ in 0..15 {
            l.on_ack_sent();
        }
        assert!(l.quick());
        l.on_ack_sent();
        assert!(!l.quick());
        // a small window gives fewer: 8 KiB / (2 x 1448) = 2
        let mut small = LinuxAck::new(None);
        small.on_data(ms(0), 8192, 1448, Some(Duration::from_millis(200)));
        assert_eq!(small.quick, 2);
    }

    #[test]
    fn the_ato_follows_the_inter_arrival_time() {
        let max = Some(Duration::from_millis(200));
        let mut l = LinuxAck::new(Some(Duration::from_millis(300)));
        assert_eq!(l.rto, Duration::from_millis(900));
        l.on_data(ms(0), 6 << 20, 1448, max);
        l.quick = 0;
        // 30 ms apart: between 20 ms and the ATO, ATO / 2 + m
        l.on_data(ms(30), 6 << 20, 1448, max);
        assert_eq!(l.ato, Some(Duration::from_millis(50)));
        // back to back: ATO / 2 + 20 ms
        l.on_data(ms(31), 6 << 20, 1448, max);
        assert_eq!(l.ato, Some(Duration::from_millis(45)));
        // the timer fires: doubled, at most 200 ms
        l.on_timer_expired(max);
        l.on_timer_expired(max);
        l.on_timer_expired(max);
        assert_eq!(l.ato, Some(Duration::from_millis(200)));
        // the deadline is bounded by the RTT (300 ms here) and 200 ms
        assert_eq!(
            l.delayed_ack_deadline(ms(100), None, Duration::from_millis(200)),
            Some(ms(300))
        );
        // a pending timer keeps its deadline, or sends now if nearly due
        assert_eq!(
            l.delayed_ack_deadline(ms(100), Some(ms(250)), Duration::from_millis(200)),
            Some(ms(250))
        );
        assert_eq!(
            l.delayed_ack_deadline(ms(100), Some(ms(140)), Duration::from_millis(200)),
            None
        );
        // an idle gap longer than the RTO: quick ACKs again
        l.on_data(ms(2000), 6 << 20, 1448, max);
        assert_eq!(l.quick, 16);
    }
}
