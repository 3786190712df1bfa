//! Binding a call's dimension symbols from its arguments (directly from
//! their dimensions, or in the static solve order from their element
//! counts, else by the general solver), the checks of the arguments
//! (types, shapes, bounds, empty reductions) and their messages.

use super::{ArgDims, DimRef, Program, RawArg, Scratch};
use crate::dtype::DType;
use crate::shape::Dim;
use std::fmt::Write as _;

/// One step of the static binding order: symbol `sym` is the element count
/// of parameter `param` divided by `factor` times the sizes of `others`,
/// which earlier steps bound.
#[derive(Clone, Debug)]
pub(super) struct SolveStep {
    sym: usize,
    param: usize,
    factor: u64,
    others: Vec<usize>,
}

impl Program {
    /// Bind every dimension symbol from the arguments' element counts,
    /// checking each argument; errors name the argument.
    pub fn bind(&self, lens: &[usize]) -> Result<Vec<u64>, String> {
        if lens.len() != self.function.params.len() {
            return Err(self.arity_error(lens.len()));
        }
        let mut scratch = Scratch::default();
        self.bind_into(&|i| (lens[i], ArgDims::FLAT), &mut scratch)?;
        Ok(scratch.sizes.iter().map(|s| s.expect("bound")).collect())
    }

    /// Bind every dimension symbol from the arguments' dimensions (or, for
    /// `ArgDims::FLAT` ones, their element counts); errors name the argument.
    pub fn bind_dims(&self, args: &[(usize, ArgDims)]) -> Result<Vec<u64>, String> {
        if args.len() != self.function.params.len() {
            return Err(self.arity_error(args.len()));
        }
        let mut scratch = Scratch::default();
        self.bind_into(&|i| args[i], &mut scratch)?;
        Ok(scratch.sizes.iter().map(|s| s.expect("bound")).collect())
    }

    /// The argument axes that are 1 where their symbol is bound to another
    /// size by another argument, as (parameter, axis): numpy broadcasting,
    /// which the program does not do (see `transforms::broadcast`). `None`
    /// unless that is the only thing wrong with the arguments' dimensions:
    /// every argument has dimensions of its parameter's rank, fixed sizes
    /// match, and every symbol's axes are each 1 or one common size.
    pub fn size_one_axes(&self, args: &[RawArg]) -> Option<Vec<(usize, usize)>> {
        if args.len() != self.param_dims.len() {
            return None;
        }
        let mut size = vec![1u64; self.symbols.len()];
        for (want, a) in self.param_dims.iter().zip(args) {
            let got = a.dims.get()?;
            if got.len() != want.len() || got.iter().product::<usize>() != a.len {
                return None;
            }
            for (w, g) in want.iter().zip(got) {
                match *w {
                    DimRef::Const(c) if c != *g as u64 => return None,
                    DimRef::Const(_) => {}
                    DimRef::Sym(k) if self.derived.contains(&k) => return None,
                    DimRef::Sym(k) => match (size[k], *g as u64) {
                        (_, 1) => {}
                        (1, g) => size[k] = g,
                        (s, g) if s == g => {}
                        _ => return None,
                    },
                }
            }
        }
        let mut ones = Vec::new();
        for (i, (want, a)) in self.param_dims.iter().zip(args).enumerate() {
            let got = a.dims.get()?;
            for (axis, (w, g)) in want.iter().zip(got).enumerate() {
                if let DimRef::Sym(k) = *w {
                    if *g == 1 && size[k] != 1 {
                        ones.push((i, axis));
                    }
                }
            }
        }
        (!ones.is_empty()).then_some(ones)
    }

    /// Check a call's arity and each argument's element type; errors name
    /// the argument.
    pub fn check_arg_types(
        &self,
        dtypes: impl ExactSizeIterator<Item = DType>,
    ) -> Result<(), String> {
        let f = &self.function;
        if dtypes.len() != f.params.len() {
            return Err(self.arity_error(dtypes.len()));
        }
        for (i, dtype) in dtypes.enumerate() {
            let want = f.dtype(f.params[i]);
            if dtype != want {
                return Err(format!(
                    "argument `{}` of `{}`: expected {want} elements, got {dtype} elements",
                    f.param_names[i], f.name
                ));
            }
        }
        Ok(())
    }

