//! Emulates a scenario file and prints its figures: the lateness of the
//! releases, the links' and the flows' tables.
//!
//! ```console
//! $ cargo run --release -p wavelab-net --example emulate -- SCENARIO.toml [--no-realtime] [--spin US]
//! ```

use wavelab_net::{Emulation, Kernel, Options, Plan};
use wavelab_tcp::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: emulate SCENARIO.toml [--no-realtime] [--spin US]");
    let mut options = Options::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--no-realtime" => options.realtime = false,
            "--no-offload" => options.offload = false,
            "--no-steer" => options.steer = false,
            "--spin" => {
                let us: u64 = args.next().and_then(|v| v.parse().ok()).expect("--spin US");
                options.spin = Duration::from_micros(us);
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let text = std::fs::read_to_string(&path).expect("readable scenario");
    let value: toml::Value = toml::from_str(&text).expect("valid TOML");
    let json = serde_json::to_string(&value).expect("JSON");
    let kernel = Kernel::read().expect("the kernel's congestion controls");
    let plan = match Plan::new(&json, &kernel) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {path}: {e}");
            std::process::exit(2);
        }
    };
    let mut emu = Emulation::new(plan, options);
    if let Err(e) = emu.start() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let r = emu.finish().expect("results");
    let s = &r.stats;
    let l = &s.lateness;
    println!(
        "{} releases; lateness p50 {} p99 {} p99.9 {} max {} (mean {:.0} ns); realtime {:?}; flagged {}; load {}",
        l.count, l.p50, l.p99, l.p999, l.max, l.mean_ns, s.realtime, s.flagged, s.loadavg
    );
    println!(
        "read {} stray {} read errors {} write errors {} wall {:.2} s, real-time demotions {}",
        s.read, s.stray, s.read_errors, s.write_errors, s.wall_seconds, s.realtime_demotions
    );
    // goodput of each flow over the second half of the run
    let series = &r.results.series;
    let (t, f, d) = (
        series.f64s("time"),
        series.column("flow"),
        series.u64s("bytes_delivered"),
    );
    if let Some(wavelab_model::ColumnData::U32(f)) = f {
        let half = s.emulated.as_secs_f64() / 2.0;
        for flow in 0..r.results.flows.rows() as u32 {
            let rows: Vec<usize> = (0..t.len()).filter(|&i| f[i] == flow).collect();
            let first = rows.iter().find(|&&i| t[i] >= half);
            if let (Some(&a), Some(&b)) = (first, rows.last()) {
                let rate = (d[b] - d[a]) as f64 * 8.0 / (t[b] - t[a]);
                println!(
                    "flow {flow}: goodput {:.2} Mbit/s from {:.1} s to {:.1} s",
                    rate / 1e6,
                    t[a],
                    t[b]
                );
            }
        }
    }
    for n in s.notes.iter().chain(&s.errors) {
        println!("note: {n}");
    }
    print!("{}", r.results.links.to_text());
    print!("{}", r.results.flows.to_text());
}
