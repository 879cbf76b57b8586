//! What the link layer told WSC-TCP about each outstanding segment (Srinivasan 2016,
//! sections 3.1 and 3.2): the link-layer retransmissions a delivered segment
//! needed (for the corrected RTT), and which segments are still in
//! link-layer retry because a later one overtook them (for the dynamic
//! duplicate-ACK threshold).
//!
//! Section 3.2's pseudo-code keeps `L_ack_info[]` (1 while a segment's
//! link-layer ACK is pending), `L_ack_max` (the highest segment the link
//! delivered), `L_ack_cum` and `dup_ack`, and is garbled (an `else` without
//! its `if`, `L_ack_cum` never advanced). Our reading, in segments:
//!
//! * a delivery report above `L_ack_max` moves it up; if the segments below
//!   it are not all delivered, `dup_ack` grows by one (each such segment
//!   reaches the receiver past a hole and draws one duplicate ACK);
//! * a delivery report below `L_ack_max` is a late segment, one that needed
//!   link-layer retransmissions while later ones passed it; when it is the
//!   first undelivered one (`L_ack_cum + 1`), the threshold is recomputed
//!   from the next undelivered segment `indx`:
//!   `DEFAULT_DUP_ACK + (L_ack_max - indx)`, so `DEFAULT_DUP_ACK` once none
//!   is left.
//!
//! Both branches agree with one closed form, which is what
//! [`LinkLedger::extra`] computes: the configured threshold plus the number
//! of segments the link delivered past the first segment still in
//! link-layer retry. (We count the delivered ones: the recomputing branch's
//! `L_ack_max - indx` also counts segments between that are still pending,
//! which draw no duplicate ACK until they arrive, and then are counted.)
//!
//! Two choices the thesis does not make, written down in
//! docs/algorithms/wsc-tcp.md: the raised threshold holds until the
//! cumulative ACK passes the late segment ([`DupThreshRestore::Ack`]), not
//! only until the link reports it, because the duplicate ACKs it caused are
//! still on their way; and a segment the link gave up
//! ([`crate::cc::Notification::LinkDrop`]) or left unreported for
//! `pending_limit` LL_RTOs after being overtaken is a loss, not a segment in
//! retry, so it raises nothing.

use super::params::DupThreshRestore;
use crate::time::{Duration, Instant};
use std::collections::BTreeMap;

/// What the link said about one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LinkState {
    /// No report yet; `overtaken` is when the link first delivered a later
    /// segment (from then on the segment is in link-layer retry).
    Pending { overtaken: Option<Instant> },
    /// Delivered after `retries` link-layer retransmissions of `link_rto`
    /// each, past `overtaken_by` later segments the link had already
    /// delivered.
    Delivered {
        retries: u32,
        link_rto: Duration,
        overtaken_by: u32,
    },
    /// The link gave it up.
    Dropped,
}

/// One outstanding segment.
#[derive(Clone, Copy, Debug)]
struct Seg {
    /// Its end (stream offset, exclusive).
    end: u64,
    state: LinkState,
}

/// The outstanding segments by stream offset, with their link-layer state.
#[derive(Clone, Debug, Default)]
pub struct LinkLedger {
    segs: BTreeMap<u64, Seg>,
    /// The highest offset the link delivered (`L_ack_max`).
    max_delivered: Option<u64>,
    /// The link's retransmission timeout, LL_RTO (the latest announced).
    link_rto: Option<Duration>,
    /// Link-layer retransmissions reported, in all.
    retries: u64,
}

impl LinkLedger {
    /// A segment `[offset, offset + len)` left the sender (a retransmission
    /// starts its link-layer history afresh).
    pub fn sent(&mut self, offset: u64, len: u32) {
        let seg = Seg {
            end: offset + len as u64,
            state: LinkState::Pending { overtaken: None },
        };
        self.segs.insert(offset, seg);
    }