    fn arity_error(&self, got: usize) -> String {
        let f = &self.function;
        format!("`{}` takes {} arguments, got {got}", f.name, f.params.len())
    }

    /// Bind the symbols into `scratch.bound` and check every argument:
    /// directly from the dimensions when every argument has them, else in
    /// the static order from the lengths. `false` when that fails (the
    /// general solver then finds the binding, if any, or the error message).
    pub(super) fn bind_fast(&self, args: &[RawArg], scratch: &mut Scratch) -> bool {
        let bound = &mut scratch.bound;
        bound.clear();
        if args.iter().all(|a| a.dims.get().is_some()) {
            const UNSET: u64 = u64::MAX;
            bound.resize(self.symbols.len(), UNSET);
            for (want, a) in self.param_dims.iter().zip(args) {
                let got = a.dims.get().unwrap_or(&[]);
                if got.len() != want.len() {
                    return false;
                }
                let mut numel = 1usize;
                for (w, g) in want.iter().zip(got) {
                    let g64 = *g as u64;
                    let ok = match *w {
                        DimRef::Const(c) => c == g64,
                        // Computed below, then checked.
                        DimRef::Sym(k) if self.derived.contains(&k) => true,
                        DimRef::Sym(k) if bound[k] == UNSET => {
                            bound[k] = g64;
                            true
                        }
                        DimRef::Sym(k) => bound[k] == g64,
                    };
                    if !ok {
                        return false;
                    }
                    numel *= g;
                }
                if numel != a.len {
                    return false;
                }
            }
            if self.derived.is_empty() {
                return !bound.contains(&UNSET);
            }
            if self.compute_derived(bound, UNSET).is_err() || bound.contains(&UNSET) {
                return false;
            }
            return self.param_dims.iter().zip(args).all(|(want, a)| {
                want.iter()
                    .zip(a.dims.get().unwrap_or(&[]))
                    .all(|(w, g)| match *w {
                        DimRef::Sym(k) => bound[k] == *g as u64,
                        DimRef::Const(_) => true,
                    })
            });
        }
        let len = |i: usize| args[i].len;
        let Some(order) = &self.solve_order else {
            return false;
        };
        bound.resize(self.symbols.len(), 0);
        for step in order {
            let known = step
                .others
                .iter()
                .fold(step.factor, |acc, k| acc * bound[*k]);
            let n = len(step.param) as u64;
            if known == 0 || !n.is_multiple_of(known) {
                return false;
            }
            bound[step.sym] = n / known;
        }
        if self.compute_derived(bound, 0).is_err() {
            return false;
        }
        (0..self.param_dims.len()).all(|i| {
            let (factor, syms) = &self.numel[i];
            syms.iter().fold(*factor, |acc, s| acc * bound[*s]) == len(i) as u64
        })
    }

