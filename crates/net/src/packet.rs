//! What the emulator reads off a real packet: the IPv4 header (addresses,
//! protocol, TTL), the TCP ports, and, for the packet log, where a segment
//! stands in its flow's byte stream.

use wavelab_model::link::qdisc::Ecn;
use wavelab_model::tables::kind_code;
use wavelab_tcp::{Flags, Segment, SeqNum, TxKind};

/// The fields of an IPv4 header the emulator needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4 {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// Protocol (6: TCP).
    pub protocol: u8,
    /// Header length in bytes.
    pub header_len: usize,
    /// The ECN field (the two low bits of the traffic class byte, RFC 3168
    /// section 5).
    pub ecn: Ecn,
}

/// The protocol number of TCP.
pub const TCP: u8 = 6;
/// IP protocol number of UDP.
pub const UDP: u8 = 17;

impl Ipv4 {
    /// Parses the header at the start of `buf`; `None` if it is not IPv4 or
    /// is truncated.
    pub fn parse(buf: &[u8]) -> Option<Ipv4> {
        if buf.len() < 20 || buf[0] >> 4 != 4 {
            return None;
        }
        let header_len = ((buf[0] & 0x0f) as usize) * 4;
        if header_len < 20 || buf.len() < header_len {
            return None;
        }
        Some(Ipv4 {
            src: [buf[12], buf[13], buf[14], buf[15]],
            dst: [buf[16], buf[17], buf[18], buf[19]],
            protocol: buf[9],
            header_len,
            ecn: Ecn::from_bits(buf[1]),
        })
    }

    /// The ports of the packet `buf` this header starts, if it is TCP or
    /// UDP (both put them first in their header).
    pub fn ports(&self, buf: &[u8]) -> Option<(u16, u16)> {
        let t = buf.get(self.header_len..self.header_len + 4)?;
        (self.protocol == TCP || self.protocol == UDP).then(|| {
            (
                u16::from_be_bytes([t[0], t[1]]),
                u16::from_be_bytes([t[2], t[3]]),
            )
        })
    }
}

/// Writes `byte` at `at` (< 20) of the IPv4 header at the start of `buf`
/// and updates the header checksum incrementally (RFC 1624, equation 3).
fn rewrite_header_byte(buf: &mut [u8], at: usize, byte: u8) {
    // the 16-bit word holding the byte
    let w = at & !1;
    let old_word = u16::from_be_bytes([buf[w], buf[w + 1]]);
    buf[at] = byte;
    let new_word = u16::from_be_bytes([buf[w], buf[w + 1]]);
    let old_sum = u16::from_be_bytes([buf[10], buf[11]]);
    // HC' = ~(~HC + ~m + m')
    let mut sum = (!old_sum) as u32 + (!old_word) as u32 + new_word as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let new_sum = !(sum as u16);
    buf[10..12].copy_from_slice(&new_sum.to_be_bytes());
}

/// Takes `hops` off the TTL of the IPv4 packet `buf` (as that many routers
/// would; never below 1) and updates the header checksum.
pub fn decrement_ttl(buf: &mut [u8], hops: u8) {
    if hops == 0 || buf.len() < 20 {
        return;
    }
    let old_ttl = buf[8];
    let new_ttl = old_ttl.saturating_sub(hops).max(1);
    if new_ttl != old_ttl {
        rewrite_header_byte(buf, 8, new_ttl);
    }
}

/// Sets Congestion Experienced in the ECN field of the IPv4 packet `buf`
/// and updates the header checksum, as a router's queue discipline does
/// (RFC 3168 section 5). Only an ECN-capable packet (ECT(0), ECT(1)) is
/// changed: a Not-ECT packet must be dropped instead, and a CE one stays
/// CE; returns true if the packet is CE afterwards.
pub fn set_ce(buf: &mut [u8]) -> bool {
    if buf.len() < 20 {
        return false;
    }
    match Ecn::from_bits(buf[1]) {
        Ecn::NotEct => false,
        Ecn::Ce => true,
        Ecn::Ect0 | Ecn::Ect1 => {
            rewrite_header_byte(buf, 1, buf[1] | 0b11);
            true
        }
    }
}

/// A segment's place in its flow, as the packet log shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    /// [`kind_code`] of the segment.
    pub kind: u8,
    /// Stream offset of its data, or the offset it acknowledges.
    pub offset: u64,
    /// Payload bytes.
    pub len: u32,
}