    /// The link delivered the segment at `offset` after `retries`
    /// link-layer retransmissions; `link_rto` is LL_RTO.
    pub fn delivered(&mut self, now: Instant, offset: u64, retries: u32, link_rto: Duration) {
        self.link_rto = Some(link_rto);
        self.retries += retries as u64;
        let Some(end) = self.segs.get(&offset).map(|s| s.end) else {
            return; // already acknowledged, or never sent as such
        };
        let late = self.max_delivered.is_some_and(|m| offset < m);
        let overtaken_by = if late {
            self.delivered_above(offset)
        } else {
            // everything still pending below it is now overtaken (nothing
            // when it is the highest again: a retransmission of it)
            let from = self.max_delivered.map_or(0, |m| m + 1).min(offset);
            for (_, s) in self.segs.range_mut(from..offset) {
                if let LinkState::Pending {
                    overtaken: o @ None,
                } = &mut s.state
                {
                    *o = Some(now);
                }
            }
            self.max_delivered = Some(offset);
            0
        };
        let state = LinkState::Delivered {
            retries,
            link_rto,
            overtaken_by,
        };
        self.segs.insert(offset, Seg { end, state });
    }

    /// The link gave the segment at `offset` up.
    pub fn dropped(&mut self, offset: u64, link_rto: Duration) {
        self.link_rto = Some(link_rto);
        if let Some(s) = self.segs.get_mut(&offset) {
            s.state = LinkState::Dropped;
        }
    }

    /// Segments the link delivered above `offset`.
    fn delivered_above(&self, offset: u64) -> u32 {
        self.segs
            .range(offset + 1..)
            .filter(|(_, s)| matches!(s.state, LinkState::Delivered { .. }))
            .count() as u32
    }

    /// The largest link-layer delay n × LL_RTO of a delivered segment in
    /// `[from, to)` (each with the LL_RTO its own report announced), and
    /// its n.
    pub fn max_link_delay(&self, from: u64, to: u64) -> (Duration, u32) {
        if from >= to {
            return (Duration::ZERO, 0);
        }
        self.segs
            .range(from..to)
            .filter_map(|(_, s)| match s.state {
                LinkState::Delivered {
                    retries, link_rto, ..
                } => Some((link_rto.saturating_mul(retries as u64), retries)),
                _ => None,
            })
            .max()
            .unwrap_or((Duration::ZERO, 0))
    }

    /// Forgets the segments below the cumulative ACK point `snd_una`.
    pub fn acked(&mut self, snd_una: u64) {
        // a segment that ends beyond snd_una stays (a partial ACK keeps it)
        let keep_from = match self.segs.range(..snd_una).next_back() {
            Some((&o, s)) if s.end > snd_una => o,
            _ => snd_una,
        };
        if self
            .segs
            .first_key_value()
            .is_some_and(|(&o, _)| o < keep_from)
        {
            self.segs = self.segs.split_off(&keep_from);
        }
    }

    /// How far above the configured threshold the duplicate-ACK threshold
    /// must be now: the segments the link delivered past the first segment
    /// still in link-layer retry (with [`DupThreshRestore::Ack`], or past
    /// the first one delivered late and not yet cumulatively acknowledged).
    pub fn extra(&self, now: Instant, restore: DupThreshRestore, pending_limit: u32) -> u32 {
        let limit = self
            .link_rto
            .map(|r| r.saturating_mul(pending_limit as u64));
        for (&offset, s) in &self.segs {
            match s.state {
                LinkState::Delivered {
                    overtaken_by: 0, ..
                } => continue, // in order: the receiver has it
                LinkState::Delivered { overtaken_by, .. } => match restore {
                    DupThreshRestore::Ack => return overtaken_by,
                    DupThreshRestore::Link => continue,
                },
                LinkState::Pending {
                    overtaken: Some(at),
                } => {
                    let expired = limit.is_some_and(|l| now.saturating_since(at) > l);
                    return if expired {
                        0
                    } else {
                        self.delivered_above(offset)
                    };
                }
                // not yet at the link's head, or lost there: a hole the
                // duplicate ACKs rightly report
                LinkState::Pending { overtaken: None } | LinkState::Dropped => return 0,
            }
        }
        0
    }

