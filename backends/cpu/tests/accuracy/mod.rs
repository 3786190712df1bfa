//! Accuracy measurement of the CPU backend's math functions, shared by the
//! exhaustive `accuracy` example and the sampled `math_error` test.
//!
//! # Error in ulp
//!
//! The reference is Rust std's `f64` function of the input (for f32, of the
//! f32 input widened exactly to f64). For a result `y` and reference `r`:
//!
//! - `ulp(v)` of a finite value `v` of the result type is the gap from `|v|`
//!   to the next larger magnitude of that type: `2^(e - 23)` for f32 with
//!   `e = max(floor(log2 |v|), -126)` (so `2^-149` for zero and subnormals,
//!   and at a power of two the gap *above* it), `2^(e - 52)` with
//!   `e ≥ -1022` for f64; for `f32::MAX` the gap is `2^104` as for its binade.
//! - f32: `err = |y - r| / ulp(r rounded to f32)`; f64: `err = |y - r| /
//!   ulp(r)`. The difference is taken in f64 (exact enough: f32 ulps are
//!   2^29 f64 ulps).
//! - Not measured in ulp but counted as *special failures*: NaN where the
//!   reference is not NaN or a number where it is NaN; an infinity where the
//!   (rounded) reference is finite, or a finite value or the wrong infinity
//!   where it is infinite; a zero of the wrong sign where the (rounded)
//!   reference is zero. No output is skipped.
#![allow(dead_code)]

use oxla_core::kernel::{Inst, InstKind, KernelArg, Reduce, Store};
use oxla_core::ops::elementwise::UnaryOp;
use oxla_core::KernelFn;
use oxla_core::{DType, Kernel, Size};
use oxla_cpu::{IsaLevel, JitModule};

#[path = "../common/native.rs"]
pub(crate) mod native;
use native::NativeModule;
use std::marker::PhantomData;

/// The functions the CPU backend implements with its own code (and sqrt).
pub const OPS: [UnaryOp; 8] = [
    UnaryOp::Exp,
    UnaryOp::ExpM1,
    UnaryOp::Erf,
    UnaryOp::Log,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tanh,
    UnaryOp::Sqrt,
];

/// `out[i] = op(x[i])` over `n` elements.
pub fn unary_kernel(op: UnaryOp, ty: DType) -> Kernel {
    let n = Size {
        factor: 1,
        syms: vec!["n".to_string()],
    };
    Kernel {
        name: format!("{}_{ty}", op.name()),
        args: vec![
            KernelArg {
                dtype: ty,
                output: false,
            },
            KernelArg {
                dtype: ty,
                output: true,
            },
        ],
        sizes: vec!["n".to_string()],
        domain: vec![n],
        reduce_dims: 0,
        reduce: Reduce::Sum,
        insts: vec![
            Inst {
                ty,
                kind: InstKind::Load {
                    arg: 0,
                    strides: vec![Size::constant(1)],
                    offset: Vec::new(),
                },
            },
            Inst {
                ty,
                kind: InstKind::Unary(op, 0),
            },
        ],
        stores: vec![Store {
            arg: 1,
            value: 1,
            region: None,
        }],
        scan: None,
    }
}

/// The float types the accuracy kernels run on.
pub trait Float: Copy + Send + Sync {
    const DTYPE: DType;
}

impl Float for f32 {
    const DTYPE: DType = DType::F32;
}

impl Float for f64 {
    const DTYPE: DType = DType::F64;
}

/// `unary_kernel(op, T)` compiled by the JIT or as a native kernel. Its
/// element type is `T` by construction, which is what makes `run` sound.
pub struct UnaryFn<T> {
    f: KernelFn,
    /// Keeps `f`'s code alive.
    _code: Code,
    _elem: PhantomData<T>,
}

// One per compiled function: boxing the larger variant would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Code {
    Jit(JitModule),
    Native(NativeModule),
}

impl<T: Float> UnaryFn<T> {
    /// Compile for the host (`None`) or at a fixed ISA level.
    pub fn compile(op: UnaryOp, level: Option<IsaLevel>) -> UnaryFn<T> {
        let k = unary_kernel(op, T::DTYPE);
        let jit = match level {
            None => JitModule::compile(std::slice::from_ref(&k)),
            Some(l) => JitModule::compile_at(std::slice::from_ref(&k), l),
        }
        .expect("compile");
        UnaryFn {
            f: jit.function(0),
            _code: Code::Jit(jit),
            _elem: PhantomData,
        }
    }

    /// The native kernel (Rust source compiled by rustc) at `level`.
    pub fn native(op: UnaryOp, level: IsaLevel) -> UnaryFn<T> {
        let k = unary_kernel(op, T::DTYPE);
        let m = NativeModule::compile(std::slice::from_ref(&k), level).expect("rustc");
        let f = m.function_named(&k.name).expect("a native kernel");
        UnaryFn {
            f,
            _code: Code::Native(m),
            _elem: PhantomData,
        }
    }

