//! Per-connection TCP parameters shared by the sender and the receiver.

use crate::rtt::RtoFlavour;
use crate::time::Duration;
use crate::units::{optional_duration, ByteSize};
use serde::{Deserialize, Serialize};

/// TCP parameters of one connection. Every field has a default; a scenario sets
/// only what it changes, over the defaults of a profile if it names one
/// (`profile = "linux"`, [`crate::profile::TcpProfile`]). Unknown fields are
/// rejected when deserialising.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "crate::profile::TcpConfigSpec")]
pub struct TcpConfig {
    /// Maximum segment size in bytes of payload (default 1460: a 1500-byte packet
    /// without options).
    pub mss: u32,
    /// Initial congestion window in segments (default 10, RFC 6928).
    pub initial_cwnd: u32,
    /// Initial slow-start threshold; `None` (default) means unlimited.
    pub initial_ssthresh: Option<ByteSize>,
    /// Negotiate SACK (RFC 2018) and use SACK-based loss recovery (RFC 6675) when
    /// the peer agrees (default true).
    pub sack: bool,
    /// Receiver reports duplicate segments with DSACK (RFC 2883) (default true).
    pub dsack: bool,
    /// Negotiate timestamps (RFC 7323) and take RTT samples from them (default false).
    pub timestamps: bool,
    /// Duplicate-ACK threshold for fast retransmit (default 3).
    pub dupthresh: u32,
    /// Limited transmit, RFC 3042 (default false).
    pub limited_transmit: bool,
    /// Initial retransmission timeout (default 1 s, RFC 6298).
    pub initial_rto: Duration,
    /// Lower bound on the RTO (default 1 s, RFC 6298; Linux uses 200 ms,
    /// as a floor of the variation term with `rto = "linux"`).
    pub min_rto: Duration,
    /// Upper bound on the RTO, also the cap of exponential backoff (default 60 s).
    pub max_rto: Duration,
    /// How the RTO is computed: `"rfc6298"` (default; RFC 7323 Appendix G's
    /// scaling of per-ACK samples) or `"linux"` (the variation term never
    /// below `min_rto`, so RTO is about SRTT + `min_rto`).
    pub rto: RtoFlavour,
    /// When a timeout leaves ssthresh as it is (default `"rfc5681"`).
    pub rto_ssthresh: RtoSsthresh,
    /// Receiver delayed ACKs: `false` (an ACK per segment) or the maximum delay
    /// (default `"200ms"`; an ACK is also sent for every second full segment).
    #[serde(with = "optional_duration")]
    pub delayed_ack: Option<Duration>,
    /// Receive buffer, advertised as the window (default 64 MiB).
    pub rcv_window: ByteSize,
    /// Slow-start increase limit per ACK in segments, RFC 3465's L (default 2).
    pub abc_limit: u32,
    /// Whether partial ACKs restart the retransmission timer during NewReno
    /// recovery without SACK (default `"impatient"`).
    pub partial_ack_timer: PartialAckTimer,
    /// How losses are detected with SACK, a retransmission lost again among
    /// them (default `"rto"`).
    pub lost_retransmissions: LostRetransmissions,
    /// RACK-TLP's tail loss probe, RFC 8985 section 7 (default false; needs
    /// `sack` and `lost_retransmissions = "rack"`).
    pub tlp: bool,
    /// When the retransmission timer expires after a tail loss probe's
    /// timer gave way to it, and how far a transmission may push the probe
    /// timeout (default `"rfc8985"`; `"linux"` for Linux's single
    /// transmission timer). Matters only with `tlp`.
    pub rto_rearm: RtoRearm,
    /// Ticks per second of a Linux timer wheel that the retransmission and
    /// probe timers fire on (`CONFIG_HZ`: 100, 250, 300 or 1000), or 0
    /// (default) for timers that fire at their deadline. The wheel fires a
    /// timer up to one granule of its level late, about 1/8 of its timeout
    /// (kernel/time/timer.c; see the sender's `timer_wheel` module).
    pub timer_hz: u32,
    /// How a window algorithm's reduction is paced through a SACK fast
    /// recovery (default `"prr"`, RFC 6937).
    pub recovery_reduction: RecoveryReduction,
    /// What a loss event's ssthresh halves, for the Reno family and
    /// Westwood+ without a bandwidth estimate (default `"flight-size"`).
    pub ssthresh_basis: SsthreshBasis,
    /// F-RTO, RFC 5682's detection of spurious timeouts, in its SACK-enhanced
    /// form as Linux runs it (default false).
    pub frto: bool,
    /// Undo a window reduction shown to be spurious: by DSACKs of every
    /// retransmission (RFC 3708), by timestamps (RFC 4015's detection, as
    /// Linux's `tcp_try_undo_recovery` and `tcp_try_undo_loss`), or by F-RTO
    /// (default false).
    pub undo: bool,
    /// The hybrid slow start CUBIC uses unless its own `hystart` parameter
    /// says otherwise (default `"off"`).
    pub hystart: Hystart,
    /// Slow-start increase limit per ACK, in segments, in the slow start that
    /// follows a timeout (default 1, RFC 3465 section 2.3).
    pub abc_limit_after_rto: u32,
    /// Congestion avoidance grows the window by MSS * MSS / cwnd per ACK, as
    /// RFC 5681 equation 3 and ns-3's `TcpNewReno::CongestionAvoidance` do,
    /// instead of one MSS per cwnd bytes acknowledged (RFC 3465) (default
    /// false).
    pub ca_per_ack: bool,
    /// When the receiver acknowledges (default `"rfc"`).
    pub receiver: ReceiverProfile,
    /// BBR's allowance above its bandwidth-delay product for the window and
    /// the gain cycle's in-flight targets (default `"none"`).
    pub bbr_quantum: BbrQuantum,
    /// How a paced sender releases data: one segment per pacing interval, or
    /// Linux's TSO bursts (default `"none"`).
    pub tso: Tso,
    /// Classic ECN (RFC 3168 section 6.1): the sender offers it on its SYN
    /// (ECE and CWR set), the receiver accepts on its SYN-ACK (ECE set); once
    /// both agreed, new data carries ECT(0), the receiver echoes a CE mark
    /// with ECE until a segment with CWR arrives, and the sender reduces its
    /// window once per window of data as for a loss, without a
    /// retransmission (default false).
    pub ecn: bool,
}

