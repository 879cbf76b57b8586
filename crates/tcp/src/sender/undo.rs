//! Undoing window reductions that turn out spurious (`tcp.undo`), and F-RTO
//! (`tcp.frto`), as Linux 6.18 does them (net/ipv4/tcp_input.c).
//!
//! Every reduction (a fast retransmit, a timeout that sets ssthresh) saves
//! the window and ssthresh it replaces and starts counting retransmissions
//! (`tcp_init_undo`: `undo_marker` is `snd_una`, `undo_retrans` the
//! retransmissions in flight). The reduction is undone, the algorithm taking
//! back the larger of each value and its saved one
//! ([`crate::CongestionControl::on_undo`]), when:
//!
//! * **DSACK** (RFC 3708 section 3, Linux's `tcp_try_undo_dsack`): every
//!   retransmission made since was reported as a duplicate, so none was
//!   needed; checked on every ACK, during the recovery and after it, until
//!   the next reduction;
//! * **timestamps** (RFC 4015's detection as Linux's `tcp_packet_delayed`):
//!   at the end of a fast recovery (`tcp_try_undo_recovery`), or on an ACK of
//!   new data after a timeout (`tcp_try_undo_loss`), the ACK echoes a
//!   timestamp older than the first retransmission: an original transmission
//!   arrived, the retransmissions were not needed (with no retransmission
//!   made yet, the same holds);
//! * **F-RTO** (RFC 5682 section 3, the SACK-enhanced algorithm, as Linux's
//!   `tcp_process_loss`): after a timeout the first ACK that advances
//!   `snd_una` releases new data instead of more retransmissions (step 2b);
//!   if a following ACK acknowledges or SACKs data that was never
//!   retransmitted and was sent before the timeout (Linux's
//!   `FLAG_ORIG_SACK_ACKED`), the timeout was spurious (step 3b) and is
//!   undone; a duplicate ACK or a SACK of the new data only shows the loss
//!   was real (step 3a), and recovery goes on as after any timeout. F-RTO
//!   runs after a timeout in the Open or Disorder state, or after a
//!   repeated timeout of the same segment, as Linux's `tcp_enter_loss`.
//!
//! An undo after a timeout also forgets the loss marks (the segments are in
//! flight after all); an undo during a fast recovery ends it, and if losses
//! are still marked a new recovery starts at once, as Linux's
//! `tcp_try_to_open` followed by `tcp_time_to_recover`. Not modelled: the
//! partial-ACK undo during recovery (`tcp_try_undo_partial`) and the
//! reordering estimate Linux raises on an undo.

use crate::cc::UndoEvent;

/// What a reduction saved, until it is undone or replaced by the next one.
#[derive(Clone, Copy, Debug)]
pub(super) struct UndoState {
    /// `snd_una` at the reduction (Linux's `undo_marker`): DSACKs of data
    /// below it belong to an earlier episode.
    pub(super) marker: u64,
    /// Retransmissions since, less those DSACK reported as duplicates;
    /// `None` before the first (Linux's `undo_retrans` of -1).
    pub(super) retrans: Option<u64>,
    /// The window before the reduction.
    pub(super) prior: UndoEvent,
}

impl UndoState {
    /// True once DSACK has reported every retransmission as a duplicate.
    pub(super) fn all_retransmissions_duplicated(&self) -> bool {
        self.retrans == Some(0)
    }

    /// A retransmission went out.
    pub(super) fn on_retransmit(&mut self) {
        self.retrans = Some(self.retrans.unwrap_or(0) + 1);
    }

    /// A DSACK block `[start, end)` reported `segments` duplicate segments.
    pub(super) fn on_dsack(&mut self, end: u64, segments: u64) {
        if let Some(r) = self.retrans.as_mut() {
            if *r > 0 && end > self.marker {
                *r = r.saturating_sub(segments);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsacks_count_down_retransmissions_made_since_the_reduction() {
        let prior = UndoEvent {
            prior_cwnd: 10_000,
            prior_ssthresh: u64::MAX,
            mss: 1000,
        };
        let mut u = UndoState {
            marker: 5000,
            retrans: None,
            prior,
        };
        assert!(
            !u.all_retransmissions_duplicated(),
            "nothing retransmitted yet"
        );
        u.on_retransmit();
        u.on_retransmit();
        u.on_dsack(4000, 1); // below the marker: an earlier episode's
        assert_eq!(u.retrans, Some(2));
        u.on_dsack(6000, 1);
        assert!(!u.all_retransmissions_duplicated());
        u.on_dsack(7000, 1);
        assert!(u.all_retransmissions_duplicated());
        u.on_dsack(8000, 1);
        assert_eq!(u.retrans, Some(0), "never below zero");
    }
}