    /// LL_RTO, once a report announced it.
    pub fn link_rto(&self) -> Option<Duration> {
        self.link_rto
    }

    /// Link-layer retransmissions reported so far.
    pub fn total_retries(&self) -> u64 {
        self.retries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTO: Duration = Duration::from_millis(500);

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn ledger(n: u64) -> LinkLedger {
        let mut l = LinkLedger::default();
        for i in 0..n {
            l.sent(i * 100, 100);
        }
        l
    }

    /// Segment 1 in retry while 2, 3, 4 are delivered: three more; in the
    /// thesis' terms `L_ack_max - indx` = 4 - 1 with all between delivered.
    #[test]
    fn the_threshold_counts_deliveries_past_a_segment_in_retry() {
        let mut l = ledger(6);
        l.delivered(t(0), 0, 0, RTO);
        assert_eq!(l.extra(t(0), DupThreshRestore::Ack, 8), 0);
        for (k, off) in [200, 300, 400].into_iter().enumerate() {
            l.delivered(t(1), off, 0, RTO);
            assert_eq!(l.extra(t(1), DupThreshRestore::Ack, 8), k as u32 + 1);
        }
        // the late segment arrives: restored at once in the thesis' reading,
        // held until the cumulative ACK passes it in ours
        l.delivered(t(2), 100, 2, RTO);
        assert_eq!(l.extra(t(2), DupThreshRestore::Link, 8), 0);
        assert_eq!(l.extra(t(2), DupThreshRestore::Ack, 8), 3);
        assert_eq!(l.max_link_delay(100, 500), (RTO * 2, 2));
        l.acked(500);
        assert_eq!(l.extra(t(3), DupThreshRestore::Ack, 8), 0);
    }

    /// A segment the link gave up, or one unreported for too long, is a
    /// loss: the threshold is not raised for it.
    #[test]
    fn a_dropped_or_expired_segment_raises_nothing() {
        let mut l = ledger(4);
        l.delivered(t(0), 0, 0, RTO);
        l.delivered(t(10), 200, 0, RTO);
        l.delivered(t(10), 300, 0, RTO);
        assert_eq!(l.extra(t(10), DupThreshRestore::Ack, 8), 2);
        // 8 x 500 ms after it was overtaken it no longer counts
        assert_eq!(l.extra(t(4010), DupThreshRestore::Ack, 8), 2);
        assert_eq!(l.extra(t(4011), DupThreshRestore::Ack, 8), 0);
        l.dropped(100, RTO);
        assert_eq!(l.extra(t(20), DupThreshRestore::Ack, 8), 0);
    }

    /// The highest segment delivered again (its retransmission) is no late
    /// segment and raises nothing.
    #[test]
    fn the_highest_segment_delivered_twice() {
        let mut l = ledger(3);
        l.delivered(t(0), 0, 0, RTO);
        l.delivered(t(0), 100, 0, RTO);
        l.sent(100, 100);
        l.delivered(t(5), 100, 1, RTO);
        assert_eq!(l.extra(t(5), DupThreshRestore::Ack, 8), 0);
        assert_eq!(l.max_link_delay(0, 300), (RTO, 1));
    }

    /// Segments still queued at the link (nothing later delivered yet) are
    /// not in retry.
    #[test]
    fn queued_segments_are_not_in_retry() {
        let mut l = ledger(4);
        l.delivered(t(0), 0, 0, RTO);
        l.delivered(t(0), 100, 1, RTO);
        assert_eq!(l.extra(t(0), DupThreshRestore::Ack, 8), 0);
        assert_eq!(l.max_link_delay(0, 200), (RTO, 1));
        assert_eq!(l.total_retries(), 1);
    }
}
