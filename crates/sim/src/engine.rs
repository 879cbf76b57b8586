//! The event queue: a binary heap ordered by (time, insertion counter), so
//! events at the same nanosecond run in the order they were scheduled.
//! Events are small `Copy` values, never boxed closures.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use wavelab_tcp::Instant;

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serialising its head packet.
    TxDone(u32),
    /// The oldest packet in a link direction's pipe reached the far end.
    Arrive(u32),
    /// An endpoint's timer (endpoint = 2 * flow + side, side 0 = sender);
    /// stale when `gen` is not the endpoint's current generation.
    Wake {
        /// Endpoint index.
        ep: u32,
        /// Generation when scheduled.
        gen: u32,
    },
    /// A flow starts.
    FlowStart(u32),
    /// A flow's application stops writing.
    FlowStop(u32),
    /// A scheduled link change (index into the run's change list).
    LinkChange(u32),
    /// Take a sample of the time series.
    Sample,
}

#[derive(Debug)]
struct Entry {
    at: Instant,
    seq: u64,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for earliest first.
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// A deterministic future-event list.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    processed: u64,
}

impl EventQueue {
    /// Schedules `ev` at `at`.
    pub fn push(&mut self, at: Instant, ev: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            at,
            seq: self.seq,
            ev,
        });
    }
    /// Removes and returns the earliest event if it is not after `until`.
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, Event)> {
        if self.heap.peek()?.at > until {
            return None;
        }
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.at, e.ev))
    }
    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True if nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        let t = |n| Instant::from_nanos(n);
        q.push(t(5), Event::Sample);
        q.push(t(3), Event::TxDone(1));
        q.push(t(5), Event::TxDone(2));
        q.push(t(3), Event::TxDone(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(t(10))).collect();
        assert_eq!(
            order,
            vec![
                (t(3), Event::TxDone(1)),
                (t(3), Event::TxDone(3)),
                (t(5), Event::Sample),
                (t(5), Event::TxDone(2)),
            ]
        );
        q.push(t(20), Event::Sample);
        assert_eq!(q.pop_until(t(10)), None);
        assert_eq!(q.processed(), 4);
    }
}
