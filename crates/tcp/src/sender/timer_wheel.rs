//! When a Linux timer that was armed for an instant actually fires:
//! the kernel's timer wheel (kernel/time/timer.c since Linux 4.8, "timer:
//! Switch to a non-cascading wheel"), which holds TCP's retransmission and
//! probe timer (`icsk_retransmit_timer`, a `timer_list`).
//!
//! The wheel counts jiffies (`1 / CONFIG_HZ` s) and keeps a timer in a
//! bucket of a level chosen by how far ahead it expires: `delta =
//! expires - clk` below 63 jiffies goes to level 0, below 63 x 8 to level 1,
//! below 63 x 64 to level 2, and so on, and level `n` has buckets `8^n`
//! jiffies wide. `calc_index` rounds the expiry *up* to the next multiple of
//! its level's granularity, strictly after it (a timer must never fire
//! early), so a timer fires up to one granule late: at HZ = 250, 4 ms for
//! timeouts below 252 ms, 32 ms up to 2.0 s, 256 ms up to 16.1 s, 2.05 s up
//! to 129 s. A doubled RTO therefore fires later than the doubling alone
//! says, by an amount that grows with the backoff. The timeout itself is in
//! jiffies too (`usecs_to_jiffies` rounds up).
//!
//! wavelab's choices: the jiffies counter is 0 at simulated time 0 (a real
//! host's phase is arbitrary), and the wheel's `clk` is the jiffy of the
//! instant the timer is armed (a busy CPU's; an idle tickless CPU's `clk`
//! can lag, which the model leaves out).

use crate::time::{Duration, Instant};

/// Bits of a wheel level's index (`LVL_BITS`): 64 buckets per level.
const LVL_BITS: u32 = 6;
/// Each level's granularity is 8 times the one below (`LVL_CLK_SHIFT`).
const LVL_CLK_SHIFT: u32 = 3;
/// Levels of the wheel at HZ > 100 (`LVL_DEPTH`); a timeout beyond the last
/// is capped there, far beyond any TCP timer.
const LVL_DEPTH: u32 = 9;

/// The instant a timer armed at `armed` to expire at `expires` fires on a
/// wheel of `hz` ticks per second (`hz` > 0).
pub fn fire_at(hz: u32, armed: Instant, expires: Instant) -> Instant {
    let tick = 1_000_000_000 / hz as u64;
    let clk = armed.as_nanos() / tick;
    let timeout = expires.saturating_since(armed).as_nanos().div_ceil(tick);
    let jiffies = clk + timeout;
    let delta = timeout;
    // LVL_START(n) = (64 - 1) << ((n - 1) * 3)
    let lvl = (0..LVL_DEPTH - 1)
        .find(|&n| delta < ((1 << LVL_BITS) - 1) << (n * LVL_CLK_SHIFT))
        .unwrap_or(LVL_DEPTH - 1);
    let shift = lvl * LVL_CLK_SHIFT;
    let bucket = ((jiffies >> shift) + 1) << shift;
    Instant::ZERO + Duration::from_nanos(bucket * tick)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    #[test]
    fn a_short_timer_fires_on_the_next_tick_after_its_jiffy() {
        // HZ = 250: 4 ms ticks; 40 ms from 1 ms is jiffy 0 + 10, level 0,
        // bucket 11 (strictly after it)
        assert_eq!(fire_at(250, ms(1), ms(41)), ms(44));
        // the timeout rounds up to whole jiffies: 41 ms is 11 of them
        assert_eq!(fire_at(250, ms(0), ms(41)), ms(48));
    }

    #[test]
    fn the_granule_grows_with_the_timeout() {
        // 300 ms = 75 jiffies: level 1 (63 <= delta < 504), 8-jiffy buckets
        // of 32 ms: jiffy 75 -> bucket 80 (320 ms)
        assert_eq!(fire_at(250, ms(0), ms(300)), ms(320));
        // 2.4 s = 600 jiffies: level 2 (504 <= delta < 4032), 64-jiffy
        // buckets of 256 ms: 600 -> 640 (2.56 s)
        assert_eq!(fire_at(250, ms(0), ms(2_400)), ms(2_560));
        // 4.8 s armed at 25 s: jiffy 6250 + 1200 = 7450 -> 7488 (29.952 s)
        assert_eq!(fire_at(250, ms(25_000), ms(29_800)), ms(29_952));
        // 20 s = 5000 jiffies: level 3, 512-jiffy buckets of 2.048 s
        assert_eq!(fire_at(250, ms(0), ms(20_000)), ms(20_480));
    }

    #[test]
    fn never_early_and_at_most_one_granule_late() {
        for hz in [100, 250, 300, 1000] {
            let tick = 1_000_000_000 / hz as u64;
            for armed in [0, 3, 997, 20_123, 31_000] {
                for timeout in [1, 40, 199, 200, 313, 624, 1_249, 2_497, 4_993, 60_000] {
                    let (a, e) = (ms(armed), ms(armed + timeout));
                    let f = fire_at(hz, a, e);
                    assert!(f > e, "{hz} Hz, {armed} + {timeout} ms fired at {f:?}");
                    // a level's granule is at most 8/63 of the timeouts it
                    // holds, plus the tick that rounds the timeout up
                    let late = f.saturating_since(e).as_nanos();
                    let bound = timeout * 1_000_000 * 8 / 63 + 2 * tick;
                    assert!(late <= bound, "{hz} Hz {timeout} ms late by {late} ns");
                }
            }
        }
    }
}
