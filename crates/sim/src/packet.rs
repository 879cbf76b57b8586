//! Packets and the arena that recycles them, so the hot path never allocates.

use wavelab_model::capture::SimulatedSegment;
use wavelab_tcp::{Ecn, Instant, Segment, TxKind};

/// Index of a packet in the [`Arena`].
pub type PacketId = u32;

/// A packet in the network: a TCP segment with its routing state.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Flow it belongs to.
    pub flow: u32,
    /// True for data travelling to the receiver, false for ACKs to the sender.
    pub to_receiver: bool,
    /// Index of the hop (in the flow's route) it is on.
    pub hop: u16,
    /// Where the direction it is on stands in the network's flat list of
    /// route steps (set when it enters the network), so that the next
    /// direction is the step after it.
    pub step: u32,
    /// Its admission number on the link direction it is on (the direction's
    /// count of packets offered before it).
    pub n: u64,
    /// Bytes on the wire (IPv4 + TCP headers + payload).
    pub size: u32,
    /// When it arrives at the end of the current hop.
    pub arrival: Instant,
    /// When its endpoint put it on the network (its one-way delay starts).
    pub sent: Instant,
    /// What the endpoint sent.
    pub kind: TxKind,
    /// Stream offset of its data (or the acknowledged offset).
    pub offset: u64,
    /// The segment.
    pub seg: Segment,
    /// The ECN field of its IP header: as the endpoint sent it, CE once a
    /// queue discipline marked it.
    pub ecn: Ecn,
}

impl Packet {
    /// What a packet capture records of it.
    #[inline]
    pub fn captured(&self) -> SimulatedSegment<'_> {
        SimulatedSegment {
            flow: self.flow,
            to_receiver: self.to_receiver,
            hop: self.hop,
            size: self.size,
            seg: &self.seg,
            ecn: self.ecn,
        }
    }

    /// Moves the packet on to the next direction of its route.
    #[inline]
    pub fn advance(&mut self) {
        self.hop += 1;
        self.step += 1;
    }
}

/// A slab of packets with a free list.
#[derive(Clone, Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
}

impl Arena {
    /// Stores a packet and returns its id (reusing a freed slot if any).
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = p;
                id
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as PacketId
            }
        }
    }
    /// Releases a packet's slot.
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id);
    }
    /// The packet `id`.
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }
    /// The packet `id`, mutably.
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Packets alive.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    /// Slots ever allocated (the high-water mark).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}
