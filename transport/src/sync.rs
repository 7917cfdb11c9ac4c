//! The one poison-ignoring lock of the workspace: every crate above `transport` (headless,
//! test-support, harness) and the server half take a `Mutex` through [`lock`].

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, ignoring poison: the data a `Mutex` of this workspace guards stays consistent
/// when a holder panicked (each guard's change is one assignment or one collection operation),
/// and a panicking thread already fails its request, test or run.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