    /// `out[i] = op(x[i])`.
    pub fn run(&self, x: &[T], out: &mut [T]) {
        assert_eq!(x.len(), out.len(), "input and output lengths");
        let args = [x.as_ptr() as *mut u8, out.as_mut_ptr() as *mut u8];
        let sizes = [x.len() as i64];
        // SAFETY: the function is `unary_kernel(op, T)` (see `compile` and
        // `native`), alive while `self._code` is: it reads `n` elements of
        // `x` and writes `n` of `out`, both `T` and that long (checked
        // above), not aliased.
        unsafe { (self.f)(args.as_ptr(), sizes.as_ptr()) };
    }
}

/// Rust std's f64 function.
pub fn reference(op: UnaryOp, x: f64) -> f64 {
    match op {
        UnaryOp::Exp => x.exp(),
        UnaryOp::ExpM1 => x.exp_m1(),
        // Rust std has no erf: the `libm` crate's (fdlibm's, within 1 ulp).
        UnaryOp::Erf => libm::erf(x),
        UnaryOp::Log => x.ln(),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::Sqrt => x.sqrt(),
        other => panic!("no reference for {other:?}"),
    }
}

/// ulp of a finite f32 value (see the module docs).
pub fn ulp_f32(v: f32) -> f64 {
    let e = ((v.to_bits() >> 23) & 0xff) as i32; // biased exponent
    2f64.powi(e.max(1) - 127 - 23)
}

/// ulp of a finite f64 value (see the module docs).
pub fn ulp_f64(v: f64) -> f64 {
    let e = ((v.to_bits() >> 52) & 0x7ff).max(1); // biased exponent
                                                  // 2^(e - 1023 - 52), built from bits: `powi` underflows below 2^-1022.
    if e > 52 {
        f64::from_bits((e - 52) << 52)
    } else {
        f64::from_bits(1 << (e - 1))
    }
}

/// Why an output is a special failure.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Special {
    /// NaN versus not NaN, either way.
    Nan,
    /// An infinity that should not be, or a missing or wrong one.
    Inf,
    /// A zero of the wrong sign.
    ZeroSign,
}

/// Compare `y` with the reference: `rounded` (to the result type) decides
/// the special cases, `exact` the error, in units of `ulp`.
fn compare(y: f64, rounded: f64, exact: f64, ulp: f64) -> Result<f64, Special> {
    if y.is_nan() || rounded.is_nan() {
        return if y.is_nan() && rounded.is_nan() {
            Ok(0.0)
        } else {
            Err(Special::Nan)
        };
    }
    if y.is_infinite() || rounded.is_infinite() {
        return if y == rounded {
            Ok(0.0)
        } else {
            Err(Special::Inf)
        };
    }
    if y == 0.0 && rounded == 0.0 && y.is_sign_negative() != rounded.is_sign_negative() {
        return Err(Special::ZeroSign);
    }
    Ok((y - exact).abs() / ulp)
}

/// Error of an f32 result `y` for input `x`.
pub fn error_f32(op: UnaryOp, x: f32, y: f32) -> Result<f64, Special> {
    let exact = reference(op, x as f64);
    let rounded = exact as f32;
    let ulp = if rounded.is_finite() {
        ulp_f32(rounded)
    } else {
        1.0
    };
    compare(y as f64, rounded as f64, exact, ulp)
}

/// Error of an f64 result `y` for input `x`, against std.
pub fn error_f64(op: UnaryOp, x: f64, y: f64) -> Result<f64, Special> {
    let r = reference(op, x);
    let ulp = if r.is_finite() { ulp_f64(r) } else { 1.0 };
    compare(y, r, r, ulp)
}

/// Worst error and special-failure counts over a set of inputs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    pub max_ulp: f64,
    /// Input bits (f32 widened to u64) of `max_ulp`.
    pub at: u64,
    pub nan: u64,
    pub inf: u64,
    pub zero_sign: u64,
    /// First input of a special failure, if any.
    pub first_special: Option<u64>,
    pub count: u64,
}

impl Tally {
    pub fn add(&mut self, x_bits: u64, e: Result<f64, Special>) {
        self.count += 1;
        match e {
            Ok(err) => {
                // `err` is never NaN here: NaNs were classified above.
                if err > self.max_ulp {
                    self.max_ulp = err;
                    self.at = x_bits;
                }
            }
            Err(s) => {
                match s {
                    Special::Nan => self.nan += 1,
                    Special::Inf => self.inf += 1,
                    Special::ZeroSign => self.zero_sign += 1,
                }
                self.first_special.get_or_insert(x_bits);
            }
        }
    }

