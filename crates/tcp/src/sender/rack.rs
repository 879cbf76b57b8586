//! Loss detection by RFC 8985's RACK rule, for retransmissions and original
//! transmissions ([`crate::LostRetransmissions::Rack`]).
//!
//! RACK remembers the send time of the most recently sent segment known to
//! be delivered (`RACK.xmit_ts`) and the RTT it measured (`RACK.rtt`). A
//! segment sent before it and not delivered is lost once `RACK.rtt` plus a
//! reordering window has passed since its own send. wavelab checks the rule
//! on each ACK (no reordering timer), next to RFC 6675's duplicate-threshold
//! rule for original transmissions, and uses RFC 8985's reordering windows:
//! for a retransmission (always in loss recovery), zero until a segment never
//! retransmitted is delivered below one delivered before it (reordering),
//! then a quarter of the minimum RTT; for an original transmission the same,
//! except that outside recovery with fewer than DupThresh segments SACKed it
//! is a quarter of the minimum RTT from the start.
//!
//! Retransmissions are listed in the order they were sent, which is the
//! order of their send times, so each ACK looks only at the front of the
//! list: a retransmission there that is still in flight either passes the
//! rule (and the next one is looked at) or stops the scan (every later one
//! was sent later still). Original transmissions go out in sequence order,
//! so the scoreboard checks them from its lost boundary up
//! ([`super::scoreboard::Scoreboard::detect_lost_originals`]).

use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// RACK's state for one connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rack {
    /// `RACK.xmit_ts`: the latest send time of a delivered segment.
    xmit_ts: Option<Instant>,
    /// `RACK.end_seq`: that segment's end offset (of segments sent at the
    /// same instant, the highest).
    xmit_end: u64,
    /// `RACK.rtt`: the RTT measured with that segment.
    rtt: Duration,
    /// The highest end offset delivered before the current ACK (`RACK.fack`
    /// as of the ACK's start), for reordering detection.
    fack_before: u64,
    /// The highest end offset delivered so far.
    fack: u64,
    /// True once reordering was seen.
    reordering_seen: bool,
    /// The minimum RTT as of the current ACK.
    min_rtt: Option<Duration>,
    /// Retransmissions not yet passed by `RACK.xmit_ts`, in send order:
    /// (send time, start offset of the segment).
    retransmissions: VecDeque<(Instant, u64)>,
    /// The earliest send time of the segments the current ACK newly SACKed
    /// that were never retransmitted: the RTT sample Linux falls back on
    /// when Karn's rule leaves the cumulative ACK without one.
    first_sacked_send: Option<Instant>,
}

/// What RACK needs to know of a delivered segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DeliveredSeg {
    /// Its end offset.
    pub end: u64,
    /// Its (latest) send time.
    pub sent: Instant,
    /// True if it was ever retransmitted.
    pub retransmitted: bool,
}

impl Rack {
    /// Starts the processing of an ACK with the connection's minimum RTT.
    pub fn begin_ack(&mut self, min_rtt: Option<Duration>) {
        self.fack_before = self.fack;
        self.min_rtt = min_rtt;
        self.first_sacked_send = None;
    }

    /// Notes a segment newly SACKed (after [`Rack::on_delivered`]).
    pub fn on_sacked(&mut self, s: DeliveredSeg) {
        if !s.retransmitted {
            self.first_sacked_send = Some(self.first_sacked_send.map_or(s.sent, |t| t.min(s.sent)));
        }
    }

    /// The RTT of the earliest sent segment the current ACK newly SACKed that
    /// was never retransmitted, if any.
    pub fn sack_rtt(&self, now: Instant) -> Option<Duration> {
        self.first_sacked_send.map(|t| now - t)
    }

