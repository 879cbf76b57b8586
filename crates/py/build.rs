//! Embeds a build id: a hash of every source file that decides what a
//! simulation computes (the `wavelab-tcp`, `wavelab-model`, `wavelab-sim`, `wavelab-user-cc`
//! and `wavelab-py` crates, the workspace manifest and lock file) and of the compiler's
//! version. The results store keys runs by it (`wavelab._native.build_id`),
//! so a run stored by one build is never reused by a build that could compute
//! something else, while a rebuild of the same sources on another machine of
//! a cluster keeps the same id.

use std::path::{Path, PathBuf};
use std::process::Command;

/// 64-bit FNV-1a: enough to notice a change, no dependency needed.
struct Fnv(u64);

impl Fnv {
    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "rs" || x == "toml" || x == "lock")
        {
            out.push(p);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("../..");
    let mut files = Vec::new();
    for krate in ["tcp", "model", "sim", "user-cc", "py"] {
        let dir = root.join("crates").join(krate);
        files_under(&dir.join("src"), &mut files);
        files.push(dir.join("Cargo.toml"));
        println!("cargo:rerun-if-changed={}", dir.join("src").display());
        println!(
            "cargo:rerun-if-changed={}",
            dir.join("Cargo.toml").display()
        );
    }
    for f in ["Cargo.toml", "Cargo.lock"] {
        files.push(root.join(f));
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            (rel, p)
        })
        .collect();
    named.sort();
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    for (rel, p) in &named {
        h.update(rel.as_bytes());
        h.update(&[0]);
        h.update(&std::fs::read(p).unwrap_or_default());
        h.update(&[0]);
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if let Ok(v) = Command::new(rustc).arg("-vV").output() {
        h.update(&v.stdout);
    }
    println!("cargo:rustc-env=WAVELAB_BUILD_ID={:016x}", h.0);
}
