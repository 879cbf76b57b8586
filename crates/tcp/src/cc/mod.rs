//! The congestion-control interface and the built-in algorithms.
//!
//! The sender owns reliability (what is outstanding, lost, to retransmit, the
//! RTO); an algorithm owns *how much* and *when*. One trait serves three
//! families:
//!
//! * ACK-clocked window algorithms (Tahoe, Reno, NewReno, later CUBIC,
//!   Westwood+): [`CongestionControl::cwnd`], [`CongestionControl::on_ack`],
//!   [`CongestionControl::on_congestion`]; everything else keeps its default.
//! * Pacing algorithms (BBR): add [`CongestionControl::pacing_rate`] and
//!   [`CongestionControl::on_rate_sample`]; the sender's pacer obeys the rate.
//! * Timer-driven burst algorithms (TCP Wave): the four hooks of the TCP Wave
//!   Linux patch map to [`CongestionControl::timer`] (get_send_timer_exp_time),
//!   [`CongestionControl::on_timer`] (send_timer_expired),
//!   [`CongestionControl::on_app_limited`] (no_data_to_transmit) and
//!   [`CongestionControl::on_send_round`] (segment_sent); the algorithm releases
//!   data through [`CongestionControl::send_gate`]. An algorithm that returns no
//!   timer and an open gate is ACK-clocked, unchanged.
//!
//! Built-ins are variants of [`Cc`], dispatched by `match`; [`Cc::Custom`] boxes a
//! user algorithm, which [`registry`] makes usable from scenarios by name.
//! [`CcConfig`] is the serde form, tagged by algorithm name. Both enums, the
//! list of names and every match over them come from one table, the
//! `builtins!` invocation below: a new built-in is one entry there.

pub mod bbr;
pub mod bbr3;
pub mod cubic;
pub mod dctcp;
pub mod etcp;
pub mod notification;
pub mod registry;
mod reno;
pub mod wave;
pub mod westwood;
pub mod wsc;

pub use bbr::{Bbr, BbrParams};
pub use bbr3::{Bbr3, Bbr3Params};
pub use cubic::{Cubic, CubicParams};
pub use dctcp::{Dctcp, DctcpParams, DctcpVariant};
pub use etcp::{Etcp, EtcpParams};
pub use notification::{HandoffNotice, HandoffStyle, LinkReport, Notification, PathInfo};
pub use reno::{Coupled, Reno, RenoParams, RenoVariant};
pub use wave::{Wave, WaveParams};
pub use westwood::{Westwood, WestwoodFilter, WestwoodParams};
pub use wsc::{SessionRecord, WscParams, WscTcp};

use crate::rate::RateSample;
use crate::time::{Duration, Instant, Rate};
use core::fmt;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

/// Linux's congestion-avoidance states, reported to the algorithm on change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CaState {
    /// No loss suspected.
    Open,
    /// Duplicate ACKs or SACKs seen, below the threshold.
    Disorder,
    /// Window reduced for an ECN-Echo (RFC 3168 section 6.1.2), until the
    /// data sent before the reduction is acknowledged.
    Cwr,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// Recovery after a retransmission timeout (or Tahoe's go-back-N).
    Loss,
}

impl CaState {
    /// Numeric code used in time series: Open 0, Disorder 1, Cwr 2, Recovery 3, Loss 4.
    pub fn code(self) -> u8 {
        self as u8
    }
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// How the sender repairs losses found by duplicate ACKs when SACK is not in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryStyle {
    /// Tahoe: fast retransmit, then go back to `snd_una` in slow start.
    GoBackN,
    /// Reno (RFC 5681): fast recovery ends on the first new ACK.
    Reno,
    /// NewReno (RFC 6582): fast recovery ends at the recovery point; partial ACKs
    /// retransmit the next hole.
    NewReno,
}

/// What the algorithm allows the sender to transmit now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendGate {
    /// Limited only by the window and the pacer.
    Open,
    /// At most this many more segments until the algorithm says otherwise.
    Quota {
        /// Segments left.
        segments: u32,
    },
    /// Nothing may be sent.
    Closed,
}

/// Sent-segment report, for [`CongestionControl::on_packet_sent`].
#[derive(Clone, Copy, Debug)]
pub struct SentInfo {
    /// Stream offset of the first byte.
    pub offset: u64,
    /// Payload length.
    pub len: u32,
    /// True for a retransmission.
    pub retransmission: bool,
    /// Bytes in flight after this segment.
    pub in_flight: u64,
}

