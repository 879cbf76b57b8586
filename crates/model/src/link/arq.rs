//! Link-layer ARQ on a direction: how many attempts a frame takes, and the
//! time its retransmissions add.
//!
//! A frame is sent up to `retries + 1` times; each attempt is one draw of the
//! direction's loss model (Bernoulli or Gilbert-Elliott, one transition per
//! attempt), and the first attempt that is not lost delivers it. With a
//! per-attempt loss `p` and `k` retries, a fraction `p^(k+1)` of the frames
//! is lost after all their attempts (the residual loss). Retry `i` (1, 2,
//! ...) costs the wait before it (`retry_delay` plus, with a backoff, the
//! mean backoff of contention window `CW_i`) and the frame's serialisation
//! again. The attempts are drawn when the frame's first attempt starts, in
//! service order.

use super::LossModel;
use crate::link::{ArqOrder, ArqSpec, ReportWhen};
use wavelab_tcp::Duration;

/// The ARQ of a direction.
#[derive(Clone, Debug)]
pub struct Arq {
    spec: ArqSpec,
    /// The wait before retry `i`, for `i` in `1..=retries`, at index `i - 1`.
    waits: Vec<Duration>,
}

/// The attempts a frame took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attempts {
    /// Attempts made (1 to `retries + 1`).
    pub tries: u32,
    /// True if one of them got through.
    pub delivered: bool,
}

impl Attempts {
    /// Retransmissions made.
    pub fn retries(&self) -> u32 {
        self.tries.saturating_sub(1)
    }
}

impl Arq {
    /// The ARQ a spec describes.
    pub fn new(spec: ArqSpec) -> Self {
        let waits = (1..=spec.retries)
            .map(|i| {
                let backoff = spec.backoff.map_or(Duration::ZERO, |b| {
                    // CW_i = min((cw_min + 1) 2^i - 1, cw_max), mean CW_i / 2
                    let grown = (b.cw_min as u64 + 1)
                        .checked_shl(i.min(63))
                        .unwrap_or(u64::MAX)
                        .saturating_sub(1);
                    let cw = grown.min(b.cw_max as u64);
                    Duration::from_nanos(b.slot.as_nanos().saturating_mul(cw) / 2)
                });
                spec.retry_delay + backoff
            })
            .collect();
        Arq { spec, waits }
    }

    /// The spec.
    pub fn spec(&self) -> &ArqSpec {
        &self.spec
    }

    /// True if frames in retry hold the ones behind them.
    pub fn in_order(&self) -> bool {
        self.spec.order == ArqOrder::InOrder
    }

    /// Draws the attempts of one frame from the per-attempt loss model.
    pub fn draw(&self, loss: &mut LossModel) -> Attempts {
        for tries in 1..=self.spec.retries + 1 {
            if !loss.lose() {
                return Attempts {
                    tries,
                    delivered: true,
                };
            }
        }
        Attempts {
            tries: self.spec.retries + 1,
            delivered: false,
        }
    }

    /// The time `retries` retransmissions of a frame whose serialisation
    /// takes `tx` add to it: the wait before each, and `tx` again.
    pub fn extra(&self, retries: u32, tx: Duration) -> Duration {
        let waits = self.waits[..retries as usize]
            .iter()
            .fold(Duration::ZERO, |a, &w| a + w);
        waits + tx.saturating_mul(retries as u64)
    }

    /// The link's retransmission timeout as reported for a frame: the mean
    /// delay each of its retransmissions added, so that `retries x link_rto`
    /// is the link-layer delay it met; for a frame sent once, the delay its
    /// first retransmission would have added.
    pub fn link_rto(&self, retries: u32, tx: Duration) -> Duration {
        if retries == 0 {
            self.extra(1.min(self.spec.retries), tx)
        } else {
            self.extra(retries, tx) / retries as u64
        }
    }

    /// True if a frame given up after its retry limit produces a report
    /// (a [`wavelab_tcp::cc::Notification::LinkDrop`]): whenever reports
    /// are on (it always took retransmissions).
    pub fn reports_drops(&self) -> bool {
        self.spec.report != ReportWhen::None
    }

