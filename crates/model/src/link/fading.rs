//! On/off outage processes: the outage windows of a link whose up and down
//! times are drawn from distributions ([`OutageProcessSpec`]), so that "the
//! WLAN went down for several seconds under poor signal" is one scenario
//! line. The windows are drawn before the run from the link's own random
//! stream, so both link models see the same ones and adding a flow or a
//! link does not move them.

use crate::link::OutageProcessSpec;
use crate::rng::Rng;
use wavelab_tcp::{Duration, Instant};

/// The outage windows `[start, end)` the process puts before `end`: from
/// `spec.start`, an up time, then a down time, and so on.
pub fn outage_windows(
    spec: &OutageProcessSpec,
    end: Instant,
    rng: &mut Rng,
) -> Vec<(Instant, Instant)> {
    let mut draw = |mean: Duration| spec.distribution.draw(mean, rng);
    let mut windows = Vec::new();
    let mut t = Instant::ZERO + spec.start;
    while t < end {
        t = t.saturating_add(draw(spec.up));
        if t >= end {
            break;
        }
        let down = draw(spec.down).max(Duration::from_nanos(1));
        let stop = t.saturating_add(down);
        windows.push((t, stop));
        t = stop;
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::Distribution;
    use crate::rng::Stream;

    fn spec(distribution: Distribution) -> OutageProcessSpec {
        OutageProcessSpec {
            up: Duration::from_secs(20),
            down: Duration::from_secs(2),
            distribution,
            start: Duration::from_secs(5),
        }
    }

    #[test]
    fn fixed_times_alternate_exactly() {
        let end = Instant::ZERO + Duration::from_secs(60);
        let mut rng = Rng::derive(1, Stream::LinkOutages(0));
        let w = outage_windows(&spec(Distribution::Fixed), end, &mut rng);
        let s = |x: u64| Instant::ZERO + Duration::from_secs(x);
        assert_eq!(w, [(s(25), s(27)), (s(47), s(49))]);
    }

    /// The mean up and down times over a long run are the means asked for
    /// (within 5 %, over about 4,500 cycles), and the same seed gives the
    /// same windows.
    #[test]
    fn exponential_times_have_the_means_asked_for() {
        let end = Instant::ZERO + Duration::from_secs(100_000);
        let sp = spec(Distribution::Exponential);
        let w = outage_windows(&sp, end, &mut Rng::derive(4, Stream::LinkOutages(0)));
        assert!(w.len() > 4000, "{} windows", w.len());
        let down: f64 =
            w.iter().map(|(a, b)| (*b - *a).as_secs_f64()).sum::<f64>() / w.len() as f64;
        let mut prev = Instant::ZERO + sp.start;
        let mut up = 0.0;
        for (a, b) in &w {
            up += (*a - prev).as_secs_f64();
            prev = *b;
        }
        up /= w.len() as f64;
        assert!((down - 2.0).abs() < 0.1, "mean down {down}");
        assert!((up - 20.0).abs() < 1.0, "mean up {up}");
        let again = outage_windows(&sp, end, &mut Rng::derive(4, Stream::LinkOutages(0)));
        assert_eq!(w, again);
        let other = outage_windows(&sp, end, &mut Rng::derive(5, Stream::LinkOutages(0)));
        assert_ne!(w, other);
    }
}