/// An ACK that carried news, for [`CongestionControl::on_ack`].
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// Sender MSS.
    pub mss: u32,
    /// Bytes newly covered by the cumulative ACK.
    pub bytes_acked: u64,
    /// Bytes newly delivered: newly SACKed plus newly cumulatively ACKed bytes
    /// that were not SACKed before.
    pub bytes_delivered: u64,
    /// Bytes in flight before the ACK.
    pub prior_in_flight: u64,
    /// Bytes in flight after the ACK.
    pub in_flight: u64,
    /// Bytes newly marked lost while processing this ACK.
    pub bytes_lost: u64,
    /// RTT sample taken from this ACK, if any (Karn's rule applied).
    pub rtt: Option<Duration>,
    /// Smoothed RTT after this ACK.
    pub srtt: Option<Duration>,
    /// Minimum RTT seen.
    pub min_rtt: Option<Duration>,
    /// Recovery state while the ACK was processed.
    pub state: CaState,
    /// True if this was a duplicate ACK.
    pub dupack: bool,
    /// True if the sender was limited by the window (not by the application).
    pub cwnd_limited: bool,
    /// True if this ACK started a loss recovery (the window was just reduced):
    /// window algorithms must not grow it on the same ACK.
    pub window_reduced: bool,
    /// Cumulative ACK point after the ACK (stream offset).
    pub snd_una: u64,
    /// Next new stream offset to send (the end of what was ever sent).
    pub snd_nxt: u64,
}

impl AckEvent {
    /// True if a loss-based window may grow on this ACK: it acknowledges new
    /// data (duplicate ACKs, even with new SACK information, do not open the
    /// window, RFC 5681), outside fast recovery (RFC 5681 section 3.2), not
    /// on the ACK that just reduced the window, and while the window rather
    /// than the application limits the sender (RFC 7661's spirit, RFC 9438
    /// section 5.8).
    pub fn may_grow_window(&self) -> bool {
        self.state != CaState::Recovery
            && !self.window_reduced
            && self.cwnd_limited
            && self.bytes_acked > 0
    }
}

/// What triggered a congestion response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionKind {
    /// Loss detected by duplicate ACKs or SACK.
    FastRetransmit,
    /// The retransmission timer expired. `repeated` is true when ssthresh
    /// must be held: by default (RFC 5681 section 3.1) when the segment at
    /// `snd_una` had already been retransmitted by the timer; `tcp.rto_ssthresh`
    /// selects Linux's or ns-3's rule instead ([`crate::config::RtoSsthresh`]).
    Rto {
        /// Hold ssthresh (the same segment timed out again, by default).
        repeated: bool,
    },
    /// An ACK with ECN-Echo: a CE mark "treated just as a congestion loss"
    /// (RFC 3168 section 6.1.2), with nothing to retransmit; at most once per
    /// window of data.
    Ecn,
}

/// A congestion event, for [`CongestionControl::on_congestion`].
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    /// What happened.
    pub kind: CongestionKind,
    /// FlightSize of RFC 5681: bytes sent and not cumulatively acknowledged.
    pub flight_size: u64,
    /// What ssthresh halves under the connection's `tcp.ssthresh_basis`:
    /// FlightSize (the default), FlightSize less the SACKed bytes (ns-3's
    /// pipe), or the algorithm's cwnd (Linux)
    /// ([`crate::config::SsthreshBasis`]).
    /// The Reno family halves it; algorithms with their own rule (CUBIC's
    /// beta x cwnd, Westwood+'s bandwidth estimate) ignore it.
    pub ssthresh_basis: u64,
    /// Bytes in flight (pipe) at the event.
    pub in_flight: u64,
    /// Sender MSS.
    pub mss: u32,
}

/// A window reduction found to be spurious, for [`CongestionControl::on_undo`]:
/// the window and ssthresh before it (Linux's `prior_cwnd` and
/// `prior_ssthresh`, net/ipv4/tcp_input.c 6.18).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UndoEvent {
    /// cwnd before the reduction (bytes).
    pub prior_cwnd: u64,
    /// ssthresh before the reduction (bytes; `u64::MAX` when unset): in the
    /// Open or Disorder state the larger of ssthresh and 3/4 of cwnd
    /// (`tcp_current_ssthresh`).
    pub prior_ssthresh: u64,
    /// Sender MSS.
    pub mss: u32,
}

/// Connection options that change a window algorithm's growth and slow
/// start, from [`crate::TcpConfig`] (given to the algorithm once, by
/// [`CongestionControl::set_options`], before the connection opens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowOptions {
    /// RFC 3465's L in the slow start after a timeout, in segments.
    pub abc_limit_after_rto: u32,
    /// Congestion avoidance adds MSS * MSS / cwnd per ACK (RFC 5681 equation
    /// 3, ns-3's `TcpNewReno`) instead of counting bytes (RFC 3465).
    pub ca_per_ack: bool,
    /// The hybrid slow start CUBIC uses unless its parameters choose one.
    pub hystart: crate::config::Hystart,
    /// BBR's allowance above its bandwidth-delay product.
    pub bbr_quantum: crate::config::BbrQuantum,
    /// Whether a paced algorithm sends Linux's TSO bursts.
    pub tso: crate::config::Tso,
}

impl Default for WindowOptions {
    fn default() -> Self {
        WindowOptions::from(&crate::TcpConfig::default())
    }
}

impl From<&crate::TcpConfig> for WindowOptions {
    fn from(c: &crate::TcpConfig) -> Self {
        WindowOptions {
            abc_limit_after_rto: c.abc_limit_after_rto,
            ca_per_ack: c.ca_per_ack,
            hystart: c.hystart,
            bbr_quantum: c.bbr_quantum,
            tso: c.tso,
        }
    }
}

