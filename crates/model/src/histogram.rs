//! A compact histogram of durations, for percentiles of every sample.
//!
//! RTT percentiles from the sender's samples and queueing delays of every
//! packet are too many values to keep (a long run takes millions), and a
//! sampled series misses the tails. This histogram keeps counts in
//! log-linear buckets, as HdrHistogram does: 64 buckets per power of two of
//! nanoseconds, so a bucket's width is at most 1/64 of its lower edge, and a
//! percentile, reported as the midpoint of its bucket, is within 1/128
//! (0.8 %) of the exact sample value. The mean is exact (the sum of the
//! samples is kept). Only the span of buckets a run uses is allocated: RTTs
//! and queueing delays of one flow or link span a few powers of two, a few
//! hundred buckets of 4 bytes.

use wavelab_tcp::Duration;

/// Sub-buckets per power of two (2^6): the relative resolution.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// Counts of durations in log-linear buckets (see the module description).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    /// Index of `counts[0]`.
    first: u32,
    counts: Vec<u32>,
    count: u64,
    /// Sum of the samples in nanoseconds (exact mean).
    sum_ns: u128,
}

/// The bucket of `ns`: values below 64 ns have a bucket each; above, 64
/// buckets per power of two.
fn bucket(ns: u64) -> u32 {
    if ns < SUB {
        return ns as u32;
    }
    let exp = 63 - ns.leading_zeros(); // >= SUB_BITS
    let shift = exp - SUB_BITS;
    let mantissa = (ns >> shift) - SUB; // 0..SUB
    ((shift + 1) << SUB_BITS) + mantissa as u32
}

/// `n` as a `u32`, saturating.
fn sat32(n: u64) -> u32 {
    n.min(u32::MAX as u64) as u32
}

/// The smallest value of bucket `b` and its width, in nanoseconds.
fn span(b: u32) -> (u64, u64) {
    if (b as u64) < SUB {
        return (b as u64, 1);
    }
    let shift = (b >> SUB_BITS) - 1;
    let mantissa = (b as u64 & (SUB - 1)) + SUB;
    (mantissa << shift, 1 << shift)
}

impl Histogram {
    /// Counts one sample.
    #[inline]
    pub fn record(&mut self, d: Duration) {
        let ns = d.as_nanos();
        let c = self.slot(bucket(ns));
        *c = c.saturating_add(1);
        self.count += 1;
        self.sum_ns += ns as u128;
    }

    /// Counts `n` samples of the same value.
    #[inline]
    pub fn record_n(&mut self, d: Duration, n: u64) {
        if n == 0 {
            return;
        }
        let ns = d.as_nanos();
        let c = self.slot(bucket(ns));
        *c = c.saturating_add(sat32(n));
        self.count += n;
        self.sum_ns += ns as u128 * n as u128;
    }

    /// The count of bucket `b`, the span of buckets grown to hold it.
    #[inline]
    fn slot(&mut self, b: u32) -> &mut u32 {
        if self.counts.is_empty() {
            self.first = b;
            self.counts.push(0);
        } else if b < self.first {
            let grow = (self.first - b) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
        } else if (b - self.first) as usize >= self.counts.len() {
            self.counts.resize((b - self.first) as usize + 1, 0);
        }
        &mut self.counts[(b - self.first) as usize]
    }

    /// Takes back one sample of value `d` counted before (a bucket that
    /// reached `u32::MAX` stays there, as counting saturates).
    pub fn remove(&mut self, d: Duration) {
        let ns = d.as_nanos();
        let b = bucket(ns);
        let at = b.checked_sub(self.first).map(|i| i as usize);
        let Some(c) = at.and_then(|i| self.counts.get_mut(i)).filter(|c| **c > 0) else {
            debug_assert!(false, "removing a sample that was never counted");
            return;
        };
        if *c < u32::MAX {
            *c -= 1;
        }
        self.count -= 1;
        self.sum_ns -= ns as u128;
    }

