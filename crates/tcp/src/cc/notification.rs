//! Cross-layer information: what the network tells a sender, through
//! [`crate::Sender::handle_notification`], and the sender passes to its
//! algorithm ([`super::CongestionControl::on_notification`]).
//!
//! Two kinds of message, each delivered by the driver after whatever delay
//! it models:
//! * a [`HandoffNotice`]: the flow moved to another access link (MobiWac
//!   2009, section 3: "the mobile node can send the above information to the
//!   TCP sender at the correspondent node along with the mobility
//!   signalling"): the kind of handoff, the old and new access link's rate
//!   and one-way delay, and the number of flows using the new link, which
//!   ETCPv1 divides the new link's BDP by;
//! * a [`LinkReport`]: a link layer retransmitted a segment (WSC-TCP: the
//!   segment, the link-layer retransmissions it needed and the link's
//!   retransmission timeout, so that the sender can take the link-layer
//!   delay out of its RTT sample).
//!
//! An algorithm acts on them through its own state and through the sender
//! knobs of [`super::SenderRequest`].

use crate::seq::SeqNum;
use crate::time::{Duration, Rate};

/// Characteristics of a link or path, for cross-layer algorithms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PathInfo {
    /// Rate, if known.
    pub rate: Option<Rate>,
    /// One-way delay, if known.
    pub delay: Option<Duration>,
}

/// How a handoff changed links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandoffStyle {
    /// The new link took over while the old one delivered what it held
    /// (packets may arrive out of order).
    MakeBeforeBreak,
    /// The old link went down; the new one came up after `disconnection`.
    BreakBeforeMake {
        /// How long the new link was down after the switch.
        disconnection: Duration,
    },
}

/// A handoff of the flow to another access link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HandoffNotice {
    /// The kind of handoff.
    pub style: HandoffStyle,
    /// The access link before the handoff.
    pub old: PathInfo,
    /// The access link after the handoff.
    pub new: PathInfo,
    /// Flows using the new access link right after the handoff, this one
    /// included (N of ETCPv1).
    pub flows: u32,
}

/// A link layer's report on one delivered segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkReport {
    /// The segment's sequence number, as the link saw it on the wire.
    pub seq: SeqNum,
    /// The stream offset of that sequence number; filled in by the sender
    /// from `seq` before its algorithm sees the report (a driver's value is
    /// ignored).
    pub offset: u64,
    /// Link-layer retransmissions the segment needed.
    pub retries: u32,
    /// The link's retransmission timeout (the delay of one link-layer
    /// retransmission).
    pub link_rto: Duration,
}

/// A cross-layer notification delivered to the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Notification {
    /// The flow was handed off to another access link (ETCP).
    Handoff(HandoffNotice),
    /// A link layer retransmitted a segment of this flow (WSC-TCP).
    LinkReport(LinkReport),
}
