//! The poison-ignoring lock, on a mutex a panicking thread poisoned.

use std::sync::{Arc, Mutex};

use super::lock;

#[test]
fn a_poisoned_mutex_still_locks_with_its_data() {
    let mutex = Arc::new(Mutex::new(1));
    let held = Arc::clone(&mutex);
    let panicked = std::thread::spawn(move || {
        let mut guard = held.lock().unwrap();
        *guard = 2;
        panic!("poison the mutex");
    })
    .join();
    assert!(panicked.is_err());
    assert!(mutex.is_poisoned());
    assert_eq!(*lock(&mutex), 2);
    *lock(&mutex) = 3;
    assert_eq!(*lock(&mutex), 3);
}