    /// Bind the symbols into `scratch.sizes`: first directly from the
    /// arguments that come with dimensions (checking each axis), then for
    /// flat ones by solving one unknown per argument at a time from its
    /// element count, until nothing changes; then check every argument.
    pub(super) fn bind_into(
        &self,
        arg: &dyn Fn(usize) -> (usize, ArgDims),
        scratch: &mut Scratch,
    ) -> Result<(), String> {
        let (sizes, source) = (&mut scratch.sizes, &mut scratch.source);
        sizes.clear();
        sizes.resize(self.symbols.len(), None);
        source.clear();
        source.resize(self.symbols.len(), (0, None));
        for (i, want) in self.param_dims.iter().enumerate() {
            let (len, dims) = arg(i);
            let Some(got) = dims.get() else { continue };
            if got.len() != want.len() || got.iter().product::<usize>() != len {
                return Err(self.rank_error(i, got));
            }
            for (axis, (w, g)) in want.iter().zip(got).enumerate() {
                let expected = match *w {
                    DimRef::Const(c) => c,
                    // Computed once the others are bound; checked below.
                    DimRef::Sym(k) if self.derived.contains(&k) => continue,
                    DimRef::Sym(k) => match sizes[k] {
                        Some(v) => v,
                        None => {
                            sizes[k] = Some(*g as u64);
                            source[k] = (i, Some(axis));
                            continue;
                        }
                    },
                };
                if expected != *g as u64 {
                    return Err(self.axis_error(i, axis, got, sizes, source));
                }
            }
        }
        let mut progress = true;
        while progress {
            progress = false;
            for (i, dims) in self.param_dims.iter().enumerate() {
                let (n, shaped) = arg(i);
                if shaped.get().is_some() {
                    continue;
                }
                let mut known = 1u64;
                let mut unknown = None;
                let mut solvable = true;
                for d in dims {
                    match *d {
                        DimRef::Const(c) => known *= c,
                        DimRef::Sym(k) => match (sizes[k], unknown) {
                            (Some(v), _) => known *= v,
                            (None, _) if self.derived.contains(&k) => solvable = false,
                            (None, None) => unknown = Some(k),
                            (None, Some(_)) => solvable = false,
                        },
                    }
                }
                if let (Some(k), true) = (unknown, solvable) {
                    let n = n as u64;
                    if known != 0 && n.is_multiple_of(known) {
                        sizes[k] = Some(n / known);
                        source[k] = (i, None);
                        progress = true;
                    }
                }
            }
        }
        if !self.derived.is_empty() {
            self.bind_derived(arg, sizes, source)?;
        }
        for (i, dims) in self.param_dims.iter().enumerate() {
            let mut expected = Some(1u64);
            for d in dims {
                expected = match *d {
                    DimRef::Const(c) => expected.map(|e| e * c),
                    DimRef::Sym(k) => expected.zip(sizes[k]).map(|(e, v)| e * v),
                };
            }
            let len = arg(i).0;
            if expected != Some(len as u64) {
                return Err(self.bind_error(i, len, expected, sizes, source));
            }
        }
        if let Some(k) = sizes.iter().position(Option::is_none) {
            let f = &self.function;
            return Err(format!(
                "`{}`: no argument determines dimension `{}`",
                f.name, self.symbols[k]
            ));
        }
        Ok(())
    }

    /// Compute the derived symbols in `bound` (where `unset` marks a symbol
    /// not bound) from the others; the error says which slice is out of
    /// range.
    fn compute_derived(&self, bound: &mut [u64], unset: u64) -> Result<(), String> {
        for (&k, (plan, _)) in self.derived.iter().zip(&self.derived_plans) {
            let value = |i: usize| (bound[i] != unset || unset == 0).then_some(bound[i]);
            let v = match plan.as_ref().and_then(|p| p.eval(&value)) {
                Some(v) => v,
                // Not computable: the evaluation by name says why.
                None => {
                    let lookup = |name: &str| {
                        let i = self.symbols.iter().position(|x| x == name)?;
                        value(i)
                    };
                    derived_eval(&self.symbols[k], &lookup)?
                }
            };
            bound[k] = v;
        }
        Ok(())
    }

