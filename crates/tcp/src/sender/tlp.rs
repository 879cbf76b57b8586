//! RACK-TLP's tail loss probe (RFC 8985 section 7), when `tcp.tlp` is on.
//!
//! When the last segments of a flight are lost no ACK comes back to tell
//! RACK about it, and only the retransmission timeout would. TLP arms a
//! probe timeout (PTO) of about two round trips instead, and when it fires
//! sends one segment, new data if there is any (else the highest segment
//! sent again), so that its ACK, by SACK or cumulatively, lets RACK find the
//! tail's losses and start fast recovery, or shows that the probe itself
//! repaired the one loss there was. The rules, by section of RFC 8985:
//!
//! * 7.1: the probe episode (`TLP.end_seq`, `TLP.is_retrans`) is reset on
//!   entering fast recovery or RTO recovery;
//! * 7.2: the PTO is (re)armed after new data is sent (not a probe) and on
//!   every ACK of new data, only in the Open state (not in recovery, and
//!   nothing SACKed): 2 SRTT, plus `TLP.max_ack_delay` when one segment is
//!   in flight, 1 s without SRTT, never beyond the RTO's expiry;
//! * 7.3: when it fires, a probe goes out if no earlier probe is
//!   outstanding and an RTT sample was taken since the last one; it may
//!   exceed cwnd by one segment; either way the RTO is re-armed from now;
//! * 7.4: an ACK at or above `TLP.end_seq` ends the episode; if the probe
//!   resent data, no DSACK reported it as a duplicate, and the ACK covers
//!   more than `TLP.end_seq`, the probe repaired a loss and the algorithm
//!   reduces its window as for a fast recovery that ended at once (as
//!   Linux's `tcp_process_tlp_ack` does with a CWR episode).

use super::Sender;
use crate::cc::{CaState, CongestionControl, CongestionEvent, CongestionKind};
use crate::time::{Duration, Instant};
use crate::{Transmit, TxKind};

/// RFC 8985's `TLP.max_ack_delay`, added to the PTO when one segment is in
/// flight: the receiver may hold its ACK that long (RFC 1122's 200 ms bound
/// on delayed ACKs; Linux adds `TCP_RTO_MIN`, also 200 ms).
pub const TLP_MAX_ACK_DELAY: Duration = Duration::from_millis(200);

/// The PTO without an SRTT (RFC 8985 section 7.2).
const PTO_WITHOUT_SRTT: Duration = Duration::from_secs(1);

/// The probe state of one connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlpState {
    /// The armed probe timeout.
    pub pto: Option<Instant>,
    /// A probe is due: the next transmission opportunity sends it.
    pub due: bool,
    /// The episode of the probe in flight: `TLP.end_seq` (the end of what
    /// was sent when the probe went out).
    end: Option<u64>,
    /// `TLP.is_retrans`: the probe resent data.
    is_retrans: bool,
    /// Start of the data the probe resent (for DSACK matching).
    probe_start: u64,
    /// FlightSize when the probe went out: the window of the loss the probe
    /// may repair.
    flight_at_probe: u64,
    /// RTT samples taken when the last probe went out (RFC 8985 section
    /// 7.3's second condition).
    samples_at_probe: u64,
    /// A DSACK of this ACK covered the probe's data.
    dsack: bool,
}

impl Sender {
    /// RFC 8985 section 7.2: (re)arms the PTO if the connection is in the
    /// Open state with data in flight and nothing SACKed, else cancels it.
    pub(super) fn arm_pto(&mut self, now: Instant) {
        let Some(tlp) = self.tlp.as_deref() else {
            return;
        };
        let eligible = self.sack_ok
            && self.ca_state == CaState::Open
            && self.sb.sacked_bytes() == 0
            && !self.sb.is_empty()
            && !tlp.due;
        let pto = eligible.then(|| {
            let wait = match self.rtt.srtt() {
                Some(srtt) if self.sb.outstanding() <= self.mss as u64 => {
                    srtt * 2 + TLP_MAX_ACK_DELAY
                }
                Some(srtt) => srtt * 2,
                None => PTO_WITHOUT_SRTT,
            };
            let at = now + wait;
            self.rto_deadline.map_or(at, |rto| at.min(rto))
        });
        if let Some(tlp) = self.tlp.as_deref_mut() {
            tlp.pto = pto;
        }
    }

