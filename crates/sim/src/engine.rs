//! The event queue: a binary heap ordered by (time, insertion counter), so
//! events at the same nanosecond run in the order they were scheduled.
//! Events are small `Copy` values, never boxed closures.

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

/// Bits of a key's low word that hold the event's payload slot.
const SLOT_BITS: u32 = 22;
/// Most events pending at once (4 Mi).
const MAX_PENDING: usize = 1 << SLOT_BITS;

/// A deterministic future-event list: a binary min-heap of 128-bit keys,
/// (time << 64) | (insertion counter << 22) | payload slot, so one integer
/// comparison orders two events by time, then by insertion. The payloads live
/// in a slab indexed by the slot (recycled); the heap moves only the keys.
#[derive(Debug, Default)]
pub struct EventQueue {
    keys: Vec<u128>,
    events: Vec<Event>,
    free: Vec<u32>,
    seq: u64,
    processed: u64,
}

impl EventQueue {
    /// Schedules `ev` at `at`.
    pub fn push(&mut self, at: Instant, ev: Event) {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.events[s as usize] = ev;
                s
            }
            None => {
                assert!(
                    self.events.len() < MAX_PENDING,
                    "more than {MAX_PENDING} events pending"
                );
                self.events.push(ev);
                (self.events.len() - 1) as u32
            }
        };
        assert!(
            self.seq < 1 << (64 - SLOT_BITS),
            "more than 2^42 events scheduled"
        );
        let key = ((at.as_nanos() as u128) << 64) | ((self.seq << SLOT_BITS) | slot as u64) as u128;
        // sift up, moving a hole
        let keys = &mut self.keys;
        keys.push(key);
        let mut i = keys.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if keys[parent] <= key {
                break;
            }
            keys[i] = keys[parent];
            i = parent;
        }
        keys[i] = key;
    }

    /// Removes and returns the earliest event if it is not after `until`.
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, Event)> {
        let &top = self.keys.first()?;
        let at = Instant::from_nanos((top >> 64) as u64);
        if at > until {
            return None;
        }
        let last = self.keys.pop().expect("not empty");
        let n = self.keys.len();
        if n > 0 {
            // sift the last key down from the root, moving a hole
            let keys = &mut self.keys;
            let mut i = 0;
            loop {
                let mut child = 2 * i + 1;
                if child >= n {
                    break;
                }
                if child + 1 < n && keys[child + 1] < keys[child] {
                    child += 1;
                }
                if keys[child] >= last {
                    break;
                }
                keys[i] = keys[child];
                i = child;
            }
            keys[i] = last;
        }
        let slot = (top as u64 & ((1 << SLOT_BITS) - 1)) as u32;
        self.free.push(slot);
        self.processed += 1;
        Some((at, self.events[slot as usize]))
    }
    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// True if nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
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