    /// The general solver's step for derived symbols: compute each from the
    /// bound ones, then check every argument axis that carries one. Errors
    /// name the arguments that bound the symbols a failing slice uses.
    fn bind_derived(
        &self,
        arg: &dyn Fn(usize) -> (usize, ArgDims),
        sizes: &mut [Option<u64>],
        source: &mut [(usize, Option<usize>)],
    ) -> Result<(), String> {
        let f = &self.function;
        for (&k, (plan, first)) in self.derived.iter().zip(&self.derived_plans) {
            let fast = plan.as_ref().and_then(|p| p.eval(&|i| sizes[i]));
            let lookup = |name: &str| {
                let i = self.symbols.iter().position(|x| x == name)?;
                sizes[i]
            };
            match fast
                .ok_or(())
                .or_else(|()| derived_eval(&self.symbols[k], &lookup))
            {
                Ok(v) => {
                    sizes[k] = Some(v);
                    // For messages: where its (first) base symbol came from.
                    if let Some(i) = *first {
                        source[k] = source[i];
                    }
                }
                Err(e) => {
                    let mut base = Vec::new();
                    crate::shape::derived::base_symbols(
                        &Dim::Sym(self.symbols[k].clone()),
                        &mut base,
                    );
                    let from: Vec<String> = base
                        .iter()
                        .filter_map(|b| {
                            let i = self.symbols.iter().position(|x| x == b)?;
                            let v = sizes[i]?;
                            Some(format!("`{b}` = {v} from {}", self.source_text(source[i])))
                        })
                        .collect();
                    return Err(format!("`{}`: {e}; {}", f.name, from.join(", ")));
                }
            }
        }
        for (i, want) in self.param_dims.iter().enumerate() {
            let dims = arg(i).1;
            let Some(got) = dims.get() else { continue };
            for (axis, (w, g)) in want.iter().zip(got).enumerate() {
                if let DimRef::Sym(k) = *w {
                    if self.derived.contains(&k) && sizes[k] != Some(*g as u64) {
                        return Err(self.axis_error(i, axis, got, sizes, source));
                    }
                }
            }
        }
        Ok(())
    }

    /// Where symbol `k`'s value came from, for messages.
    fn source_text(&self, src: (usize, Option<usize>)) -> String {
        let name = &self.function.param_names[src.0];
        match src.1 {
            Some(axis) => format!("axis {axis} of argument `{name}`"),
            None => format!("argument `{name}`"),
        }
    }

    /// The message for argument `i`, passed with dimensions `got`, whose rank
    /// (or element count) does not fit its parameter.
    fn rank_error(&self, i: usize, got: &[usize]) -> String {
        let f = &self.function;
        let shape = f.shape(f.params[i]);
        let what = match shape.rank() {
            0 => "a scalar".to_string(),
            r => format!("an array of rank {r}"),
        };
        format!(
            "argument `{}` of `{}`: expected {what} (shape {shape}), got shape {got:?}",
            f.param_names[i], f.name
        )
    }

    /// The message for argument `i` whose axis `axis` does not match.
    fn axis_error(
        &self,
        i: usize,
        axis: usize,
        got: &[usize],
        sizes: &[Option<u64>],
        source: &[(usize, Option<usize>)],
    ) -> String {
        let f = &self.function;
        let shape = f.shape(f.params[i]);
        let why = match &shape.0[axis] {
            Dim::Const(c) => format!("its size is fixed at {c}"),
            Dim::Sym(name) => {
                let k = self.symbols.iter().position(|x| x == name).expect("symbol");
                format!(
                    "`{name}` = {} from {}",
                    sizes[k].expect("bound"),
                    self.source_text(source[k])
                )
            }
        };
        format!(
            "argument `{}` of `{}`: expected shape {shape}, got {got:?}: axis {axis} is {}, but {why}",
            f.param_names[i], f.name, got[axis]
        )
    }