    /// True if a delivered data frame that took `retries` retransmissions
    /// produces a report.
    pub fn reports(&self, retries: u32) -> bool {
        match self.spec.report {
            ReportWhen::None => false,
            ReportWhen::Retried => retries > 0,
            ReportWhen::All => true,
        }
    }

    /// How long a report takes to reach the sender.
    pub fn report_delay(&self) -> Duration {
        self.spec.report_delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{BackoffSpec, LossSpec};
    use crate::rng::{Rng, Stream};

    fn spec(retries: u32) -> ArqSpec {
        ArqSpec {
            retries,
            retry_delay: Duration::from_millis(1),
            backoff: None,
            order: ArqOrder::InOrder,
            report: ReportWhen::None,
            report_delay: Duration::ZERO,
        }
    }

    /// Residual loss p^(k+1) and the mean number of attempts
    /// (1 - p^(k+1)) / (1 - p), within four standard errors over 200,000
    /// frames.
    #[test]
    fn residual_loss_and_attempts_follow_the_geometric_law() {
        for (p, k) in [(0.5, 3u32), (0.3, 2), (0.6, 7)] {
            let arq = Arq::new(spec(k));
            let mut loss = LossModel::new(
                LossSpec::Bernoulli { p },
                Rng::derive(9, Stream::LinkLoss(0)),
            );
            let n = 200_000;
            let draws: Vec<Attempts> = (0..n).map(|_| arq.draw(&mut loss)).collect();
            let lost = draws.iter().filter(|a| !a.delivered).count() as f64 / n as f64;
            let want = p.powi(k as i32 + 1);
            let se = (want * (1.0 - want) / n as f64).sqrt();
            assert!(
                (lost - want).abs() < 4.0 * se,
                "p {p} k {k}: lost {lost}, want {want}"
            );
            assert!(draws.iter().all(|a| a.tries >= 1 && a.tries <= k + 1));
            assert!(draws
                .iter()
                .filter(|a| !a.delivered)
                .all(|a| a.tries == k + 1));
            let mean = draws.iter().map(|a| a.tries as f64).sum::<f64>() / n as f64;
            let want_mean = (1.0 - p.powi(k as i32 + 1)) / (1.0 - p);
            assert!(
                (mean - want_mean).abs() < 0.01,
                "p {p} k {k}: mean {mean}, want {want_mean}"
            );
        }
    }

    #[test]
    fn a_lossless_link_sends_each_frame_once() {
        let arq = Arq::new(spec(7));
        let mut loss = LossModel::new(LossSpec::None, Rng::derive(1, Stream::LinkLoss(0)));
        assert_eq!(
            arq.draw(&mut loss),
            Attempts {
                tries: 1,
                delivered: true
            }
        );
    }

    #[test]
    fn dcf_backoff_doubles_the_window_up_to_its_cap() {
        let mut s = spec(7);
        s.backoff = Some(BackoffSpec {
            slot: Duration::from_micros(20),
            cw_min: 31,
            cw_max: 1023,
        });
        let arq = Arq::new(s);
        // waits: 1 ms + 20 us x CW_i / 2, CW = 63, 127, 255, 511, 1023, 1023, 1023
        let us = |x: u64| Duration::from_nanos(x * 1000);
        let want: Vec<Duration> = [63u64, 127, 255, 511, 1023, 1023, 1023]
            .iter()
            .map(|cw| us(1000) + Duration::from_nanos(20_000 * cw / 2))
            .collect();
        assert_eq!(arq.waits, want);
        let tx = us(1091);
        assert_eq!(arq.extra(0, tx), Duration::ZERO);
        assert_eq!(arq.extra(2, tx), want[0] + want[1] + tx + tx);
        assert_eq!(arq.link_rto(2, tx), (want[0] + want[1] + tx + tx) / 2);
        assert_eq!(arq.link_rto(0, tx), want[0] + tx);
    }
}
