//! Classic ECN at the sender (RFC 3168 section 6.1.2): the response to an
//! ACK with ECN-Echo, once per window of data, and the CWR flag after every
//! window reduction. The negotiation (section 6.1.1) is in the SYN and
//! SYN-ACK handling, the ECT(0) and CWR bits in the data segments' making
//! (`Sender::data_segment`).

use super::Sender;
use crate::cc::{CaState, CongestionControl, CongestionEvent, CongestionKind, EcnStyle};
use crate::time::Instant;
use crate::wire::Ecn;

impl Sender {
    /// Records a window reduction at `snd_nxt`: the next new data segment
    /// carries CWR on an ECN connection, and ECN-Echoes for data sent before
    /// it are ignored (RFC 3168 section 6.1.2: CWR after a reduction "for
    /// any reason").
    pub(super) fn note_reduction(&mut self) {
        self.reduced_until = Some(self.snd_nxt);
        self.cwr_pending = self.ecn_ok;
    }

    /// True once every byte sent before the last window reduction is
    /// acknowledged (or there was none): a CWR state ends.
    pub(super) fn reduction_acked(&self) -> bool {
        self.reduced_until.is_none_or(|r| self.snd_una >= r)
    }

    /// True once data sent after the last window reduction is acknowledged
    /// (or there was none): an ECN-Echo now reports a mark on the next
    /// window of data. One that acknowledges exactly the data sent before
    /// the reduction echoes marks the reduction answered (the receiver has
    /// not yet seen CWR).
    pub(super) fn past_last_reduction(&self) -> bool {
        self.reduced_until.is_none_or(|r| self.snd_una > r)
    }

    /// An ACK with ECN-Echo on an ECN connection (RFC 3168 section 6.1.2):
    /// the congestion it reports is "treated just as a congestion loss", so
    /// the algorithm reduces as for a fast retransmit
    /// ([`CongestionKind::Ecn`]) with nothing retransmitted; once per window
    /// of data, so not while a reduction for this window (an earlier
    /// ECN-Echo, a fast recovery, a timeout) is under way. The state is
    /// CWR until the data sent before the reduction is acknowledged. An
    /// algorithm that does not respond to ECN (its window and ssthresh
    /// unchanged) leaves the state as it is.
    ///
    /// Not modelled: the section's rule for a window of one segment (reset
    /// the retransmission timer and send the next segment only when it
    /// expires).
    ///
    /// Returns true if the ECN-Echo reduced the window.
    pub(super) fn on_ecn_echo(&mut self, now: Instant) -> bool {
        if !matches!(self.ca_state, CaState::Open | CaState::Disorder)
            || !self.past_last_reduction()
        {
            return false;
        }
        let flight_size = self.snd_nxt - self.snd_una;
        let before = (self.cc.cwnd(), self.cc.ssthresh());
        let ev = CongestionEvent {
            kind: CongestionKind::Ecn,
            flight_size,
            ssthresh_basis: self.ssthresh_basis(flight_size),
            in_flight: self.sb.in_flight(),
            mss: self.mss,
        };
        self.cc.on_congestion(now, &ev);
        self.note_reduction();
        // a reduction for a mark is never spurious: no undo reaches past it
        self.undo = None;
        if (self.cc.cwnd(), self.cc.ssthresh()) != before {
            self.stats.ecn_reductions += 1;
            self.set_state(now, CaState::Cwr);
            return true;
        }
        false
    }

    /// True if this connection negotiates ECN: `tcp.ecn`, or an algorithm
    /// that needs it (DCTCP and Prague, [`crate::cc::EcnStyle`]), as
    /// Linux's `TCP_CONG_NEEDS_ECN` does.
    pub(super) fn wants_ecn(&self) -> bool {
        self.cfg.ecn || self.cc.ecn_style() != EcnStyle::Classic
    }

