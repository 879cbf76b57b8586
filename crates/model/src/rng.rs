//! Seeded random numbers. Each component (a link direction's loss model, a
//! flow's initial sequence numbers) owns its own generator derived from the
//! scenario seed and a stable component id, so adding a flow does not change
//! the random numbers another component draws.
//!
//! The generator is xoshiro256** seeded through SplitMix64; both are written
//! out here so results never depend on a dependency's version.

/// SplitMix64: used to expand seeds.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// Component kinds, part of the derived seed.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    /// A link direction's loss model.
    LinkLoss(u32),
    /// A flow's initial sequence numbers.
    FlowIsn(u32),
    /// A link's on/off outage process.
    LinkOutages(u32),
    /// A link direction's queue discipline (its random drops and marks,
    /// its flow hash's perturbation).
    LinkQdisc(u32),
    /// A LEO access link's path: its delays and rates per interval.
    LinkLeo(u32),
    /// A flow's application: a UDP sender's on/off periods.
    FlowApp(u32),
    /// A workload's transfers: their arrivals and sizes.
    Workload(u32),
}

impl Rng {
    /// A generator for component `stream` of a run with seed `seed`.
    pub fn derive(seed: u64, stream: Stream) -> Self {
        let (kind, id) = match stream {
            Stream::LinkLoss(i) => (1u64, i),
            Stream::FlowIsn(i) => (2u64, i),
            Stream::LinkOutages(i) => (3u64, i),
            Stream::LinkQdisc(i) => (4u64, i),
            Stream::LinkLeo(i) => (5u64, i),
            Stream::FlowApp(i) => (6u64, i),
            Stream::Workload(i) => (7u64, i),
        };
        let mut st = seed ^ (kind << 56) ^ ((id as u64) << 8) ^ 0x5eed;
        let mut s = [0u64; 4];
        for v in &mut s {
            *v = splitmix64(&mut st);
        }
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A float uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let mut a = Rng::derive(7, Stream::LinkLoss(0));
        let mut b = Rng::derive(7, Stream::LinkLoss(0));
        let mut c = Rng::derive(7, Stream::LinkLoss(1));
        let mut d = Rng::derive(8, Stream::LinkLoss(0));
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        let xd: Vec<u64> = (0..4).map(|_| d.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
        assert_ne!(xa, xd);
    }

    #[test]
    fn chance_matches_probability() {
        let mut r = Rng::derive(1, Stream::LinkLoss(3));
        let n = 200_000;
        let hits = (0..n).filter(|_| r.chance(0.1)).count();
        let p = hits as f64 / n as f64;
        assert!((p - 0.1).abs() < 0.003, "{p}");
        assert!(!r.chance(0.0));
    }
}