    /// Notes a segment newly delivered (cumulatively or by SACK) at `now`.
    pub fn on_delivered(&mut self, now: Instant, s: DeliveredSeg) {
        if !s.retransmitted && s.end <= self.fack_before {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(s.end);
        let rtt = now - s.sent;
        // RFC 8985 step 2: an ACK that comes less than the minimum RTT after
        // a retransmission answers an earlier transmission; it tells nothing
        // of the retransmission's send time (no minimum RTT yet: ignore).
        if s.retransmitted && self.min_rtt.is_none_or(|m| rtt < m) {
            return;
        }
        if self
            .xmit_ts
            .is_none_or(|t| s.sent > t || (s.sent == t && s.end > self.xmit_end))
        {
            self.xmit_ts = Some(s.sent);
            self.xmit_end = s.end;
            self.rtt = rtt;
        }
    }

    /// RFC 8985's rule for an original transmission (sent once, at `sent`,
    /// ending at `end`, neither delivered nor marked lost): lost once a
    /// segment sent after it was delivered and `RACK.rtt` plus the reordering
    /// window ([`Rack::reo_wnd`]) has passed since `sent`.
    pub fn original_lost(&self, now: Instant, sent: Instant, end: u64, quick: bool) -> bool {
        let Some(x) = self.xmit_ts else { return false };
        let before = sent < x || (sent == x && end < self.xmit_end);
        before && now >= sent + self.rtt + self.reo_wnd(quick)
    }

    /// Lists a retransmission sent at `sent` of the segment starting at `start`.
    pub fn on_retransmit(&mut self, sent: Instant, start: u64) {
        self.retransmissions.push_back((sent, start));
    }

    /// The reordering window (RFC 8985 section 6.2 step 4): zero while no
    /// reordering was seen and `quick` (the sender is in loss recovery, as
    /// it is for every retransmission, or at least DupThresh segments are
    /// SACKed), else a quarter of the minimum RTT.
    fn reo_wnd(&self, quick: bool) -> Duration {
        if quick && !self.reordering_seen {
            Duration::ZERO
        } else {
            self.min_rtt.map_or(Duration::ZERO, |m| m / 4)
        }
    }

    /// Hands each listed retransmission that the rule now covers to `lost`
    /// (its send time and segment start) and forgets it; `lost` checks that
    /// this transmission is still in flight (it may have been delivered, or
    /// sent again, since).
    pub fn detect(&mut self, now: Instant, mut lost: impl FnMut(Instant, u64)) {
        let Some(xmit_ts) = self.xmit_ts else { return };
        let deadline = self.rtt + self.reo_wnd(true);
        while let Some(&(sent, start)) = self.retransmissions.front() {
            if sent >= xmit_ts || now < sent + deadline {
                break;
            }
            self.retransmissions.pop_front();
            lost(sent, start);
        }
    }

    /// Retransmissions listed (tests).
    #[cfg(test)]
    pub fn listed(&self) -> usize {
        self.retransmissions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    fn seg(end: u64, sent_ms: u64, retransmitted: bool) -> DeliveredSeg {
        DeliveredSeg {
            end,
            sent: t(sent_ms),
            retransmitted,
        }
    }

    fn detected(r: &mut Rack, now_ms: u64) -> Vec<u64> {
        let mut v = vec![];
        r.detect(t(now_ms), |_, start| v.push(start));
        v
    }

    #[test]
    fn an_original_is_lost_once_a_later_send_is_delivered_and_the_window_passed() {
        let mut r = Rack::default();
        r.begin_ack(Some(Duration::from_millis(100)));
        // three segments sent together at 1000 ms; the third arrives at 1100
        r.on_delivered(t(1100), seg(3000, 1000, false));
        // sent at the same instant: the lower ones count as sent before it
        assert!(r.original_lost(t(1100), t(1000), 1000, true));
        assert!(!r.original_lost(t(1100), t(1000), 3000, true), "itself");
        assert!(!r.original_lost(t(1100), t(1010), 4000, true), "sent after");
        // outside recovery, with fewer than DupThresh SACKed: RACK.rtt plus
        // a quarter of the minimum RTT
        assert!(!r.original_lost(t(1110), t(1000), 1000, false));
        assert!(r.original_lost(t(1125), t(1000), 1000, false));
        // once reordering was seen, the window applies in recovery too
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_delivered(t(1130), seg(2000, 1000, false));
        assert!(!r.original_lost(t(1110), t(1000), 1000, true));
        assert!(r.original_lost(t(1125), t(1000), 1000, true));
    }

    #[test]
    fn the_sack_rtt_is_that_of_the_earliest_sent_clean_segment_sacked() {
        let mut r = Rack::default();
        r.begin_ack(None);
        r.on_sacked(seg(3000, 20, true));
        assert_eq!(
            r.sack_rtt(t(120)),
            None,
            "Karn: a retransmission gives none"
        );
        r.on_sacked(seg(5000, 40, false));
        r.on_sacked(seg(4000, 30, false));
        assert_eq!(r.sack_rtt(t(120)), Some(Duration::from_millis(90)));
        r.begin_ack(None);
        assert_eq!(r.sack_rtt(t(130)), None, "each ACK starts without one");
    }

    #[test]
    fn a_retransmission_is_lost_once_a_later_send_is_delivered() {
        let mut r = Rack::default();
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_retransmit(t(1000), 0);
        r.on_retransmit(t(1010), 5000);
        // delivered: a segment sent at 1005, between the two
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_delivered(t(1105), seg(9000, 1005, false));
        assert_eq!(detected(&mut r, 1105), vec![0]);
        // the second was sent after it: not yet
        assert_eq!(detected(&mut r, 1200), Vec::<u64>::new());
        assert_eq!(r.listed(), 1);
    }

    #[test]
    fn an_ack_sooner_than_the_min_rtt_answers_the_original() {
        let mut r = Rack::default();
        r.on_retransmit(t(1000), 0);
        r.begin_ack(Some(Duration::from_millis(100)));
        // a retransmitted segment re-sent at 1050, acknowledged at 1080: the
        // ACK is for its first transmission, so its send time is unknown
        r.on_delivered(t(1080), seg(9000, 1050, true));
        assert_eq!(detected(&mut r, 1080), Vec::<u64>::new());
        // acknowledged a full RTT after the re-send: it counts
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_delivered(t(1150), seg(10000, 1050, true));
        assert_eq!(detected(&mut r, 1150), vec![0]);
    }

    #[test]
    fn after_reordering_the_window_is_a_quarter_of_the_min_rtt() {
        let mut r = Rack::default();
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_delivered(t(100), seg(2000, 0, false));
        r.begin_ack(Some(Duration::from_millis(100)));
        // never retransmitted, below what was delivered before: reordering
        r.on_delivered(t(101), seg(1000, 0, false));
        r.on_retransmit(t(200), 0);
        r.begin_ack(Some(Duration::from_millis(100)));
        // RACK.rtt = 100 ms
        r.on_delivered(t(310), seg(3000, 210, false));
        // lost at 200 + 100 + 25 ms, not before
        assert_eq!(detected(&mut r, 310), Vec::<u64>::new());
        assert_eq!(detected(&mut r, 324), Vec::<u64>::new());
        assert_eq!(detected(&mut r, 325), vec![0]);
    }

    #[test]
    fn segments_of_one_ack_in_any_order_are_no_reordering() {
        let mut r = Rack::default();
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_delivered(t(100), seg(3000, 0, false));
        r.on_delivered(t(100), seg(2000, 0, false));
        r.on_retransmit(t(200), 0);
        r.begin_ack(Some(Duration::from_millis(100)));
        r.on_delivered(t(310), seg(4000, 210, false));
        assert_eq!(detected(&mut r, 310), vec![0]);
    }
}
