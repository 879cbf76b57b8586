//! The event queue, in a canonical order: by time, then by a fixed class
//! order, then by component, then by a per-component counter. Events are small
//! `Copy` values, never boxed closures.
//!
//! The order of simultaneous events is part of the model, so it is defined by
//! what the events are, never by when the engine happened to schedule them:
//! an engine that computes some events without scheduling them (a packet's
//! passage through an idle link, say) reproduces the same order. At one
//! instant the classes run in this order:
//!
//! 0. scheduled changes: links' settings (in file order), then handoffs,
//!    so that they apply to everything else at that instant;
//! 1. ends of serialisation, by link direction;
//! 2. flow starts, 3. flow stops, by flow;
//! 4. cross-layer notifications reaching a flow's sender, by flow, then in
//!    the order they were sent;
//! 5. arrivals at the far end of a link direction, by direction, then in the
//!    direction's first-in first-out order;
//! 6. endpoint wake-ups, by endpoint;
//! 7. samples of the time series (which thus see everything else at their
//!    instant).

/// Something that happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link direction finished serialising its `n`-th admitted packet.
    TxDone {
        /// The link direction.
        dir: u32,
        /// The packet's admission number on the direction.
        n: u64,
    },
    /// The `n`-th packet admitted to a link direction reached the far end.
    Arrive {
        /// The link direction.
        dir: u32,
        /// The packet's admission number on the direction.
        n: u64,
    },
    /// An endpoint's timer (endpoint = 2 * flow + side, side 0 = sender);
    /// stale when `gen` is not the endpoint's current generation.
    Wake {
        /// Endpoint index.
        ep: u32,
        /// Generation when scheduled.
        gen: u32,
    },
    /// A cross-layer notification reaches flow `flow`'s sender (its `n`-th
    /// notification).
    Notify {
        /// The flow.
        flow: u32,
        /// The notification's number among the flow's.
        n: u64,
    },
    /// A flow starts.
    FlowStart(u32),
    /// A flow's application stops writing.
    FlowStop(u32),
    /// A scheduled change: a link's settings or a handoff (index into the
    /// run's change list).
    Change(u32),
    /// The `n`-th sample of the time series.
    Sample(u64),
}

/// Bits of the component in a key.
const COMPONENT_BITS: u32 = 24;
/// Bits of the per-component counter in a key.
const COUNTER_BITS: u32 = 37;
/// Most components (link directions, endpoints, flows, changes) of one class.
pub const MAX_COMPONENTS: u64 = 1 << COMPONENT_BITS;

impl Event {
    /// (class, component, counter) of the canonical order.
    fn rank(&self) -> (u32, u64, u64) {
        match *self {
            Event::Change(i) => (0, i as u64, 0),
            Event::TxDone { dir, n } => (1, dir as u64, n),
            Event::FlowStart(f) => (2, f as u64, 0),
            Event::FlowStop(f) => (3, f as u64, 0),
            Event::Notify { flow, n } => (4, flow as u64, n),
            Event::Arrive { dir, n } => (5, dir as u64, n),
            Event::Wake { ep, gen } => (6, ep as u64, gen as u64),
            Event::Sample(n) => (7, 0, n),
        }
    }
}

/// The canonical sort key of `ev` at `at`: time in the high 64 bits, then
/// class (3 bits), component (24 bits) and counter (37 bits).
pub fn key(at: Instant, ev: &Event) -> u128 {
    let (class, comp, counter) = ev.rank();
    debug_assert!(comp < MAX_COMPONENTS, "component {comp} out of range");
    debug_assert!(
        counter < 1 << COUNTER_BITS,
        "counter {counter} out of range"
    );
    ((at.as_nanos() as u128) << 64)
        | ((class as u128) << (COMPONENT_BITS + COUNTER_BITS))
        | ((comp as u128) << COUNTER_BITS)
        | (counter & ((1 << COUNTER_BITS) - 1)) as u128
}

pub use wavelab_model::order::time_of;
use wavelab_tcp::Instant;

/// The event a key was made of (the inverse of [`key`]; admission numbers
/// and sample numbers come back modulo 2^37).
fn event_of(k: u128) -> Event {
    let class = ((k >> (COMPONENT_BITS + COUNTER_BITS)) & 0b111) as u32;
    let comp = ((k >> COUNTER_BITS) & (MAX_COMPONENTS as u128 - 1)) as u32;
    let counter = (k & ((1 << COUNTER_BITS) - 1)) as u64;
    match class {
        0 => Event::Change(comp),
        1 => Event::TxDone {
            dir: comp,
            n: counter,
        },
        2 => Event::FlowStart(comp),
        3 => Event::FlowStop(comp),
        4 => Event::Notify {
            flow: comp,
            n: counter,
        },
        5 => Event::Arrive {
            dir: comp,
            n: counter,
        },
        6 => Event::Wake {
            ep: comp,
            gen: counter as u32,
        },
        _ => Event::Sample(counter),
    }
}

