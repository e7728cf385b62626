//! Poisoned guards after every device buffer: a kernel that writes past the
//! end of its output is caught by the lab itself, without compute-sanitizer.
//!
//! [`crate::gpu::Gpu::alloc`] allocates [`GUARD_BYTES`] more than it is asked
//! for, fills them with [`POISON`] and hands out a buffer of exactly the
//! length asked for: the guard is past its end, where no kernel, copy or
//! memset of the lab legitimately writes. Each launch notes which buffers it
//! was given to write ([`crate::kernels::Launch::output`]), and
//! [`crate::gpu::Gpu::sync_after`], which every check calls after its launch,
//! reads those buffers' guards back: a changed byte is an
//! [`crate::Error::WrotePastEnd`] naming the kernel and the argument.
//!
//! No kernel of the lab indexes an output backwards (every output index is
//! an unsigned offset from the buffer's start), so there is no guard before a
//! buffer. A write past the end of a view inside a larger buffer stays
//! inside the buffer: the lessons that launch on part of a buffer poison
//! and check the rest themselves (the roofline's checks, chapter 19's
//! guard blocks).
//!
//! Under compute-sanitizer the guards would hide exactly what memcheck looks
//! for (a write just past an allocation), so `cargo xtask sanitize` sets
//! [`NO_GUARDS_ENV`] and allocations are then exactly their length.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes of poison after every buffer: 64 floats, two 128-byte lines.
pub const GUARD_BYTES: usize = 256;

/// The poison byte. A float of four of them is -2.87e-16, a value no kernel
/// of the lab writes; 0xFF (a NaN) is what outputs are poisoned with before
/// a check, so a guard uses another byte.
pub const POISON: u8 = 0xA5;

/// Set (to anything) to allocate without guards: `cargo xtask sanitize`
/// does, so that memcheck sees any access past an allocation.
pub const NO_GUARDS_ENV: &str = "LAB_NO_GUARDS";

/// A buffer a launch was given to write, not checked yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The buffer's device address (its allocation's start).
    pub base: u64,
    /// Its length, bytes: the guard starts here.
    pub bytes: usize,
    /// The first kernel since the last check that was given it to write.
    pub kernel: &'static str,
    /// Which argument of that kernel it was (0-based).
    pub argument: usize,
}

/// The guards of one GPU's buffers: which buffers have one, and which were
/// written since the last check.
#[derive(Debug)]
pub struct Guards {
    bytes: usize,
    tracking: AtomicBool,
    state: Mutex<State>,
}

/// What [`Guards`] keeps behind its lock.
#[derive(Debug, Default)]
struct State {
    /// Guarded buffers: start address to length, bytes.
    buffers: BTreeMap<u64, usize>,
    /// Buffers written since the last check.
    written: Vec<Written>,
}

impl Default for Guards {
    fn default() -> Self {
        Guards::new(std::env::var_os(NO_GUARDS_ENV).is_none())
    }
}

impl Guards {
    /// Guards of [`GUARD_BYTES`] where `on`, none otherwise.
    pub fn new(on: bool) -> Guards {
        Guards {
            bytes: if on { GUARD_BYTES } else { 0 },
            tracking: AtomicBool::new(true),
            state: Mutex::new(State::default()),
        }
    }

    /// Bytes of guard after each buffer: [`GUARD_BYTES`], or 0 under
    /// [`NO_GUARDS_ENV`].
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Records a buffer of `bytes` at `base` whose guard is poisoned. Live
    /// allocations never overlap, so any recorded buffer that overlaps the
    /// new one (with its guard) was freed: it is forgotten, and so is any
    /// note of a launch on it.
    pub fn register(&self, base: u64, bytes: usize) {
        if self.bytes == 0 {
            return;
        }
        let end = base + (bytes + self.bytes) as u64;
        let guard = self.bytes as u64;
        let mut state = self.lock();
        let stale: Vec<u64> = state
            .buffers
            .range(..end)
            .filter(|&(&b, &n)| b + n as u64 + guard > base)
            .map(|(&b, _)| b)
            .collect();
        for b in &stale {
            state.buffers.remove(b);
        }
        state.written.retain(|w| !stale.contains(&w.base));
        state.buffers.insert(base, bytes);
    }

