//! Time and rate types. All time is integer nanoseconds so that every driver
//! (the simulator's virtual clock, a real clock) produces bit-identical
//! arithmetic; units live in the types, never in variable names.

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in time: nanoseconds since an origin chosen by the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// A span of time in nanoseconds (never negative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Instant {
    /// The driver's origin.
    pub const ZERO: Instant = Instant(0);
    /// The far future; used as "never".
    pub const MAX: Instant = Instant(u64::MAX);

    /// An instant `ns` nanoseconds after the origin.
    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the origin, as a float (for output only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}

impl Duration {
    /// Zero length.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span.
    pub const MAX: Duration = Duration(u64::MAX);

    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        Duration(ns)
    }
    /// From microseconds.
    pub const fn from_micros(us: u64) -> Self {
        Duration(us * 1_000)
    }
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        Duration(ms * 1_000_000)
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> Self {
        Duration(s * NANOS_PER_SEC)
    }
    /// From fractional seconds, rounded to the nearest nanosecond (negative and NaN give zero).
    pub fn from_secs_f64(s: f64) -> Self {
        if s.is_nan() || s <= 0.0 {
            Duration(0)
        } else {
            Duration((s * NANOS_PER_SEC as f64).round().min(u64::MAX as f64) as u64)
        }
    }
    /// Nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole milliseconds (truncated).
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// `self * k`, saturating.
    pub fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
    /// `self - other`, zero if negative.
    pub fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }
    /// True for a zero-length span.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Rate {
    /// Zero rate.
    pub const ZERO: Rate = Rate(0);

    /// From bits per second.
    pub const fn from_bps(bps: u64) -> Self {
        Rate(bps)
    }
    /// From megabits per second.
    pub const fn from_mbps(mbps: u64) -> Self {
        Rate(mbps * 1_000_000)
    }
    /// The rate at which `bytes` cross in `d` (zero if `d` is zero).
    pub fn from_bytes_per(bytes: u64, d: Duration) -> Self {
        if d.0 == 0 {
            return Rate(0);
        }
        let bps = (bytes as u128 * 8 * NANOS_PER_SEC as u128) / d.0 as u128;
        Rate(bps.min(u64::MAX as u128) as u64)
    }
    /// Bits per second.
    pub const fn as_bps(self) -> u64 {
        self.0
    }
    /// Bytes per second as a float.
    pub fn as_bytes_per_sec_f64(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// Time to serialise `bytes` at this rate, rounded up to the next nanosecond.
    /// A zero rate never finishes ([`Duration::MAX`]).
    pub fn tx_time(self, bytes: u64) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        let num = bytes as u128 * 8 * NANOS_PER_SEC as u128;
        let ns = num.div_ceil(self.0 as u128);
        Duration(ns.min(u64::MAX as u128) as u64)
    }
    /// Bytes that cross in `d` at this rate (truncated).
    pub fn bytes_in(self, d: Duration) -> u64 {
        let b = self.0 as u128 * d.0 as u128 / (8 * NANOS_PER_SEC as u128);
        b.min(u64::MAX as u128) as u64
    }
    /// This rate scaled by a float gain (for pacing gains); negative gains give zero.
    pub fn scaled(self, gain: f64) -> Rate {
        Rate((self.0 as f64 * gain).max(0.0).round().min(u64::MAX as f64) as u64)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Elapsed time; saturates at zero when `rhs` is later.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_since(rhs)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, d: Duration) -> Duration {
        self.saturating_sub(d)
    }
}
impl SubAssign for Duration {
    fn sub_assign(&mut self, d: Duration) {
        *self = *self - d;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, k: u64) -> Duration {
        self.saturating_mul(k)
    }
}
impl Div<u64> for Duration {
    type Output = Duration;
    fn div(self, k: u64) -> Duration {
        Duration(self.0 / k.max(1))
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            write!(f, "0s")
        } else if ns % NANOS_PER_SEC == 0 {
            write!(f, "{}s", ns / NANOS_PER_SEC)
        } else if ns % 1_000_000 == 0 {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns % 1_000 == 0 {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}
impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b != 0 && b % 1_000_000_000 == 0 {
            write!(f, "{}Gbit/s", b / 1_000_000_000)
        } else if b != 0 && b % 1_000_000 == 0 {
            write!(f, "{}Mbit/s", b / 1_000_000)
        } else if b != 0 && b % 1_000 == 0 {
            write!(f, "{}kbit/s", b / 1_000)
        } else {
            write!(f, "{b}bit/s")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_rounds_up() {
        let r = Rate::from_mbps(8);
        // 1000 bytes at 8 Mbit/s = 1 ms exactly.
        assert_eq!(r.tx_time(1000), Duration::from_millis(1));
        // 1 byte at 3 bit/s = 8/3 s, rounded up.
        assert_eq!(Rate::from_bps(3).tx_time(1).as_nanos(), 2_666_666_667);
        assert_eq!(Rate::ZERO.tx_time(1), Duration::MAX);
    }

    #[test]
    fn rate_from_bytes_and_back() {
        let r = Rate::from_bytes_per(1_250_000, Duration::from_secs(1));
        assert_eq!(r, Rate::from_mbps(10));
        assert_eq!(r.bytes_in(Duration::from_millis(100)), 125_000);
        assert_eq!(Rate::from_bytes_per(5, Duration::ZERO), Rate::ZERO);
    }

    #[test]
    fn instant_arithmetic_saturates() {
        let a = Instant::from_nanos(10);
        let b = Instant::from_nanos(25);
        assert_eq!(b - a, Duration::from_nanos(15));
        assert_eq!(a - b, Duration::ZERO);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
    }

    #[test]
    fn display_uses_natural_units() {
        assert_eq!(Duration::from_millis(240).to_string(), "240ms");
        assert_eq!(Duration::from_secs(2).to_string(), "2s");
        assert_eq!(Rate::from_mbps(8).to_string(), "8Mbit/s");
        assert_eq!(Duration::from_secs_f64(0.35).to_string(), "350ms");
    }
}