/// Children per node of the heap: a 4-ary heap is half as deep as a binary
/// one, and a node's four children share a cache line.
const ARITY: usize = 4;

/// A deterministic future-event list: a 4-ary min-heap of canonical keys
/// (each key determines its event, so the heap holds nothing else).
///
/// The event [`EventQueue::pop_until`] hands out stays at the root while it
/// is processed: the first event its processing schedules takes its place
/// (one sift down instead of a removal and an insertion, the common case of
/// an arrival scheduling the next one), and otherwise the next pop removes
/// it.
#[derive(Clone, Debug, Default)]
pub struct EventQueue {
    heap: Vec<u128>,
    /// The root is the event handed out last, not yet replaced or removed.
    taken: bool,
    processed: u64,
}

impl EventQueue {
    /// Schedules `ev` at `at`.
    #[inline(always)]
    pub fn push(&mut self, at: Instant, ev: Event) {
        let k = key(at, &ev);
        debug_assert_eq!(event_of(k), ev, "event fits its key");
        if self.taken {
            self.taken = false;
            self.sift_down(k);
            return;
        }
        let h = &mut self.heap;
        h.push(k);
        let mut i = h.len() - 1;
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if h[parent] <= k {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = k;
    }

    /// Removes the event handed out last, if it is still at the root.
    fn settle(&mut self) {
        if self.taken {
            self.taken = false;
            let last = self.heap.pop().expect("the taken root");
            if !self.heap.is_empty() {
                self.sift_down(last);
            }
        }
    }

    /// Puts `k` at the root in place of what is there, and moves it down to
    /// its place.
    fn sift_down(&mut self, k: u128) {
        let h = &mut self.heap;
        let n = h.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let child = if first + ARITY <= n {
                // all four children: a tournament of two pairs
                let kids = &h[first..first + ARITY];
                let a = if kids[1] < kids[0] { 1 } else { 0 };
                let b = if kids[3] < kids[2] { 3 } else { 2 };
                first + if kids[b] < kids[a] { b } else { a }
            } else {
                let mut child = first;
                for c in first + 1..n {
                    if h[c] < h[child] {
                        child = c;
                    }
                }
                child
            };
            if h[child] >= k {
                break;
            }
            h[i] = h[child];
            i = child;
        }
        h[i] = k;
    }