/// Follows one connection on the wire: the sender's initial sequence number
/// (from its SYN) and the highest data sent, so that data segments are told
/// from retransmissions and sequence numbers become stream offsets (offset
/// 0 is the first data byte).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stream {
    /// Sequence number of the first data byte.
    base: Option<SeqNum>,
    /// End of the highest data sent (stream offset).
    highest: u64,
}

impl Stream {
    /// A segment the sender sent.
    pub fn sent(&mut self, seg: &Segment) -> Placed {
        let syn = seg.flags.contains(Flags::SYN);
        if syn {
            self.base = Some(SeqNum(seg.seq.0.wrapping_add(1)));
        }
        let offset = self.offset(seg.seq);
        let kind = if syn {
            TxKind::Syn
        } else if seg.len == 0 && !seg.flags.contains(Flags::FIN) {
            TxKind::Ack
        } else if offset < self.highest {
            TxKind::Retransmission
        } else {
            TxKind::Data
        };
        if !syn {
            self.highest = self.highest.max(offset + seg.len as u64);
        }
        Placed {
            kind: kind_code(kind),
            offset,
            len: seg.len,
        }
    }

    /// A segment the receiver sent: an ACK (or its SYN-ACK).
    pub fn acked(&self, seg: &Segment) -> Placed {
        let kind = if seg.flags.contains(Flags::SYN) {
            TxKind::SynAck
        } else {
            TxKind::Ack
        };
        let offset = if seg.flags.contains(Flags::ACK) {
            self.offset(seg.ack)
        } else {
            0
        };
        Placed {
            kind: kind_code(kind),
            offset,
            len: seg.len,
        }
    }

    fn offset(&self, seq: SeqNum) -> u64 {
        match self.base {
            Some(b) => seq.to_offset(b, self.highest),
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checksum(h: &[u8]) -> u16 {
        let mut sum: u32 = h
            .chunks(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    #[test]
    fn ttl_decrement_keeps_the_checksum_valid() {
        let mut h = [
            0x45, 0, 0, 60, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 3,
        ];
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        decrement_ttl(&mut h, 2);
        assert_eq!(h[8], 62);
        assert_eq!(checksum(&h), 0, "a valid header sums to zero");
        let ip = Ipv4::parse(&h).unwrap();
        assert_eq!(
            (ip.src, ip.dst, ip.protocol),
            ([10, 0, 0, 1], [10, 0, 0, 3], TCP)
        );
    }

    #[test]
    fn ce_is_set_on_ect_packets_only_and_keeps_the_checksum_valid() {
        for (tos, after, ok) in [
            (0b1011_1010u8, 0b1011_1011u8, true), // DSCP kept, ECT(0) -> CE
            (0x01, 0x03, true),                   // ECT(1) -> CE
            (0x03, 0x03, true),                   // CE stays CE
            (0xb8, 0xb8, false),                  // Not-ECT: never marked
        ] {
            let mut h = [
                0x45, tos, 0, 60, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 3,
            ];
            let c = checksum(&h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
            assert_eq!(set_ce(&mut h), ok, "tos {tos:#x}");
            assert_eq!(h[1], after, "tos {tos:#x}");
            assert_eq!(checksum(&h), 0, "a valid header sums to zero");
            let ecn = Ipv4::parse(&h).unwrap().ecn;
            assert_eq!(ecn == Ecn::Ce, ok);
        }
    }

    #[test]
    fn streams_tell_data_from_retransmissions() {
        let mut s = Stream::default();
        let seg = |seq: u32, len: u32, flags: Flags| Segment {
            seq: SeqNum(seq),
            len,
            flags,
            ..Segment::default()
        };
        let kind = |p: Placed| KIND[p.kind as usize];
        const KIND: [&str; 5] = ["syn", "synack", "ack", "data", "retransmission"];
        // an ISN near the wrap
        let syn = s.sent(&seg(u32::MAX - 10, 0, Flags::SYN));
        assert_eq!((kind(syn), syn.offset), ("syn", 0));
        let a = s.sent(&seg(u32::MAX - 9, 1000, Flags::ACK));
        let b = s.sent(&seg((u32::MAX - 9).wrapping_add(1000), 1000, Flags::ACK));
        let again = s.sent(&seg(u32::MAX - 9, 1000, Flags::ACK));
        assert_eq!((kind(a), a.offset), ("data", 0));
        assert_eq!((kind(b), b.offset), ("data", 1000));
        assert_eq!((kind(again), again.offset), ("retransmission", 0));
        let ack = Segment {
            ack: SeqNum((u32::MAX - 9).wrapping_add(2000)),
            flags: Flags::ACK,
            ..Segment::default()
        };
        let p = s.acked(&ack);
        assert_eq!((kind(p), p.offset), ("ack", 2000));
    }
}
