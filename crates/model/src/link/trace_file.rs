//! Reading a trace file, bounded, and quoting it in errors without echoing it.
//!
//! A scenario names its trace files, and a scenario is data anyone may have
//! written: a path to a device, a pipe, or a file of the kernel's pseudo
//! file systems must not make a run read for ever (`/proc/kmsg` blocks), read
//! gigabytes (`/proc/self/pagemap` says it has 0 bytes and gives 4 GB), or
//! print a secret back (the first line of `/etc/shadow` is not a trace, and
//! its error must not show it). So a trace file is:
//!
//! * opened without blocking (a FIFO with no writer would block the open),
//!   and must then be a regular file ([`std::fs::File::metadata`] of the
//!   opened file, not of the path, which could be swapped in between) that is
//!   not on a pseudo file system (proc, sys, debug, trace, cgroup, ...);
//! * read to at most [`MAX_TRACE_BYTES`] + 1 bytes, its size counted on the
//!   bytes read (a pseudo-file's size on disk says nothing);
//! * read within [`TRACE_READ_SECONDS`]: the read runs on a thread of its
//!   own, and a read that has not finished by then is abandoned with an
//!   error (a device or file system that never answers);
//! * quoted in errors only as a short excerpt of the offending token
//!   ([`excerpt`]), never whole lines.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::sync::mpsc;
use std::time::Duration as WallDuration;

/// The largest trace file read (about 15 million delivery opportunities, or
/// 4 million CSV points), counted on the bytes read.
pub const MAX_TRACE_BYTES: u64 = 100_000_000;

/// The longest a trace file may take to read, in wall-clock seconds: a
/// 100 MB file from a local disk takes well under a second.
pub const TRACE_READ_SECONDS: u64 = 30;

/// The most characters of a file's token an error quotes.
pub const EXCERPT_CHARS: usize = 12;

/// A bad trace: the file, the line (1-based; 0 for the whole file) and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The trace file as named in the scenario.
    pub file: String,
    /// The line, from 1; 0 when the problem is the whole file.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{} line {}: {}", self.file, self.line, self.message)
        }
    }
}

impl TraceError {
    /// The error `message` at `line` (from 1; 0 for the whole file) of
    /// `file`.
    pub fn new(file: &str, line: usize, message: String) -> Self {
        TraceError {
            file: file.to_string(),
            line,
            message,
        }
    }
}

/// The lines of a trace's text that hold data, trimmed, with their line
/// numbers (from 1): blank lines and lines starting with `#` are skipped.
pub fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, raw)| (i + 1, raw.trim()))
        .filter(|(_, t)| !t.is_empty() && !t.starts_with('#'))
}

/// `token` as an error quotes it: in double quotes, at most
/// [`EXCERPT_CHARS`] characters followed by `...` when it is longer, and
/// every character that is not printable ASCII shown as `?` (a control
/// character, or a byte of a binary file, must not reach a terminal).
pub fn excerpt(token: &str) -> String {
    let mut out = String::from("\"");
    for (i, c) in token.chars().enumerate() {
        if i == EXCERPT_CHARS {
            out.push_str("...");
            break;
        }
        out.push(if c.is_ascii_graphic() || c == ' ' {
            c
        } else {
            '?'
        });
    }
    out.push('"');
    out
}

/// The data lines of a CSV trace's text, each as its 1-based line number
/// and its fields (split at commas, else at white space, trimmed): blank
/// lines and `#` comments skipped, and the first line too when `is_header`
/// says its fields are a header (no field is a value).
pub(crate) fn csv_rows<'a>(
    text: &'a str,
    is_header: impl Fn(&[&str]) -> bool + 'a,
) -> impl Iterator<Item = (usize, Vec<&'a str>)> + 'a {
    let mut first = true;
    data_lines(text).filter_map(move |(line, t)| {
        let fields: Vec<&str> = if t.contains(',') {
            t.split(',').map(str::trim).collect()
        } else {
            t.split_whitespace().collect()
        };
        let header = first && is_header(&fields);
        first = false;
        (!header).then_some((line, fields))
    })
}

/// The kernel's pseudo file systems: their files are not data on a disk
/// (`/proc/kmsg` blocks, `/proc/self/pagemap` is gigabytes that say they
/// are none).
#[cfg(target_os = "linux")]
fn pseudo_file_system(file: &File) -> Option<&'static str> {
    use nix::sys::statfs::{self, fstatfs};
    let kind = fstatfs(file).ok()?.filesystem_type();
    [
        (statfs::PROC_SUPER_MAGIC, "proc"),
        (statfs::SYSFS_MAGIC, "sysfs"),
        (statfs::DEBUGFS_MAGIC, "debugfs"),
        (statfs::TRACEFS_MAGIC, "tracefs"),
        (statfs::SECURITYFS_MAGIC, "securityfs"),
        (statfs::CGROUP_SUPER_MAGIC, "cgroup"),
        (statfs::CGROUP2_SUPER_MAGIC, "cgroup2"),
        (statfs::BPF_FS_MAGIC, "bpf"),
        (statfs::DEVPTS_SUPER_MAGIC, "devpts"),
        (statfs::NSFS_MAGIC, "nsfs"),
        (statfs::SELINUX_MAGIC, "selinuxfs"),
    ]
    .into_iter()
    .find(|(magic, _)| *magic == kind)
    .map(|(_, name)| name)
}