/// How the window comes down during a fast recovery with SACK
/// (`tcp.recovery_reduction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryReduction {
    /// Proportional Rate Reduction (RFC 6937 section 3, PRR-SSRB with the
    /// slow-start bound only on ACKs that advance `snd_una` without new loss,
    /// as Linux's `tcp_cwnd_reduction` and RFC 9937 section 5 apply it): each
    /// ACK releases data in proportion to what it delivered, so the flight
    /// comes down to ssthresh over one round trip. Algorithms that pace or
    /// burst on their own timer (BBR, TCP Wave) keep their own rules.
    #[default]
    Prr,
    /// RFC 6675 section 5: cwnd = ssthresh at once, and data goes out
    /// whenever the pipe is below it.
    #[serde(rename = "rfc6675")]
    Rfc6675,
}

/// What ssthresh is computed from at a loss event (`tcp.ssthresh_basis`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SsthreshBasis {
    /// RFC 5681 equation 4 and RFC 6675 section 5 step (4.2): FlightSize,
    /// `snd_nxt - snd_una` (less data sent by limited transmit at a fast
    /// retransmit), SACKed data included.
    #[default]
    FlightSize,
    /// The pipe without its loss term: FlightSize less the SACKed bytes, the
    /// data RFC 6675 section 2 counts in flight. ns-3.44's `TcpNewReno` and
    /// `TcpLinuxReno` halve `BytesInFlight`, RFC 6675's pipe.
    Pipe,
    /// Linux (`tcp_reno_ssthresh`, net/ipv4/tcp_cong.c, 6.18): half of cwnd.
    Cwnd,
}

/// The hybrid slow start of CUBIC (`tcp.hystart`, or CUBIC's own `hystart`
/// parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hystart {
    /// RFC 5681 slow start.
    #[default]
    Off,
    /// HyStart++ (RFC 9406), in the initial slow start.
    #[serde(rename = "hystart++")]
    HystartPlusPlus,
    /// Classic HyStart (Ha and Rhee 2008) with Linux 6.18's constants
    /// (`tcp_cubic.c`): ACK-train length over half the minimum RTT, or a
    /// round's minimum RTT above the minimum by min RTT / 8 clamped to 4-16
    /// ms; in every slow start.
    Linux,
    /// Classic HyStart as ns-3.44's `TcpCubic` runs it: the train over the
    /// whole minimum RTT, the delay threshold min RTT clamped to 4-1000 ms,
    /// a round judged on its first eight samples.
    Ns3,
}