    pub fn merge(&mut self, o: &Tally) {
        if o.max_ulp > self.max_ulp {
            self.max_ulp = o.max_ulp;
            self.at = o.at;
        }
        self.nan += o.nan;
        self.inf += o.inf;
        self.zero_sign += o.zero_sign;
        if self.first_special.is_none() {
            self.first_special = o.first_special;
        }
        self.count += o.count;
    }

    pub fn specials(&self) -> u64 {
        self.nan + self.inf + self.zero_sign
    }
}

/// Run `f` (an f32 `unary_kernel` of `op`) on the bit patterns
/// `start, start + stride, ...` below 2^32, on `threads` threads, in chunks
/// of an odd length so that some inputs of every region take the scalar tail.
pub fn sweep_f32(op: UnaryOp, f: &UnaryFn<f32>, stride: u64, threads: u64) -> Tally {
    const CHUNK: u64 = (1 << 16) - 1;
    let total = (1u64 << 32).div_ceil(stride);
    let per_thread = total.div_ceil(threads);
    let mut tally = Tally::default();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut tally = Tally::default();
                    let (lo, hi) = (t * per_thread, ((t + 1) * per_thread).min(total));
                    let mut x = Vec::with_capacity(CHUNK as usize);
                    let mut y = vec![0f32; CHUNK as usize];
                    let mut i = lo;
                    while i < hi {
                        let end = (i + CHUNK).min(hi);
                        x.clear();
                        x.extend((i..end).map(|j| f32::from_bits((j * stride) as u32)));
                        let y = &mut y[..x.len()];
                        f.run(&x, y);
                        for (xi, yi) in x.iter().zip(y.iter()) {
                            tally.add(xi.to_bits() as u64, error_f32(op, *xi, *yi));
                        }
                        i = end;
                    }
                    tally
                })
            })
            .collect();
        for h in handles {
            tally.merge(&h.join().expect("sweep thread"));
        }
    });
    tally
}

/// Run `f` (the f64 `unary_kernel` of `op`) on `xs`.
pub fn measure_f64(op: UnaryOp, f: &UnaryFn<f64>, xs: &[f64]) -> Tally {
    let mut tally = Tally::default();
    for chunk in xs.chunks((1 << 16) - 1) {
        let mut y = vec![0f64; chunk.len()];
        f.run(chunk, &mut y);
        for (x, y) in chunk.iter().zip(&y) {
            tally.add(x.to_bits(), error_f64(op, *x, *y));
        }
    }
    tally
}

/// Special f64 inputs: signed zeros, infinities, NaN, extremes, and values
/// near multiples of π/2 and the fast-path limits.
pub fn special_f64() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::MAX,
        f64::MIN,
        1e-300,
        1e4,
        1e10,
        1e20,
        1e22,
        1e100,
        1e300,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        709.0,
        710.0,
        -745.0,
        -746.0,
        1_048_576.0,
        1_048_577.0,
    ];
    for k in 1..2000 {
        v.push(k as f64 * std::f64::consts::FRAC_PI_2);
    }
    let negated: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v
}

/// A fast deterministic generator (SplitMix64), so the example needs no
/// `rand` in release mode and the test and example draw the same points.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let u = (self.next() >> 11) as f64 * 2f64.powi(-53);
        lo + (hi - lo) * u
    }

    /// A finite f64, uniform over bit patterns.
    pub fn finite_bits(&mut self) -> f64 {
        loop {
            let x = f64::from_bits(self.next());
            if x.is_finite() {
                return x;
            }
        }
    }
}

/// The f64 domains measured: name and `count` inputs each.
pub fn f64_domains(op: UnaryOp, count: usize, seed: u64) -> Vec<(String, Vec<f64>)> {
    let mut rng = SplitMix(seed);
    let (lo, hi) = match op {
        UnaryOp::Exp => (-746.0, 710.0),
        UnaryOp::ExpM1 => (-40.0, 40.0),
        UnaryOp::Erf => (-6.0, 6.0),
        UnaryOp::Log => (0.0, 1e3),
        UnaryOp::Sin | UnaryOp::Cos => (-1e3, 1e3),
        UnaryOp::Tanh => (-20.0, 20.0),
        _ => (0.0, 1e3),
    };
    let bits: Vec<f64> = (0..count).map(|_| rng.finite_bits()).collect();
    let mut uniform: Vec<f64> = (0..count).map(|_| rng.uniform(lo, hi)).collect();
    uniform.extend(special_f64());
    let mut domains = vec![
        ("finite bit patterns".to_string(), bits),
        (format!("uniform [{lo:e}, {hi:e}] + specials"), uniform),
    ];
    if op == UnaryOp::ExpM1 {
        // Where the reduction switches between k = -1, 0, 1 and relative
        // accuracy near 0 matters.
        domains.push((
            "uniform [-1e0, 1e0]".to_string(),
            (0..count).map(|_| rng.uniform(-1.0, 1.0)).collect(),
        ));
    }
    domains
}
