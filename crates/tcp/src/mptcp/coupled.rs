//! Coupled congestion control: the Linked Increases Algorithm (LIA, RFC
//! 6356 section 3).
//!
//! LIA changes only the congestion-avoidance increase of Reno-style
//! subflows: per ACK of `bytes_acked` on subflow i the window grows by
//! `min(alpha * bytes_acked * MSS_i / cwnd_total, bytes_acked * MSS_i /
//! cwnd_i)` (section 3, equation 1), with
//!
//! ```text
//! alpha = cwnd_total * max_i(cwnd_i / rtt_i^2) / (sum_i cwnd_i / rtt_i)^2
//! ```
//!
//! (section 3, equation 2). Slow start, fast recovery and the window's
//! decrease stay Reno's (section 3: "the algorithm ... applies only to the
//! increase phase of the congestion avoidance state").
//!
//! Both terms count acknowledged bytes per MSS of growth, so the rule is
//! Reno's byte counting with a larger window: one MSS per
//! `max(cwnd_i, cwnd_total / alpha)` bytes acknowledged, where
//!
//! ```text
//! cwnd_total / alpha = (sum_i cwnd_i / rtt_i)^2 / max_i(cwnd_i / rtt_i^2)
//! ```
//!
//! That is the one number the connection gives each subflow's window
//! ([`coupled_window`]; the Reno family takes it through its
//! `set_coupled`). Choices: the sums run over the subflows that can carry
//! data (established, not stale or removed, with an RTT estimate), the
//! smoothed RTT is `rtt_i` (as the RFC's section 4 implementation notes
//! do), and the value is recomputed after every event of the connection, so
//! an ACK grows the window with the alpha of the state just before it.

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
}
