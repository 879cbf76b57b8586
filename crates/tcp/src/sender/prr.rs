//! Proportional Rate Reduction (RFC 6937), the default way a window comes
//! down during a SACK fast recovery (`tcp.recovery_reduction = "prr"`).
//!
//! RFC 6937 section 3: at the start of recovery `prr_delivered = prr_out =
//! 0`; on every ACK `prr_delivered` grows by what the ACK delivered (newly
//! acknowledged plus newly SACKed bytes), and the ACK may release `sndcnt`
//! bytes:
//!
//! * while the pipe is above ssthresh, the proportional part:
//!   `sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out`, so the
//!   flight comes down to ssthresh over one round trip, data going out
//!   at ssthresh / RecoverFS of the rate it is delivered;
//! * at or below ssthresh, the reduction bound: `sndcnt = MIN(ssthresh - pipe,
//!   limit)` with PRR-CRB's `limit = prr_delivered - prr_out` (packet
//!   conservation), raised to PRR-SSRB's `MAX(prr_delivered - prr_out,
//!   DeliveredData) + MSS` (slow start back up to ssthresh) only on an ACK
//!   that advances `snd_una` and marks nothing newly lost, as Linux's
//!   `tcp_cwnd_reduction` (net/ipv4/tcp_input.c, 6.18) and RFC 9937 section
//!   5 (its "SafeACK") apply the bound;
//! * the first ACK of a recovery releases at least one segment (the fast
//!   retransmit, Linux's "force a fast retransmit upon entering fast
//!   recovery").
//!
//! Like Linux, amounts are whole segments: the proportional part is rounded
//! up to a multiple of the MSS (RFC 6937's example counts in segments), and
//! an ACK that delivers nothing changes nothing. `RecoverFS` is the window
//! the recovery reduces (Linux's `prior_cwnd`): RFC 6937 writes it as
//! FlightSize and RFC 9937 as the pipe, which agree with cwnd for a
//! window-limited sender at its first loss; FlightSize would count what the
//! receiver SACKed before the loss (after a repair, thousands of segments)
//! and stall the recovery.

/// The state of one recovery.
#[derive(Clone, Copy, Debug)]
pub(super) struct Prr {
    /// RecoverFS: the window being reduced (bytes).
    recover_fs: u64,
    /// prr_delivered: bytes delivered since the recovery started.
    delivered: u64,
    /// prr_out: bytes sent since the recovery started.
    out: u64,
    /// What the latest ACK released (sndcnt), less what has gone out since.
    budget: u64,
}

impl Prr {
    /// A recovery reducing a window of `recover_fs` bytes.
    pub(super) fn new(recover_fs: u64) -> Self {
        Prr {
            recover_fs: recover_fs.max(1),
            delivered: 0,
            out: 0,
            budget: 0,
        }
    }

    /// One ACK: `delivered` bytes newly delivered, `pipe` after it, the
    /// algorithm's `ssthresh`; `safe` if it advanced `snd_una` and marked
    /// nothing newly lost.
    pub(super) fn on_ack(
        &mut self,
        delivered: u64,
        pipe: u64,
        ssthresh: u64,
        mss: u64,
        safe: bool,
    ) {
        if delivered == 0 {
            return;
        }
        self.delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            let target =
                (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128);
            let target = (target as u64).div_ceil(mss) * mss;
            target.saturating_sub(self.out)
        } else {
            let mut limit = self.delivered.saturating_sub(self.out).max(delivered);
            if safe {
                limit += mss;
            }
            (ssthresh - pipe).min(limit)
        };
        self.budget = if self.out == 0 {
            sndcnt.max(mss)
        } else {
            sndcnt
        };
    }

    /// True if a segment of `len` bytes may go out now.
    pub(super) fn allows(&self, len: u64) -> bool {
        len <= self.budget
    }

    /// A segment of `len` bytes went out (a retransmission or new data).
    pub(super) fn on_send(&mut self, len: u64) {
        self.out += len;
        self.budget = self.budget.saturating_sub(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6937 section 3.1's first example, in segments: cwnd = FlightSize
    /// = 20, ssthresh 10, segment 0 lost, one segment delivered per ACK from
    /// the third duplicate ACK on. Fed the pipe its diagram implies after
    /// each ACK (RFC 6675's count less one segment: the diagram does not
    /// count one of the limited-transmit segments), the algorithm sends the
    /// diagram's row: the retransmission, a segment on every other ACK while
    /// the pipe is above ssthresh, nothing at ACKs 16-17, and one segment
    /// each at ACKs 18-19 under the reduction bound ("RB: s").
    #[test]
    fn the_single_loss_example_of_rfc_6937_section_3_1() {
        let pipe_after_ack = [
            17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 9, 9,
        ];
        let mut p = Prr::new(20);
        let mut sent = Vec::new();
        for pipe in pipe_after_ack {
            p.on_ack(1, pipe, 10, 1, false);
            let n = p.budget;
            for _ in 0..n {
                p.on_send(1);
            }
            sent.push(n);
        }
        // ACKs 3..=19
        assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1]);
    }

    /// Below ssthresh the reduction bound: conservation on a duplicate ACK,
    /// one segment more on an ACK that advances `snd_una` without new loss.
    #[test]
    fn the_bound_is_conservative_unless_the_ack_is_safe() {
        let mut p = Prr::new(20);
        p.on_ack(1, 15, 10, 1, false); // proportional: ceil(10/20) = 1
        p.on_send(1);
        p.on_ack(2, 4, 10, 1, false); // conservation: max(3 - 1, 2) = 2
        assert_eq!(p.budget, 2);
        p.on_send(2);
        p.on_ack(1, 4, 10, 1, true); // slow start: max(4 - 3, 1) + 1 = 2
        assert_eq!(p.budget, 2);
        p.on_ack(3, 9, 10, 1, true); // ssthresh - pipe = 1 bounds it
        assert_eq!(p.budget, 1);
        let before = p.budget;
        p.on_ack(0, 0, 10, 1, true);
        assert_eq!(
            p.budget, before,
            "an ACK that delivers nothing changes nothing"
        );
    }
}
