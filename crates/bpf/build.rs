//! Builds TCP Wave's BPF program and its skeleton when the machine can:
//! clang (BPF target), bpftool and the running kernel's BTF
//! (/sys/kernel/btf/vmlinux, from which bpftool writes vmlinux.h). When one of
//! them is missing the crate still builds, without the program, and the
//! loader says exactly what was missing (`cfg(wavelab_bpf_program)` is unset
//! and `WAVELAB_BPF_MISSING` holds the reason).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const SRC: &str = "src/bpf/wave.bpf.c";
const BTF: &str = "/sys/kernel/btf/vmlinux";

fn on_path(tool: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}

/// vmlinux.h from the running kernel's BTF, written into `out`.
fn vmlinux_h(bpftool: &Path, out: &Path) -> Result<(), String> {
    let dump = Command::new(bpftool)
        .args(["btf", "dump", "file", BTF, "format", "c"])
        .output()
        .map_err(|e| format!("running {}: {e}", bpftool.display()))?;
    if !dump.status.success() {
        return Err(format!(
            "bpftool could not read {BTF}: {}",
            String::from_utf8_lossy(&dump.stderr).trim()
        ));
    }
    std::fs::write(out.join("vmlinux.h"), dump.stdout)
        .map_err(|e| format!("writing vmlinux.h: {e}"))
}

fn build(out: &Path) -> Result<(), String> {
    let clang = env::var_os("CLANG")
        .map(PathBuf::from)
        .or_else(|| on_path("clang"))
        .ok_or("clang was not found (Debian: apt-get install clang)")?;
    let bpftool =
        on_path("bpftool").ok_or("bpftool was not found (Debian: apt-get install bpftool)")?;
    if !Path::new(BTF).exists() {
        return Err(format!(
            "{BTF} does not exist: the kernel was built without BTF (CONFIG_DEBUG_INFO_BTF)"
        ));
    }
    vmlinux_h(&bpftool, out)?;
    let arch = match env::var("CARGO_CFG_TARGET_ARCH").as_deref() {
        Ok("x86_64") => "x86",
        Ok("aarch64") => "arm64",
        Ok(other) => return Err(format!("no BPF target arch for {other}")),
        Err(_) => return Err("CARGO_CFG_TARGET_ARCH is not set".into()),
    };
    libbpf_cargo::SkeletonBuilder::new()
        .source(SRC)
        .clang(&clang)
        .clang_args([
            "-I".into(),
            out.as_os_str().to_owned(),
            format!("-D__TARGET_ARCH_{arch}").into(),
        ])
        .build_and_generate(out.join("wave.skel.rs"))
        .map_err(|e| format!("building {SRC}: {e:#}"))
}

fn main() {
    println!("cargo:rerun-if-changed={SRC}");
    println!("cargo:rerun-if-env-changed=CLANG");
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo::rustc-check-cfg=cfg(wavelab_bpf_program)");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    match build(&out) {
        Ok(()) => {
            println!("cargo:rustc-cfg=wavelab_bpf_program");
            println!("cargo:rustc-env=WAVELAB_BPF_MISSING=");
        }
        Err(reason) => {
            println!("cargo:warning=TCP Wave's BPF program was not built: {reason}");
            println!("cargo:rustc-env=WAVELAB_BPF_MISSING={reason}");
        }
    }
}
