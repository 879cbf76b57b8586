//! The emulation's clock: `CLOCK_MONOTONIC` (through [`std::time::Instant`],
//! a vDSO read of some 20 ns) as nanoseconds since the start of the run,
//! in the simulator's [`Instant`] type so that the link model runs on it
//! unchanged.

use wavelab_tcp::Instant;

/// Nanoseconds since an origin, shared by every thread of a run.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: std::time::Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock {
            origin: std::time::Instant::now(),
        }
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
