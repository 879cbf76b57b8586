//! A direction's scheduled changes, read by one forward-only cursor per
//! setting.

use super::{LossModel, Settings};
use crate::link::{QueueLimit, ScheduleEntry};
use wavelab_tcp::{Duration, Instant, Rate};

/// The scheduled changes of a direction (sorted by time), read by one cursor
/// per setting; each cursor moves forward with the (monotone) instants at
/// which its setting is needed: the rate at the start of serialisation, the
/// queue limit at admission, the delay and the loss model at the end of
/// serialisation.
#[derive(Clone, Debug, Default)]
pub(super) struct Timeline {
    changes: Vec<(Instant, ScheduleEntry)>,
    rate: Cursor<Rate>,
    delay: Cursor<Duration>,
    limit: Cursor<QueueLimit>,
    loss: Cursor<()>,
}

/// One setting's cursor along a timeline: the value in effect, and the
/// instant of the next change still to read (so that a read before it costs
/// one comparison).
#[derive(Clone, Debug, Default)]
struct Cursor<T> {
    value: T,
    index: usize,
    next: Instant,
}

impl<T: Copy> Cursor<T> {
    fn new(value: T, changes: &[(Instant, ScheduleEntry)]) -> Self {
        Cursor {
            value,
            index: 0,
            next: changes.first().map_or(Instant::MAX, |c| c.0),
        }
    }

    /// The value at `at` (not before the previous read's instant), applying
    /// with `apply` the changes up to `at` still unread.
    #[inline]
    fn at(
        &mut self,
        changes: &[(Instant, ScheduleEntry)],
        at: Instant,
        apply: impl FnMut(&mut T, &ScheduleEntry),
    ) -> T {
        if at >= self.next {
            self.advance(changes, at, apply);
        }
        self.value
    }

    #[cold]
    fn advance(
        &mut self,
        changes: &[(Instant, ScheduleEntry)],
        at: Instant,
        mut apply: impl FnMut(&mut T, &ScheduleEntry),
    ) {
        while let Some((_, e)) = changes.get(self.index).filter(|c| c.0 <= at) {
            apply(&mut self.value, e);
            self.index += 1;
        }
        self.next = changes.get(self.index).map_or(Instant::MAX, |c| c.0);
    }
}

impl Timeline {
    /// The timeline of `changes` (sorted by time) from `initial` settings.
    pub fn new(changes: Vec<(Instant, ScheduleEntry)>, initial: Settings) -> Self {
        Timeline {
            rate: Cursor::new(initial.rate, &changes),
            delay: Cursor::new(initial.delay, &changes),
            limit: Cursor::new(initial.limit, &changes),
            loss: Cursor::new((), &changes),
            changes,
        }
    }

    /// The changes, in order.
    pub fn changes(&self) -> &[(Instant, ScheduleEntry)] {
        &self.changes
    }

    /// The rate at `at`.
    #[inline]
    pub fn rate(&mut self, at: Instant) -> Rate {
        self.rate
            .at(&self.changes, at, |v, e| *v = e.rate.unwrap_or(*v))
    }
    /// The delay at `at`.
    #[inline]
    pub fn delay(&mut self, at: Instant) -> Duration {
        self.delay
            .at(&self.changes, at, |v, e| *v = e.delay.unwrap_or(*v))
    }
    /// The queue limit at `at`.
    #[inline]
    pub fn limit(&mut self, at: Instant) -> QueueLimit {
        self.limit
            .at(&self.changes, at, |v, e| *v = e.queue.unwrap_or(*v))
    }
    /// Applies to `loss` every loss change up to `at`, in order.
    #[inline]
    pub fn loss(&mut self, loss: &mut LossModel, at: Instant) {
        self.loss.at(&self.changes, at, |_, e| {
            if let Some(l) = e.loss {
                loss.set(l);
            }
        })
    }
}
