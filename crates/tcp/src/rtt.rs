//! Round-trip-time estimation and the retransmission timeout (RFC 6298).

use crate::time::Duration;

/// Clock granularity G of RFC 6298 section 2: the smallest RTTVAR term.
pub const CLOCK_GRANULARITY: Duration = Duration::from_millis(1);

/// SRTT / RTTVAR estimator with exponential backoff of the RTO.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    latest: Option<Duration>,
    min_rtt: Option<Duration>,
    initial_rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    backoff: u32,
    samples: u64,
}

impl RttEstimator {
    /// A fresh estimator: RTO = `initial_rto` until the first sample.
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            latest: None,
            min_rtt: None,
            initial_rto,
            min_rto,
            max_rto,
            backoff: 0,
            samples: 0,
        }
    }

    /// Feeds one RTT measurement (RFC 6298 sections 2.2 and 2.3).
    pub fn on_sample(&mut self, r: Duration) {
        self.samples += 1;
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let diff = if srtt > r { srtt - r } else { r - srtt };
                // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|; SRTT <- 7/8 SRTT + 1/8 R'
                self.rttvar =
                    Duration::from_nanos((3 * self.rttvar.as_nanos() + diff.as_nanos()) / 4);
                self.srtt = Some(Duration::from_nanos(
                    (7 * srtt.as_nanos() + r.as_nanos()) / 8,
                ));
            }
        }
    }

    /// The RTO before backoff: SRTT + max(G, 4 RTTVAR), clamped to [min, max].
    pub fn base_rto(&self) -> Duration {
        let raw = match self.srtt {
            None => self.initial_rto,
            Some(srtt) => srtt + CLOCK_GRANULARITY.max(self.rttvar * 4),
        };
        raw.max(self.min_rto).min(self.max_rto)
    }

    /// The current RTO: the base doubled once per backoff, capped at the maximum.
    pub fn rto(&self) -> Duration {
        let mut rto = self.base_rto();
        for _ in 0..self.backoff {
            rto = rto * 2;
            if rto >= self.max_rto {
                return self.max_rto;
            }
        }
        rto
    }

    /// Doubles the RTO (RFC 6298 section 5.5).
    pub fn back_off(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// Clears the backoff (new data was acknowledged).
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    /// Raises the RTO used before the first sample (RFC 6298 section 5.7: after a
    /// timed-out SYN, data transmission starts with an RTO of at least 3 s).
    pub fn raise_initial_rto(&mut self, floor: Duration) {
        self.initial_rto = self.initial_rto.max(floor);
    }

    /// Number of consecutive backoffs.
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
    /// Smoothed RTT, if any sample was taken.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// RTT variation.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }
    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }
    /// The smallest sample seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
    /// Number of samples taken.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(
            Duration::from_secs(1),
            Duration::from_millis(200),
            Duration::from_secs(60),
        )
    }

    #[test]
    fn first_sample_sets_srtt_and_half_var() {
        let mut e = est();
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn follows_rfc6298_gains() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        e.on_sample(Duration::from_millis(200));
        // rttvar = 3/4*50 + 1/4*100 = 62.5 ms; srtt = 7/8*100 + 1/8*200 = 112.5 ms
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        assert_eq!(e.min_rtt(), Some(Duration::from_millis(100)));
    }

    #[test]
    fn clamps_to_min_and_backs_off_to_cap() {
        let mut e = est();
        e.on_sample(Duration::from_millis(10));
        assert_eq!(e.rto(), Duration::from_millis(200));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(400));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.reset_backoff();
        assert_eq!(e.rto(), Duration::from_millis(200));
    }
}
