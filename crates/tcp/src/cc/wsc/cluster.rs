//! WSC-TCP's clustering filter for RTT samples (Srinivasan 2016, section 3.4): the
//! recent samples are partitioned into k clusters by k-means; a sample that
//! falls in a cluster holding less than a given share of them is transient
//! and does not reach the RTO estimator. An isolated outlier forms (or joins)
//! a small cluster and is withheld; a sustained shift fills its cluster
//! within a few samples, after which the estimator follows it.
//!
//! The thesis used `kcluster` of the C Clustering Library (de Hoon et al.
//! 2004), Lloyd's k-means restarted from random assignments, keeping the
//! best. RTT samples are one-dimensional, and in one dimension the k-means
//! optimum can be found exactly by dynamic programming over the sorted
//! values (optimal clusters are contiguous runs; Wang and Song, "Ckmeans.1d.dp",
//! R Journal 2011): O(k n²) for n samples, which for the window sizes used
//! here (n ≤ 64) is a few thousand additions per sample. The exact optimum
//! needs no random restarts, so the filter is deterministic without a seed,
//! and it is the answer `kcluster` approaches. No k-means crate does this
//! (the general ones, e.g. linfa-clustering, run Lloyd's iterations from a
//! random or k-means++ start over ndarray matrices), so the few lines live
//! here; see docs/design.md.

use crate::time::Duration;
use std::collections::VecDeque;

/// The recent samples and the filter's settings.
#[derive(Clone, Debug)]
pub struct RttClusters {
    k: usize,
    window: usize,
    min_share: f64,
    samples: VecDeque<Duration>,
    withheld: u64,
}

impl RttClusters {
    /// A filter over the last `window` samples with `k` clusters; a cluster
    /// with less than `min_share` of the window is transient.
    pub fn new(k: u32, window: u32, min_share: f64) -> Self {
        RttClusters {
            k: k as usize,
            window: window as usize,
            min_share,
            samples: VecDeque::with_capacity(window as usize),
            withheld: 0,
        }
    }

    /// Takes a sample in; true if it may reach the estimator. Until the
    /// window is full every sample does (there is nothing to cluster yet).
    pub fn admit(&mut self, rtt: Duration) -> bool {
        if self.samples.len() == self.window {
            self.samples.pop_front();
        }
        self.samples.push_back(rtt);
        if self.samples.len() < self.window {
            return true;
        }
        let values: Vec<f64> = self.samples.iter().map(|d| d.as_secs_f64()).collect();
        let share = cluster_share(&values, self.k, rtt.as_secs_f64());
        let ok = share as f64 >= self.min_share * values.len() as f64;
        if !ok {
            self.withheld += 1;
        }
        ok
    }

    /// Samples withheld so far.
    pub fn withheld(&self) -> u64 {
        self.withheld
    }
}

/// The number of `values` in the k-means cluster(s) that hold value `x`
/// (one of `values`): with ties split across clusters, all of them.
pub fn cluster_share(values: &[f64], k: usize, x: f64) -> usize {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let bounds = kmeans_1d(&sorted, k);
    bounds
        .iter()
        .filter(|&&(lo, hi)| sorted[lo] <= x && x <= sorted[hi - 1])
        .map(|&(lo, hi)| hi - lo)
        .sum()
}