/// What BBR adds to a bandwidth-delay product when it sizes its window and
/// judges its gain cycle's in-flight targets (`tcp.bbr_quantum`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BbrQuantum {
    /// Nothing: gain x BtlBw x RTprop. The draft's `BBRInflight` adds three
    /// send quanta, which stand for TSO bursts; wavelab sends single
    /// segments and leaves them out.
    #[default]
    None,
    /// Linux 6.18's `bbr_quantization_budget` (net/ipv4/tcp_bbr.c), applied
    /// by `bbr_inflight` and `bbr_set_cwnd`: the product rounded up to whole
    /// segments, plus three times `bbr_tso_segs_goal` (the segments of 1/1024
    /// s at the pacing rate, at least 2 at or above 1.2 Mbit/s and 1 below),
    /// rounded up to an even count, plus 2 segments in PROBE_BW's probing
    /// phase. On a slow path the budget keeps a standing queue of about six
    /// segments in PROBE_BW, so that PROBE_BW's RTT samples do not refresh
    /// the min RTT and PROBE_RTT comes every 10 s.
    Linux,
}

/// How a paced sender releases its data (`tcp.tso`).
///
/// Linux builds each transmission of a paced flow as one TSO/GSO packet of
/// `tcp_tso_autosize` segments (net/ipv4/tcp_output.c, 6.18: the bytes of
/// 1/1024 s at the pacing rate, `sk_pacing_shift` = 10, at least the
/// algorithm's `min_tso_segs`) and sets the pacing timer by the whole
/// packet's length (`tcp_update_skb_after_send`). The segments of one such
/// burst leave together and queue behind each other at a slower bottleneck,
/// so every RTT sample of a burst's last segment carries one more
/// serialisation time per segment ahead of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tso {
    /// One segment per pacing interval (RFC 9293 TCP has no TSO; the BBR
    /// draft's pacing of single packets).
    #[default]
    None,
    /// Linux's bursts: the algorithm's send quantum
    /// ([`crate::cc::CongestionControl::send_quantum`]; BBR's
    /// `bbr_tso_segs_goal`: at least 2 segments at or above 1.2 Mbit/s of
    /// pacing) leave at one instant, and the pacer then waits for all of
    /// them. Algorithms that do not pace send as before.
    Linux,
}

/// How the receiver acknowledges data (`tcp.receiver`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiverProfile {
    /// RFC 1122 and RFC 5681 section 4.2: an ACK for every second full
    /// segment or when `delayed_ack` expires; at once for out-of-order data,
    /// a duplicate or a segment that fills a gap.
    #[default]
    Rfc,
    /// Linux 6.18 (`tcp_event_data_recv`, `__tcp_ack_snd_check`,
    /// `tcp_send_delayed_ack`, `tcp_delack_timer_handler`): quick-ACK mode (an
    /// ACK per segment) for the first 16 segments and after an idle gap longer
    /// than the RTO or a duplicate segment; otherwise an ACK every two full
    /// segments or when the ACK timeout (ATO) expires, the ATO following the
    /// segments' inter-arrival time between 40 ms and `delayed_ack` (Linux's
    /// 200 ms).
    Linux,
}

/// How the sender detects losses with SACK: RFC 6675 alone, or with RFC
/// 8985's RACK (which is what finds a retransmission lost again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LostRetransmissions {
    /// RFC 6675: the duplicate threshold; a retransmission lost again is
    /// found only by the retransmission timeout.
    #[default]
    Rto,
    /// RFC 8985's RACK rule, as Linux detects losses: a segment (original or
    /// retransmission) is lost once a segment sent after it is delivered
    /// (cumulatively or by SACK) and a reordering window has passed; RFC
    /// 6675's duplicate threshold still applies to original transmissions.
    /// RTT samples also come from newly SACKed segments when Karn's rule
    /// leaves an ACK without one. Needs SACK; checked on each ACK (no
    /// reordering timer); tail loss probes are `tcp.tlp`.
    Rack,
}

