//! Tests that run across the processes of an MPI job: a test of a test
//! binary starts the binary itself under `mpirun -n P` with only that test
//! selected, and passes when every rank ran it to the end.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the ranks [`mpi_test`] starts.
const RANK_ENV: &str = "OXLA_TEST_MPI_RANK";
/// What a rank prints when its test body returned.
const PASSED: &str = "oxla-mpi-test: rank passed";
/// How long one `mpirun` may take before it is killed and the test fails.
const WALL: Duration = Duration::from_secs(180);

/// Runs `body` on every rank of `mpirun -n P` for each `P` in `ranks`,
/// with `env` set in the ranks' environment. `name` is the test's path in
/// its binary (`module::test`, or the function's name at the root). In the
/// ranks, runs `body` (which initializes MPI itself).
pub fn mpi_test(name: &str, ranks: &[usize], env: &[(&str, &str)], body: impl FnOnce()) {
    if std::env::var_os(RANK_ENV).is_some() {
        body();
        println!("\n{PASSED}");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    for &n in ranks {
        run_ranks(&exe, name, n, env);
    }
}

fn run_ranks(exe: &PathBuf, name: &str, n: usize, env: &[(&str, &str)]) {
    let dir = std::env::temp_dir();
    let tag = format!("oxla-mpi-{}-{name}-{n}", std::process::id()).replace("::", "-");
    let (out_path, err_path) = (
        dir.join(format!("{tag}.out")),
        dir.join(format!("{tag}.err")),
    );
    let out = std::fs::File::create(&out_path).expect("a file for mpirun's output");
    let err = std::fs::File::create(&err_path).expect("a file for mpirun's errors");
    let mut child = Command::new("mpirun")
        .args(["-n", &n.to_string(), "--oversubscribe"])
        .arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(RANK_ENV, "1")
        // OpenMPI refuses to start as root unless told (CI machines run as
        // root).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        // A rank that fails ends the others' waits within seconds.
        .env("OXLA_COLLECTIVE_TIMEOUT", "20")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start mpirun (install OpenMPI: openmpi-bin): {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for mpirun") {
            break Some(s);
        }
        if start.elapsed() > WALL {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    let passed = stdout.matches(PASSED).count();
    let say = format!("mpirun -n {n} {name}:\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    match status {
        None => panic!("{say}\nkilled after {} s", WALL.as_secs()),
        Some(s) if !s.success() => panic!("{say}\nexited with {s}"),
        Some(_) => assert_eq!(passed, n, "{say}\n{passed} of {n} ranks passed"),
    }
}
