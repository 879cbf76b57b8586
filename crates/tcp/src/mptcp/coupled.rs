//! Coupled congestion control of a Multipath TCP connection's subflows:
//! LIA (RFC 6356 section 3), OLIA (Khalili, Gast, Popovic, Le Boudec, "MPTCP
//! is not Pareto-optimal: performance issues and a possible solution",
//! CoNEXT 2012 and IEEE/ACM ToN 2013, section IV) and BALIA (Peng, Walid,
//! Hwang, Low, "Multipath TCP: analysis, design and implementation", IEEE/ACM
//! ToN 2016, section VI).
//!
//! All three change only congestion avoidance of Reno-style subflow windows
//! (slow start, fast recovery and timeouts stay Reno's); BALIA also changes
//! the decrease on a loss. Each is expressed as one rule per subflow
//! ([`Coupled`]): the bytes that must be acknowledged for the window to
//! change by one MSS, which the connection recomputes after every event of
//! any subflow (so an ACK changes the window with the coupling of the state
//! just before it). The sums run over the subflows that can carry data
//! (established, not stale or removed, with an RTT estimate); `rtt_i` is
//! the smoothed RTT.
//!
//! **LIA.** Per ACK of `bytes_acked` on subflow i the window grows by
//! `min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i /
//! cwnd_i)` (RFC 6356 section 3, equation 1), with
//!
//! ```text
//! alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2
//! ```
//!
//! (equation 2). Both terms count acknowledged bytes per MSS of growth, so
//! the rule is one MSS per `max(cwnd_i, cwnd_total / alpha)` bytes, where
//! `cwnd_total / alpha = (sum_i cwnd_i / rtt_i)^2 / max_i(cwnd_i / rtt_i^2)`
//! ([`coupled_window`]).
//!
//! **OLIA.** Windows `w` in packets; per ACK on path r the window grows by
//! `(w_r / rtt_r^2) / (sum_p w_p / rtt_p)^2 + alpha_r / w_r` packets, where,
//! with `l_r` the bytes acknowledged between the last two losses on r (or
//! since the last, if more), `B` the paths of largest `l_r^2 / rtt_r` (the
//! best paths), `M` those of largest window and `n` the number of paths:
//! `alpha_r = 1 / (n |B \ M|)` for r in `B \ M`, `-1 / (n |M|)` for r in
//! `M` when `B \ M` is not empty, 0 otherwise. A negative increase shrinks
//! the window (one MSS at a time, not below two).
//!
//! **BALIA.** With `x_k = w_k / rtt_k` and `alpha_r = max_k x_k / x_r`, per
//! ACK on path r the window grows by `x_r / (rtt_r (sum_k x_k)^2) * (1 +
//! alpha_r) / 2 * (4 + alpha_r) / 5` packets, and on a loss it loses
//! `w_r / 2 * min(alpha_r, 1.5)` (ssthresh = `(1 - min(alpha_r, 1.5) / 2)`
//! FlightSize).
//!
//! With one path every rule is Reno's (tested below).

use super::Coupling;
use crate::cc::Coupled;
use crate::time::Duration;

/// `cwnd_total / alpha` of RFC 6356 section 3 from each usable subflow's
/// `(cwnd in bytes, smoothed RTT)`: the bytes a coupled subflow must have
/// acknowledged per MSS of growth (when more than its own window). `None`
/// when no subflow is usable.
pub fn coupled_window(subflows: impl IntoIterator<Item = (u64, Duration)>) -> Option<u64> {
    let mut sum = 0.0f64; // sum of cwnd_i / rtt_i
    let mut best = 0.0f64; // max of cwnd_i / rtt_i^2
    let mut any = false;
    for (cwnd, rtt) in subflows {
        let r = rtt.as_secs_f64().max(1e-6);
        let c = cwnd as f64;
        sum += c / r;
        best = best.max(c / (r * r));
        any = true;
    }
    (any && best > 0.0).then(|| (sum * sum / best).round() as u64)
}

