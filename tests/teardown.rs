//! A compiled array function called during teardown works: from a
//! thread-local destructor (on a spawned thread and on the main thread) and
//! from a C `atexit` handler, when the executor's per-thread scratch space is
//! already destroyed. Each scenario runs in a child process (this binary,
//! re-run with `OXLA_TEARDOWN_SCENARIO` set), which must print the right
//! result and exit 0 — before the fix it aborted ("cannot access a Thread
//! Local Storage value during or after destruction").
//!
//! This target has `harness = false`: the main-thread scenario needs this
//! binary's own main thread, which libtest keeps for itself.

use oxla::jit;
use std::process::Command;

const SCENARIO: &str = "OXLA_TEARDOWN_SCENARIO";

#[jit]
fn total(x: &[f64]) -> f64 {
    sum(x * 2.0)
}

/// 2 · (1 + 2 + 3).
const WANT: f64 = 12.0;

fn call() -> f64 {
    total(&[1.0, 2.0, 3.0])
}

/// Calls the compiled function when the thread's locals are destroyed.
struct CallsOnDrop;

impl Drop for CallsOnDrop {
    fn drop(&mut self) {
        println!("thread-local destructor: {}", call());
    }
}

thread_local! {
    static GUARD: CallsOnDrop = const { CallsOnDrop };
}

/// Initialize `GUARD` before the first call, so that the executor's scratch
/// space (initialized by the call, destroyed in reverse order) is gone when
/// `GUARD`'s destructor runs.
fn guard_then_call() {
    GUARD.with(|_| {});
    assert_eq!(call(), WANT);
}

extern "C" {
    fn atexit(cb: extern "C" fn()) -> i32;
}

extern "C" fn at_exit() {
    println!("atexit handler: {}", call());
}

fn child(scenario: &str) {
    match scenario {
        "spawned" => {
            std::thread::spawn(guard_then_call).join().unwrap();
            println!("joined");
        }
        // Returns from `main`; the destructor runs inside `exit`.
        "main" => guard_then_call(),
        "atexit" => {
            // SAFETY: registers a plain function; it runs after `main`.
            assert_eq!(unsafe { atexit(at_exit) }, 0);
            assert_eq!(call(), WANT);
        }
        _ => panic!("unknown scenario {scenario}"),
    }
}

fn main() {
    if let Ok(s) = std::env::var(SCENARIO) {
        return child(&s);
    }
    let exe = std::env::current_exe().unwrap();
    let scenarios: [(&str, &[&str]); 3] = [
        ("spawned", &["thread-local destructor: 12", "joined"]),
        ("main", &["thread-local destructor: 12"]),
        ("atexit", &["atexit handler: 12"]),
    ];
    let mut failed = Vec::new();
    for (name, want) in scenarios {
        let out = Command::new(&exe).env(SCENARIO, name).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        if out.status.success() && lines == want {
            println!("teardown scenario {name} ... ok");
        } else {
            println!(
                "teardown scenario {name} ... FAILED: {}\nstdout: {stdout}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "failed scenarios: {failed:?}");
}
