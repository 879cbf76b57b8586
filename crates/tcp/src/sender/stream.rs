//! The application's outgoing byte stream: either real bytes (kept until
//! acknowledged) or a virtual stream of a given length whose content is a
//! deterministic pattern, which lets a simulation move gigabytes without
//! storing them.

use std::collections::VecDeque;

/// Bytes the application has handed to the sender.
#[derive(Clone, Debug, Default)]
pub struct SendBuffer {
    end: u64,
    closed: bool,
    /// Real bytes; `data[0]` is at stream offset `base`.
    data: Option<VecDeque<u8>>,
    base: u64,
}

impl SendBuffer {
    /// Stream offset one past the last byte made available.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// True once the application closed the stream.
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// Appends real bytes. A stream is either real or virtual: bytes written
    /// after virtual data, or after close, are refused (returns 0).
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        if self.closed || (self.data.is_none() && self.end > 0) {
            return 0;
        }
        let d = self.data.get_or_insert_with(VecDeque::new);
        d.extend(bytes);
        self.end += bytes.len() as u64;
        bytes.len()
    }

    /// Extends a virtual stream by `len` bytes (saturating: `u64::MAX` is unlimited).
    /// Refused on a real-byte stream or after close.
    pub fn write_virtual(&mut self, len: u64) {
        if self.closed || self.data.is_some() {
            return;
        }
        self.end = self.end.saturating_add(len);
    }

    /// Ends the stream at `at` if it extends beyond (the application stops writing).
    pub fn truncate(&mut self, at: u64) {
        if at < self.end {
            self.end = at;
            if let Some(d) = &mut self.data {
                d.truncate(at.saturating_sub(self.base) as usize);
            }
        }
    }

    /// No more bytes will be written.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Forgets real bytes below `offset` (they were acknowledged).
    pub fn release(&mut self, offset: u64) {
        if let Some(d) = &mut self.data {
            let n = offset.saturating_sub(self.base).min(d.len() as u64);
            d.drain(..n as usize);
            self.base += n;
        }
    }

    /// Copies bytes starting at `offset` into `out`. A virtual stream yields the
    /// pattern `offset % 251`; bytes past the end (or already released) are zero.
    pub fn read_at(&self, offset: u64, out: &mut [u8]) {
        match &self.data {
            None => {
                for (i, b) in out.iter_mut().enumerate() {
                    *b = ((offset + i as u64) % 251) as u8;
                }
            }
            Some(d) => {
                for (i, b) in out.iter_mut().enumerate() {
                    let at = offset + i as u64;
                    *b = at
                        .checked_sub(self.base)
                        .and_then(|k| d.get(k as usize))
                        .copied()
                        .unwrap_or(0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_bytes_are_kept_until_released() {
        let mut b = SendBuffer::default();
        assert_eq!(b.write(b"hello world"), 11);
        let mut out = [0u8; 5];
        b.read_at(6, &mut out);
        assert_eq!(&out, b"world");
        b.release(6);
        b.read_at(6, &mut out);
        assert_eq!(&out, b"world");
        b.write_virtual(10);
        assert_eq!(b.end(), 11, "no mixing of real and virtual data");
    }

    #[test]
    fn virtual_stream_pattern_and_truncate() {
        let mut b = SendBuffer::default();
        b.write_virtual(u64::MAX);
        let mut out = [0u8; 3];
        b.read_at(250, &mut out);
        assert_eq!(out, [250, 0, 1]);
        b.truncate(1000);
        b.close();
        assert_eq!(b.end(), 1000);
        assert_eq!(b.write(b"x"), 0);
    }
}
