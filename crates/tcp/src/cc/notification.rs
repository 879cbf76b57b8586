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
//! * a [`LinkReport`]: a link layer delivered a segment (WSC-TCP, section
//!   3.1: the segment, the link-layer retransmissions it needed and the
//!   link's retransmission timeout, so that the sender can take the
//!   link-layer delay out of its RTT sample and see which segments are still
//!   in link-layer retry, section 3.2);
//! * a link-layer drop ([`Notification::LinkDrop`], the same fields): a link
//!   layer gave a segment up after its retry limit. The thesis has no such
//!   message; WSC-TCP uses it to stop counting the segment as "pending at
//!   the link layer" (docs/algorithms/wsc-tcp.md). A driver that never sends
//!   one loses nothing but that precision: WSC-TCP also stops counting a
//!   segment after `pending_limit` link RTOs.
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

/// A link layer's report on one segment: delivered (in a
/// [`Notification::LinkReport`], one per delivered frame, retransmissions
/// or not) or given up (in a [`Notification::LinkDrop`]).
///
/// WSC-TCP (Srinivasan 2016, section 3.1) reads: `retries` is n of "corrected RTT
/// = observed RTT − n × LL_RTO"; `link_rto` is LL_RTO, which the thesis has
/// the link announce once per connection (every report carries it here, so
/// that no separate announcement is needed; a sender takes the latest);
/// and the order of delivery reports tells which segments a later one
/// overtook, i.e. which are still in link-layer retry (section 3.2's
/// `L_ack_max` and `L_ack_info`), so no field for "pending" is needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkReport {
    /// The segment's sequence number, as the link saw it on the wire.
    pub seq: SeqNum,
    /// The stream offset of that sequence number; filled in by the sender
    /// from `seq` before its algorithm sees the report (a driver's value is
    /// ignored).
    pub offset: u64,
    /// Link-layer retransmissions the segment needed (0: the first attempt
    /// got through); for a drop, the retransmissions tried before the link
    /// gave up.
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
    /// A link layer delivered a segment of this flow, after `retries`
    /// link-layer retransmissions (WSC-TCP).
    LinkReport(LinkReport),
    /// A link layer gave a segment of this flow up after `retries`
    /// link-layer retransmissions (its retry limit): the segment is lost on
    /// that link. Added for WSC-TCP's dynamic duplicate-ACK threshold; the
    /// sender fills in `offset` as for a [`Notification::LinkReport`].
    LinkDrop(LinkReport),
}

impl Notification {
    /// The link-layer report this notification carries, if it is one
    /// (delivered or dropped).
    pub fn link_report(&self) -> Option<&LinkReport> {
        match self {
            Notification::LinkReport(r) | Notification::LinkDrop(r) => Some(r),
            Notification::Handoff(_) => None,
        }
    }

    /// Short name, as in the notifications table: `handoff`, `link-report`
    /// or `link-drop`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Notification::Handoff(_) => "handoff",
            Notification::LinkReport(_) => "link-report",
            Notification::LinkDrop(_) => "link-drop",
        }
    }
}