/// Exact k-means of sorted one-dimensional `x`: the clusters as index
/// ranges `[lo, hi)` in order, minimising the sum of squared distances to
/// the cluster means. `k` is lowered to the number of distinct values, so
/// no cluster is empty and equal values are never split without need.
pub fn kmeans_1d(x: &[f64], k: usize) -> Vec<(usize, usize)> {
    let n = x.len();
    if n == 0 {
        return Vec::new();
    }
    let distinct = 1 + x.windows(2).filter(|w| w[0] != w[1]).count();
    let k = k.clamp(1, distinct);
    // centred prefix sums keep the cancellation in sse() small
    let mean = x.iter().sum::<f64>() / n as f64;
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, v) in x.iter().enumerate() {
        let c = v - mean;
        s1[i + 1] = s1[i] + c;
        s2[i + 1] = s2[i] + c * c;
    }
    // within-cluster sum of squares of x[i..j]
    let sse = |i: usize, j: usize| {
        let m = (j - i) as f64;
        let s = s1[j] - s1[i];
        (s2[j] - s2[i] - s * s / m).max(0.0)
    };
    // cost[c][j]: best cost of x[..j] in c + 1 clusters; from[c][j]: where
    // its last cluster starts
    let mut cost = vec![vec![f64::INFINITY; n + 1]; k];
    let mut from = vec![vec![0usize; n + 1]; k];
    for (j, c) in cost[0].iter_mut().enumerate().skip(1) {
        *c = sse(0, j);
    }
    for c in 1..k {
        for j in c + 1..=n {
            for i in c..j {
                let v = cost[c - 1][i] + sse(i, j);
                // strict: the earliest split wins ties, deterministically
                if v < cost[c][j] {
                    cost[c][j] = v;
                    from[c][j] = i;
                }
            }
        }
    }
    let mut out = Vec::with_capacity(k);
    let mut j = n;
    for c in (0..k).rev() {
        let i = if c == 0 { 0 } else { from[c][j] };
        out.push((i, j));
        j = i;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn exact_clusters_in_one_dimension() {
        let x = [1.0, 1.1, 1.2, 5.0, 5.1, 9.0];
        assert_eq!(kmeans_1d(&x, 3), vec![(0, 3), (3, 5), (5, 6)]);
        assert_eq!(kmeans_1d(&x, 2), vec![(0, 3), (3, 6)]);
        // more clusters than distinct values: as many as there are values
        assert_eq!(kmeans_1d(&[2.0, 2.0, 2.0], 2), vec![(0, 3)]);
        assert_eq!(cluster_share(&[3.0, 1.0, 1.0, 1.0], 2, 3.0), 1);
    }

    /// The exact optimum is at least as good as every contiguous split (a
    /// brute force over all two-way splits agrees).
    #[test]
    fn two_clusters_match_the_best_split() {
        let x: Vec<f64> = [3.0, 3.2, 2.9, 7.5, 3.1, 8.0, 7.7, 3.3, 2.8, 7.9]
            .into_iter()
            .collect();
        let mut s = x.clone();
        s.sort_by(f64::total_cmp);
        let sse = |v: &[f64]| {
            let m = v.iter().sum::<f64>() / v.len() as f64;
            v.iter().map(|a| (a - m) * (a - m)).sum::<f64>()
        };
        let best = (1..s.len())
            .min_by(|&a, &b| {
                (sse(&s[..a]) + sse(&s[a..])).total_cmp(&(sse(&s[..b]) + sse(&s[b..])))
            })
            .unwrap();
        assert_eq!(kmeans_1d(&s, 2), vec![(0, best), (best, s.len())]);
    }

    /// An isolated outlier is withheld; the samples around it pass.
    #[test]
    fn an_isolated_outlier_is_withheld() {
        let mut f = RttClusters::new(2, 16, 0.25);
        for i in 0..16 {
            assert!(f.admit(ms(100 + i % 3)), "warm-up and steady samples pass");
        }
        assert!(!f.admit(ms(900)), "the outlier");
        for i in 0..16 {
            assert!(f.admit(ms(100 + i % 3)), "steady again");
        }
        assert_eq!(f.withheld(), 1);
    }

    /// A sustained shift is followed once its cluster holds a quarter of
    /// the window (the fourth sample at the new level, of 16).
    #[test]
    fn a_sustained_shift_is_followed() {
        let mut f = RttClusters::new(2, 16, 0.25);
        for i in 0..16 {
            f.admit(ms(100 + i % 3));
        }
        let admitted: Vec<bool> = (0..20).map(|i| f.admit(ms(300 + i % 3))).collect();
        assert_eq!(admitted[..3], [false, false, false]);
        assert!(admitted[3..].iter().all(|&a| a), "{admitted:?}");
    }
}
