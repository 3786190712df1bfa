//! Kernel IR to Rust source (see the module docs of `native`).

use crate::isa::IsaLevel;
use oxla_core::kernel::{InstKind, Kernel, Reduce};
use oxla_core::ops::elementwise::{BinaryOp, CmpOp, Rounding, UnaryOp};
use oxla_core::{DType, Size};
use std::fmt::Write as _;

/// The ISA levels native kernels are compiled at, with the flags for rustc.
pub struct NativeLevel;

impl NativeLevel {
    /// `rustc` code-generation flags for `level` (the `-C target-cpu` of
    /// the x86-64 level; other targets use their default features), for
    /// `target` (empty: the host). The caller adds the crate type and output.
    pub fn rustc_flags(level: IsaLevel, target: &str) -> Vec<String> {
        let mut flags: Vec<String> = [
            "--edition=2021",
            "-Copt-level=3",
            "-Ccodegen-units=1",
            "-Cpanic=abort",
            "-Cdebuginfo=0",
            "-Coverflow-checks=off",
            "-Cdebug-assertions=off",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // An empty target is the host (the tests' and the JIT's case).
        let x86_64 = if target.is_empty() {
            cfg!(target_arch = "x86_64")
        } else {
            target.starts_with("x86_64")
        };
        if x86_64 {
            let cpu = match level {
                IsaLevel::X86_64V4 => "x86-64-v4",
                IsaLevel::X86_64V3 => "x86-64-v3",
                IsaLevel::Baseline => "x86-64",
            };
            flags.push(format!("-Ctarget-cpu={cpu}"));
            if level == IsaLevel::X86_64V4 {
                // The generic v4 tuning may prefer 256-bit vectors; the
                // kernels are long loops where 512 bits pay.
                flags.push("-Ctarget-feature=-prefer-256-bit".into());
            }
        }
        if !target.is_empty() {
            flags.push(format!("--target={target}"));
        }
        flags
    }
}

/// Write the native kernels of `kernels` for `level` to `src` and compile
/// them with `RUSTC` (cargo's compiler in a build script; `rustc` on `PATH`
/// elsewhere) for `target` (empty: the host) into `out`, as `crate_type`
/// (`lib` with `--emit=obj` for an object file, or `cdylib`).
pub fn compile(
    kernels: &[Kernel],
    level: IsaLevel,
    target: &str,
    crate_type: &str,
    src: &std::path::Path,
    out: &std::path::Path,
) -> Result<(), String> {
    std::fs::write(src, rust_source(kernels, level))
        .map_err(|e| format!("writing {}: {e}", src.display()))?;
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let name = src
        .file_stem()
        .and_then(|s| s.to_str())
        .ok_or_else(|| format!("{}: not a crate file name", src.display()))?;
    let mut cmd = std::process::Command::new(&rustc);
    cmd.args(NativeLevel::rustc_flags(level, target))
        .arg(format!("--crate-type={crate_type}"))
        .arg(format!("--crate-name={name}"))
        .arg("--cap-lints=allow");
    if crate_type == "lib" {
        cmd.arg("--emit=obj");
    }
    let output = cmd
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .map_err(|e| format!("running {rustc}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{rustc} failed on the native kernels {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// Why `kernel` cannot be a native kernel (it then stays on Cranelift), or
/// `Ok` when it can.
pub fn supports(k: &Kernel) -> Result<(), String> {
    if k.scan.is_some() {
        return Err("a scan".into());
    }
    if k.stores.iter().any(|s| s.region.is_some()) {
        return Err("a store into a region".into());
    }
    for a in &k.args {
        if !matches!(a.dtype, DType::F32 | DType::F64) {
            return Err(format!("a {} buffer", a.dtype));
        }
    }
    for inst in &k.insts {
        if !matches!(inst.ty, DType::F32 | DType::F64 | DType::Bool) {
            return Err(format!("a {} value", inst.ty));
        }
        match &inst.kind {
            InstKind::Load { arg, .. } if k.args[*arg].dtype != inst.ty => {
                return Err("a converting load".into())
            }
            InstKind::LoadIndexed { .. } | InstKind::Carry => return Err("an indexed load".into()),
            InstKind::Unary(UnaryOp::Sin | UnaryOp::Cos, _) => return Err("sin or cos".into()),
            InstKind::Binary(BinaryOp::Pow, _, _) => return Err("pow".into()),
            _ => {}
        }
    }
    for s in &k.stores {
        if k.insts[s.value].ty != k.args[s.arg].dtype {
            return Err("a converting store".into());
        }
    }
    Ok(())
}

/// Rust source defining every kernel of `kernels` that `supports` accepts,
/// exported as `{name}_{level suffix}`, after the prelude.
pub fn rust_source(kernels: &[Kernel], level: IsaLevel) -> String {
    let mut src = String::from(include_str!("prelude.rs"));
    src.push_str("\n// Kernels.\n");
    for k in kernels {
        if supports(k).is_ok() {
            let symbol = format!("{}_{}", k.name, level.suffix());
            Emitter::new(k, level).function(&symbol, &mut src);
        }
    }
    src
}

/// Independent accumulators bytes per reduction (the lanes of 4 vector
/// registers at the level's width).
fn accumulator_bytes(level: IsaLevel) -> usize {
    match level {
        IsaLevel::X86_64V4 => 256,
        IsaLevel::X86_64V3 => 128,
        IsaLevel::Baseline => 64,
    }
}

/// Rows of `lanes` values per reduction chunk.
const CHUNK_ROWS: usize = 4;

/// Chunks per reduction block (so each accumulator lane adds
/// `CHUNK_ROWS · CHAINS` values before the block becomes a cascade leaf).
const CHAINS: usize = 16;

/// Groups per sub-block of the register lanes: each lane adds this many
/// values from the identity, then the sub-block's lanes are added into the
/// block's (so a lane's chain is `SUB_GROUPS` plus `CHUNK_ROWS · CHAINS /
/// SUB_GROUPS` additions, as the chunked rows' is `CHUNK_ROWS` plus
/// `CHAINS`). With 64 values in a row a large value swallowed the small
/// ones its lane added after it: 16 × 2^24 then 2^22 ones summed to 32 ulp
/// below the exact sum, now 1.5 ulp (JAX: 2 ulp below).
const SUB_GROUPS: usize = 4;

/// The most instructions a `light` element may have.
const LIGHT_INSTS: usize = 48;

struct Emitter<'a> {
    k: &'a Kernel,
    /// The float type of the kernel's reductions and stores.
    lanes: usize,
}

fn rust_type(d: DType) -> &'static str {
    match d {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::Bool => "bool",
        _ => unreachable!("checked by `supports`"),
    }
}

impl<'a> Emitter<'a> {
    fn new(k: &'a Kernel, level: IsaLevel) -> Emitter<'a> {
        let wide = k.stores.iter().any(|s| k.args[s.arg].dtype == DType::F64);
        let elem = if wide { 8 } else { 4 };
        Emitter {
            k,
            lanes: accumulator_bytes(level) / elem,
        }
    }

    /// A size as an `i64` expression of the size arguments.
    fn size(&self, s: &Size) -> String {
        let mut terms = vec![s.factor.to_string()];
        for sym in &s.syms {
            let i = self
                .k
                .sizes
                .iter()
                .position(|n| n == sym)
                .expect("size symbol of the kernel");
            terms.push(format!("z{i}"));
        }
        if s.factor == 1 && !s.syms.is_empty() {
            terms.remove(0);
        }
        format!("({})", terms.join(" * "))
    }

    fn offset(&self, terms: &[Size]) -> String {
        if terms.is_empty() {
            return "0".into();
        }
        let t: Vec<String> = terms.iter().map(|s| self.size(s)).collect();
        t.join(" + ")
    }

    fn function(&self, symbol: &str, out: &mut String) {
        let k = self.k;
        let _ = writeln!(
            out,
            "\n#[no_mangle]\npub unsafe extern \"C\" fn {symbol}(args: *const *mut u8, sizes: *const i64) {{"
        );
        for i in 0..k.sizes.len() {
            let _ = writeln!(out, "    let z{i}: i64 = *sizes.add({i});");
        }
        for (i, a) in k.args.iter().enumerate() {
            let (m, t) = (if a.output { "mut" } else { "const" }, rust_type(a.dtype));
            let _ = writeln!(out, "    let a{i} = *args.add({i}) as *{m} {t};");
        }
        for (axis, e) in k.domain.iter().enumerate() {
            let _ = writeln!(out, "    let e{axis}: i64 = {};", self.size(e));
        }
        let outer = k.outer_dims();
        // Row-major strides of the output over the outer axes.
        for axis in 0..outer {
            let rest: Vec<String> = (axis + 1..outer).map(|a| format!("e{a}")).collect();
            let stride = if rest.is_empty() {
                "1".to_string()
            } else {
                rest.join(" * ")
            };
            let _ = writeln!(out, "    let os{axis}: i64 = {stride};");
        }
        let mut body = String::new();
        for c in 0..outer {
            let _ = writeln!(body, "for c{c} in 0..e{c} {{");
        }
        let out_index = if outer == 0 {
            "0".to_string()
        } else {
            (0..outer)
                .map(|a| format!("c{a} * os{a}"))
                .collect::<Vec<_>>()
                .join(" + ")
        };
        if k.reduce_dims == 0 {
            body.push_str(&self.element());
            for s in &k.stores {
                let _ = writeln!(
                    body,
                    "*a{}.offset(({out_index}) as isize) = v{};",
                    s.arg, s.value
                );
            }
        } else {
            body.push_str(&self.reduction(&out_index));
        }
        for _ in 0..outer {
            body.push_str("}\n");
        }
        for line in body.lines() {
            let _ = writeln!(out, "    {line}");
        }
        out.push_str("}\n");
    }

    /// The instructions of one element, as `let v{i} = …;` lines, with the
    /// coordinates in `c0`, `c1`, ….
    fn element(&self) -> String {
        let k = self.k;
        let mut s = String::new();
        for (i, inst) in k.insts.iter().enumerate() {
            let t = rust_type(inst.ty);
            let f = if inst.ty == DType::F64 { "f64" } else { "f32" };
            let expr = match &inst.kind {
                InstKind::Load {
                    arg,
                    strides,
                    offset,
                } => {
                    let mut idx = vec![self.offset(offset)];
                    for (axis, st) in strides.iter().enumerate() {
                        if st.factor != 0 {
                            idx.push(format!("c{axis} * {}", self.size(st)));
                        }
                    }
                    format!("*a{arg}.offset(({}) as isize)", idx.join(" + "))
                }
                InstKind::Const(c) => float_literal(*c, inst.ty),
                InstKind::Size(sz) => format!("{} as {t}", self.size(sz)),
                InstKind::Index(axis) => format!("c{axis} as {t}"),
                InstKind::Unary(op, x) => unary(*op, &format!("v{x}"), f),
                InstKind::Binary(op, a, b) => {
                    let (a, b) = (format!("v{a}"), format!("v{b}"));
                    match op {
                        BinaryOp::Add => format!("{a} + {b}"),
                        BinaryOp::Sub => format!("{a} - {b}"),
                        BinaryOp::Mul => format!("{a} * {b}"),
                        BinaryOp::Div => format!("{a} / {b}"),
                        BinaryOp::Max => format!("max_{f}({a}, {b})"),
                        BinaryOp::Min => format!("min_{f}({a}, {b})"),
                        BinaryOp::Pow => unreachable!("checked by `supports`"),
                    }
                }
                InstKind::Cmp(op, a, b) => {
                    let o = match op {
                        CmpOp::Lt => "<",
                        CmpOp::Le => "<=",
                        CmpOp::Gt => ">",
                        CmpOp::Ge => ">=",
                        CmpOp::Eq => "==",
                        CmpOp::Ne => "!=",
                    };
                    format!("v{a} {o} v{b}")
                }
                InstKind::Select(c, a, b) => format!("if v{c} {{ v{a} }} else {{ v{b} }}"),
                InstKind::LoadIndexed { .. } | InstKind::Carry => {
                    unreachable!("checked by `supports`")
                }
            };
            let _ = writeln!(s, "let v{i}: {t} = {expr};");
        }
        s
    }

    /// The reduction over the trailing axes for one output position.
    ///
    /// Each row (innermost axis) is cut into blocks of `CHAINS · CHUNK_ROWS`
    /// groups of `lanes` elements; lane `l` of the accumulators combines
    /// element `l` of every group of a block, and at the end of the block
    /// the lanes are tree-combined into one leaf of the cascade. So each
    /// lane adds 64 values per leaf and the error is O(64 + log n) ulp. The
    /// two loop shapes below associate a lane's values differently; which
    /// one a kernel gets depends on its instructions only, never on sizes or
    /// threads.
    fn reduction(&self, out_index: &str) -> String {
        let k = self.k;
        let rank = k.domain.len();
        let last = rank - 1;
        let stores: Vec<(usize, &str)> = k
            .stores
            .iter()
            .map(|s| (s.value, rust_type(k.args[s.arg].dtype)))
            .collect();
        let (op, identity) = reduce_op(k.reduce);
        let mut s = String::new();
        for (n, (_, t)) in stores.iter().enumerate() {
            let id = float_literal(identity, if *t == "f64" { DType::F64 } else { DType::F32 });
            let _ = writeln!(s, "let id{n}: {t} = {id};");
            let _ = writeln!(s, "let op{n} = |a: {t}, b: {t}| -> {t} {{ {} }};", op(t));
            let _ = writeln!(s, "let mut k{n} = Cascade::<{t}>::new(id{n});");
        }
        for c in k.outer_dims()..last {
            let _ = writeln!(s, "for c{c} in 0..e{c} {{");
        }
        let _ = writeln!(s, "let mut j: i64 = 0;");
        let _ = writeln!(s, "while j < e{last} {{");
        if self.light() {
            s.push_str(&self.register_lanes(&stores));
        } else {
            s.push_str(&self.chunked_rows(&stores));
        }
        for n in 0..stores.len() {
            let _ = writeln!(s, "k{n}.push(tree(b{n}, op{n}), op{n});");
        }
        s.push_str("}\n");
        for _ in k.outer_dims()..last {
            s.push_str("}\n");
        }
        for (n, _) in stores.iter().enumerate() {
            let arg = k.stores[n].arg;
            let _ = writeln!(
                s,
                "*a{arg}.offset(({out_index}) as isize) = k{n}.finish(id{n}, op{n});"
            );
        }
        s
    }

    /// Whether the element is short and calls no math function, so that a
    /// vector's worth of copies of it is small enough for LLVM to unroll
    /// fully and turn back into vector instructions.
    fn light(&self) -> bool {
        self.k.insts.len() <= LIGHT_INSTS
            && self.k.insts.iter().all(|inst| {
                !matches!(
                    inst.kind,
                    InstKind::Unary(
                        UnaryOp::Exp
                            | UnaryOp::Log
                            | UnaryOp::Tanh
                            | UnaryOp::ExpM1
                            | UnaryOp::Powi(_),
                        _
                    )
                )
            })
    }

    /// One block of a reduction whose element is `light`: the accumulators
    /// are `CHUNK_ROWS` arrays of one vector's lanes, each updated by a loop
    /// over those lanes. LLVM unrolls each loop and keeps the arrays in
    /// registers, so a group of `lanes` elements costs its loads and
    /// arithmetic only, as in hand-written code (the buffer of
    /// `chunked_rows` costs a store and a load per element, and stores
    /// there can wait on loads 4 KiB apart).
    ///
    /// The last, partial group computes its values into arrays of the same
    /// shape, padded with the identity (a no-op on any accumulator), which
    /// are then added once: its whole vectors with the same loops, the rest
    /// in pieces of half a vector, a quarter, … down to one element, each
    /// piece at fixed lanes of the last array (so the lanes depend only on
    /// the length). Nothing goes through memory: a buffer filled element by
    /// element and read back as vectors stalls on the store forwarding
    /// (82–95 ns against 74 ns for `sum(x*2*y+z)` at n = 10³, 30 ns against
    /// 15 ns at n = 65), and an accumulator updated in more than one place
    /// keeps LLVM from vectorizing the lanes (260 ns at n = 10³).
    fn register_lanes(&self, stores: &[(usize, &str)]) -> String {
        let last = self.k.domain.len() - 1;
        let lanes = self.lanes;
        let width = lanes / CHUNK_ROWS;
        let groups = CHAINS * CHUNK_ROWS;
        let mut s = String::new();
        for n in 0..stores.len() {
            for u in 0..CHUNK_ROWS {
                let _ = writeln!(s, "let mut r{n}_{u} = [id{n}; {width}];");
            }
        }
        let _ = writeln!(s, "let mut q = 0;");
        let _ = writeln!(s, "while q < {groups} && j + {lanes} <= e{last} {{");
        // A sub-block: `SUB_GROUPS` groups into fresh lanes `s…`, then
        // added to the block's lanes `r…` (one update site each).
        for n in 0..stores.len() {
            for u in 0..CHUNK_ROWS {
                let _ = writeln!(s, "let mut s{n}_{u} = [id{n}; {width}];");
            }
        }
        let _ = writeln!(s, "let mut g = 0;");
        let _ = writeln!(s, "while g < {SUB_GROUPS} && j + {lanes} <= e{last} {{");
        for u in 0..CHUNK_ROWS {
            s.push_str(
                &self.lane_loop(stores, width, &format!("j + {}", u * width), |n, v| {
                    format!("s{n}_{u}[l] = op{n}(s{n}_{u}[l], v{v});")
                }),
            );
        }
        let _ = writeln!(s, "j += {lanes};");
        let _ = writeln!(s, "g += 1;");
        s.push_str("}\n");
        for n in 0..stores.len() {
            let _ = writeln!(s, "for l in 0..{width} {{");
            for u in 0..CHUNK_ROWS {
                let _ = writeln!(s, "r{n}_{u}[l] = op{n}(r{n}_{u}[l], s{n}_{u}[l]);");
            }
            s.push_str("}\n");
        }
        let _ = writeln!(s, "q += g;");
        s.push_str("}\n");
        let _ = writeln!(s, "if q < {groups} && j < e{last} {{");
        for n in 0..stores.len() {
            for u in 0..CHUNK_ROWS {
                let _ = writeln!(s, "let mut t{n}_{u} = [id{n}; {width}];");
            }
        }
        let _ = writeln!(s, "let full = (e{last} - j) / {width};");
        for u in 0..CHUNK_ROWS - 1 {
            let _ = writeln!(s, "if full > {u} {{");
            s.push_str(
                &self.lane_loop(stores, width, &format!("j + {}", u * width), |n, v| {
                    format!("t{n}_{u}[l] = v{v};")
                }),
            );
            s.push_str("}\n");
        }
        let _ = writeln!(s, "let rest = e{last} - j - full * {width};");
        let _ = writeln!(s, "let mut p = j + full * {width};");
        let u = CHUNK_ROWS - 1;
        let (mut piece, mut lane) = (width / 2, 0);
        while piece > 0 {
            let _ = writeln!(s, "if rest & {piece} != 0 {{");
            s.push_str(&self.lane_loop(stores, piece, "p", |n, v| {
                format!("t{n}_{u}[{lane} + l] = v{v};")
            }));
            let _ = writeln!(s, "p += {piece};");
            s.push_str("}\n");
            lane += piece;
            piece /= 2;
        }
        for n in 0..stores.len() {
            let _ = writeln!(s, "for l in 0..{width} {{");
            for u in 0..CHUNK_ROWS {
                let _ = writeln!(s, "r{n}_{u}[l] = op{n}(r{n}_{u}[l], t{n}_{u}[l]);");
            }
            s.push_str("}\n");
        }
        let _ = writeln!(s, "j = e{last};");
        s.push_str("}\n");
        for n in 0..stores.len() {
            let _ = writeln!(s, "let mut b{n} = [id{n}; {lanes}];");
            let _ = writeln!(s, "for l in 0..{width} {{");
            for u in 0..CHUNK_ROWS {
                let _ = writeln!(s, "b{n}[{} + l] = r{n}_{u}[l];", u * width);
            }
            s.push_str("}\n");
        }
        s
    }

    /// A loop over lanes `l` in `0..count` computing element `base + l` of
    /// the reduced row and doing `sink(n, v)` with each store `n`'s value
    /// `v{v}`; with a constant `count`, LLVM unrolls it into vector
    /// instructions.
    fn lane_loop(
        &self,
        stores: &[(usize, &str)],
        count: impl std::fmt::Display,
        base: &str,
        sink: impl Fn(usize, usize) -> String,
    ) -> String {
        let last = self.k.domain.len() - 1;
        let mut s = String::new();
        let _ = writeln!(s, "for l in 0..{count} {{");
        let _ = writeln!(s, "let c{last}: i64 = {base} + l as i64;");
        s.push_str(&self.element());
        for (n, (v, _)) in stores.iter().enumerate() {
            s.push_str(&sink(n, *v));
            s.push('\n');
        }
        s.push_str("}\n");
        s
    }

    /// One block of a reduction whose element is not `light`: each chunk of
    /// `CHUNK_ROWS` groups is computed by a plain loop into a buffer (the
    /// loop vectorizer widens it, math included), whose rows are then
    /// combined into `lanes` running accumulators. A partial chunk pads its
    /// buffer with the identity.
    fn chunked_rows(&self, stores: &[(usize, &str)]) -> String {
        let last = self.k.domain.len() - 1;
        let lanes = self.lanes;
        let chunk = lanes * CHUNK_ROWS;
        let mut s = String::new();
        for n in 0..stores.len() {
            let _ = writeln!(s, "let mut t{n} = [id{n}; {chunk}];");
            let _ = writeln!(s, "let mut b{n} = [id{n}; {lanes}];");
        }
        let _ = writeln!(s, "let mut q = 0;");
        let _ = writeln!(s, "while q < {CHAINS} && j < e{last} {{");
        let _ = writeln!(s, "let r = (e{last} - j).min({chunk}) as usize;");
        // SAFETY (of the generated code): l < r, at most the buffer's length.
        s.push_str(&self.lane_loop(stores, "r", "j", |n, v| {
            format!("*t{n}.get_unchecked_mut(l) = v{v};")
        }));
        for n in 0..stores.len() {
            let _ = writeln!(
                s,
                "for i in r..{chunk} {{ *t{n}.get_unchecked_mut(i) = id{n}; }}"
            );
            let _ = writeln!(s, "for l in 0..{lanes} {{");
            let _ = writeln!(s, "let mut v = t{n}[l];");
            for m in 1..CHUNK_ROWS {
                let _ = writeln!(s, "v = op{n}(v, t{n}[{} + l]);", m * lanes);
            }
            let _ = writeln!(s, "b{n}[l] = op{n}(b{n}[l], v);");
            s.push_str("}\n");
        }
        let _ = writeln!(s, "j += r as i64;");
        let _ = writeln!(s, "q += 1;");
        s.push_str("}\n");
        s
    }
}

/// The combining expression of a reduction (of `a` and `b`, for a type) and
/// its identity.
fn reduce_op(r: Reduce) -> (fn(&str) -> String, f64) {
    let op: fn(&str) -> String = match r {
        Reduce::Sum => |_| "a + b".into(),
        Reduce::Prod => |_| "a * b".into(),
        Reduce::Max => |t| format!("max_{t}(a, b)"),
        Reduce::Min => |t| format!("min_{t}(a, b)"),
    };
    (op, r.identity())
}

fn unary(op: UnaryOp, x: &str, f: &str) -> String {
    match op {
        UnaryOp::Neg => format!("-{x}"),
        UnaryOp::Exp => format!("exp_{f}({x})"),
        UnaryOp::Log => format!("log_{f}({x})"),
        UnaryOp::Tanh => format!("tanh_{f}({x})"),
        UnaryOp::ExpM1 => format!("expm1_{f}({x})"),
        UnaryOp::Sqrt => format!("{x}.sqrt()"),
        UnaryOp::Powi(n) => format!("powi_{f}({x}, {n})"),
        UnaryOp::Round(r) => {
            let m = match r {
                Rounding::Floor => "floor",
                Rounding::Ceil => "ceil",
                Rounding::Trunc => "trunc",
                Rounding::HalfAway => "round",
                Rounding::HalfEven => "round_ties_even",
            };
            format!("{x}.{m}()")
        }
        UnaryOp::Sign => format!("sign_{f}({x})"),
        UnaryOp::Signum => format!("{x}.signum()"),
        UnaryOp::Erf => format!("erf_{f}({x})"),
        UnaryOp::Sin | UnaryOp::Cos => unreachable!("checked by `supports`"),
    }
}

/// `c` in type `ty`, bit-exact (NaN, infinities and -0 included).
fn float_literal(c: f64, ty: DType) -> String {
    match ty {
        DType::F64 => format!("f64::from_bits(0x{:016x})", c.to_bits()),
        DType::Bool => (c != 0.0).to_string(),
        _ => format!("f32::from_bits(0x{:08x})", (c as f32).to_bits()),
    }
}
