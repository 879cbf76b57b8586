//! Ordering keys of what a run records: a `u128` whose high 64 bits are the
//! instant in nanoseconds and whose low 64 bits order the records of one
//! instant. The simulator's engine fills the low bits with its canonical
//! event order (`wavelab_sim::engine::key`); a driver on the wall clock,
//! which has no such order, leaves them zero ([`at`]).

use wavelab_tcp::Instant;

/// The instant of a key (its high 64 bits).
#[inline]
pub fn time_of(k: u128) -> Instant {
    Instant::from_nanos((k >> 64) as u64)
}

/// The first key of instant `t` (low bits zero).
#[inline]
pub fn at(t: Instant) -> u128 {
    (t.as_nanos() as u128) << 64
}
