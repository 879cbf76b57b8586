//! Outstanding-data bookkeeping: the retransmission queue and the SACK
//! scoreboard.
//!
//! Segments are kept in a `VecDeque` in sequence order and never resegmented, so
//! a sequence offset maps to a segment by binary search. Per-state byte counters
//! (outstanding, SACKed, lost, retransmitted-in-flight) make the pipe estimate
//! O(1): `in_flight = out - sacked - lost - dup_emul + retrans` (Linux's
//! `packets_out - sacked_out - lost_out + retrans_out`, in bytes).
//!
//! Nothing scans the whole queue per ACK:
//! * a cumulative ACK pops exactly the segments it covers;
//! * a SACK block touches only the segments it newly covers (the SACKed ranges
//!   live in a [`RangeSet`] that reports the new pieces);
//! * loss marking (RFC 6675 `IsLost`) advances a boundary that only moves
//!   forward: lost segments are a prefix of the un-SACKed ones (until an
//!   undo unmarks them, [`Scoreboard::unmark_lost`]);
//! * the next segment to retransmit (RFC 6675 `NextSeg` rule 1) is found from a
//!   cursor that only moves forward between timeouts.
//!
//! Only a retransmission timeout, which marks everything lost, walks the queue.
//! With [`Rack`] on, each ACK also looks at the oldest retransmissions in
//! flight, in send order, until one is not lost, and at the original
//! transmissions above the lost boundary until one is not lost.

use super::rack::{DeliveredSeg, Rack};
use crate::ranges::RangeSet;
use crate::rate::{RateSampler, TxStamp};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

pub(crate) const SACKED: u8 = 1;
pub(crate) const LOST: u8 = 2;
/// A retransmission of this segment is in flight.
pub(crate) const RETRANS: u8 = 4;
/// The segment has been retransmitted at least once (Karn's rule).
pub(crate) const EVER_RETRANS: u8 = 8;
/// The segment carries the FIN (its last sequence unit).
pub(crate) const FIN: u8 = 16;

/// One transmitted segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SentSeg {
    /// Stream offset of the first sequence unit.
    pub start: u64,
    /// Sequence length: payload plus one if it carries the FIN.
    pub len: u32,
    pub flags: u8,
    pub tx_count: u16,
    pub stamp: TxStamp,
}

/// What RACK reads of a delivered segment.
fn delivered(s: &SentSeg) -> DeliveredSeg {
    DeliveredSeg {
        end: s.end(),
        sent: s.stamp.sent_time,
        retransmitted: s.has(EVER_RETRANS),
    }
}

impl SentSeg {
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
    /// Payload bytes (the FIN is not a byte).
    pub fn payload_len(&self) -> u32 {
        self.len - self.has(FIN) as u32
    }
}

/// What a cumulative ACK removed from the queue.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Acked {
    /// Sequence units removed.
    pub bytes: u64,
    /// Of those, units not SACKed before (newly delivered).
    pub delivered: u64,
    /// Send time of the oldest removed segment that was never retransmitted.
    pub oldest_clean_send: Option<Instant>,
    /// True if any removed segment had been retransmitted (Karn: no RTT sample).
    pub retransmitted: bool,
    /// True if the FIN was acknowledged.
    pub fin: bool,
    /// End of the first removed segment that was delivered now for the
    /// first time and never retransmitted (an original transmission arrived:
    /// F-RTO's test, Linux's `FLAG_ORIG_SACK_ACKED`).
    pub clean_end: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    segs: VecDeque<SentSeg>,
    sacked: RangeSet,
    /// Ranges ever retransmitted, for DSACK spurious-retransmission detection.
    rtx_history: RangeSet,
    out: u64,
    sacked_bytes: u64,
    lost_bytes: u64,
    retrans_bytes: u64,
    /// Duplicate ACKs counted as departed segments when SACK is off (Reno
    /// "SACK emulation"); implements RFC 5681's window inflation.
    pub dup_emul: u64,
    /// Un-SACKed segments starting below this offset are marked lost.
    lost_boundary: u64,
    /// Segments below this offset are acked, SACKed or retransmitted.
    rtx_cursor: u64,
    scratch: Vec<(u64, u64)>,
    /// RFC 8985 loss detection (retransmissions and original
    /// transmissions), when enabled.
    rack: Option<Box<Rack>>,
    /// Smallest end of a segment newly SACKed by the current ACK that was
    /// never retransmitted (reset by [`Scoreboard::begin_ack`]).
    pub clean_sacked_end: Option<u64>,
}