    /// The PTO fired (RFC 8985 section 7.3): a probe is due if none is
    /// outstanding and an RTT was measured since the last; the RTO restarts
    /// from now either way.
    pub(super) fn on_pto(&mut self, now: Instant) {
        let samples = self.rtt.sample_count();
        let open = self.ca_state == CaState::Open && self.sb.sacked_bytes() == 0;
        let Some(tlp) = self.tlp.as_deref_mut() else {
            return;
        };
        tlp.pto = None;
        if self.sb.is_empty() || !open {
            return; // (the state left Open since the PTO was armed)
        }
        if tlp.end.is_none() && samples > tlp.samples_at_probe {
            tlp.due = true;
        }
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// The probe, when one is due: the next new segment if the stream and
    /// the peer's window allow, else the highest segment sent, again. It
    /// may exceed cwnd (RFC 8985 section 7.3); `None` if nothing can go.
    pub(super) fn send_probe(&mut self, now: Instant) -> Option<Transmit> {
        let tlp = self.tlp.as_deref_mut()?;
        if !tlp.due {
            return None;
        }
        tlp.due = false;
        let flight = self.snd_nxt - self.snd_una;
        let available = self.buf.end().saturating_sub(self.data_sent());
        let fin_due = self.buf.closed() && !self.fin_sent;
        let len = available.min(self.mss as u64) as u32;
        let fin = self.buf.closed() && self.data_sent() + len as u64 == self.buf.end();
        let fits = self.snd_nxt + len as u64 + fin as u64 <= self.snd_una + self.snd_wnd.max(1);
        let t = if (available > 0 || fin_due) && fits {
            self.send_new(now, len, fin)
        } else {
            let idx = self.sb.last_index()?;
            self.retransmit(now, idx)
        };
        self.stats.loss_probes += 1;
        let samples = self.rtt.sample_count();
        let end = self.snd_nxt;
        let tlp = self.tlp.as_deref_mut()?;
        // the RTO, not the PTO, guards the probe (section 7.3)
        tlp.pto = None;
        tlp.end = Some(end);
        tlp.is_retrans = t.kind == TxKind::Retransmission;
        tlp.probe_start = t.offset;
        tlp.flight_at_probe = flight;
        tlp.samples_at_probe = samples;
        Some(t)
    }

    /// RFC 8985 section 7.1: a fast recovery or a timeout ends the episode.
    pub(super) fn reset_tlp(&mut self) {
        if let Some(tlp) = self.tlp.as_deref_mut() {
            tlp.end = None;
            tlp.is_retrans = false;
            tlp.pto = None;
            tlp.due = false;
        }
    }

    /// Notes a DSACK of `[start, end)` on the current ACK (RFC 8985 section
    /// 7.4.2's "DSACK option matching TLP.end_seq").
    pub(super) fn tlp_on_dsack(&mut self, start: u64, end: u64) {
        if let Some(tlp) = self.tlp.as_deref_mut() {
            if tlp.is_retrans && tlp.end.is_some_and(|e| start < e && end > tlp.probe_start) {
                tlp.dsack = true;
            }
        }
    }

    /// RFC 8985 section 7.4.2's `TLP_process_ack` for an ACK of `ack`
    /// (`advanced`: it moved `snd_una`; `sack_option`: it carried SACK
    /// blocks). Returns true if the probe repaired a loss, after the
    /// algorithm's response.
    pub(super) fn tlp_on_ack(
        &mut self,
        now: Instant,
        ack: u64,
        advanced: bool,
        sack_option: bool,
    ) -> bool {
        let Some(tlp) = self.tlp.as_deref_mut() else {
            return false;
        };
        let dsack = std::mem::take(&mut tlp.dsack);
        let Some(end) = tlp.end.filter(|&e| ack >= e) else {
            return false;
        };
        let repaired = tlp.is_retrans && !dsack && ack > end;
        if !tlp.is_retrans || dsack || repaired || (!advanced && !sack_option) {
            tlp.end = None;
        }
        if !repaired {
            return false;
        }
        // The probe repaired the flight's only loss: the algorithm responds
        // as to a fast recovery that ends on this ACK.
        // nothing was SACKed when the probe went out: the pipe was the flight
        let basis = match self.cfg.ssthresh_basis {
            crate::config::SsthreshBasis::Cwnd => self.cc.cwnd(),
            _ => tlp.flight_at_probe,
        };
        let ev = CongestionEvent {
            kind: CongestionKind::FastRetransmit,
            flight_size: tlp.flight_at_probe,
            ssthresh_basis: basis,
            in_flight: self.sb.in_flight(),
            mss: self.mss,
        };
        self.stats.tlp_recoveries += 1;
        self.cc.on_congestion(now, &ev);
        self.set_state(now, CaState::Recovery);
        self.exit_recovery(now);
        true
    }
}
