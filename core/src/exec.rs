//! Programs: kernels plus the host schedule that runs them, and the executor
//! every backend shares (the backend only supplies a `Launcher`).

use crate::buffer::Buffer;
use crate::dtype::DType;
use crate::ir::Function;
use crate::kernel::{interp, Kernel, KernelFn};
use crate::shape::{Dim, Shape};
use std::fmt::Write as _;

/// A materialized value: a parameter or a kernel's output.
#[derive(Clone, Debug)]
pub struct BufferInfo {
    pub dtype: DType,
    pub shape: Shape,
    /// The parameter index, for buffers the caller passes in.
    pub param: Option<usize>,
}

/// One kernel launch: the kernel and the buffers it takes, in its arg order.
#[derive(Clone, Debug)]
pub struct Launch {
    pub kernel: usize,
    pub args: Vec<usize>,
}

/// A fused function: its kernels and the order to run them in.
#[derive(Clone, Debug)]
pub struct Program {
    /// The function the program computes (simplified).
    pub function: Function,
    /// Each kernel's `name` is its `Kernel::symbol()`.
    pub kernels: Vec<Kernel>,
    pub buffers: Vec<BufferInfo>,
    pub launches: Vec<Launch>,
    /// The buffer holding each output of the function.
    pub outputs: Vec<usize>,
    /// Every dimension symbol, in the order of the bound sizes.
    pub symbols: Vec<String>,
    /// For each buffer: element count = factor × product of bound sizes at these indices.
    numel: Vec<(u64, Vec<usize>)>,
    /// For each launch: indices into the bound sizes, in the kernel's `sizes` order.
    launch_sizes: Vec<Vec<usize>>,
}

/// Runs the kernels of a program.
pub trait Launcher {
    /// Run kernel `kernel` of the program.
    ///
    /// # Safety
    /// `args` and `sizes` must satisfy the kernel's calling convention: each
    /// pointer is valid for the elements the kernel reads or writes and
    /// outputs alias nothing else.
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]);
}

/// One argument of a call: element type, pointer to the first element and
/// element count. The pointer must be valid for `len` reads of `dtype`.
#[derive(Clone, Copy, Debug)]
pub struct RawArg {
    pub dtype: DType,
    pub ptr: *const u8,
    pub len: usize,
}

impl Program {
    pub fn new(
        function: Function,
        kernels: Vec<Kernel>,
        buffers: Vec<BufferInfo>,
        launches: Vec<Launch>,
        outputs: Vec<usize>,
    ) -> Program {
        let symbols: Vec<String> = function.symbols().into_iter().collect();
        let index = |s: &str| {
            symbols
                .iter()
                .position(|x| x == s)
                .expect("symbol of the function")
        };
        let numel = buffers
            .iter()
            .map(|b| {
                let n = b.shape.numel();
                (n.factor, n.syms.iter().map(|s| index(s)).collect())
            })
            .collect();
        let launch_sizes = launches
            .iter()
            .map(|l| kernels[l.kernel].sizes.iter().map(|s| index(s)).collect())
            .collect();
        Program {
            function,
            kernels,
            buffers,
            launches,
            outputs,
            symbols,
            numel,
            launch_sizes,
        }
    }

    /// Element count of buffer `b` under bound sizes.
    pub fn buffer_len(&self, b: usize, sizes: &[u64]) -> usize {
        let (factor, syms) = &self.numel[b];
        syms.iter().fold(*factor, |acc, s| acc * sizes[*s]) as usize
    }

