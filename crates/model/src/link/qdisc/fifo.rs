//! A first-in first-out queue of packets that counts its bytes, the
//! building block of every discipline.

use super::Queued;
use std::collections::VecDeque;

/// Packets in arrival order, with their total size.
#[derive(Clone, Debug)]
pub struct Fifo<P> {
    packets: VecDeque<P>,
    bytes: u64,
}

impl<P> Default for Fifo<P> {
    fn default() -> Self {
        Fifo {
            packets: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<P: Queued> Fifo<P> {
    /// Appends `p`.
    pub fn push(&mut self, p: P) {
        self.bytes += p.size() as u64;
        self.packets.push_back(p);
    }

    /// Takes the head.
    pub fn pop(&mut self) -> Option<P> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size() as u64;
        Some(p)
    }

    /// The head.
    pub fn front(&self) -> Option<&P> {
        self.packets.front()
    }
}

impl<P> Fifo<P> {
    /// Packets held.
    pub fn len(&self) -> u64 {
        self.packets.len() as u64
    }

    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
