//! The emulation's clock: `CLOCK_MONOTONIC` (through [`std::time::Instant`],
//! a vDSO read of some 20 ns) as nanoseconds since the start of the run,
//! in the simulator's [`Instant`] type so that the link model runs on it
//! unchanged.

use nix::time::ClockId;
use wavelab_tcp::Instant;

/// Clock `id` read now, in nanoseconds; `None` if the kernel refuses it.
pub(crate) fn clock_ns(id: ClockId) -> Option<u64> {
    nix::time::clock_gettime(id)
        .ok()
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
}

/// Nanoseconds since an origin, shared by every thread of a run.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: std::time::Instant,
    /// `CLOCK_MONOTONIC` at the origin, ns (what the kernel's
    /// `bpf_ktime_get_ns()` reads).
    origin_ns: u64,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        let origin = std::time::Instant::now();
        let mono = clock_ns(ClockId::CLOCK_MONOTONIC).unwrap_or(0);
        Clock {
            origin,
            // the two reads are some 20 ns apart
            origin_ns: mono.saturating_sub(origin.elapsed().as_nanos() as u64),
        }
    }

    /// An instant of the kernel's monotonic clock (`ns`, as BPF programs
    /// read it) on this clock; `None` before the origin.
    pub fn from_monotonic(&self, ns: u64) -> Option<Instant> {
        ns.checked_sub(self.origin_ns).map(Instant::from_nanos)
    }

    /// The time since the origin.
    #[inline]
    pub fn now(&self) -> Instant {
        Instant::from_nanos(self.origin.elapsed().as_nanos() as u64)
    }

    /// Sleeps until `t` (with the thread's timer slack: for threads that
    /// need no precision, such as the flows and the sampler).
    pub fn sleep_until(&self, t: Instant) {
        let now = self.now();
        if t > now {
            std::thread::sleep(std::time::Duration::from_nanos(
                t.as_nanos() - now.as_nanos(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_monotonic_clock_maps_onto_this_one() {
        let c = Clock::start();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let ns = clock_ns(ClockId::CLOCK_MONOTONIC).unwrap();
        let here = c.now().as_nanos();
        let there = c.from_monotonic(ns).unwrap().as_nanos();
        assert!(there.abs_diff(here) < 1_000_000, "{there} vs {here}");
        assert!(here >= 5_000_000);
        assert_eq!(c.from_monotonic(0), None);
    }
}