#[cfg(not(target_os = "linux"))]
fn pseudo_file_system(_file: &File) -> Option<&'static str> {
    None
}

/// Opens `path` without blocking and checks that it is a regular file on a
/// file system of data.
fn open_regular(path: &str) -> Result<File, String> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // a FIFO without a writer blocks the open itself; a regular file
        // ignores the flag
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot be read ({e})"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot be read ({e})"))?;
    if !meta.is_file() {
        return Err("is not a regular file (a trace is a file of text)".to_string());
    }
    if let Some(fs) = pseudo_file_system(&file) {
        return Err(format!(
            "is a file of the kernel's {fs} file system, not a trace (a trace is a file of text)"
        ));
    }
    Ok(file)
}

/// Reads at most `limit` + 1 bytes of `file`.
fn read_bounded(file: File, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut data = Vec::new();
    file.take(limit + 1).read_to_end(&mut data)?;
    Ok(data)
}

/// The text of the trace file `path`, read as the module description says,
/// within `seconds`.
pub(crate) fn read_trace_file_within(
    path: &str,
    limit: u64,
    seconds: u64,
) -> Result<String, TraceError> {
    let err = |message: String| TraceError {
        file: path.to_string(),
        line: 0,
        message,
    };
    let file = open_regular(path).map_err(err)?;
    let (tx, rx) = mpsc::channel();
    // the reader is abandoned if it does not finish in time: a read that
    // never returns keeps its thread, not the run
    std::thread::Builder::new()
        .name("wavelab-trace-read".to_string())
        .spawn(move || {
            let _ = tx.send(read_bounded(file, limit));
        })
        .map_err(|e| err(format!("cannot be read ({e})")))?;
    let data = match rx.recv_timeout(WallDuration::from_secs(seconds)) {
        Ok(Ok(data)) => data,
        Ok(Err(e)) => return Err(err(format!("cannot be read ({e})"))),
        Err(_) => {
            return Err(err(format!(
                "was not read within {seconds} s (a device or a file system that does not \
                 answer?)"
            )))
        }
    };
    if data.len() as u64 > limit {
        return Err(err(format!(
            "has more than {limit} bytes (at most {limit}; counted on the bytes read)"
        )));
    }
    String::from_utf8(data).map_err(|e| {
        err(format!(
            "is not text (not UTF-8 at byte {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// The text of the trace file `path`: a regular file of data, of at most
/// [`MAX_TRACE_BYTES`], read within [`TRACE_READ_SECONDS`].
pub(crate) fn read_trace_file(path: &str) -> Result<String, TraceError> {
    read_trace_file_within(path, MAX_TRACE_BYTES, TRACE_READ_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(path: &str) -> String {
        read_trace_file(path).unwrap_err().to_string()
    }

    #[test]
    fn devices_pipes_and_pseudo_files_are_refused_before_any_read() {
        // /proc/self/pagemap said 0 bytes and gave 4.2 GB; /proc/kmsg hung
        for p in [
            "/proc/self/pagemap",
            "/proc/kmsg",
            "/proc/self/status",
            "/sys/kernel/mm/transparent_hugepage/enabled",
        ] {
            if std::path::Path::new(p).exists() {
                let m = message(p);
                assert!(
                    m.starts_with(&format!("{p}: is a file of the kernel's"))
                        || m.starts_with(&format!("{p}: cannot be read")),
                    "{m}"
                );
            }
        }
        assert_eq!(
            message("/dev/zero"),
            "/dev/zero: is not a regular file (a trace is a file of text)"
        );
        assert!(message("/").ends_with("is not a regular file (a trace is a file of text)"));
        assert!(message("/nonexistent/x.trace").starts_with("/nonexistent/x.trace: cannot be read"));
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_without_blocking() {
        let dir = std::env::temp_dir().join(format!("wavelab-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("trace");
        let _ = std::fs::remove_file(&fifo);
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let m = message(fifo.to_str().unwrap());
        assert!(
            m.ends_with("is not a regular file (a trace is a file of text)"),
            "{m}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_size_is_counted_on_the_bytes_read() {
        let dir = std::env::temp_dir().join(format!("wavelab-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.trace");
        std::fs::write(&f, "1\n".repeat(60)).unwrap();
        let p = f.to_str().unwrap();
        assert_eq!(read_trace_file_within(p, 120, 30).unwrap().len(), 120);
        assert_eq!(
            read_trace_file_within(p, 119, 30).unwrap_err().to_string(),
            format!("{p}: has more than 119 bytes (at most 119; counted on the bytes read)")
        );
        std::fs::write(&f, b"1\n\xff\xfe").unwrap();
        assert_eq!(
            read_trace_file_within(p, 120, 30).unwrap_err().to_string(),
            format!("{p}: is not text (not UTF-8 at byte 2)")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn excerpts_are_short_and_printable() {
        assert_eq!(excerpt("x3"), "\"x3\"");
        assert_eq!(excerpt("root:$6$abcdefghijkl:19000"), "\"root:$6$abcd...\"");
        assert_eq!(excerpt("a\u{1b}[2Jb\u{7}"), "\"a?[2Jb?\"");
        assert_eq!(excerpt("é"), "\"?\"");
    }
}