    /// Hands out the earliest event, with its key, if it is not after
    /// `until` (removing the one handed out before, unless its processing
    /// scheduled something in its place).
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, Event, u128)> {
        self.settle();
        let &top = self.heap.first()?;
        let at = time_of(top);
        if at > until {
            return None;
        }
        self.taken = true;
        self.processed += 1;
        Some((at, event_of(top), top))
    }
    /// The time of the next event, if any.
    pub fn peek_time(&self) -> Option<Instant> {
        let h = &self.heap;
        let next = if self.taken {
            h.get(1..).and_then(|rest| rest.iter().take(ARITY).min())
        } else {
            h.first()
        };
        next.map(|&k| time_of(k))
    }
    /// Removes the pending event `ev` at `at`; false if it is not pending.
    /// Linear in the queue's length (a fork moving a scheduled change).
    pub fn remove(&mut self, at: Instant, ev: Event) -> bool {
        self.settle();
        let k = key(at, &ev);
        let Some(i) = self.heap.iter().position(|&x| x == k) else {
            return false;
        };
        self.heap.swap_remove(i);
        // a sorted array is a heap; the keys, not their places, decide the
        // order events are handed out
        self.heap.sort_unstable();
        true
    }
    /// Events processed so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len() - self.taken as usize
    }
    /// True if nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(n: u64) -> Instant {
        Instant::from_nanos(n)
    }

    #[test]
    fn earliest_first_then_class_component_and_counter() {
        let mut q = EventQueue::default();
        q.push(t(5), Event::Sample(1));
        q.push(t(5), Event::Arrive { dir: 2, n: 7 });
        q.push(t(5), Event::Arrive { dir: 1, n: 9 });
        q.push(t(5), Event::Arrive { dir: 2, n: 3 });
        q.push(t(3), Event::Wake { ep: 0, gen: 4 });
        q.push(t(5), Event::TxDone { dir: 3, n: 0 });
        q.push(t(5), Event::Notify { flow: 0, n: 1 });
        q.push(t(5), Event::Change(0));
        let order: Vec<_> =
            std::iter::from_fn(|| q.pop_until(t(10)).map(|(at, e, _)| (at, e))).collect();
        assert_eq!(
            order,
            vec![
                (t(3), Event::Wake { ep: 0, gen: 4 }),
                (t(5), Event::Change(0)),
                (t(5), Event::TxDone { dir: 3, n: 0 }),
                (t(5), Event::Notify { flow: 0, n: 1 }),
                (t(5), Event::Arrive { dir: 1, n: 9 }),
                (t(5), Event::Arrive { dir: 2, n: 3 }),
                (t(5), Event::Arrive { dir: 2, n: 7 }),
                (t(5), Event::Sample(1)),
            ]
        );
        q.push(t(20), Event::Sample(2));
        assert_eq!(q.pop_until(t(10)), None);
        assert_eq!(q.processed(), 8);
    }

    /// While an event handed out is processed it is no longer pending: the
    /// length and the next time leave it out, and what its processing
    /// schedules takes its place in order.
    #[test]
    fn the_event_being_processed_is_not_pending() {
        let mut q = EventQueue::default();
        for (ms, dir) in [(5, 0), (9, 1), (7, 2), (8, 3), (6, 4), (10, 5)] {
            q.push(t(ms), Event::Arrive { dir, n: 0 });
        }
        let (at, _, _) = q.pop_until(t(100)).expect("an event");
        assert_eq!((at, q.len(), q.peek_time()), (t(5), 5, Some(t(6))));
        q.push(t(6), Event::TxDone { dir: 9, n: 0 }); // before the arrival at 6
        assert_eq!((q.len(), q.peek_time()), (6, Some(t(6))));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(t(100)).map(|e| e.1)).collect();
        assert_eq!(order[0], Event::TxDone { dir: 9, n: 0 });
        assert_eq!(order[1], Event::Arrive { dir: 4, n: 0 });
        assert_eq!(order.len(), 6);
        assert!(q.is_empty() && q.peek_time().is_none());
    }

    #[test]
    fn every_event_comes_back_from_its_key() {
        let events = [
            Event::Change(3),
            Event::TxDone { dir: 7, n: 12_345 },
            Event::FlowStart(0),
            Event::FlowStop(MAX_COMPONENTS as u32 - 1),
            Event::Notify { flow: 2, n: 5 },
            Event::Arrive {
                dir: 1,
                n: (1 << COUNTER_BITS) - 1,
            },
            Event::Wake {
                ep: 9,
                gen: u32::MAX,
            },
            Event::Sample(7_200),
        ];
        for ev in events {
            assert_eq!(event_of(key(t(42), &ev)), ev);
        }
    }

    /// Against a sorted reference over random pushes and pops (100 seeds,
    /// or `WAVELAB_HEAP_CASES`, or 100 x `WAVELAB_CASES_SCALE`).
    #[test]
    fn matches_a_sorted_reference() {
        use wavelab_model::rng::{Rng, Stream};
        for seed in 0..u64::from(wavelab_tcp::testing::cases("WAVELAB_HEAP_CASES", 100)) {
            let mut rng = Rng::derive(seed, Stream::FlowIsn(0));
            let mut q = EventQueue::default();
            let mut reference: Vec<(u128, Event)> = Vec::new();
            let mut now = 0u64;
            for i in 0..500u64 {
                if rng.next_u64() % 3 == 0 {
                    reference.sort_by_key(|e| e.0);
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    let got = q.pop_until(Instant::from_nanos(u64::MAX));
                    assert_eq!(got.map(|g| (g.2, g.1)), want, "seed {seed}");
                    if let Some((at, _, _)) = got {
                        now = at.as_nanos();
                    }
                    continue;
                }
                let at = t(now + rng.next_u64() % 4);
                let c = rng.next_u64() % 4;
                let ev = match rng.next_u64() % 4 {
                    0 => Event::Arrive {
                        dir: c as u32,
                        n: i,
                    },
                    1 => Event::TxDone {
                        dir: c as u32,
                        n: i,
                    },
                    2 => Event::Wake {
                        ep: c as u32,
                        gen: i as u32,
                    },
                    _ => Event::Sample(i),
                };
                q.push(at, ev);
                reference.push((key(at, &ev), ev));
            }
        }
    }
}