/// LIA's alpha itself (RFC 6356 section 3, equation 2), for reports and
/// tests: `cwnd_total * max(cwnd_i / rtt_i^2) / (sum cwnd_i / rtt_i)^2`.
pub fn alpha(subflows: &[(u64, Duration)]) -> Option<f64> {
    let total: u64 = subflows.iter().map(|s| s.0).sum();
    coupled_window(subflows.iter().copied()).map(|w| total as f64 / w as f64)
}

/// One usable subflow as the coupled algorithms see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathView {
    /// Its congestion window (bytes).
    pub cwnd: u64,
    /// Its smoothed RTT.
    pub rtt: Duration,
    /// Its MSS (bytes).
    pub mss: u64,
    /// OLIA's `l_r`: bytes acknowledged between its last two losses, or
    /// since the last if more.
    pub between_losses: u64,
}

/// The window rule of each subflow under `coupling` (`None` where the
/// subflow is not usable, and everywhere when uncoupled).
pub fn rules(coupling: Coupling, paths: &[Option<PathView>]) -> Vec<Option<Coupled>> {
    let usable = || paths.iter().flatten();
    let secs = |p: &PathView| p.rtt.as_secs_f64().max(1e-6);
    let pkts = |p: &PathView| p.cwnd as f64 / p.mss.max(1) as f64;
    // from an increase in packets per packet acknowledged
    let rule = |p: &PathView, inc: f64, beta: Option<f64>| {
        let per_mss = if inc == 0.0 {
            u64::MAX
        } else {
            (p.mss as f64 / inc.abs()).round().max(1.0) as u64
        };
        Coupled {
            per_mss,
            shrink: inc < 0.0,
            beta,
        }
    };
    match coupling {
        Coupling::Uncoupled => vec![None; paths.len()],
        Coupling::Lia => {
            let w = coupled_window(usable().map(|p| (p.cwnd, p.rtt)));
            paths
                .iter()
                .map(|p| {
                    let (p, w) = (p.as_ref()?, w?);
                    Some(Coupled {
                        per_mss: p.cwnd.max(w),
                        shrink: false,
                        beta: None,
                    })
                })
                .collect()
        }
        Coupling::Olia => {
            let n = usable().count() as f64;
            let sum: f64 = usable().map(|p| pkts(p) / secs(p)).sum();
            let quality = |p: &PathView| (p.between_losses as f64).powi(2) / secs(p);
            let best_q = usable().map(quality).fold(f64::NEG_INFINITY, f64::max);
            let max_w = usable().map(|p| p.cwnd).max().unwrap_or(0);
            let in_b = |p: &PathView| quality(p) >= best_q;
            let in_m = |p: &PathView| p.cwnd == max_w;
            let collected = usable().filter(|p| in_b(p) && !in_m(p)).count() as f64;
            let maxed = usable().filter(|p| in_m(p)).count() as f64;
            paths
                .iter()
                .map(|p| {
                    let p = p.as_ref()?;
                    let w = pkts(p).max(1e-9);
                    let first = (w / secs(p).powi(2)) / (sum * sum);
                    let alpha = if collected == 0.0 {
                        0.0
                    } else if in_b(p) && !in_m(p) {
                        1.0 / (n * collected)
                    } else if in_m(p) {
                        -1.0 / (n * maxed)
                    } else {
                        0.0
                    };
                    Some(rule(p, first + alpha / w, None))
                })
                .collect()
        }
        Coupling::Balia => {
            let x = |p: &PathView| pkts(p) / secs(p);
            let sum: f64 = usable().map(x).sum();
            let max_x = usable().map(x).fold(0.0, f64::max);
            paths
                .iter()
                .map(|p| {
                    let p = p.as_ref()?;
                    let xr = x(p).max(1e-12);
                    let a = max_x / xr;
                    let inc = xr / (secs(p) * sum * sum) * (1.0 + a) / 2.0 * (4.0 + a) / 5.0;
                    Some(rule(p, inc, Some(1.0 - a.min(1.5) / 2.0)))
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn one_subflow_is_reno() {
        // alpha = 1 and cwnd_total / alpha = cwnd: Reno's increase
        assert_eq!(coupled_window([(20_000, ms(50))]), Some(20_000));
        assert!((alpha(&[(20_000, ms(50))]).unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn two_equal_subflows_grow_as_one_tcp() {
        // equal windows and RTTs: alpha = 1/2 and cwnd_total / alpha = 4 w, so
        // each subflow grows by MSS / (4 w) per byte and the pair by half
        // of what two TCPs would, i.e. like one TCP of window 2 w
        let s = [(10_000, ms(40)), (10_000, ms(40))];
        assert!((alpha(&s).unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(coupled_window(s), Some(40_000));
    }

    #[test]
    fn the_best_path_sets_the_aggressiveness() {
        // a fast path with a large window and a slow one: alpha from the
        // best cwnd/rtt^2 (RFC 6356 section 3)
        let s = [(40_000, ms(20)), (10_000, ms(100))];
        let a = alpha(&s).unwrap();
        let expect =
            50_000.0 * (40_000.0 / 0.02f64.powi(2)) / (40_000.0 / 0.02 + 10_000.0 / 0.1f64).powi(2);
        assert!((a - expect).abs() < 1e-6, "{a} vs {expect}");
        assert!(coupled_window(std::iter::empty()).is_none());
    }

    fn view(cwnd: u64, rtt: u64, between_losses: u64) -> Option<PathView> {
        Some(PathView {
            cwnd,
            rtt: ms(rtt),
            mss: 1000,
            between_losses,
        })
    }

    #[test]
    fn every_coupling_is_reno_on_one_path() {
        for c in [Coupling::Lia, Coupling::Olia, Coupling::Balia] {
            let r = rules(c, &[view(20_000, 50, 5_000), None]);
            let rule = r[0].unwrap();
            // one MSS per window of acknowledged bytes, Reno's half on loss
            assert_eq!(rule.per_mss, 20_000, "{c:?}");
            assert!(!rule.shrink);
            assert!(rule.beta.is_none_or(|b| (b - 0.5).abs() < 1e-12), "{c:?}");
            assert!(r[1].is_none());
        }
        assert_eq!(rules(Coupling::Uncoupled, &[view(1, 1, 1)]), vec![None]);
    }

    #[test]
    fn olia_moves_window_from_the_largest_to_a_better_path() {
        // path 0 has the largest window, path 1 the most bytes between
        // losses: path 1 is collected (grows faster), path 0 may shrink
        let r = rules(
            Coupling::Olia,
            &[view(40_000, 20, 10_000), view(10_000, 20, 90_000)],
        );
        let (big, best) = (r[0].unwrap(), r[1].unwrap());
        // in packets: windows 40 and 10, rates 2000 and 500 per second
        let sum: f64 = 2500.0;
        let first = |w: f64| (w / 0.02f64.powi(2)) / (sum * sum);
        // path 1 is in B \ M: alpha = 1 / (2 * 1); path 0 in M: -1 / (2 * 1)
        let inc_best = first(10.0) + 0.5 / 10.0;
        let inc_big = first(40.0) - 0.5 / 40.0;
        assert_eq!(best.per_mss, (1000.0 / inc_best).round() as u64);
        assert!(!best.shrink);
        assert_eq!(big.shrink, inc_big < 0.0);
        assert_eq!(big.per_mss, (1000.0 / inc_big.abs()).round() as u64);
        // the collected path grows faster than the largest one
        assert!(inc_best > inc_big);
        // without a collected path (the best path has the largest window)
        // alpha is 0 everywhere
        let r = rules(
            Coupling::Olia,
            &[view(40_000, 20, 90_000), view(10_000, 20, 10_000)],
        );
        assert_eq!(r[1].unwrap().per_mss, (1000.0 / first(10.0)).round() as u64);
    }

    #[test]
    fn balia_is_gentler_on_the_slower_path() {
        let r = rules(Coupling::Balia, &[view(20_000, 20, 0), view(20_000, 80, 0)]);
        let (fast, slow) = (r[0].unwrap(), r[1].unwrap());
        // the fast path has alpha 1 (the largest rate): Reno's halving
        assert!((fast.beta.unwrap() - 0.5).abs() < 1e-12);
        // the slow one has alpha 4: it gives up three quarters on a loss
        assert!((slow.beta.unwrap() - 0.25).abs() < 1e-12);
        assert!(slow.per_mss > fast.per_mss);
    }
}
