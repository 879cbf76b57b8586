//! Runs a scenario file and prints the engine's figures: for profiling
//! (`perf record target/release/examples/run_scenario FILE [REPEATS]`).
//! With `WAVELAB_REFERENCE=1` it runs the reference engine (every link
//! direction in reference mode) instead of the virtual-time one.

use std::time::Instant as Clock;
use wavelab_sim::{Scenario, Simulation};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: run_scenario FILE.toml [REPEATS]");
        std::process::exit(2);
    };
    let repeats: u32 = args
        .next()
        .map_or(1, |r| r.parse().expect("REPEATS is a number"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let sc = Scenario::from_toml_str(&text).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let t0 = Clock::now();
        let mut sim = if std::env::var_os("WAVELAB_REFERENCE").is_some() {
            Simulation::new_reference(sc.clone())
        } else {
            Simulation::new(sc.clone())
        }
        .expect("a valid scenario");
        sim.run();
        let wall = t0.elapsed().as_secs_f64();
        best = best.min(wall);
        let r = sim.results();
        println!(
            "wall {:.4} s  events {}  hops {}  {:.2} M hops/s  digest {:#018x}",
            wall,
            r.run.events,
            r.run.packet_hops,
            r.run.packet_hops as f64 / wall / 1e6,
            r.digest()
        );
    }
    println!("best {best:.4} s");
}