    /// Adds the counts of `other` (the histogram of both sets of samples).
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.is_empty() {
            return;
        }
        if self.counts.is_empty() {
            *self = other.clone();
            return;
        }
        let first = self.first.min(other.first);
        let end = (self.first as usize + self.counts.len())
            .max(other.first as usize + other.counts.len());
        let mut counts = vec![0u32; end - first as usize];
        for h in [&*self, other] {
            let at = (h.first - first) as usize;
            for (c, &n) in counts[at..].iter_mut().zip(&h.counts) {
                *c = c.saturating_add(n);
            }
        }
        self.first = first;
        self.counts = counts;
        self.count += other.count;
        self.sum_ns += other.sum_ns;
    }

    /// How many samples were counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean, median, 95th and 99th percentile in seconds, as the tables
    /// show them (None without samples).
    pub fn figures_secs(&self) -> [Option<f64>; 4] {
        if self.count == 0 {
            return [None; 4];
        }
        [
            Some(self.mean_secs()),
            Some(self.quantile_secs(0.5)),
            Some(self.quantile_secs(0.95)),
            Some(self.quantile_secs(0.99)),
        ]
    }

    /// The exact mean in seconds (NaN without samples).
    pub fn mean_secs(&self) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        self.sum_ns as f64 / self.count as f64 / 1e9
    }

    /// The non-empty buckets in order: each one's lower edge and upper edge
    /// (exclusive) in seconds and how many samples it holds. A distribution
    /// (a CDF) drawn from them is exact at every upper edge.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, f64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (low, width) = span(self.first + i as u32);
                (low as f64 / 1e9, (low + width) as f64 / 1e9, c as u64)
            })
    }

    /// The `q`-quantile (0 < q <= 1) in seconds, the midpoint of the bucket
    /// of the sample of rank ceil(q n) (the nearest-rank definition); NaN
    /// without samples.
    pub fn quantile_secs(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                let (low, width) = span(self.first + i as u32);
                return (low as f64 + (width as f64 - 1.0) / 2.0) / 1e9;
            }
        }
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavelab_tcp::testing::cases;

    #[test]
    fn buckets_cover_every_value_once_and_in_order() {
        let mut previous = None;
        // the last bucket holds 2^63 + 63 * 2^57 and up
        for b in 0..(58 << SUB_BITS) {
            let (low, width) = span(b);
            assert_eq!(bucket(low), b);
            assert_eq!(bucket(low + width - 1), b);
            if let Some((pl, pw)) = previous {
                assert_eq!(pl + pw, low, "bucket {b} follows the previous one");
            }
            // a bucket is at most 1/64 of its lower edge wide
            assert!(
                width == 1 || width * SUB <= low,
                "bucket {b}: {low} + {width}"
            );
            previous = Some((low, width));
        }
        assert_eq!(bucket(u64::MAX), bucket(u64::MAX - 1));
    }

    #[test]
    fn counting_many_at_once_or_taking_back_gives_the_same_histogram() {
        let values = [0u64, 0, 3, 80_000, 80_000, 80_001, 250_000_000, 7];
        let mut one_by_one = Histogram::default();
        for &ns in &values {
            one_by_one.record(Duration::from_nanos(ns));
        }
        // the same samples as runs of equal values, in another order
        let mut runs = Histogram::default();
        runs.record_n(Duration::from_nanos(80_000), 2);
        runs.record_n(Duration::from_nanos(250_000_000), 1);
        runs.record_n(Duration::from_nanos(9), 0);
        for ns in [80_001, 3, 7] {
            runs.record(Duration::from_nanos(ns));
        }
        runs.record_n(Duration::ZERO, 2);
        assert_eq!(runs.count(), one_by_one.count());
        assert_eq!(runs.mean_secs(), one_by_one.mean_secs());
        assert!(runs.buckets().eq(one_by_one.buckets()));
        // more samples, then taken back: the histogram as it was
        let mut back = one_by_one.clone();
        for ns in [1u64, 80_000, 5_000_000_000] {
            back.record(Duration::from_nanos(ns));
        }
        for ns in [5_000_000_000u64, 1, 80_000] {
            back.remove(Duration::from_nanos(ns));
        }
        assert_eq!(back.count(), one_by_one.count());
        assert_eq!(back.mean_secs(), one_by_one.mean_secs());
        assert!(back.buckets().eq(one_by_one.buckets()));
        for q in [0.01, 0.5, 0.99, 1.0] {
            assert_eq!(back.quantile_secs(q), one_by_one.quantile_secs(q));
        }
    }

    #[test]
    fn buckets_hold_every_sample_between_their_edges() {
        let mut h = Histogram::default();
        let samples = [5u64, 5, 700, 1_000_000, 1_000_001, 40_000_000];
        for &us in &samples {
            h.record(Duration::from_micros(us));
        }
        let b: Vec<_> = h.buckets().collect();
        assert_eq!(b.iter().map(|x| x.2).sum::<u64>(), samples.len() as u64);
        // in order, none empty, each sample inside its bucket's edges
        assert!(b.windows(2).all(|w| w[0].1 <= w[1].0) && b.iter().all(|x| x.2 > 0));
        for &us in &samples {
            let s = us as f64 / 1e6;
            assert!(b.iter().any(|&(lo, hi, _)| lo <= s && s < hi), "{us} us");
        }
        // 5 us twice in one bucket; 1 s and 1 s + 1 us share one too (1/64 wide)
        assert_eq!(b.len(), 4);
        assert_eq!(b[0].2, 2);
        assert_eq!(Histogram::default().buckets().count(), 0);
    }

    #[test]
    fn quantiles_are_within_the_resolution_of_the_exact_ones() {
        // deterministic pseudo-random samples from 1 us to 10 s
        let n = cases("WAVELAB_HISTOGRAM_CASES", 20_000) as usize;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut samples = Vec::with_capacity(n);
        let mut h = Histogram::default();
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ns = 1_000 + x % 10_000_000_000;
            samples.push(ns);
            h.record(Duration::from_nanos(ns));
        }
        samples.sort_unstable();
        assert_eq!(h.count(), n as u64);
        let exact_mean = samples.iter().map(|&s| s as f64).sum::<f64>() / n as f64 / 1e9;
        assert!((h.mean_secs() - exact_mean).abs() < 1e-9 * exact_mean);
        for q in [0.01, 0.5, 0.9, 0.95, 0.99, 1.0] {
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
            let exact = samples[rank - 1] as f64 / 1e9;
            let got = h.quantile_secs(q);
            assert!(
                (got - exact).abs() <= exact / 128.0 + 1e-9,
                "q {q}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn small_and_empty_histograms() {
        let h = Histogram::default();
        assert!(h.mean_secs().is_nan() && h.quantile_secs(0.5).is_nan());
        let mut h = Histogram::default();
        for ms in [30, 10, 20] {
            h.record(Duration::from_millis(ms));
        }
        assert_eq!(h.count(), 3);
        assert!((h.mean_secs() - 0.02).abs() < 1e-12);
        // 10 ms, 20 ms and 30 ms within 0.8 %
        for (q, want) in [(0.2, 0.01), (0.5, 0.02), (0.99, 0.03)] {
            let got = h.quantile_secs(q);
            assert!((got - want).abs() <= want / 128.0, "{q}: {got}");
        }
        // a sample below the first bucket grows the span downwards
        h.record(Duration::from_nanos(5));
        assert_eq!(h.quantile_secs(0.01), 5e-9);
    }

    #[test]
    fn a_merge_is_the_histogram_of_both_sets_of_samples() {
        let (mut a, mut b, mut both) = Default::default();
        let record = |h: &mut Histogram, ms: u64| h.record(Duration::from_micros(ms));
        for us in [300, 50_000, 70_000] {
            record(&mut a, us);
            record(&mut both, us);
        }
        for us in [10, 1_000_000, 60_000] {
            record(&mut b, us);
            record(&mut both, us);
        }
        let mut merged = Histogram::default();
        merged.merge(&a);
        merged.merge(&Histogram::default());
        merged.merge(&b);
        assert_eq!(merged.count(), 6);
        assert_eq!(merged.mean_secs(), both.mean_secs());
        for q in [0.1, 0.3, 0.5, 0.7, 1.0] {
            assert_eq!(merged.quantile_secs(q), both.quantile_secs(q), "{q}");
        }
    }
}