/// How the retransmission timer and the tail loss probe's timer are armed
/// against each other (`tcp.rto_rearm`), when `tcp.tlp` is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoRearm {
    /// RFC 8985 sections 7.2-7.3 with RFC 6298 section 5.3: the RTO runs
    /// from the last ACK of new data (or from the first transmission into
    /// an empty flight); the probe timeout (PTO), re-armed after every
    /// transmission of new data, never runs past that RTO; when the PTO
    /// fires the RTO restarts from then, whether or not a probe went out.
    #[default]
    Rfc8985,
    /// Linux 6.x, whose PTO and RTO are one timer
    /// (`icsk_pending` is `ICSK_TIME_LOSS_PROBE` or `ICSK_TIME_RETRANS`):
    ///
    /// * after a transmission the PTO is capped by the time left until the
    ///   *oldest outstanding segment's* send time + RTO, and not capped once
    ///   that instant has passed (`tcp_schedule_loss_probe` with
    ///   `advancing_rto` false and `tcp_rto_delta_us`,
    ///   net/ipv4/tcp_output.c); after an ACK that advances `snd_una`, by
    ///   now + RTO (`advancing_rto` true), as RFC 8985;
    /// * while the PTO is armed no RTO runs beside it;
    /// * when the PTO gives way to the RTO without a probe having gone out
    ///   (it fired but no probe was allowed, or the state left Open), the
    ///   RTO is due at the oldest outstanding segment's send time + RTO, at
    ///   least one tick (1 ms) from now (`tcp_rearm_rto`,
    ///   net/ipv4/tcp_input.c: "Offset the time elapsed after installing
    ///   regular RTO"); after a probe it runs from now (`tcp_send_loss_probe`
    ///   clears `icsk_pending` first);
    /// * resending the oldest outstanding segment (in fast recovery, or
    ///   after a timeout) restarts the RTO from now
    ///   (`tcp_xmit_retransmit_queue`, net/ipv4/tcp_output.c), so the RTO
    ///   that took over from a PTO at the head's send time does not expire
    ///   while its retransmission is on its way.
    ///
    /// With a full queue the oldest outstanding segment left about an SRTT
    /// before the last ACK, so Linux probes, and times out, that much
    /// earlier than RFC 8985's rule.
    Linux,
}

/// When a retransmission timeout leaves ssthresh as it is: the RFC's rule or
/// a peer's, so that a peer's result can be reproduced and the difference
/// the rule makes seen (`tcp.rto_ssthresh`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoSsthresh {
    /// RFC 5681 section 3.1: every timeout sets ssthresh from FlightSize,
    /// except that it is held when the segment at `snd_una` already timed
    /// out ("the given segment has already been retransmitted by way of the
    /// retransmission timer at least once").
    #[default]
    #[serde(rename = "rfc5681")]
    Rfc5681,
    /// Linux (`tcp_enter_loss`, net/ipv4/tcp_input.c, 6.18): ssthresh is
    /// reduced only if no reduction was made in this window already: the
    /// sender was in Open or Disorder, or `snd_una` had reached the recovery
    /// point, or it was in the Loss state and no timeout had retransmitted
    /// since `snd_una` last advanced. So a timeout during a fast recovery
    /// keeps the ssthresh the recovery set, unlike RFC 5681. (Linux also
    /// computes the value from cwnd, `tcp_reno_ssthresh`; wavelab's Reno
    /// family keeps RFC 5681's FlightSize, see docs/design.md.)
    Linux,
    /// ns-3.44 (`TcpSocketBase::ReTxTimeout`): ssthresh is recomputed on
    /// every timeout, from the bytes in flight (the pipe) before it. Its hold
    /// test reads the head's retransmitted mark after `SetSentListLost` has
    /// cleared it, so a repeated timeout, with one retransmission in flight,
    /// sets ssthresh to 2 segments.
    #[serde(rename = "ns3")]
    Ns3,
}