/// How far below `snd_una` retransmission history is kept for DSACK matching.
const RTX_HISTORY_SPAN: u64 = 1 << 30;

impl Scoreboard {
    /// A scoreboard that also detects losses with RACK if `rack`.
    pub fn new(rack: bool) -> Self {
        Scoreboard {
            rack: rack.then(Box::default),
            ..Self::default()
        }
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    /// When the oldest outstanding segment was last (re)transmitted.
    pub fn head_sent_time(&self) -> Option<Instant> {
        self.segs.front().map(|s| s.stamp.sent_time)
    }
    pub fn seg(&self, idx: usize) -> &SentSeg {
        &self.segs[idx]
    }
    /// Index of the highest segment sent, if any.
    pub fn last_index(&self) -> Option<usize> {
        self.segs.len().checked_sub(1)
    }
    /// Sequence units sent and not cumulatively acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.out
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    /// The pipe: bytes believed to be in the network.
    pub fn in_flight(&self) -> u64 {
        (self.out + self.retrans_bytes)
            .saturating_sub(self.sacked_bytes + self.lost_bytes + self.dup_emul)
    }

    /// Caps the dup-ACK emulation so it never counts more than the un-SACKed,
    /// un-lost data.
    pub fn cap_dup_emul(&mut self) {
        let max = self.out.saturating_sub(self.sacked_bytes + self.lost_bytes);
        self.dup_emul = self.dup_emul.min(max);
    }

    /// Index of the first segment whose end is above `offset`.
    fn index_of(&self, offset: u64) -> usize {
        match self.guess(offset) {
            Some(i) if self.segs[i].start <= offset && offset < self.segs[i].end() => i,
            _ => self.segs.partition_point(|s| s.end() <= offset),
        }
    }

    /// Index of the first segment starting at or above `offset`.
    fn index_from(&self, offset: u64) -> usize {
        match self.guess(offset) {
            Some(i)
                if self.segs[i].start >= offset && (i == 0 || self.segs[i - 1].start < offset) =>
            {
                i
            }
            _ => self.segs.partition_point(|s| s.start < offset),
        }
    }

    /// Where the segment holding `offset` would be if every segment had the
    /// first one's size (they are contiguous and mostly of one size): one
    /// probe instead of a binary search whose every step misses the cache
    /// when many flows take turns. `None` when that index does not exist.
    fn guess(&self, offset: u64) -> Option<usize> {
        let f = self.segs.front()?;
        let i = offset.saturating_sub(f.start) / (f.len as u64).max(1);
        usize::try_from(i).ok().filter(|&i| i < self.segs.len())
    }

    pub fn push(&mut self, seg: SentSeg) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() == seg.start));
        self.out += seg.len as u64;
        self.segs.push_back(seg);
    }

    /// Removes the segments entirely below `ack`.
    pub fn ack(&mut self, ack: u64, now: Instant, rate: &mut RateSampler) -> Acked {
        let mut r = Acked::default();
        while let Some(s) = self.segs.front() {
            if s.end() > ack {
                break;
            }
            let len = s.len as u64;
            r.bytes += len;
            self.out -= len;
            if s.has(SACKED) {
                self.sacked_bytes -= len;
            } else {
                if !s.has(EVER_RETRANS) && r.clean_end.is_none() {
                    r.clean_end = Some(s.end());
                }
                r.delivered += len;
                rate.on_delivered(now, &s.stamp, len, s.has(EVER_RETRANS));
                if let Some(rack) = &mut self.rack {
                    rack.on_delivered(now, delivered(s));
                }
            }
            if s.has(LOST) {
                self.lost_bytes -= len;
            }
            if s.has(RETRANS) {
                self.retrans_bytes -= len;
            }
            if s.has(EVER_RETRANS) {
                r.retransmitted = true;
            } else if r.oldest_clean_send.is_none() {
                r.oldest_clean_send = Some(s.stamp.sent_time);
            }
            r.fin |= s.has(FIN);
            self.segs.pop_front();
        }
        self.sacked.remove_below(ack);
        if ack > RTX_HISTORY_SPAN {
            self.rtx_history.remove_below(ack - RTX_HISTORY_SPAN);
        }
        self.cap_dup_emul();
        r
    }

    /// Applies one SACK block `[start, end)` (already clipped to the outstanding
    /// range). Returns the bytes newly SACKed.
    pub fn sack(&mut self, start: u64, end: u64, now: Instant, rate: &mut RateSampler) -> u64 {
        let mut pieces = core::mem::take(&mut self.scratch);
        pieces.clear();
        self.sacked
            .insert_with(start, end, |s, e| pieces.push((s, e)));
        let mut newly = 0;
        for &(ps, pe) in &pieces {
            let mut idx = self.index_of(ps);
            while idx < self.segs.len() && self.segs[idx].start < pe {
                let s = self.segs[idx];
                if !s.has(SACKED) && self.sacked.contains_range(s.start, s.end()) {
                    let len = s.len as u64;
                    let seg = &mut self.segs[idx];
                    seg.flags |= SACKED;
                    if s.has(LOST) {
                        seg.flags &= !LOST;
                        self.lost_bytes -= len;
                    }
                    if s.has(RETRANS) {
                        seg.flags &= !RETRANS;
                        self.retrans_bytes -= len;
                    }
                    self.sacked_bytes += len;
                    newly += len;
                    if !s.has(EVER_RETRANS) {
                        let end = s.end();
                        self.clean_sacked_end =
                            Some(self.clean_sacked_end.map_or(end, |e| e.min(end)));
                    }
                    rate.on_delivered(now, &s.stamp, len, s.has(EVER_RETRANS));
                    if let Some(rack) = &mut self.rack {
                        let d = delivered(&s);
                        rack.on_delivered(now, d);
                        rack.on_sacked(d);
                    }
                }
                idx += 1;
            }
        }
        self.scratch = pieces;
        newly
    }

    /// True if `[start, end)` was ever retransmitted (for DSACK).
    pub fn was_retransmitted(&self, start: u64, end: u64) -> bool {
        self.rtx_history.contains_range(start, end)
    }

    fn mark_lost(&mut self, idx: usize) -> u64 {
        let s = &mut self.segs[idx];
        if s.flags & (SACKED | LOST) != 0 {
            return 0;
        }
        s.flags |= LOST;
        let len = s.len as u64;
        self.lost_bytes += len;
        self.rtx_cursor = self.rtx_cursor.min(s.start);
        len
    }

    /// RFC 6675 `IsLost`: marks every un-SACKed segment above which either more
    /// than `threshold_bytes` bytes or at least `dupthresh` segments have been
    /// SACKed. Returns the bytes newly marked.
    pub fn mark_lost_by_sack(&mut self, threshold_bytes: u64, dupthresh: u32) -> u64 {
        let boundary = self
            .byte_rule_boundary(threshold_bytes)
            .max(self.segment_rule_boundary(dupthresh));
        let Some(front) = self.segs.front() else {
            return 0;
        };
        let from = self.lost_boundary.max(front.start);
        self.mark_lost_between(from, boundary)
    }

    /// Marks lost every un-SACKed segment starting in `[from, boundary)`,
    /// where `from` is the lost boundary, and moves the boundary to
    /// `boundary`. Returns the bytes newly marked.
    fn mark_lost_between(&mut self, from: u64, boundary: u64) -> u64 {
        if boundary <= from {
            return 0;
        }
        let mut newly = 0;
        let mut idx = self.index_of(from);
        while idx < self.segs.len() && self.segs[idx].start < boundary {
            newly += self.mark_lost(idx);
            idx += 1;
        }
        self.lost_boundary = boundary;
        newly
    }

    /// The largest x such that more than `threshold` bytes at or above x are
    /// SACKed (0 if none): walks down from the highest SACKed range, so only the
    /// top few ranges are examined.
    fn byte_rule_boundary(&self, threshold: u64) -> u64 {
        let mut acc = 0u64;
        for (s, e) in self.sacked.iter().rev() {
            if acc + (e - s) > threshold {
                return e + acc - threshold - 1;
            }
            acc += e - s;
        }
        0
    }

    /// The start of the `dupthresh`-th SACKed segment counted from the top (0 if
    /// fewer are SACKed): every un-SACKed segment below it has at least
    /// `dupthresh` SACKed segments above it.
    fn segment_rule_boundary(&self, dupthresh: u32) -> u64 {
        let mut count = 0;
        for (s, e) in self.sacked.iter().rev() {
            let (lo, hi) = (self.index_from(s), self.index_from(e));
            for seg in self.segs.range(lo..hi).rev() {
                if seg.has(SACKED) {
                    count += 1;
                    if count >= dupthresh {
                        return seg.start;
                    }
                }
            }
        }
        0
    }

    /// True if the first outstanding segment is marked lost.
    pub fn head_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.has(LOST))
    }

    /// True if the first outstanding segment is marked lost and its
    /// retransmission is in flight.
    pub fn head_retransmitted(&self) -> bool {
        self.segs
            .front()
            .is_some_and(|s| s.has(LOST) && s.has(RETRANS))
    }

    /// Marks the first outstanding segment lost (NewReno, fast retransmit).
    pub fn mark_head_lost(&mut self) -> u64 {
        if self.segs.is_empty() {
            return 0;
        }
        let n = self.mark_lost(0);
        self.lost_boundary = self.lost_boundary.max(self.segs[0].end());
        n
    }

    /// After a retransmission timeout (or Tahoe's go-back-N): every
    /// retransmission in flight is presumed lost and every un-SACKed segment is
    /// marked lost, so that retransmission restarts from `snd_una`. SACK
    /// information is kept (RFC 6675 section 5.1 lets it guide the repair).
    pub fn mark_all_lost(&mut self) -> u64 {
        let mut newly = 0;
        for idx in 0..self.segs.len() {
            let s = &mut self.segs[idx];
            if s.has(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_bytes -= s.len as u64;
            }
            newly += self.mark_lost(idx);
        }
        self.dup_emul = 0;
        if let Some(b) = self.segs.back() {
            self.lost_boundary = b.end();
        }
        if let Some(f) = self.segs.front() {
            self.rtx_cursor = f.start;
        }
        newly
    }

    /// RFC 6675 `NextSeg` rule 1: the first segment marked lost and not yet
    /// retransmitted.
    pub fn next_retransmit(&mut self) -> Option<usize> {
        if self.lost_bytes == 0 {
            // Nothing is marked lost (the common case): no search. The cursor
            // only tells where a search may start; `mark_lost` lowers it to
            // any segment it marks, so leaving it is safe.
            return None;
        }
        let front = self.segs.front()?.start;
        let mut idx = self.index_of(self.rtx_cursor.max(front));
        while idx < self.segs.len() {
            let s = &self.segs[idx];
            if s.has(SACKED) || (s.has(LOST) && s.has(RETRANS)) {
                idx += 1;
                continue;
            }
            self.rtx_cursor = s.start;
            return s.has(LOST).then_some(idx);
        }
        if let Some(b) = self.segs.back() {
            self.rtx_cursor = b.end();
        }
        None
    }

    /// Makes the first outstanding segment the next to retransmit: a
    /// retransmission of it in flight is presumed lost, and it is marked
    /// lost. False if nothing is outstanding, or the segment is SACKed.
    pub fn retransmit_head(&mut self) -> bool {
        let Some(s) = self.segs.front_mut() else {
            return false;
        };
        if s.has(SACKED) {
            return false;
        }
        if s.has(RETRANS) {
            s.flags &= !RETRANS;
            self.retrans_bytes -= s.len as u64;
        }
        self.mark_lost(0);
        self.rtx_cursor = self.rtx_cursor.min(self.segs[0].start);
        self.lost_boundary = self.lost_boundary.max(self.segs[0].end());
        true
    }

    /// Records the retransmission of segment `idx`.
    pub fn on_retransmit(&mut self, idx: usize, stamp: TxStamp) {
        let s = &mut self.segs[idx];
        if !s.has(RETRANS) {
            s.flags |= RETRANS;
            self.retrans_bytes += s.len as u64;
        }
        s.flags |= EVER_RETRANS;
        s.tx_count = s.tx_count.saturating_add(1);
        s.stamp = stamp;
        let (start, end) = (s.start, s.end());
        self.rtx_history.insert(start, end);
        if let Some(rack) = &mut self.rack {
            rack.on_retransmit(stamp.sent_time, start);
        }
    }

    /// Starts the processing of an ACK, for RACK (a no-op without it).
    /// Forgets the loss marks of segments with no retransmission in flight
    /// (an undo of a timeout found spurious, Linux's
    /// `tcp_undo_cwnd_reduction` with `unmark_loss`): they are in flight
    /// again, to be marked anew by the next ACKs. A segment whose
    /// retransmission is in flight keeps its mark, so the pipe counts it
    /// once.
    pub fn unmark_lost(&mut self) {
        if self.lost_bytes == 0 {
            return;
        }
        for s in self.segs.iter_mut() {
            if s.has(LOST) && !s.has(RETRANS) {
                s.flags &= !LOST;
                self.lost_bytes -= s.len as u64;
            }
        }
        // IsLost walks again from the front (marking a marked segment
        // changes nothing)
        self.lost_boundary = self.segs.front().map_or(0, |f| f.start);
    }

    /// Bytes of retransmissions believed in flight.
    pub fn retrans_in_flight(&self) -> u64 {
        self.retrans_bytes
    }

    #[inline]
    pub fn begin_ack(&mut self, min_rtt: Option<Duration>) {
        self.clean_sacked_end = None;
        if let Some(rack) = &mut self.rack {
            rack.begin_ack(min_rtt);
        }
    }

    /// With RACK: the RTT of the earliest sent segment the current ACK newly
    /// SACKed that was never retransmitted (Linux's fallback RTT sample).
    pub fn sack_rtt(&self, now: Instant) -> Option<Duration> {
        self.rack.as_ref().and_then(|r| r.sack_rtt(now))
    }

    /// RACK (when enabled): the retransmissions now deemed lost leave the
    /// pipe and count as lost and not yet retransmitted, so `NextSeg` sends
    /// them once more. Returns their bytes.
    pub fn detect_lost_retransmissions(&mut self, now: Instant) -> u64 {
        let Some(mut rack) = self.rack.take() else {
            return 0;
        };
        let mut newly = 0;
        rack.detect(now, |sent, start| {
            if self.segs.front().is_none_or(|f| start < f.start) {
                return; // cumulatively acknowledged since
            }
            let idx = self.index_of(start);
            let Some(s) = self.segs.get_mut(idx) else {
                return;
            };
            // still this transmission, in flight (not SACKed, not sent again)
            if s.start == start && s.has(RETRANS) && s.stamp.sent_time == sent {
                s.flags &= !RETRANS;
                let len = s.len as u64;
                self.retrans_bytes -= len;
                if !s.has(LOST) {
                    // a tail loss probe resent it without marking it lost
                    s.flags |= LOST;
                    self.lost_bytes += len;
                }
                self.rtx_cursor = self.rtx_cursor.min(start);
                newly += len;
            }
        });
        self.rack = Some(rack);
        newly
    }

    /// RACK (when enabled) for original transmissions: marks lost each
    /// un-SACKed segment sent only once that [`Rack::original_lost`] covers
    /// (`quick` as there). Segments sent once go out in sequence order, so
    /// those covered are the first ones not yet marked, and the lost boundary
    /// moves forward over them (and over what is SACKed or was retransmitted
    /// between them: a retransmitted segment is marked lost already). Returns
    /// the bytes newly marked.
    pub fn detect_lost_originals(&mut self, now: Instant, quick: bool) -> u64 {
        let (Some(rack), Some(front)) = (self.rack.as_deref(), self.segs.front()) else {
            return 0;
        };
        let from = self.lost_boundary.max(front.start);
        let mut boundary = from;
        for s in self.segs.range(self.index_of(from)..) {
            let candidate = s.flags & (SACKED | LOST | EVER_RETRANS) == 0;
            if candidate && !rack.original_lost(now, s.stamp.sent_time, s.end(), quick) {
                break;
            }
            boundary = s.end();
        }
        self.mark_lost_between(from, boundary)
    }

    /// Checks the counters against a full recount (tests and debug builds).
    #[cfg(test)]
    pub fn check_invariants(&self) {
        let (mut out, mut sacked, mut lost, mut retrans) = (0, 0, 0, 0);
        for s in &self.segs {
            let l = s.len as u64;
            out += l;
            if s.has(SACKED) {
                sacked += l;
                assert!(!s.has(LOST) && !s.has(RETRANS));
            }
            if s.has(LOST) {
                lost += l;
            }
            if s.has(RETRANS) {
                retrans += l;
            }
        }
        assert_eq!(
            (out, sacked, lost, retrans),
            (
                self.out,
                self.sacked_bytes,
                self.lost_bytes,
                self.retrans_bytes
            )
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64, mss: u32) -> (Scoreboard, RateSampler) {
        let mut sb = Scoreboard::default();
        let mut rate = RateSampler::new();
        for i in 0..n {
            let stamp = rate.on_send(Instant::ZERO, sb.in_flight(), sb.in_flight());
            sb.push(SentSeg {
                start: i * mss as u64,
                len: mss,
                flags: 0,
                tx_count: 1,
                stamp,
            });
        }
        (sb, rate)
    }

    /// The one-probe guess and the binary search agree, whether the sizes
    /// are uniform (the guess hits) or not (it misses and falls back).
    #[test]
    fn segment_lookup_matches_a_linear_scan() {
        let mut rate = RateSampler::new();
        for sizes in [vec![100u32; 8], vec![100, 40, 100, 100, 7, 100, 250, 100]] {
            let mut sb = Scoreboard::default();
            let mut start = 1000;
            for &len in &sizes {
                let stamp = rate.on_send(Instant::ZERO, sb.in_flight(), sb.in_flight());
                sb.push(SentSeg {
                    start,
                    len,
                    flags: 0,
                    tx_count: 1,
                    stamp,
                });
                start += len as u64;
            }
            for offset in 0..start + 300 {
                let linear = |f: &dyn Fn(&SentSeg) -> bool| {
                    sb.segs.iter().position(|s| !f(s)).unwrap_or(sb.segs.len())
                };
                assert_eq!(
                    sb.index_of(offset),
                    linear(&|s| s.end() <= offset),
                    "{offset}"
                );
                assert_eq!(
                    sb.index_from(offset),
                    linear(&|s| s.start < offset),
                    "{offset}"
                );
            }
        }
    }

    #[test]
    fn sack_marks_holes_lost_and_next_retransmit_finds_them() {
        let (mut sb, mut rate) = board(10, 100);
        // segments 0 and 2 lost; 1, 3..=9 SACKed
        assert_eq!(sb.sack(100, 200, Instant::ZERO, &mut rate), 100);
        assert_eq!(sb.sack(300, 1000, Instant::ZERO, &mut rate), 700);
        assert_eq!(
            sb.sack(300, 1000, Instant::ZERO, &mut rate),
            0,
            "repeat is free"
        );
        assert_eq!(sb.mark_lost_by_sack(200, 3), 200);
        sb.check_invariants();
        assert_eq!(sb.in_flight(), 0);
        let i = sb.next_retransmit().unwrap();
        assert_eq!(sb.seg(i).start, 0);
        sb.on_retransmit(i, TxStamp::default());
        let j = sb.next_retransmit().unwrap();
        assert_eq!(sb.seg(j).start, 200);
        sb.on_retransmit(j, TxStamp::default());
        assert_eq!(sb.next_retransmit(), None);
        assert_eq!(sb.in_flight(), 200);
        sb.check_invariants();
        let a = sb.ack(1000, Instant::ZERO, &mut rate);
        assert_eq!(a.bytes, 1000);
        assert_eq!(a.delivered, 200);
        assert!(a.retransmitted);
        assert!(sb.is_empty());
        sb.check_invariants();
    }

    #[test]
    fn is_lost_needs_more_than_threshold_sacked_above() {
        let (mut sb, mut rate) = board(10, 100);
        sb.sack(100, 300, Instant::ZERO, &mut rate); // 200 bytes above seg 0
        assert_eq!(sb.mark_lost_by_sack(200, 3), 0);
        sb.sack(300, 301, Instant::ZERO, &mut rate); // partial: no segment SACKed yet
        assert_eq!(sb.sacked_bytes(), 200);
        sb.sack(301, 400, Instant::ZERO, &mut rate);
        assert_eq!(sb.sacked_bytes(), 300);
        assert_eq!(sb.mark_lost_by_sack(200, 3), 100);
        assert!(sb.head_lost());
        sb.check_invariants();
    }

    #[test]
    fn timeout_marks_everything_unsacked_lost() {
        let (mut sb, mut rate) = board(5, 100);
        sb.sack(200, 300, Instant::ZERO, &mut rate);
        sb.mark_head_lost();
        let i = sb.next_retransmit().unwrap();
        sb.on_retransmit(i, TxStamp::default());
        assert_eq!(sb.mark_all_lost(), 300);
        assert_eq!(sb.retrans_in_flight(), 0);
        assert_eq!(sb.in_flight(), 0);
        assert_eq!(sb.next_retransmit(), Some(0));
        sb.check_invariants();
    }

    #[test]
    fn many_segments_stay_fast() {
        // 50 000 segments in flight, every other one lost, SACKed one block at a
        // time as a receiver would: must complete quickly (linear overall).
        let n = 50_000u64;
        let (mut sb, mut rate) = board(n, 1000);
        for i in (1..n).step_by(2) {
            // newest block first, then two older ones, as RFC 2018 receivers do
            sb.sack(i * 1000, (i + 1) * 1000, Instant::ZERO, &mut rate);
            for back in [2, 4] {
                if i > back {
                    sb.sack(
                        (i - back) * 1000,
                        (i - back + 1) * 1000,
                        Instant::ZERO,
                        &mut rate,
                    );
                }
            }
            sb.mark_lost_by_sack(2000, 3);
        }
        assert_eq!(sb.sacked_bytes(), n / 2 * 1000);
        let mut count = 0;
        while let Some(i) = sb.next_retransmit() {
            sb.on_retransmit(i, TxStamp::default());
            count += 1;
        }
        // the last two holes have only one and two SACKed segments above them
        assert_eq!(count, n / 2 - 2);
        sb.check_invariants();
    }
}