    /// Bind every dimension symbol from the arguments' element counts,
    /// checking each argument; errors name the argument.
    pub fn bind(&self, lens: &[usize]) -> Result<Vec<u64>, String> {
        let f = &self.function;
        if lens.len() != f.params.len() {
            return Err(format!(
                "`{}` takes {} arguments, got {}",
                f.name,
                f.params.len(),
                lens.len()
            ));
        }
        let mut sizes: Vec<Option<u64>> = vec![None; self.symbols.len()];
        let mut source: Vec<usize> = vec![0; self.symbols.len()];
        // Solve for one unknown symbol per argument until nothing changes.
        let mut progress = true;
        while progress {
            progress = false;
            for (i, p) in f.params.iter().enumerate() {
                let mut known = 1u64;
                let mut unknown = None;
                let mut solvable = true;
                for d in &f.shape(*p).0 {
                    match d {
                        Dim::Const(c) => known *= c,
                        Dim::Sym(s) => {
                            let k = self.symbols.iter().position(|x| x == s).expect("symbol");
                            match (sizes[k], unknown) {
                                (Some(v), _) => known *= v,
                                (None, None) => unknown = Some(k),
                                (None, Some(u)) if u == k => solvable = false,
                                (None, Some(_)) => solvable = false,
                            }
                        }
                    }
                }
                if let (Some(k), true) = (unknown, solvable) {
                    if known != 0 && lens[i] as u64 % known == 0 {
                        sizes[k] = Some(lens[i] as u64 / known);
                        source[k] = i;
                        progress = true;
                    }
                }
            }
        }
        let describe = |sizes: &[Option<u64>], p: usize| -> String {
            let mut s = String::new();
            for name in f.shape(f.params[p]).symbols() {
                let k = self.symbols.iter().position(|x| x == name).expect("symbol");
                if let Some(v) = sizes[k] {
                    let _ = write!(
                        s,
                        ", {name} = {v} (from argument `{}`)",
                        f.param_names[source[k]]
                    );
                }
            }
            s
        };
        for (i, p) in f.params.iter().enumerate() {
            let shape = f.shape(*p);
            let mut expected = 1u64;
            for d in &shape.0 {
                match d {
                    Dim::Const(c) => expected *= c,
                    Dim::Sym(s) => match sizes[self.symbols.iter().position(|x| x == s).expect("symbol")] {
                        Some(v) => expected *= v,
                        None => {
                            return Err(format!(
                                "argument `{}` of `{}`: cannot infer dimension `{s}` of its shape {shape} from {} elements{}",
                                f.param_names[i], f.name, lens[i], describe(&sizes, i)
                            ))
                        }
                    },
                }
            }
            if expected != lens[i] as u64 {
                return Err(format!(
                    "argument `{}` of `{}`: expected shape {shape}{} = {expected} elements, got {}",
                    f.param_names[i],
                    f.name,
                    describe(&sizes, i),
                    lens[i]
                ));
            }
        }
        if let Some(k) = sizes.iter().position(Option::is_none) {
            return Err(format!(
                "`{}`: no argument determines dimension `{}`",
                f.name, self.symbols[k]
            ));
        }
        Ok(sizes.into_iter().flatten().collect())
    }

    /// Run the program on host buffers (one per parameter).
    pub fn run(&self, launcher: &dyn Launcher, args: &[Buffer]) -> Result<Vec<Buffer>, String> {
        // SAFETY: the pointers come from live buffers of the stated lengths.
        unsafe { self.execute(launcher, &raw_args(args)) }
    }

    /// Run the program. Each argument's dtype and length is checked against
    /// its parameter before any kernel runs.
    ///
    /// # Safety
    /// Every `RawArg` pointer must be valid for `len` reads of its `dtype`
    /// for the duration of the call, and `launcher` must run the kernels of
    /// this program by index.
    pub unsafe fn execute(
        &self,
        launcher: &dyn Launcher,
        args: &[RawArg],
    ) -> Result<Vec<Buffer>, String> {
        let f = &self.function;
        for (i, a) in args.iter().enumerate().take(f.params.len()) {
            if a.dtype != f.dtype(f.params[i]) {
                return Err(format!(
                    "argument `{}` of `{}`: expected {} elements, got {} elements",
                    f.param_names[i],
                    f.name,
                    f.dtype(f.params[i]),
                    a.dtype
                ));
            }
        }
        let lens: Vec<usize> = args.iter().map(|a| a.len).collect();
        let sizes = self.bind(&lens)?;
        let mut owned: Vec<Option<Buffer>> = self
            .buffers
            .iter()
            .enumerate()
            .map(|(b, info)| match info.param {
                Some(_) => None,
                None => Some(Buffer::zeros(info.dtype, self.buffer_len(b, &sizes))),
            })
            .collect();
        let mut ptrs: Vec<*mut u8> = Vec::with_capacity(8);
        let mut kernel_sizes: Vec<i64> = Vec::with_capacity(8);
        for (l, launch) in self.launches.iter().enumerate() {
            ptrs.clear();
            kernel_sizes.clear();
            kernel_sizes.extend(self.launch_sizes[l].iter().map(|s| sizes[*s] as i64));
            for b in &launch.args {
                let (ptr, len) = match self.buffers[*b].param {
                    Some(p) => (args[p].ptr as *mut u8, args[p].len),
                    None => {
                        let buf = owned[*b].as_mut().expect("owned buffer");
                        (buf.as_mut_ptr(), buf.len())
                    }
                };
                // The precondition the kernel relies on: every buffer holds
                // exactly its shape's element count under this binding.
                if len != self.buffer_len(*b, &sizes) {
                    return Err(format!("internal error: buffer {b} has {len} elements"));
                }
                ptrs.push(ptr);
            }
            // SAFETY: each pointer is valid for its buffer's element count
            // (checked just above); fusion only emits loads within a buffer's
            // shape and stores within the output's shape (`check_bounds`,
            // run in tests); outputs are freshly allocated and distinct; the
            // caller guarantees `RawArg` pointers are valid for `len` elements.
            unsafe { launcher.launch(launch.kernel, &ptrs, &kernel_sizes) };
        }
        Ok(self
            .outputs
            .iter()
            .map(|b| match self.buffers[*b].param {
                Some(p) => {
                    let a = args[p];
                    // SAFETY: the caller guarantees `a.ptr` is valid for `a.len` elements of `a.dtype`.
                    let vals: Vec<f64> = (0..a.len)
                        .map(|i| unsafe { crate::buffer::read_raw(a.ptr, a.dtype, i) })
                        .collect();
                    Buffer::from_f64(a.dtype, &vals)
                }
                None => owned[*b].clone().expect("owned buffer"),
            })
            .collect())
    }

