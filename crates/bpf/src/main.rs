//! `wavelab-bpf`: load, unload and inspect TCP Wave as a BPF congestion
//! control (`wavelab bpf ...` runs this binary).

use std::process::ExitCode;
use wavelab_bpf::{Counters, Params, Status};

const USAGE: &str = "usage:
  wavelab-bpf load [--variant NAME] [--burst N] [--min-burst N] [--tx-time DUR]
                   [--min-tx-time DUR] [--beta DUR] [--dispersion-scaling true|false]
                   [--dispersion-filter mean|rtt-weighted|latest]
      register TCP Wave as the congestion control \"wave\" (the parameters and variants
      of `cc = { algorithm = \"wave\", ... }` in a scenario; default: variant dcnet2016)
  wavelab-bpf unload      unregister it
  wavelab-bpf status [--json]
  wavelab-bpf check       what loading needs, and whether this machine has it";

/// The load options as the scenario's JSON form of Wave's parameters.
fn load_params(args: &[String]) -> Result<Params, String> {
    let mut obj = serde_json::Map::new();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let key = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {flag:?}\n{USAGE}"))?
            .replace('-', "_");
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let v = match key.as_str() {
            "burst" | "min_burst" => serde_json::Value::from(
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{flag}: {value:?} is not a whole number of segments"))?,
            ),
            "dispersion_scaling" => serde_json::Value::from(
                value
                    .parse::<bool>()
                    .map_err(|_| format!("{flag}: {value:?} is not true or false"))?,
            ),
            "variant" | "tx_time" | "min_tx_time" | "beta" | "dispersion_filter" => {
                serde_json::Value::from(value.as_str())
            }
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        };
        obj.insert(key, v);
    }
    Params::from_json(&serde_json::Value::Object(obj).to_string())
}

fn params_text(p: &Params) -> String {
    format!(
        "burst {} (min {}), TxTime0 {} us (min {} us), beta {} us, dispersion {}{}, filter {}{}",
        p.burst,
        p.min_burst,
        p.tx_time_us,
        p.min_tx_time_us,
        p.beta_us,
        "span",
        if p.dispersion_scaling {
            " x n/(n-1)"
        } else {
            ""
        },
        ["mean", "rtt-weighted", "latest"]
            .get(p.dispersion_filter as usize)
            .unwrap_or(&"?"),
        if p.first_release {
            ", first-4.12-release rules"
        } else {
            ""
        },
    )
}

fn counters_json(c: &Counters) -> serde_json::Value {
    serde_json::json!({
        "sockets": c.sockets, "bursts": c.bursts, "trains": c.trains,
        "adjustments": c.adjustments, "fast_retransmits": c.fast_retransmits,
        "rtos": c.rtos, "last_tx_time_us": c.last_tx_time_us,
        "last_dispersion_us": c.last_dispersion_us,
    })
}

fn status_json(s: &Status) -> serde_json::Value {
    serde_json::json!({
        "registered": s.registered,
        "loaded_by_wavelab": s.pinned,
        "params": s.params.map(|p| serde_json::json!({
            "burst": p.burst, "min_burst": p.min_burst, "tx_time_us": p.tx_time_us,
            "min_tx_time_us": p.min_tx_time_us, "beta_us": p.beta_us,
            "dispersion_scaling": p.dispersion_scaling,
            "dispersion_filter": p.dispersion_filter, "first_release": p.first_release,
        })),
        "counters": s.counters.as_ref().map(counters_json),
        "build_problem": wavelab_bpf::build_problem(),
    })
}

fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some("load") => {
            let p = load_params(&args[1..])?;
            wavelab_bpf::load(&p).map_err(|e| e.to_string())?;
            println!("registered TCP Wave as \"wave\": {}", params_text(&p));
            println!("select it with setsockopt(TCP_CONGESTION, \"wave\"), or sysctl net.ipv4.tcp_congestion_control=wave");
            Ok(())
        }
        Some("unload") => {
            if wavelab_bpf::unload().map_err(|e| e.to_string())? {
                println!("unregistered TCP Wave (sockets using it keep it until they close)");
            } else {
                println!("TCP Wave was not loaded by wavelab-bpf: nothing to do");
            }
            Ok(())
        }
        Some("status") => {
            let s = wavelab_bpf::status().map_err(|e| e.to_string())?;
            if args.get(1).map(String::as_str) == Some("--json") {
                println!("{}", status_json(&s));
                return Ok(());
            }
            match (s.registered, s.pinned) {
                (true, true) => {
                    println!("TCP Wave is registered as \"wave\" (loaded by wavelab-bpf)")
                }
                (true, false) => {
                    println!("a congestion control \"wave\" is registered, not by wavelab-bpf")
                }
                (false, _) => println!("TCP Wave is not registered"),
            }
            if let Some(p) = s.params {
                println!("  parameters: {}", params_text(&p));
            }
            if let Some(c) = s.counters {
                println!(
                    "  since loading: {} sockets, {} bursts, {} ACK trains, {} adjustments, {} fast retransmits, {} RTOs; last TxTime {} us, dispersion {} us",
                    c.sockets, c.bursts, c.trains, c.adjustments, c.fast_retransmits, c.rtos,
                    c.last_tx_time_us, c.last_dispersion_us
                );
            }
            if let Some(problem) = wavelab_bpf::build_problem() {
                println!("  this build has no BPF program: {problem}");
            }
            Ok(())
        }
        Some("check") => {
            wavelab_bpf::check().map_err(|e| e.to_string())?;
            println!("ready: the program is built in, the kernel has BTF, this is root and /sys/fs/bpf is a BPF filesystem");
            Ok(())
        }
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
