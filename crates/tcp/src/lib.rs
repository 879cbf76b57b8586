//! # wavelab-tcp: a sans-IO TCP core
//!
//! One sender and one receiver state machine with pluggable congestion control,
//! free of clocks, sockets, random numbers and schedulers: every entry point
//! takes `now`, and the endpoint answers with segments to send and the next
//! instant it wants to be woken. The simulator (`wavelab-sim`) and, later, a
//! real-network driver are two drivers of this one core.
//!
//! ```
//! use wavelab_tcp::{CcConfig, Instant, Receiver, Sender, SeqNum, TcpConfig};
//!
//! let cfg = TcpConfig::default();
//! let cc = CcConfig::default().build(cfg.mss, cfg.initial_cwnd, None, cfg.abc_limit);
//! let mut tx = Sender::new(cfg.clone(), cc, SeqNum(1000));
//! let mut rx = Receiver::new(cfg, SeqNum(5000));
//! tx.write_virtual(100_000);
//! tx.close();
//! // A loss-free, zero-delay exchange: shuttle segments until both are quiet.
//! let now = Instant::ZERO;
//! loop {
//!     let mut moved = false;
//!     while let Some(t) = tx.poll_transmit(now) { rx.handle_segment(now, &t.segment, None); moved = true; }
//!     while let Some(t) = rx.poll_transmit(now) { tx.handle_segment(now, &t.segment); moved = true; }
//!     for deadline in [rx.poll_timeout()].into_iter().flatten() { rx.handle_timeout(deadline); }
//!     if !moved && rx.poll_timeout().is_none() { break; }
//! }
//! assert_eq!(rx.delivered(), 100_000);
//! assert!(tx.stats().completed_at.is_some());
//! ```

pub mod cc;
pub mod challenge;
pub mod config;
pub mod fuzzing;
pub mod mptcp;
pub mod profile;
pub mod ranges;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;
pub mod seq;
pub mod testing;
pub mod time;
pub mod units;
pub mod wire;

pub use cc::{CaState, Cc, CcConfig, CongestionControl};
pub use config::{
    BbrQuantum, Hystart, LostRetransmissions, PartialAckTimer, ReceiverProfile, RecoveryReduction,
    RtoRearm, RtoSsthresh, SsthreshBasis, TcpConfig, Tso,
};
pub use profile::TcpProfile;
pub use receiver::{Receiver, ReceiverState, ReceiverStats};
pub use rtt::RtoFlavour;
pub use sender::{Sender, SenderSnapshot, SenderState, SenderStats};
pub use seq::SeqNum;
pub use time::{Duration, Instant, Rate};
pub use units::ByteSize;
pub use wire::{Ecn, Flags, Segment};

/// What kind of segment a [`Transmit`] carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxKind {
    /// The sender's SYN.
    Syn,
    /// The receiver's SYN-ACK.
    SynAck,
    /// A segment without data (an ACK).
    Ack,
    /// New data (possibly with the FIN).
    Data,
    /// A retransmission.
    Retransmission,
}

/// A segment an endpoint wants on the wire, with what it is and where its data
/// starts in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The segment.
    pub segment: Segment,
    /// Its kind.
    pub kind: TxKind,
    /// Stream offset of its first byte (data), or the acknowledged offset (ACKs).
    pub offset: u64,
    /// The ECN field of the IP header that carries it: ECT(0) on new data of
    /// a connection that negotiated ECN (RFC 3168 section 6.1.2), Not-ECT on
    /// everything else (SYNs, ACKs and retransmissions, sections 6.1.1,
    /// 6.1.4 and 6.1.5).
    pub ecn: Ecn,
}