/// RFC 6582 section 4's two ways of treating the retransmission timer during
/// NewReno fast recovery (without SACK).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartialAckTimer {
    /// Only the first partial ACK restarts the timer: with many losses the
    /// timer expires and go-back-N repairs the rest (RFC 6582's recommendation).
    #[default]
    Impatient,
    /// Every partial ACK restarts the timer: recovery repairs one hole per RTT
    /// however many there are (as stacks that restart the timer on every ACK
    /// of new data do, per RFC 6298 (5.3)).
    SlowButSteady,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            initial_cwnd: 10,
            initial_ssthresh: None,
            sack: true,
            dsack: true,
            timestamps: false,
            dupthresh: 3,
            limited_transmit: false,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            rto: RtoFlavour::Rfc6298,
            rto_ssthresh: RtoSsthresh::Rfc5681,
            delayed_ack: Some(Duration::from_millis(200)),
            rcv_window: ByteSize(64 << 20),
            abc_limit: 2,
            partial_ack_timer: PartialAckTimer::Impatient,
            lost_retransmissions: LostRetransmissions::Rto,
            tlp: false,
            rto_rearm: RtoRearm::Rfc8985,
            recovery_reduction: RecoveryReduction::Prr,
            ssthresh_basis: SsthreshBasis::FlightSize,
            frto: false,
            undo: false,
            hystart: Hystart::Off,
            abc_limit_after_rto: 1,
            ca_per_ack: false,
            receiver: ReceiverProfile::Rfc,
            bbr_quantum: BbrQuantum::None,
            tso: Tso::None,
            timer_hz: 0,
            ecn: false,
        }
    }
}

impl TcpConfig {
    /// Checks the values; the message names the field and the bad value.
    pub fn validate(&self) -> Result<(), String> {
        if !(64..=65_495).contains(&self.mss) {
            return Err(format!(
                "mss: {} is out of range 64..=65495 bytes",
                self.mss
            ));
        }
        if self.initial_cwnd == 0 {
            return Err("initial_cwnd: must be at least 1 segment".into());
        }
        if self.dupthresh == 0 {
            return Err("dupthresh: must be at least 1".into());
        }
        if self.abc_limit == 0 {
            return Err("abc_limit: must be at least 1 segment".into());
        }
        if self.abc_limit_after_rto == 0 {
            return Err("abc_limit_after_rto: must be at least 1 segment".into());
        }
        if ![0, 100, 250, 300, 1000].contains(&self.timer_hz) {
            return Err(format!(
                "timer_hz: {} is not 0 (exact timers) or a Linux CONFIG_HZ (100, 250, 300, 1000)",
                self.timer_hz
            ));
        }
        if self.min_rto.is_zero() {
            return Err("min_rto: must be above zero".into());
        }
        if self.max_rto < self.min_rto {
            return Err(format!(
                "max_rto: {} is below min_rto {}",
                self.max_rto, self.min_rto
            ));
        }
        if let Some(d) = self.delayed_ack {
            if d > Duration::from_millis(500) || d.is_zero() {
                return Err(format!(
                    "delayed_ack: {d} is out of range; RFC 1122 requires a delay above 0 and at most 500ms"
                ));
            }
        }
        if self.initial_rto.is_zero() {
            return Err("initial_rto: must be above zero".into());
        }
        if self.tlp && self.lost_retransmissions != LostRetransmissions::Rack {
            return Err(
                "tlp: the tail loss probe is part of RACK-TLP (RFC 8985); set lost_retransmissions = \"rack\" too".into(),
            );
        }
        if self.tlp && !self.sack {
            return Err("tlp: needs sack = true (RFC 8985 requires SACK)".into());
        }
        let max_window = 65_535u64 << 14;
        if self.rcv_window.0 < self.mss as u64 || self.rcv_window.0 > max_window {
            return Err(format!(
                "rcv_window: {} must be between one MSS and {} (window scale 14)",
                self.rcv_window,
                ByteSize(max_window)
            ));
        }
        Ok(())
    }

    /// The window-scale shift needed to advertise `rcv_window` (RFC 7323).
    pub fn window_shift(&self) -> u8 {
        let mut shift = 0u8;
        while (self.rcv_window.0 >> shift) > 65_535 && shift < 14 {
            shift += 1;
        }
        shift
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_shift_fits() {
        let c = TcpConfig::default();
        c.validate().unwrap();
        assert_eq!(c.rcv_window.0 >> c.window_shift(), 65_536 >> 1);
        assert!(c.rcv_window.0 >> c.window_shift() <= 65_535);
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let e = serde_json::from_str::<TcpConfig>(r#"{"msss": 1000}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `msss`"), "{e}");
        let c: TcpConfig =
            serde_json::from_str(r#"{"delayed_ack": false, "min_rto": "200ms"}"#).unwrap();
        assert_eq!(c.delayed_ack, None);
        assert_eq!(c.min_rto, Duration::from_millis(200));
    }

    #[test]
    fn validation_names_the_field() {
        let c = TcpConfig {
            mss: 10,
            ..TcpConfig::default()
        };
        assert!(c.validate().unwrap_err().starts_with("mss: 10"));
    }
}
