//! RFC 5961 ("Improving TCP's Robustness to Blind In-Window Attacks"): which
//! RST segments an endpoint accepts, and the challenge ACKs that answer the
//! others and every SYN of a synchronized connection.
//!
//! RFC 793 accepted a RST anywhere in the receive window, so a blind attacker
//! who guesses an in-window sequence number resets the connection. RFC 5961
//! section 3.2 (the RST bit) replaces that rule, in every state except
//! SYN-SENT:
//!
//! 1. a RST outside the receive window is silently dropped;
//! 2. a RST whose sequence number is exactly RCV.NXT resets the connection;
//! 3. a RST inside the window but not at RCV.NXT is answered by a challenge
//!    ACK, `<SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>`, and dropped. A peer that
//!    really reset answers the challenge with a RST at exactly RCV.NXT.
//!
//! In SYN-SENT a RST is acceptable only if it acknowledges the SYN (section
//! 3.2, last paragraph). Section 4.2 (the SYN bit): a SYN arriving in a
//! synchronized state is answered by a challenge ACK, whatever its sequence
//! number, and dropped. Section 7 asks for a throttle on challenge ACKs;
//! [`ChallengeAcks`] allows at most [`ChallengeAcks::LIMIT`] in any
//! [`ChallengeAcks::PERIOD`], the example figures of that section (10 in 5
//! seconds), per connection.

use crate::seq::SeqNum;
use crate::time::{Duration, Instant};

/// What to do with a RST of a synchronized connection (RFC 5961 section 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RstVerdict {
    /// The sequence number is exactly RCV.NXT: reset the connection.
    Reset,
    /// In the window but not at RCV.NXT: send a challenge ACK, drop the RST.
    Challenge,
    /// Outside the window: drop it silently.
    Drop,
}

/// The verdict on a RST with sequence number `seq` for a receive window of
/// `rcv_wnd` bytes starting at `rcv_nxt`.
pub fn rst_verdict(seq: SeqNum, rcv_nxt: SeqNum, rcv_wnd: u64) -> RstVerdict {
    let ahead = seq.0.wrapping_sub(rcv_nxt.0) as u64;
    if ahead == 0 {
        RstVerdict::Reset
    } else if ahead < rcv_wnd {
        RstVerdict::Challenge
    } else {
        RstVerdict::Drop
    }
}

/// The challenge-ACK throttle of RFC 5961 section 7: at most
/// [`ChallengeAcks::LIMIT`] challenge ACKs in a period of
/// [`ChallengeAcks::PERIOD`] (a period starts at the first challenge after
/// the previous one ended). It keeps a flood of forged segments from turning
/// into a flood of ACKs.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChallengeAcks {
    period_start: Option<Instant>,
    in_period: u32,
    sent: u64,
    suppressed: u64,
}

impl ChallengeAcks {
    /// Challenge ACKs allowed per period (RFC 5961 section 7's example).
    pub const LIMIT: u32 = 10;
    /// The period (RFC 5961 section 7's example).
    pub const PERIOD: Duration = Duration::from_secs(5);

    /// True if a challenge ACK may be sent at `now` (and counts it); false
    /// if the throttle suppresses it.
    pub fn allow(&mut self, now: Instant) -> bool {
        let fresh = self
            .period_start
            .is_none_or(|s| now < s || now - s >= Self::PERIOD);
        if fresh {
            self.period_start = Some(now);
            self.in_period = 0;
        }
        if self.in_period < Self::LIMIT {
            self.in_period += 1;
            self.sent += 1;
            true
        } else {
            self.suppressed += 1;
            false
        }
    }

    /// Challenge ACKs sent.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Challenge ACKs the throttle suppressed.
    pub fn suppressed(&self) -> u64 {
        self.suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rst_resets_only_at_rcv_nxt_and_is_challenged_inside_the_window() {
        let nxt = SeqNum(u32::MAX - 10); // the window crosses the 32-bit wrap
        assert_eq!(rst_verdict(nxt, nxt, 1000), RstVerdict::Reset);
        assert_eq!(rst_verdict(nxt + 1, nxt, 1000), RstVerdict::Challenge);
        assert_eq!(rst_verdict(nxt + 999, nxt, 1000), RstVerdict::Challenge);
        assert_eq!(rst_verdict(nxt + 1000, nxt, 1000), RstVerdict::Drop);
        assert_eq!(rst_verdict(nxt - 1, nxt, 1000), RstVerdict::Drop);
        // a closed window accepts only the exact match
        assert_eq!(rst_verdict(nxt + 1, nxt, 0), RstVerdict::Drop);
        assert_eq!(rst_verdict(nxt, nxt, 0), RstVerdict::Reset);
    }

    #[test]
    fn the_throttle_allows_ten_challenges_per_five_seconds() {
        let ms = |t: u64| Instant::from_nanos(t * 1_000_000);
        let mut c = ChallengeAcks::default();
        let allowed = (0..25).filter(|&k| c.allow(ms(100 * k))).count();
        assert_eq!(allowed, 10, "25 challenges within 2.5 s");
        assert!(!c.allow(ms(4_999)));
        assert!(c.allow(ms(5_000)), "a new period starts");
        assert_eq!((c.sent(), c.suppressed()), (11, 16));
    }
}