    /// Check, for given sizes, that every load of every launch stays within
    /// the buffer it reads and every output buffer is the kernel's output size.
    pub fn check_bounds(&self, sizes: &[u64]) -> Result<(), String> {
        for (l, launch) in self.launches.iter().enumerate() {
            let k = &self.kernels[launch.kernel];
            let ks: Vec<i64> = self.launch_sizes[l]
                .iter()
                .map(|s| sizes[*s] as i64)
                .collect();
            for (a, b) in launch.args.iter().enumerate() {
                let len = self.buffer_len(*b, sizes);
                let need = if k.args[a].output {
                    k.output_len(&ks)
                } else {
                    k.input_extent(a, &ks)
                };
                if need > len || (k.args[a].output && need != len) {
                    return Err(format!(
                        "launch {l} ({}): arg {a} needs {need} elements, buffer has {len}",
                        k.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// The program as text: kernels and launches.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for k in &self.kernels {
            let _ = writeln!(s, "{k}");
        }
        for l in &self.launches {
            let args: Vec<String> = l.args.iter().map(|b| format!("b{b}")).collect();
            let _ = writeln!(
                s,
                "launch {}({})",
                self.kernels[l.kernel].name,
                args.join(", ")
            );
        }
        let outs: Vec<String> = self.outputs.iter().map(|b| format!("b{b}")).collect();
        let _ = writeln!(s, "return {}", outs.join(", "));
        s
    }
}

/// Runs kernels with the kernel interpreter.
pub struct InterpLauncher<'a>(pub &'a [Kernel]);

impl Launcher for InterpLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        interp::run_raw(&self.0[kernel], args, sizes)
    }
}

/// Runs compiled CPU kernels from a table of function pointers.
pub struct FnLauncher<'a>(pub &'a [KernelFn]);

impl Launcher for FnLauncher<'_> {
    unsafe fn launch(&self, kernel: usize, args: &[*mut u8], sizes: &[i64]) {
        (self.0[kernel])(args.as_ptr(), sizes.as_ptr())
    }
}

/// Arguments for `Program::execute` borrowed from host buffers.
pub fn raw_args(bufs: &[Buffer]) -> Vec<RawArg> {
    bufs.iter()
        .map(|b| {
            let ptr = match b {
                Buffer::F16(v) => v.as_ptr() as *const u8,
                Buffer::BF16(v) => v.as_ptr() as *const u8,
                Buffer::F32(v) => v.as_ptr() as *const u8,
                Buffer::F64(v) => v.as_ptr() as *const u8,
                Buffer::Bool(v) => v.as_ptr(),
                Buffer::I32(v) => v.as_ptr() as *const u8,
                Buffer::I64(v) => v.as_ptr() as *const u8,
            };
            RawArg {
                dtype: b.dtype(),
                ptr,
                len: b.len(),
            }
        })
        .collect()
}