/// The end of a fast recovery, for [`CongestionControl::on_recovery_exit`].
#[derive(Clone, Copy, Debug)]
pub struct RecoveryExit {
    /// Bytes still outstanding (FlightSize).
    pub flight_size: u64,
    /// Sender MSS.
    pub mss: u32,
    /// True if the recovery was SACK-based (RFC 6675), false for RFC 5681/6582.
    pub sack: bool,
}

/// How an algorithm uses ECN: the codepoint on its data and the feedback
/// it needs from the receiver ([`CongestionControl::ecn_style`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EcnStyle {
    /// RFC 3168 classic ECN, when the connection enables it (`tcp.ecn`):
    /// ECT(0) on new data, the receiver's ECN-Echo latched until CWR, a
    /// reduction once per window as for a loss. Every algorithm but DCTCP
    /// and Prague.
    Classic,
    /// DCTCP (RFC 8257): ECN negotiated whatever `tcp.ecn` says (both
    /// endpoints run DCTCP, section 1), ECT(0) on new data, the receiver
    /// echoing each data packet's CE state (section 3.2), and the sender
    /// given the echo on every ACK ([`CongestionControl::on_ecn_feedback`]).
    Dctcp,
    /// A scalable (L4S) response (RFC 9330, RFC 9331 section 4.1): as
    /// [`EcnStyle::Dctcp`], with ECT(1) on new data so that an L4S queue
    /// (DualPI2's L queue, RFC 9332) classifies it.
    L4s,
}

impl EcnStyle {
    /// True if the receiver echoes each packet's CE state (RFC 8257
    /// section 3.2) rather than latching ECN-Echo until CWR.
    pub fn per_packet_echo(self) -> bool {
        self != EcnStyle::Classic
    }
}

/// The ECN feedback of one ACK on an ECN connection, for
/// [`CongestionControl::on_ecn_feedback`]: given before the sender's
/// response to an ECN-Echo (so an algorithm can update its estimate of
/// the marked fraction first, RFC 8257 section 3.3) and before
/// [`CongestionControl::on_ack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnFeedback {
    /// Bytes newly delivered by the ACK (cumulatively acknowledged or
    /// SACKed for the first time).
    pub bytes_acked: u64,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// Cumulative ACK point after the ACK (stream offset).
    pub snd_una: u64,
    /// Next new stream offset to send.
    pub snd_nxt: u64,
}

/// Something an algorithm asks of the sender (drained with
/// [`CongestionControl::poll_request`] after every input, cross-layer
/// notifications and path changes included). The last five are the knobs
/// cross-layer algorithms need (ETCP, MobiWac 2009 sections 3.1-3.5;
/// WSC-TCP's dynamic duplicate threshold); the sender carries them out at
/// once, in the order they are polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderRequest {
    /// Feed this RTT sample to the RFC 6298 estimator (clears the backoff):
    /// the samples of algorithms whose [`CongestionControl::takes_rtt_samples`]
    /// is true, or, after [`SenderRequest::ResetRtt`], the sample a
    /// re-initialised estimator starts from (ETCP).
    RttSample(Duration),
    /// Mark the connection application-limited in the delivery-rate sampler
    /// until what is now in flight is delivered (BBR's PROBE_RTT).
    MarkAppLimited,
    /// Use this duplicate-ACK threshold (DupThresh of RFC 5681 and RFC 6675,
    /// at least 1) from now on; `None` restores the configured one.
    DupThresh(Option<u32>),
    /// Use the configured duplicate-ACK threshold plus this many from now
    /// on (WSC-TCP section 3.2: DEFAULT_DUP_ACK plus the segments the link
    /// delivered past one still in link-layer retry); 0 restores it.
    DupThreshAbove(u32),
    /// Re-initialise the RTT estimator as for a new connection (RFC 6298
    /// section 2.1: no SRTT, the initial RTO, no backoff); the next sample
    /// sets SRTT and RTTVAR afresh (section 2.2). The minimum RTT seen is
    /// kept.
    ResetRtt,
    /// Use this floor for the RTO from now on (RFC 6298 (2.4)'s minimum),
    /// never below the configured `min_rto`, which is the floor at the
    /// start. A running timer keeps its deadline; ask
    /// [`SenderRequest::RestartRtoTimer`] to re-arm it.
    MinRto(Duration),
    /// Re-arm a running retransmission timer at now + RTO (with the current
    /// backoff), so that a new RTO or floor takes effect at once.
    RestartRtoTimer,
    /// Retransmit the first unacknowledged segment now, whatever the window
    /// (a retransmission of it still in flight is presumed lost).
    RetransmitFirstUnacked,
}

