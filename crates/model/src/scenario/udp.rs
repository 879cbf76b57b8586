//! The UDP side of a flow (`transport = "udp"`): what its sender sends
//! (a pattern: constant bit rate, on/off, a trace, a voice or video-like
//! real-time profile) and the receiver's playout deadline. The packets it
//! makes are [`crate::udp::UdpSource`]'s.

use crate::link::Distribution;
use serde::{Deserialize, Serialize};
use wavelab_tcp::units::ByteSize;
use wavelab_tcp::{Duration, Rate};

/// A flow's transport protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A TCP connection (the flow's `cc` and `tcp` settings).
    #[default]
    Tcp,
    /// UDP datagrams sent by the flow's `udp` pattern, never retransmitted.
    Udp,
    /// Echo requests at the `ping` table's interval, each answered by the
    /// receiving node with an echo reply (as ICMP echo, RFC 792).
    Ping,
}

impl Transport {
    /// True for TCP (the default, left out of a normalised scenario).
    pub fn is_tcp(&self) -> bool {
        *self == Transport::Tcp
    }
}

/// How a UDP sender spaces its packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UdpPattern {
    /// Constant bit rate: packets of `packet` bytes every `packet / rate`.
    Cbr,
    /// ns-3's OnOffApplication: an off period, then an on period sending at
    /// `rate` in packets of `packet` bytes, and so on; the periods fixed or
    /// exponential with the given means.
    Onoff,
    /// Packet sizes and send times from the CSV file `file`.
    Trace,
    /// Voice: 50 packets a second of 160 bytes of payload (one 20 ms frame
    /// of G.711 at 64 kbit/s, ITU-T G.711 with RTP's 20 ms packetisation).
    Voice,
    /// Video-like frames: `fps` frames a second of `rate / fps` bytes each,
    /// each split into packets of at most `packet` bytes sent together at
    /// the frame's time.
    Video,
}

impl UdpPattern {
    /// The pattern's name as a scenario writes it.
    pub fn name(self) -> &'static str {
        match self {
            UdpPattern::Cbr => "cbr",
            UdpPattern::Onoff => "onoff",
            UdpPattern::Trace => "trace",
            UdpPattern::Voice => "voice",
            UdpPattern::Video => "video",
        }
    }

    /// The flows table's `algorithm` of a flow with this pattern.
    pub fn algorithm(self) -> &'static str {
        match self {
            UdpPattern::Cbr => "udp-cbr",
            UdpPattern::Onoff => "udp-onoff",
            UdpPattern::Trace => "udp-trace",
            UdpPattern::Voice => "udp-voice",
            UdpPattern::Video => "udp-video",
        }
    }
}

/// The `udp` table of a UDP flow. Which fields a pattern needs and which it
/// refuses is checked by the validation (each error names the field).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a UDP table such as { pattern = \"cbr\", rate = \"1Mbit/s\", packet = \"1200B\" }"
)]
pub struct UdpSpec {
    /// How packets are spaced.
    pub pattern: UdpPattern,
    /// The sending rate (`cbr`; `onoff` while on; `video` on average).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// UDP payload bytes per packet (`cbr`, `onoff`; `video`: the largest,
    /// default 1200 B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<ByteSize>,
    /// Mean (or fixed) length of an on period (`onoff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Duration>,
    /// Mean (or fixed) length of an off period (`onoff`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<Duration>,
    /// How the on and off periods are drawn (`onoff`; default exponential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// The CSV file of send times and payload sizes (`trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Frames per second (`video`; default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<u32>,
    /// A packet received later than this after it was sent is late: it
    /// counts as received, and also in the flow's late loss (`packets_late`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout_deadline: Option<Duration>,
}

/// The `ping` table of a ping flow (every field has a default, as the
/// iputils `ping` command's: one request a second of 56 bytes of data).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    default,
    deny_unknown_fields,
    expecting = "a ping table such as { interval = \"200ms\", size = \"56B\" }"
)]
pub struct PingSpec {
    /// Time between two echo requests.
    pub interval: Duration,
    /// Data bytes of each request and reply (beside 28 bytes of IPv4 and
    /// ICMP headers).
    pub size: ByteSize,
}

impl Default for PingSpec {
    fn default() -> Self {
        PingSpec {
            interval: Duration::from_secs(1),
            size: ByteSize(56),
        }
    }
}

/// Largest UDP payload: a 1,500-byte IPv4 packet less its 20-byte IP and
/// 8-byte UDP headers, so that no link must fragment it.
pub const MAX_UDP_PAYLOAD: u64 = 1472;

/// Bytes of the IPv4 and UDP headers of a datagram (and of the IPv4 and
/// ICMP echo headers of a ping).
pub const UDP_OVERHEAD: u32 = 28;

/// Default largest payload of a video frame's packets.
pub const VIDEO_PACKET: u64 = 1200;

/// Default frames per second of the video pattern.
pub const VIDEO_FPS: u32 = 30;

/// The voice pattern's payload and packet interval.
pub const VOICE_PACKET: u64 = 160;
/// See [`VOICE_PACKET`].
pub const VOICE_INTERVAL: Duration = Duration::from_millis(20);