    /// Notes that `kernel` was given the buffer holding address `ptr` as
    /// argument `argument` to write. Addresses of no guarded buffer (a
    /// buffer the lab did not allocate) are ignored.
    pub fn note_output(&self, ptr: u64, kernel: &'static str, argument: usize) {
        if !self.tracking.load(Ordering::Relaxed) {
            return;
        }
        let mut state = self.lock();
        let Some((&base, &bytes)) = state.buffers.range(..=ptr).next_back() else {
            return;
        };
        if ptr > base + bytes as u64 {
            return;
        }
        if !state.written.iter().any(|w| w.base == base) {
            state.written.push(Written {
                base,
                bytes,
                kernel,
                argument,
            });
        }
    }

    /// The buffers written since the last call (those still recorded),
    /// forgotten here.
    pub fn take_written(&self) -> Vec<Written> {
        let mut state = self.lock();
        let written = std::mem::take(&mut state.written);
        written
            .into_iter()
            .filter(|w| state.buffers.get(&w.base) == Some(&w.bytes))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: use it.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops noting outputs until the returned value is dropped: the timing
    /// loops' launches are not checks, and noting costs a lookup a launch.
    pub fn untracked(&self) -> Untracked<'_> {
        Untracked {
            guards: self,
            was: self.tracking.swap(false, Ordering::Relaxed),
        }
    }
}

/// Noting outputs is off while this lives (see [`Guards::untracked`]).
pub struct Untracked<'a> {
    guards: &'a Guards,
    was: bool,
}

impl Drop for Untracked<'_> {
    fn drop(&mut self) {
        self.guards.tracking.store(self.was, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_found_by_any_address_inside_them() {
        let g = Guards::new(true);
        g.register(0x1000, 400);
        g.register(0x2000, 64);
        g.note_output(0x1000 + 100, "k", 2);
        g.note_output(0x1000, "later", 0);
        g.note_output(0x5000, "unknown", 0);
        g.note_output(0x2000, "m", 1);
        assert_eq!(
            g.take_written(),
            [
                Written {
                    base: 0x1000,
                    bytes: 400,
                    kernel: "k",
                    argument: 2
                },
                Written {
                    base: 0x2000,
                    bytes: 64,
                    kernel: "m",
                    argument: 1
                },
            ]
        );
        assert!(g.take_written().is_empty());
        {
            let _quiet = g.untracked();
            g.note_output(0x1000, "timed", 0);
        }
        assert!(g.take_written().is_empty());
        g.note_output(0x1000, "checked", 0);
        assert_eq!(g.take_written().len(), 1);
    }

    #[test]
    fn a_new_buffer_over_a_freed_one_replaces_it_and_its_notes() {
        let g = Guards::new(true);
        g.register(0x1000, 4000);
        g.note_output(0x1000, "k", 0);
        // Freed, and a new allocation starts inside the old range: the old
        // buffer, its guard and the note on it are gone.
        g.register(0x1800, 64);
        assert!(g.take_written().is_empty());
        g.note_output(0x1000, "stale", 0);
        assert!(g.take_written().is_empty(), "0x1000 is no buffer any more");
        // One ending just before another's start (guard included) stays.
        g.register(0x4000, 100);
        g.register(0x4000 + 100 + GUARD_BYTES as u64, 8);
        g.note_output(0x4000, "k", 0);
        assert_eq!(g.take_written().len(), 1);
    }

    #[test]
    fn without_guards_nothing_is_tracked() {
        let g = Guards::new(false);
        assert_eq!(g.bytes(), 0);
        g.register(0x1000, 400);
        g.note_output(0x1000, "k", 0);
        assert!(g.take_written().is_empty());
    }
}