    /// The message for argument `i` whose length `got` does not fit its shape.
    fn bind_error(
        &self,
        i: usize,
        got: usize,
        expected: Option<u64>,
        sizes: &[Option<u64>],
        source: &[(usize, Option<usize>)],
    ) -> String {
        let f = &self.function;
        let shape = f.shape(f.params[i]);
        let mut bound = String::new();
        let mut unbound = None;
        for name in shape.symbols() {
            let k = self.symbols.iter().position(|x| x == name).expect("symbol");
            match sizes[k] {
                Some(v) => {
                    let _ = write!(
                        bound,
                        ", {name} = {v} (from {})",
                        self.source_text(source[k])
                    );
                }
                None => unbound = Some(name),
            }
        }
        match (expected, unbound) {
            (Some(e), _) => format!(
                "argument `{}` of `{}`: expected shape {shape}{bound} = {e} elements, got {got}",
                f.param_names[i], f.name
            ),
            (None, u) => format!(
                "argument `{}` of `{}`: cannot infer dimension `{}` of its shape {shape} from {got} elements{bound}",
                f.param_names[i],
                f.name,
                u.unwrap_or("?")
            ),
        }
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
                let whole = k.args[a].output && k.region().is_none();
                if need > len || (whole && need != len) {
                    return Err(format!(
                        "launch {l} ({}): arg {a} needs {need} elements, buffer has {len}",
                        k.name
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether some max/min reduction would be over no elements under the
    /// bound `sizes` (see `check_nonempty`).
    pub fn has_empty_reduction(&self, sizes: &[u64]) -> bool {
        self.nonempty.iter().any(|(_, refs)| {
            refs.iter().any(|d| match *d {
                DimRef::Const(c) => c == 0,
                DimRef::Sym(k) => sizes.get(k).is_some_and(|v| *v == 0),
            })
        })
    }

    /// A max or min (or argmax, argmin) over an axis of size 0 is an error
    /// naming the function, the reduction's operand (an argument, or the
    /// argument the empty axis's size comes from) and the axis, as JAX
    /// raises "zero-size array to reduction operation max which has no
    /// identity". sum, mean, prod, logsumexp and softmax are not affected.
    pub fn check_nonempty(&self, sizes: &[u64]) -> Result<(), String> {
        let f = &self.function;
        for (n, refs) in &self.nonempty {
            for (j, d) in refs.iter().enumerate() {
                let empty = match *d {
                    DimRef::Const(c) => c == 0,
                    DimRef::Sym(k) => sizes.get(k).is_some_and(|v| *v == 0),
                };
                if !empty {
                    continue;
                }
                let axis = n.axes[j];
                let what = match (n.param, &n.dims[j]) {
                    (Some(p), _) => format!("axis {axis} of argument `{}`", f.param_names[p]),
                    (None, Dim::Sym(s)) => {
                        // The first argument with an axis of this size.
                        let from = f.params.iter().enumerate().find_map(|(i, p)| {
                            f.shape(*p)
                                .0
                                .iter()
                                .position(|x| *x == Dim::Sym(s.clone()))
                                .map(|a| format!(" (axis {a} of argument `{}`)", f.param_names[i]))
                        });
                        format!(
                            "axis {axis} of a value, of size `{s}`{}",
                            from.unwrap_or_default()
                        )
                    }
                    (None, Dim::Const(_)) => format!("axis {axis} of a value"),
                };
                return Err(format!(
                    "`{}`: {} over {what}, which has size 0: a {} over no elements has no identity (JAX raises: zero-size array to reduction operation {} which has no identity)",
                    f.name, n.op, n.op, n.op
                ));
            }
        }
        Ok(())
    }
}

/// Work out, from the shapes alone, an order in which each symbol is the
/// only unknown dimension of some parameter. `None` if a symbol is left over.
pub(super) fn static_solve_order(
    param_dims: &[Vec<DimRef>],
    n_symbols: usize,
    derived: &[usize],
) -> Option<Vec<SolveStep>> {
    // Derived symbols are computed after the order has run.
    let mut known: Vec<bool> = (0..n_symbols).map(|k| derived.contains(&k)).collect();
    let mut order = Vec::new();
    let mut progress = true;
    while progress {
        progress = false;
        for (param, dims) in param_dims.iter().enumerate() {
            let mut factor = 1u64;
            let mut others = Vec::new();
            let mut unknown: Vec<usize> = Vec::new();
            for d in dims {
                match *d {
                    DimRef::Const(c) => factor *= c,
                    DimRef::Sym(k) if known[k] => others.push(k),
                    DimRef::Sym(k) => unknown.push(k),
                }
            }
            if let [sym] = unknown[..] {
                known[sym] = true;
                order.push(SolveStep {
                    sym,
                    param,
                    factor,
                    others,
                });
                progress = true;
            }
        }
    }
    known.iter().all(|k| *k).then_some(order)
}

/// The value of the derived symbol `name` given the bound ones.
fn derived_eval(name: &str, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, String> {
    crate::shape::derived::eval(&Dim::Sym(name.to_string()), lookup)
}
