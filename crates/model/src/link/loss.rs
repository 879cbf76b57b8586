//! Random loss on a link direction: none, Bernoulli, or Gilbert-Elliott,
//! each with its own seeded random stream.

use crate::link::LossSpec;
use crate::rng::Rng;

/// A loss model with its own random stream.
#[derive(Clone, Debug)]
pub struct LossModel {
    spec: LossSpec,
    bad: bool,
    rng: Rng,
}

impl LossModel {
    /// A model in its good state.
    pub fn new(spec: LossSpec, rng: Rng) -> Self {
        LossModel {
            spec,
            bad: false,
            rng,
        }
    }
    /// Replaces the model (the random stream continues).
    pub fn set(&mut self, spec: LossSpec) {
        self.spec = spec;
        self.bad = false;
    }
    /// Decides the fate of one packet.
    #[inline]
    pub fn lose(&mut self) -> bool {
        // a lossless link, the common case, draws nothing: no call
        !matches!(self.spec, LossSpec::None) && self.draw()
    }

    /// Draws the fate of one packet on a lossy link.
    #[inline(never)]
    fn draw(&mut self) -> bool {
        match self.spec {
            LossSpec::None => false,
            LossSpec::Bernoulli { p } => self.rng.chance(p),
            LossSpec::GilbertElliott {
                p_good_bad,
                p_bad_good,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.bad { p_bad_good } else { p_good_bad };
                if self.rng.chance(flip) {
                    self.bad = !self.bad;
                }
                self.rng.chance(if self.bad { loss_bad } else { loss_good })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Stream;

    #[test]
    fn gilbert_elliott_loses_in_bursts() {
        let spec = LossSpec::GilbertElliott {
            p_good_bad: 0.01,
            p_bad_good: 0.2,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let mut m = LossModel::new(spec, Rng::derive(3, Stream::LinkLoss(0)));
        let v: Vec<bool> = (0..100_000).map(|_| m.lose()).collect();
        let rate = v.iter().filter(|x| **x).count() as f64 / v.len() as f64;
        // stationary bad-state probability 0.01 / (0.01 + 0.2) = 4.8 %
        assert!((rate - 0.0476).abs() < 0.006, "{rate}");
        let runs = v.windows(2).filter(|w| w[0] && !w[1]).count() as f64;
        let mean_burst = v.iter().filter(|x| **x).count() as f64 / runs;
        assert!((mean_burst - 5.0).abs() < 0.6, "mean burst {mean_burst}");
    }
}
