//! Accuracy table of the CPU backend's math functions (exp, log, sin, cos,
//! tanh, sqrt), run through the JIT kernels (vector body and scalar tail).
//!
//! f32: every one of the 2^32 bit patterns (or every `--stride`-th), error in
//! ulp of the exact result against Rust std's f64 function; f64: `--f64-count`
//! inputs uniform over finite bit patterns and as many uniform in a useful
//! range, plus special values, error in f64 ulp against std. The definition
//! of the ulp and of the special failures (NaN, infinities, signed zeros,
//! counted apart and never skipped) is in `tests/accuracy/mod.rs`.
//!
//! Run: `cargo run --release -p oxla-cpu --example accuracy -- [--isa
//! host|baseline|both] [--stride K] [--f64-count N] [--threads T]`.

#[path = "../tests/accuracy/mod.rs"]
mod accuracy;

use accuracy::*;
use oxla_core::DType;
use oxla_cpu::IsaLevel;
use std::time::Instant;

fn main() {
    let mut isas = vec![None];
    let mut stride = 1u64;
    let mut f64_count = 10_000_000usize;
    let mut threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u64);
    let mut ops: Vec<_> = OPS.to_vec();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().expect("a value after the flag");
        match a.as_str() {
            "--isa" => {
                isas = match value().as_str() {
                    "host" => vec![None],
                    "baseline" => vec![Some(IsaLevel::Baseline)],
                    "both" => vec![None, Some(IsaLevel::Baseline)],
                    other => panic!("unknown ISA {other}"),
                }
            }
            "--stride" => stride = value().parse().expect("stride"),
            "--f64-count" => f64_count = value().parse().expect("count"),
            "--threads" => threads = value().parse().expect("threads"),
            "--ops" => {
                let names = value();
                ops.retain(|op| names.split(',').any(|n| n == op.name()));
            }
            other => panic!("unknown argument {other}"),
        }
    }
    let f32_domain = if stride == 1 {
        "all 2^32 f32".to_string()
    } else {
        format!("every {stride}-th f32 pattern")
    };
    println!("| function | type | ISA | domain | inputs | max ulp | at input | NaN / inf / ±0 failures |");
    println!("|---|---|---|---|---|---|---|---|");
    for level in &isas {
        let isa = match level {
            None if oxla_cpu::host_supports_v3() => "host (FMA)",
            None => "host",
            Some(_) => "baseline SSE2",
        };
        for &op in &ops {
            for ty in [DType::F32, DType::F64] {
                let t0 = Instant::now();
                let rows = if ty == DType::F32 {
                    let f = UnaryFn::<f32>::compile(op, *level);
                    vec![(f32_domain.clone(), sweep_f32(op, &f, stride, threads))]
                } else {
                    let f = UnaryFn::<f64>::compile(op, *level);
                    f64_domains(op, f64_count, 7)
                        .into_iter()
                        .map(|(name, xs)| (name, measure_f64(op, &f, &xs)))
                        .collect()
                };
                for (domain, t) in rows {
                    let at = if ty == DType::F32 {
                        format!("{:e}", f32::from_bits(t.at as u32))
                    } else {
                        format!("{:e}", f64::from_bits(t.at))
                    };
                    let first = match t.first_special {
                        None => String::new(),
                        Some(b) if ty == DType::F32 => {
                            format!(" (first at {:e})", f32::from_bits(b as u32))
                        }
                        Some(b) => format!(" (first at {:e})", f64::from_bits(b)),
                    };
                    println!(
                        "| {} | {ty} | {isa} | {domain} | {} | {:.3} | {at} | {} / {} / {}{first} |",
                        op.name(),
                        t.count,
                        t.max_ulp,
                        t.nan,
                        t.inf,
                        t.zero_sign
                    );
                }
                eprintln!(
                    "  {} {ty} {isa}: {:.1} s",
                    op.name(),
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    }
}
