//! Outage windows: intervals during which a link direction destroys every
//! packet that is on it.

use wavelab_tcp::Instant;

/// Sorted, merged outage windows `[start, end)`.
#[derive(Clone, Debug, Default)]
pub struct Outages(Vec<(Instant, Instant)>);

impl Outages {
    /// Builds the set from possibly overlapping windows.
    pub fn new(mut windows: Vec<(Instant, Instant)>) -> Self {
        windows.sort();
        let mut merged: Vec<(Instant, Instant)> = Vec::with_capacity(windows.len());
        for (s, e) in windows {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Outages(merged)
    }
    /// Adds the window `[start, end)` (merging with overlapping ones).
    pub fn insert(&mut self, start: Instant, end: Instant) {
        let mut all = std::mem::take(&mut self.0);
        all.push((start, end));
        *self = Outages::new(all);
    }

    /// True if there is no window.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The windows, sorted and merged.
    pub fn windows(&self) -> &[(Instant, Instant)] {
        &self.0
    }

    /// True if `[a, b]` overlaps a window.
    #[inline]
    pub fn overlaps(&self, a: Instant, b: Instant) -> bool {
        // before the first window or after the last, the common cases: no
        // search
        match (self.0.first(), self.0.last()) {
            (Some(first), Some(last)) if first.0 <= b && a < last.1 => {}
            _ => return false,
        }
        let i = self.0.partition_point(|w| w.1 <= a);
        self.0.get(i).is_some_and(|w| w.0 <= b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn outage_overlap() {
        let o = Outages::new(vec![(t(100), t(200)), (t(150), t(300)), (t(500), t(600))]);
        assert_eq!(o.windows(), [(t(100), t(300)), (t(500), t(600))]);
        assert!(!o.overlaps(t(0), t(99)));
        assert!(o.overlaps(t(90), t(100)));
        assert!(o.overlaps(t(250), t(260)));
        assert!(!o.overlaps(t(300), t(499)));
        assert!(
            o.overlaps(t(0), t(1000)),
            "a packet in the air across the whole outage"
        );
        // the ends: a window is [start, end), a packet's span [a, b]
        assert!(o.overlaps(t(550), t(2000)));
        assert!(o.overlaps(t(599), t(599)));
        assert!(!o.overlaps(t(600), t(700)), "after the last window");
        assert!(!o.overlaps(t(0), t(0)));
        assert!(!Outages::new(vec![]).overlaps(t(0), t(1000)));
    }
}
