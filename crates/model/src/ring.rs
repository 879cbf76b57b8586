//! A first-in first-out queue addressed by absolute position.
//!
//! The virtual-time directions number the packets they admit from the start
//! of the run and look entries up by that number. A [`Ring`] stores its
//! entries in a power-of-two buffer at `number & mask`, so a lookup is one
//! mask and one index (no offset from a moving base, no wrap test), and a
//! push writes in place.

/// A queue of `Copy` values, each at the absolute position it was pushed at
/// (0, 1, 2, ... from the first push); positions below [`Ring::start`]
/// are forgotten.
#[derive(Clone, Debug)]
pub struct Ring<T> {
    buf: Vec<T>,
    /// Absolute position of the first entry kept.
    head: u64,
    /// Absolute position the next push takes.
    tail: u64,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            tail: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    /// Position-to-slot mask (the buffer's length is zero or a power of two).
    #[inline]
    fn mask(&self) -> u64 {
        (self.buf.len() as u64).wrapping_sub(1)
    }

    /// Appends `x` at position [`Ring::end`].
    #[inline]
    pub fn push(&mut self, x: T) {
        if self.tail - self.head == self.buf.len() as u64 {
            self.grow(x);
        }
        let slot = (self.tail & self.mask()) as usize;
        self.buf[slot] = x;
        self.tail += 1;
    }

    /// Doubles the buffer (filling the new slots with `fill`), keeping every
    /// entry at its position.
    #[cold]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = vec![fill; cap];
        let mask = cap as u64 - 1;
        for abs in self.head..self.tail {
            buf[(abs & mask) as usize] = *self.get(abs);
        }
        self.buf = buf;
    }

    /// The entry at absolute position `abs` (between [`Ring::start`] and
    /// [`Ring::end`]).
    #[inline]
    pub fn get(&self, abs: u64) -> &T {
        debug_assert!(
            (self.head..self.tail).contains(&abs),
            "position {abs} outside {}..{}",
            self.head,
            self.tail
        );
        &self.buf[(abs & self.mask()) as usize]
    }

    /// The entry at `abs`, if it is kept.
    #[inline]
    pub fn try_get(&self, abs: u64) -> Option<&T> {
        (self.head..self.tail)
            .contains(&abs)
            .then(|| &self.buf[(abs & self.mask()) as usize])
    }

    /// The first entry kept.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.try_get(self.head)
    }

    /// Removes and returns the first entry kept.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let x = *self.front()?;
        self.head += 1;
        Some(x)
    }

    /// Forgets the entries below position `abs` (at most [`Ring::end`]).
    #[inline]
    pub fn forget_below(&mut self, abs: u64) {
        debug_assert!(abs <= self.tail, "forget below {abs} past {}", self.tail);
        self.head = self.head.max(abs);
    }

    /// Absolute position of the first entry kept.
    #[inline]
    pub fn start(&self) -> u64 {
        self.head
    }

    /// Absolute position the next push takes.
    #[inline]
    pub fn end(&self) -> u64 {
        self.tail
    }

    /// Slots allocated: the most entries ever kept at once, rounded up to a
    /// power of two.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Entries kept.
    #[inline]
    pub fn len(&self) -> usize {
        (self.tail - self.head) as usize
    }

    /// True if it keeps no entry.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tail == self.head
    }

    /// The first position from [`Ring::start`] whose entry fails `pred`
    /// ([`Ring::end`] if none does), for a `pred` that holds on a prefix of
    /// the entries.
    pub fn partition_point(&self, mut pred: impl FnMut(&T) -> bool) -> u64 {
        let (mut lo, mut hi) = (self.head, self.tail);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.get(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Against a `VecDeque`, through growth, wrap-around and forgetting.
    #[test]
    fn matches_a_deque() {
        let mut ring = Ring::default();
        let mut deque = VecDeque::new();
        let mut x = 0u64;
        for round in 0..200u64 {
            for _ in 0..(round * 7) % 13 {
                ring.push(x);
                deque.push_back(x);
                x += 1;
            }
            for _ in 0..(round * 5) % 11 {
                assert_eq!(ring.pop_front(), deque.pop_front());
            }
            let base = ring.start();
            assert_eq!(ring.len(), deque.len());
            assert_eq!(ring.end(), base + deque.len() as u64);
            for (i, v) in deque.iter().enumerate() {
                assert_eq!(ring.get(base + i as u64), v);
            }
            if let Some(&pivot) = deque.get(deque.len() / 2) {
                let k = deque.partition_point(|&v| v < pivot) as u64;
                assert_eq!(ring.partition_point(|&v| v < pivot), base + k);
            }
            let cut = base + deque.len() as u64 / 3;
            ring.forget_below(cut);
            deque.drain(..(cut - base) as usize);
            assert_eq!(ring.start(), cut);
            assert_eq!(ring.front(), deque.front());
        }
        assert_eq!(ring.try_get(ring.end()), None);
    }

    #[test]
    fn positions_survive_growth() {
        let mut ring = Ring::default();
        for i in 0..5u32 {
            ring.push(i);
        }
        ring.forget_below(3);
        for i in 5..100u32 {
            ring.push(i);
        }
        assert_eq!((ring.start(), ring.end(), ring.len()), (3, 100, 97));
        assert_eq!(ring.capacity(), 128);
        assert!((3..100).all(|i| *ring.get(i) == i as u32));
        assert_eq!(ring.partition_point(|&v| v < 40), 40);
        assert_eq!(ring.partition_point(|_| true), 100);
        assert_eq!(ring.partition_point(|_| false), 3);
        assert!(ring.try_get(2).is_none());
    }
}