/// A congestion-control algorithm. Every input carries `now`; defaults make an
/// algorithm ACK-clocked with an open gate, no pacing and no timer.
pub trait CongestionControl: fmt::Debug {
    /// Algorithm name as used in scenario files.
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` when unset).
    fn ssthresh(&self) -> u64;
    /// Pacing rate the sender must not exceed, if any.
    fn pacing_rate(&self) -> Option<Rate> {
        None
    }
    /// Segments a paced sender may release at one instant before its pacer
    /// waits for all of them (at least 1): Linux's TSO burst (`tcp.tso`).
    /// Only read while [`CongestionControl::pacing_rate`] is set.
    fn send_quantum(&self) -> u64 {
        1
    }
    /// Whether the algorithm lets data out now.
    fn send_gate(&self, _now: Instant) -> SendGate {
        SendGate::Open
    }
    /// The algorithm's own deadline (TCP Wave's next burst); folded into the
    /// sender's `poll_timeout`.
    fn timer(&self) -> Option<Instant> {
        None
    }
    /// Repair style for duplicate-ACK losses without SACK.
    fn recovery_style(&self) -> RecoveryStyle {
        RecoveryStyle::NewReno
    }
    /// True if the sender paces the window's reduction in a SACK fast
    /// recovery (`tcp.recovery_reduction`, PRR by default); false for
    /// algorithms that set their own rate or window through a recovery (BBR,
    /// TCP Wave), as Linux skips `tcp_cwnd_reduction` for those with their
    /// own `cong_control`.
    fn proportional_reduction(&self) -> bool {
        true
    }
    /// How the algorithm uses ECN ([`EcnStyle::Classic`] by default). Any
    /// other style negotiates ECN whatever `tcp.ecn` says, and the driver
    /// gives the connection's receiver the per-packet echo
    /// ([`crate::Receiver::set_per_packet_echo`]).
    fn ecn_style(&self) -> EcnStyle {
        EcnStyle::Classic
    }
    /// The ECN feedback of an ACK that delivered data or carried ECN-Echo,
    /// on a connection that negotiated ECN; ignored by default.
    fn on_ecn_feedback(&mut self, _now: Instant, _fb: &EcnFeedback) {}
    /// The connection's window options, once, before the connection opens.
    fn set_options(&mut self, _options: &WindowOptions) {}
    /// The connection's effective MSS, known once the handshake completes and
    /// before any data is sent (the peer's MSS option and TCP options can make
    /// it smaller than configured). Windows kept in segments rescale here.
    fn set_mss(&mut self, _mss: u32) {}
    /// The handshake completed at `now` (after [`Self::set_mss`]); `rtt` is its
    /// RTT sample (`None` if the SYN was retransmitted). Timer-driven
    /// algorithms start their clock here; pacing algorithms size their first
    /// rate.
    fn on_established(&mut self, _now: Instant, _rtt: Option<Duration>) {}
    /// True if the algorithm measures RTT itself and feeds the RTO estimator
    /// through [`SenderRequest::RttSample`]; the sender then takes no samples
    /// of its own (TCP Wave: one sample per burst, retransmissions included).
    fn takes_rtt_samples(&self) -> bool {
        false
    }
    /// False if [`CongestionControl::on_rate_sample`] ignores its samples:
    /// the sender then skips delivery-rate sampling (the samples reach
    /// nothing else). True by default, so that an algorithm that overrides
    /// `on_rate_sample` gets its samples without asking.
    fn uses_rate_samples(&self) -> bool {
        true
    }
    /// The next request for the sender, if any.
    fn poll_request(&mut self) -> Option<SenderRequest> {
        None
    }
    /// A segment left the sender.
    fn on_packet_sent(&mut self, _now: Instant, _info: &SentInfo) {}
    /// A transmit opportunity closed after `segments` segments went out.
    fn on_send_round(&mut self, _now: Instant, _segments: u32) {}
    /// The gate was open but the sender had nothing to send.
    fn on_app_limited(&mut self, _now: Instant) {}
    /// The algorithm's timer expired.
    fn on_timer(&mut self, _now: Instant) {}
    /// An ACK carried news.
    fn on_ack(&mut self, now: Instant, ack: &AckEvent);
    /// A delivery-rate sample (one per ACK that delivered data).
    fn on_rate_sample(&mut self, _now: Instant, _sample: &RateSample) {}
    /// Loss or congestion detected: set ssthresh and cwnd.
    fn on_congestion(&mut self, now: Instant, event: &CongestionEvent);
    /// Fast recovery ended.
    fn on_recovery_exit(&mut self, _now: Instant, _exit: &RecoveryExit) {}
    /// The recovery state changed.
    fn on_state(&mut self, _now: Instant, _state: CaState) {}
    /// DSACK showed a retransmission was unnecessary.
    fn on_spurious(&mut self, _now: Instant) {}
    /// The sender found the last reduction spurious (`tcp.undo`, or F-RTO):
    /// restore the window from before it. Window algorithms take the larger
    /// of their window and `prior_cwnd`, and of ssthresh and
    /// `prior_ssthresh` (Linux's `tcp_undo_cwnd_reduction` with
    /// `tcp_reno_undo_cwnd`); the default ignores it.
    fn on_undo(&mut self, _now: Instant, _undo: &UndoEvent) {}
    /// The path under the connection changed.
    fn on_path_change(&mut self, _now: Instant, _path: &PathInfo) {}
    /// A cross-layer notification arrived.
    fn on_notification(&mut self, _now: Instant, _n: &Notification) {}
    /// The sending host's record of past sessions on this connection's path
    /// (oldest first), offered once before the connection opens, at `now`
    /// (WSC-TCP's best-start window, Srinivasan 2016, section 3.3). A driver that
    /// keeps no history offers none.
    fn on_path_history(&mut self, _now: Instant, _past: &[SessionRecord]) {}
    /// What this session adds to the host's record when it ends; `None`
    /// (the default) keeps no record.
    fn session_record(&self) -> Option<SessionRecord> {
        None
    }
    /// Names of the algorithm's internal state variables, in [`Self::metrics`] order.
    fn metric_names(&self) -> &'static [&'static str] {
        &[]
    }
    /// Writes the current internal state into `out` (`out.len() == metric_names().len()`).
    fn metrics(&self, _out: &mut [f64]) {}
    /// A copy of the algorithm in its current state, for a simulation forked
    /// at an instant (the copy continues independently). `None` (the
    /// default) means the algorithm cannot be copied: forking a simulation
    /// that runs it is an error naming it.
    fn clone_box(&self) -> Option<Box<dyn CongestionControl + Send>> {
        None
    }
}

/// The built-in algorithms, one entry each: the [`Cc`] variant holding the
/// algorithm's type, then every name a scenario may give it with its
/// [`CcConfig`] variant, parameter type (deserialised from the scenario's
/// table, checked by its `validate`), aliases and constructor. [`Cc`],
/// [`CcConfig`], [`ALGORITHMS`], the dispatch of [`CongestionControl`] over
/// [`Cc`] and every match on a name are generated from it: adding a
/// built-in is one entry here.
///
/// The first token is `$`, passed through so that the table can define the
/// `dispatch!` macro (a macro cannot write `$` in a macro it defines).
macro_rules! builtins {
    ($d:tt
     $(
        $(#[$cc_doc:meta])*
        $cc:ident($cc_ty:ty) {
            $(
                $(#[$cfg_doc:meta])*
                $cfg:ident($params:ty) = $name:literal $(| $alias:literal)* => $build:expr;
            )+
        }
     )+
    ) => {
        /// The algorithms wavelab ships, plus an escape hatch for user algorithms.
        #[derive(Debug)]
        pub enum Cc {
            $( $(#[$cc_doc])* $cc($cc_ty), )+
            /// A user algorithm.
            Custom(Box<dyn CongestionControl + Send>),
        }

        /// Calls `$e` with `$cc` bound to the algorithm inside a [`Cc`]
        /// (static dispatch: each arm calls the concrete type's method).
        macro_rules! dispatch {
            ($d this:ident, $d c:ident => $d e:expr) => {
                match $d this {
                    $( Cc::$cc($d c) => $d e, )+
                    Cc::Custom($d c) => $d e,
                }
            };
        }

        impl Cc {
            /// A copy of the algorithm in its current state (a built-in
            /// one always; a user one if its
            /// [`CongestionControl::clone_box`] gives one). The error names
            /// the algorithm that cannot be copied.
            pub fn try_clone(&self) -> Result<Cc, String> {
                match self {
                    $( Cc::$cc(c) => Ok(Cc::$cc(c.clone())), )+
                    Cc::Custom(c) => c.clone_box().map(Cc::Custom).ok_or_else(|| {
                        format!(
                            "congestion control \"{}\" cannot be copied (it gives no \
                             clone_box), so a simulation running it cannot be forked",
                            c.name()
                        )
                    }),
                }
            }

            /// True if [`Cc::try_clone`] succeeds.
            pub fn can_clone(&self) -> bool {
                match self {
                    Cc::Custom(c) => c.clone_box().is_some(),
                    _ => true,
                }
            }
        }

        /// Copies a built-in algorithm, or a user one that gives a
        /// [`CongestionControl::clone_box`].
        ///
        /// # Panics
        /// On a user algorithm that cannot be copied: callers check
        /// [`Cc::can_clone`] first (as `Simulation::fork` does) or use
        /// [`Cc::try_clone`].
        impl Clone for Cc {
            fn clone(&self) -> Self {
                match self.try_clone() {
                    Ok(c) => c,
                    Err(e) => panic!("{e}"),
                }
            }
        }

        /// An algorithm and its parameters, as written in a scenario: either a bare name
        /// (`cc = "newreno"`) or a table tagged by `algorithm`
        /// (`cc = { algorithm = "newreno" }`). Unknown names and parameters are errors.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(tag = "algorithm")]
        pub enum CcConfig {
            $($( $(#[$cfg_doc])* #[serde(rename = $name)] $cfg($params), )+)+
            /// An algorithm registered under a name at run time
            /// ([`registry::register`]); written as a table tagged by its name.
            #[serde(untagged)]
            Custom(registry::CustomConfig),
        }

        /// Every built-in algorithm name a scenario may use (aliases aside).
        pub const ALGORITHMS: &[&str] = &[$($($name,)+)+];

        /// True if `name` is a built-in algorithm's name or one of its aliases
        /// (such as `"westwood+"`).
        pub fn is_builtin(name: &str) -> bool {
            matches!(name, $($($name $(| $alias)* )|+)|+)
        }

        impl CcConfig {
            /// The algorithm's name.
            pub fn name(&self) -> &'static str {
                match self {
                    $($( CcConfig::$cfg(_) => $name, )+)+
                    CcConfig::Custom(c) => c.name(),
                }
            }

            /// Checks the algorithm's parameters; the message starts with the
            /// parameter's name.
            pub fn validate(&self) -> Result<(), String> {
                match self {
                    $($( CcConfig::$cfg(p) => p.validate(), )+)+
                    // checked when it was parsed
                    CcConfig::Custom(_) => Ok(()),
                }
            }

            fn build_at(&self, start: &WindowStart) -> Cc {
                match self {
                    $($( CcConfig::$cfg(p) => Cc::$cc(($build)(p, start)), )+)+
                    CcConfig::Custom(c) => c.build(start),
                }
            }

            /// The built-in algorithm called `name` (see [`is_builtin`]) with
            /// `params`.
            fn parse_builtin(name: &str, params: serde_json::Value) -> Result<Self, String> {
                use registry::parse_params as parse;
                match name {
                    $($( $name $(| $alias)* => parse(params).map(CcConfig::$cfg), )+)+
                    _ => unreachable!("{name} is not a built-in algorithm"),
                }
            }
        }
    };
}

builtins! {$
    /// Tahoe, Reno and NewReno: one window arithmetic, three repair styles.
    Reno(Reno) {
        /// TCP Tahoe.
        Tahoe(RenoParams) = "tahoe" => |p, s| Reno::new(RenoVariant::Tahoe, p, s);
        /// TCP Reno (RFC 5681).
        Reno(RenoParams) = "reno" => |p, s| Reno::new(RenoVariant::Reno, p, s);
        /// TCP NewReno (RFC 6582).
        NewReno(RenoParams) = "newreno" => |p, s| Reno::new(RenoVariant::NewReno, p, s);
    }
    /// Westwood+ (Mascolo et al. 2004).
    Westwood(Westwood) {
        /// Westwood+ (Mascolo et al., Performance Evaluation 2004); also `"westwood+"`.
        Westwood(WestwoodParams) = "westwood" | "westwood+" => Westwood::new;
    }
    /// CUBIC (RFC 9438).
    Cubic(Cubic) {
        /// CUBIC (RFC 9438).
        Cubic(CubicParams) = "cubic" => Cubic::new;
    }
    /// DCTCP (RFC 8257) and the L4S response of TCP Prague
    /// (draft-briscoe-iccrg-prague-congestion-control-04).
    Dctcp(Dctcp) {
        /// DCTCP (RFC 8257).
        Dctcp(DctcpParams) = "dctcp" => |p, s| Dctcp::new(DctcpVariant::Dctcp, p, s);
        /// TCP Prague's essentials (draft-briscoe-iccrg-prague-congestion-control-04):
        /// the DCTCP response on ECT(1), paced, Reno's on loss.
        Prague(DctcpParams) = "prague" => |p, s| Dctcp::new(DctcpVariant::Prague, p, s);
    }
    /// BBR v1 (Cardwell et al. 2016).
    Bbr(Bbr) {
        /// BBR v1 (Cardwell et al., ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00).
        Bbr(BbrParams) = "bbr" => Bbr::new;
    }
    /// BBRv3 (draft-ietf-ccwg-bbr-06).
    Bbr3(Bbr3) {
        /// BBRv3 (Cardwell, Swett and Beshay, draft-ietf-ccwg-bbr-06).
        Bbr3(Bbr3Params) = "bbr3" => Bbr3::new;
    }
    /// TCP Wave (Abdelsalam et al.).
    Wave(Wave) {
        /// TCP Wave (DCNET 2016 and the project page; the Linux module's behaviour).
        Wave(WaveParams) = "wave" => Wave::new;
    }
    /// ETCPv0 and ETCPv1 (Daniel and Kojo, MobiWac 2009).
    Etcp(Etcp) {
        /// ETCPv0: MobiWac 2009's cross-layer TCP with N = 1 (its single-flow predecessor).
        Etcpv0(EtcpParams) = "etcpv0" => |p, s| Etcp::new(etcp::Version::V0, p, s);
        /// ETCPv1: MobiWac 2009's cross-layer TCP for N flows (section 3, Figures 1-3).
        Etcpv1(EtcpParams) = "etcpv1" => |p, s| Etcp::new(etcp::Version::V1, p, s);
    }
    /// WSC-TCP (Srinivasan 2016).
    Wsc(WscTcp) {
        /// WSC-TCP (Srinivasan, MS thesis, UC Santa Cruz 2016).
        WscTcp(WscParams) = "wsc-tcp" => WscTcp::new;
    }
}

impl CongestionControl for Cc {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    fn cwnd(&self) -> u64 {
        dispatch!(self, c => c.cwnd())
    }
    fn ssthresh(&self) -> u64 {
        dispatch!(self, c => c.ssthresh())
    }
    fn pacing_rate(&self) -> Option<Rate> {
        dispatch!(self, c => c.pacing_rate())
    }
    fn send_quantum(&self) -> u64 {
        dispatch!(self, c => c.send_quantum())
    }
    fn send_gate(&self, now: Instant) -> SendGate {
        dispatch!(self, c => c.send_gate(now))
    }
    fn timer(&self) -> Option<Instant> {
        dispatch!(self, c => c.timer())
    }
    fn recovery_style(&self) -> RecoveryStyle {
        dispatch!(self, c => c.recovery_style())
    }
    fn proportional_reduction(&self) -> bool {
        dispatch!(self, c => c.proportional_reduction())
    }
    fn ecn_style(&self) -> EcnStyle {
        dispatch!(self, c => c.ecn_style())
    }
    fn on_ecn_feedback(&mut self, now: Instant, fb: &EcnFeedback) {
        dispatch!(self, c => c.on_ecn_feedback(now, fb))
    }
    fn set_options(&mut self, options: &WindowOptions) {
        dispatch!(self, c => c.set_options(options))
    }
    fn set_mss(&mut self, mss: u32) {
        dispatch!(self, c => c.set_mss(mss))
    }
    fn on_established(&mut self, now: Instant, rtt: Option<Duration>) {
        dispatch!(self, c => c.on_established(now, rtt))
    }
    fn takes_rtt_samples(&self) -> bool {
        dispatch!(self, c => c.takes_rtt_samples())
    }
    fn uses_rate_samples(&self) -> bool {
        dispatch!(self, c => c.uses_rate_samples())
    }
    fn poll_request(&mut self) -> Option<SenderRequest> {
        dispatch!(self, c => c.poll_request())
    }
    #[inline]
    fn on_packet_sent(&mut self, now: Instant, info: &SentInfo) {
        dispatch!(self, c => c.on_packet_sent(now, info))
    }
    fn on_send_round(&mut self, now: Instant, segments: u32) {
        dispatch!(self, c => c.on_send_round(now, segments))
    }
    fn on_app_limited(&mut self, now: Instant) {
        dispatch!(self, c => c.on_app_limited(now))
    }
    fn on_timer(&mut self, now: Instant) {
        dispatch!(self, c => c.on_timer(now))
    }
    #[inline]
    fn on_ack(&mut self, now: Instant, ack: &AckEvent) {
        dispatch!(self, c => c.on_ack(now, ack))
    }
    fn on_rate_sample(&mut self, now: Instant, sample: &RateSample) {
        dispatch!(self, c => c.on_rate_sample(now, sample))
    }
    fn on_congestion(&mut self, now: Instant, event: &CongestionEvent) {
        dispatch!(self, c => c.on_congestion(now, event))
    }
    fn on_recovery_exit(&mut self, now: Instant, exit: &RecoveryExit) {
        dispatch!(self, c => c.on_recovery_exit(now, exit))
    }
    fn on_state(&mut self, now: Instant, state: CaState) {
        dispatch!(self, c => c.on_state(now, state))
    }
    fn on_spurious(&mut self, now: Instant) {
        dispatch!(self, c => c.on_spurious(now))
    }
    fn on_undo(&mut self, now: Instant, undo: &UndoEvent) {
        dispatch!(self, c => c.on_undo(now, undo))
    }
    fn on_path_change(&mut self, now: Instant, path: &PathInfo) {
        dispatch!(self, c => c.on_path_change(now, path))
    }
    fn on_notification(&mut self, now: Instant, n: &Notification) {
        dispatch!(self, c => c.on_notification(now, n))
    }
    fn on_path_history(&mut self, now: Instant, past: &[SessionRecord]) {
        dispatch!(self, c => c.on_path_history(now, past))
    }
    fn session_record(&self) -> Option<SessionRecord> {
        dispatch!(self, c => c.session_record())
    }
    fn metric_names(&self) -> &'static [&'static str] {
        dispatch!(self, c => c.metric_names())
    }
    fn metrics(&self, out: &mut [f64]) {
        dispatch!(self, c => c.metrics(out))
    }
    fn clone_box(&self) -> Option<Box<dyn CongestionControl + Send>> {
        let c = self.try_clone().ok()?;
        Some(Box::new(c))
    }
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::NewReno(RenoParams::default())
    }
}

impl CcConfig {
    /// Builds the algorithm for a connection with this MSS, initial window (in
    /// segments) and initial ssthresh (bytes, `None` for unlimited).
    pub fn build(
        &self,
        mss: u32,
        initial_cwnd: u32,
        initial_ssthresh: Option<u64>,
        abc_limit: u32,
    ) -> Cc {
        self.build_at(&WindowStart {
            mss,
            initial_cwnd,
            initial_ssthresh,
            abc_limit,
        })
    }

    /// The algorithm called `name` with default parameters.
    pub fn named(name: &str) -> Result<Self, String> {
        Self::from_parts(name, serde_json::Value::Object(Default::default()))
    }

    fn from_parts(name: &str, params: serde_json::Value) -> Result<Self, String> {
        if is_builtin(name) {
            return Self::parse_builtin(name, params);
        }
        registry::CustomConfig::parse(name, params)
            .map(|r| r.map(CcConfig::Custom))
            .unwrap_or_else(|| {
                Err(format!(
                    "\"{name}\" is not a congestion-control algorithm, choose one of {}",
                    CcConfig::names().join(", ")
                ))
            })
    }
}

impl<'de> Deserialize<'de> for CcConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::String(name) => CcConfig::named(&name).map_err(de::Error::custom),
            serde_json::Value::Object(mut map) => {
                let name = match map.remove("algorithm") {
                    Some(serde_json::Value::String(s)) => s,
                    Some(other) => {
                        return Err(de::Error::custom(format!(
                            "algorithm: {other} is not an algorithm name, choose one of {}",
                            CcConfig::names().join(", ")
                        )))
                    }
                    None => {
                        return Err(de::Error::custom(format!(
                            "missing field `algorithm` (one of {})",
                            CcConfig::names().join(", ")
                        )))
                    }
                };
                CcConfig::from_parts(&name, serde_json::Value::Object(map)).map_err(de::Error::custom)
            }
            other => Err(de::Error::custom(format!(
                "{other} is not an algorithm: write a name such as \"newreno\" or a table with `algorithm`"
            ))),
        }
    }
}

/// Initial window settings shared by every window-based algorithm.
#[derive(Clone, Copy, Debug)]
pub struct WindowStart {
    /// MSS in bytes.
    pub mss: u32,
    /// Initial window in segments.
    pub initial_cwnd: u32,
    /// Initial ssthresh in bytes (`None`: unlimited).
    pub initial_ssthresh: Option<u64>,
    /// Slow-start increase limit per ACK in segments (RFC 3465 L).
    pub abc_limit: u32,
}

/// RFC 5681 equation 4: ssthresh = max(FlightSize / 2, 2 * SMSS).
pub fn half_flight(flight_size: u64, mss: u32) -> u64 {
    (flight_size / 2).max(2 * mss as u64)
}

/// ssthresh at a fast retransmit for a window algorithm: half the event's
/// [`CongestionEvent::ssthresh_basis`] (RFC 5681 equation 4), the basis
/// taken at most as the window `cwnd` in force before the event, so a
/// recovery always reduces the window it starts from: after a long SACK
/// repair FlightSize counts every segment the receiver holds above the
/// hole, and half of it was nine times the window (RFC 5681 wrote
/// min(cwnd, rwnd) / 2 before FlightSize replaced it for application-limited
/// senders, whose FlightSize is below cwnd).
pub fn loss_ssthresh(ev: &CongestionEvent, cwnd: u64) -> u64 {
    half_flight(ev.ssthresh_basis.min(cwnd), ev.mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_from_name_or_table() {
        let c: CcConfig = serde_json::from_str("\"reno\"").unwrap();
        assert_eq!(c.name(), "reno");
        let c: CcConfig = serde_json::from_str(r#"{"algorithm": "tahoe"}"#).unwrap();
        assert_eq!(c.name(), "tahoe");
        let e = serde_json::from_str::<CcConfig>("\"vegas\"").unwrap_err();
        assert!(
            e.to_string()
                .contains("\"vegas\" is not a congestion-control algorithm"),
            "{e}"
        );
        let e =
            serde_json::from_str::<CcConfig>(r#"{"algorithm": "reno", "bogus": 1}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `bogus`"), "{e}");
        let e = serde_json::from_str::<CcConfig>(r#"{"beta": 1}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `algorithm`"), "{e}");
    }

    /// The sender takes no rate samples for an algorithm that says it uses
    /// none, so such an algorithm must be unchanged by one (and BBR and Wave,
    /// which use them, must say so).
    #[test]
    fn only_algorithms_that_use_rate_samples_are_changed_by_one() {
        let sample = RateSample {
            delivered: 150_000,
            interval: Duration::from_millis(100),
            rate: Some(Rate::from_mbps(12)),
            rtt: Some(Duration::from_millis(80)),
            app_limited: false,
            prior_delivered: 1_000_000,
            newly_delivered: 3000,
            newly_lost: 0,
            prior_in_flight: 60_000,
            total_delivered: 1_150_000,
            tx_in_flight: 60_000,
            lost: 0,
        };
        for name in ALGORITHMS {
            let mut cc = CcConfig::named(name).unwrap().build(1500, 10, None, 2);
            let before = format!("{cc:?}");
            for k in 0..20u64 {
                cc.on_rate_sample(Instant::from_nanos(1_000_000_000 + k * 50_000_000), &sample);
            }
            let changed = format!("{cc:?}") != before;
            assert_eq!(cc.uses_rate_samples(), changed, "{name}");
            assert_eq!(
                cc.uses_rate_samples(),
                ["bbr", "bbr3", "wave"].contains(name),
                "{name}"
            );
        }
    }

    #[test]
    fn half_flight_has_floor() {
        assert_eq!(half_flight(100_000, 1000), 50_000);
        assert_eq!(half_flight(1000, 1000), 2000);
    }
}
