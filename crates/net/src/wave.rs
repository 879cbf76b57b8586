//! TCP Wave's variables of a connection that runs the BPF TCP Wave
//! (`wavelab bpf load`), read from the program's socket storage at each
//! sample and written under the simulator's Wave column names, so that
//! `cc_tx_time` of an emulated flow and of a simulated one are the same
//! quantity in the same unit.

use wavelab_bpf_maps::WaveSocket;

/// The columns, as the sans-IO Wave names them (`cc_<name>` in the series).
pub use wavelab_tcp::cc::wave::METRICS as WAVE_METRICS;

/// The values of [`WAVE_METRICS`] for `s` on a connection whose segments
/// carry `mss` bytes: durations in seconds (NaN while unknown), `rate` the
/// rate the schedule aims at (one burst of payload per TxTime, bit/s).
pub fn wave_metrics(s: &WaveSocket, mss: u32) -> [f64; 10] {
    let secs = |us: Option<u32>| us.map_or(f64::NAN, |v| v as f64 * 1e-6);
    let tx_time = s.tx_time_us as f64 * 1e-6;
    let delta = match (s.avg_rtt_us, s.min_rtt_us) {
        (Some(a), Some(m)) => a.saturating_sub(m) as f64 * 1e-6,
        _ => 0.0,
    };
    [
        s.burst as f64,
        tx_time,
        secs(s.dispersion_us),
        secs(s.min_rtt_us),
        secs(s.avg_rtt_us),
        delta,
        s.mode as f64,
        s.stability as f64,
        s.burst as f64 * mss as f64 * 8.0 / tx_time,
        s.max_rtt_us as f64 * 1e-6,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_the_simulators_in_seconds_and_bits_per_second() {
        let s = WaveSocket {
            next_burst_ns: 0,
            tx_time_us: 20_000,
            burst: 10,
            min_rtt_us: Some(50_000),
            avg_rtt_us: Some(56_000),
            max_rtt_us: 90_000,
            dispersion_us: None,
            stability: 2,
            mode: 1,
            bursts: 9,
            trains: 8,
        };
        let v = wave_metrics(&s, 1448);
        assert_eq!(v[0], 10.0);
        assert!((v[1] - 0.02).abs() < 1e-12);
        assert!(v[2].is_nan(), "no dispersion yet");
        assert!((v[5] - 0.006).abs() < 1e-12, "avg - min");
        assert!((v[8] - 10.0 * 1448.0 * 8.0 / 0.02).abs() < 1e-6);
        assert_eq!(WAVE_METRICS.len(), v.len());
    }
}