    /// The ECN field of new data on an ECN connection: ECT(1) for an L4S
    /// algorithm (RFC 9331 section 4.1), ECT(0) otherwise (RFC 3168
    /// section 6.1.2).
    pub(super) fn data_ecn(&self) -> Ecn {
        match self.cc.ecn_style() {
            EcnStyle::L4s => Ecn::Ect1,
            EcnStyle::Classic | EcnStyle::Dctcp => Ecn::Ect0,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cc::CaState;
    use crate::config::TcpConfig;
    use crate::testing::{ms, synack, Harness, ISS, SYNACK_WINDOW};
    use crate::wire::{Ecn, Flags, Segment};
    use crate::{CcConfig, Sender, TxKind};

    const MSS: u64 = 1000;

    fn cfg(ecn: bool) -> TcpConfig {
        TcpConfig {
            mss: MSS as u32,
            sack: false,
            ecn,
            ..TcpConfig::default()
        }
    }

    /// The harness's SYN-ACK with `flags` added.
    fn synack_with(flags: Flags) -> Segment {
        let mut s = synack(Some(MSS as u16), Some(1), false, SYNACK_WINDOW);
        s.flags = s.flags.with(flags);
        s
    }

    /// The data segments sent now: (offset, retransmission, ECN field, CWR).
    fn sent(h: &mut Harness) -> Vec<(u64, bool, Ecn, bool)> {
        h.drain()
            .into_iter()
            .filter(|t| matches!(t.kind, TxKind::Data | TxKind::Retransmission))
            .map(|t| {
                let cwr = t.segment.flags.contains(Flags::CWR);
                (t.offset, t.kind == TxKind::Retransmission, t.ecn, cwr)
            })
            .collect()
    }

    fn new(offsets: std::ops::Range<u64>, ecn: Ecn) -> Vec<(u64, bool, Ecn, bool)> {
        offsets.map(|i| (i * MSS, false, ecn, false)).collect()
    }

    /// RFC 3168 section 6.1.1: an ECN-setup SYN has ECE and CWR, an
    /// ECN-setup SYN-ACK ECE alone; a SYN-ACK with both (a peer reflecting
    /// the SYN's bits) or neither refuses, and then no data is ECT.
    #[test]
    fn the_syn_offers_ecn_and_only_an_ecn_setup_synack_accepts_it() {
        for ecn in [true, false] {
            let cc = CcConfig::named("newreno").unwrap().build(1000, 10, None, 2);
            let mut tx = Sender::new(cfg(ecn), cc, ISS);
            let syn = tx.poll_transmit(ms(0)).unwrap();
            let setup = Flags::SYN.with(Flags::ECE).with(Flags::CWR);
            assert_eq!(syn.segment.flags == setup, ecn, "ECN-setup SYN iff on");
            assert_eq!(syn.ecn, Ecn::NotEct, "a SYN is never ECT");
        }
        let cases = [
            (true, Flags::ECE, true),
            (true, Flags::ECE.with(Flags::CWR), false),
            (true, Flags(0), false),
            (false, Flags::ECE, false),
        ];
        for (on, flags, agreed) in cases {
            let mut h = Harness::with_synack(cfg(on), "newreno", synack_with(flags));
            assert_eq!(h.tx.ecn_enabled(), agreed, "{on} {flags}");
            let ecn = if agreed { Ecn::Ect0 } else { Ecn::NotEct };
            assert_eq!(sent(&mut h), new(0..10, ecn), "{on} {flags}");
        }
    }

    /// RFC 3168 section 6.1.2 with NewReno: the first ECN-Echo halves the
    /// window as a loss would (ssthresh = FlightSize / 2), with nothing
    /// retransmitted; further echoes for the same window change nothing and
    /// do not grow it; the first new segment after the reduction carries
    /// CWR; an echo once the window sent before the reduction is
    /// acknowledged reduces again.
    #[test]
    fn an_ecn_echo_halves_the_window_once_per_window_without_a_retransmission() {
        let mut h = Harness::with_synack(cfg(true), "newreno", synack_with(Flags::ECE));
        assert_eq!(sent(&mut h), new(0..10, Ecn::Ect0));
        h.at(200);
        // segment 0 or 1 was marked: FlightSize is 8 segments after this ACK
        h.ack_ece(2 * MSS);
        assert_eq!((h.ssthresh(), h.cwnd()), (4 * MSS, 4 * MSS));
        assert_eq!(h.tx.ca_state(), CaState::Cwr);
        assert_eq!(h.tx.stats().ecn_reductions, 1);
        assert!(sent(&mut h).is_empty(), "8 segments out, a window of 4");
        // the receiver echoes until our CWR reaches it
        for k in 3..=5 {
            h.ack_ece(k * MSS);
            assert_eq!(h.cwnd(), 4 * MSS, "no second reduction, no growth");
        }
        assert!(sent(&mut h).is_empty());
        h.ack(6 * MSS, &[]);
        assert!(sent(&mut h).is_empty());
        h.ack(7 * MSS, &[]);
        assert_eq!(
            sent(&mut h),
            vec![(10 * MSS, false, Ecn::Ect0, true)],
            "CWR on the first new segment"
        );
        h.ack(8 * MSS, &[]);
        assert_eq!(sent(&mut h), new(11..12, Ecn::Ect0), "CWR only once");
        // echoes of marks on data sent before the reduction
        h.ack_ece(9 * MSS);
        h.ack_ece(10 * MSS);
        assert_eq!(h.tx.stats().ecn_reductions, 1);
        assert_eq!(h.cwnd(), 4 * MSS, "ECE ACKs never grow the window");
        // the data sent before the reduction is acknowledged: CWR ends
        assert_eq!(h.tx.ca_state(), CaState::Open);
        sent(&mut h);
        // an echo of the CWR segment's own mark: a new window, a new reduction
        let flight = h.tx.data_sent() - 11 * MSS;
        h.ack_ece(11 * MSS);
        assert_eq!(h.tx.stats().ecn_reductions, 2);
        assert_eq!(h.ssthresh(), (flight / 2).max(2 * MSS));
        assert_eq!(h.tx.stats().retransmissions, 0);
        assert_eq!(h.tx.stats().fast_retransmits, 0);
        assert_eq!(h.tx.stats().ecn_echoes, 7);
        // the window came back once everything before the reduction was acked
        h.ack(h.tx.data_sent(), &[]);
        assert_eq!(h.tx.ca_state(), CaState::Open);
    }

    /// A loss in the window an ECN-Echo reduced is retransmitted (Not-ECT,
    /// RFC 3168 section 6.1.5) without a second reduction (section 6.1.2:
    /// once per window for dropped and CE packets together).
    #[test]
    fn a_loss_in_a_reduced_window_is_repaired_without_a_second_reduction() {
        let mut h = Harness::with_synack(cfg(true), "newreno", synack_with(Flags::ECE));
        sent(&mut h);
        h.at(200);
        h.ack_ece(2 * MSS);
        assert_eq!(h.ssthresh(), 4 * MSS);
        for _ in 0..3 {
            h.ack(2 * MSS, &[]);
        }
        assert_eq!(h.tx.stats().fast_retransmits, 1);
        assert_eq!(h.tx.ca_state(), CaState::Recovery);
        assert_eq!(h.ssthresh(), 4 * MSS, "not halved again");
        assert_eq!(sent(&mut h), vec![(2 * MSS, true, Ecn::NotEct, false)]);
        // a fast retransmit outside a reduced window reduces and sends CWR
        let mut h = Harness::with_synack(cfg(true), "newreno", synack_with(Flags::ECE));
        sent(&mut h);
        h.at(200);
        for _ in 0..3 {
            h.ack(0, &[]);
        }
        assert_eq!(h.ssthresh(), 5 * MSS);
        assert_eq!(sent(&mut h), vec![(0, true, Ecn::NotEct, false)]);
        for _ in 0..3 {
            h.ack(0, &[]);
        }
        let first_new = sent(&mut h);
        assert_eq!(first_new, vec![(10 * MSS, false, Ecn::Ect0, true)]);
    }
}
