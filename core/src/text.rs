//! The text form of the IR, for dumps, golden tests and for embedding a
//! function in generated code. It prints and parses back to an equal function:
//!
//! ```text
//! fn f(x %0: f32[n], y %1: f32[]) {
//!   %2: f32[n] = broadcast[] %1
//!   %3: f32[n] = mul %0 %2
//!   %4: f32[] = reduce_sum[0] %3
//!   return %4
//! }
//! ```

use crate::dtype::DType;
use crate::ir::{Eqn, Function, Type, Var};
use crate::ops::elementwise::{BinaryOp, CmpOp, UnaryOp};
use crate::ops::special::SpecialFn;
use crate::ops::{DotDims, Op};
use crate::shape::{Dim, Shape};
use std::fmt::Write as _;

/// Print `f` in the text form. An op that holds functions (a loop) ends
/// its line with `{`, and its functions follow, then a line `}`.
pub fn print(f: &Function) -> String {
    let mut s = String::new();
    print_into(&mut s, f);
    s
}

fn print_into(s: &mut String, f: &Function) {
    let params: Vec<String> = f
        .params
        .iter()
        .zip(&f.param_names)
        .map(|(v, n)| format!("{n} {v}: {}", f.ty(*v)))
        .collect();
    let _ = writeln!(s, "fn {}({}) {{", f.name, params.join(", "));
    for e in &f.eqns {
        let lhs: Vec<String> = e
            .outs
            .iter()
            .map(|o| format!("{o}: {}", f.ty(*o)))
            .collect();
        let _ = write!(s, "  {} = {}", lhs.join(", "), e.op);
        for i in &e.ins {
            let _ = write!(s, " {i}");
        }
        let inner = nested_functions(&e.op);
        if inner.is_empty() {
            s.push('\n');
        } else {
            s.push_str(" {\n");
            for g in inner {
                print_into(s, g);
            }
            s.push_str("  }\n");
        }
    }
    let outs: Vec<String> = f.outs.iter().map(|v| v.to_string()).collect();
    let _ = writeln!(s, "  return {}", outs.join(", "));
    s.push_str("}\n");
}

/// The functions an op holds, in the order the text form writes them.
pub fn nested_functions(op: &Op) -> Vec<&Function> {
    match op {
        Op::Loop(l) => l.functions(),
        Op::LoopReverse(l) => l.functions(),
        Op::Cond(c) => c.functions(),
        Op::Pmap(p) => p.functions(),
        Op::Custom(c) => c.functions(),
        _ => Vec::new(),
    }
}

/// The text form of the functions `op` holds: part of the key under which
/// `simplify` finds equal equations.
pub fn nested_text(op: &Op) -> String {
    nested_functions(op).into_iter().map(print).collect()
}

/// Parse the text form. Types are checked with each op's shape rule.
pub fn parse(src: &str) -> Result<Function, String> {
    let mut lines = src.lines().map(str::trim).filter(|l| !l.is_empty());
    let f = parse_function(&mut lines)?;
    if let Some(extra) = lines.next() {
        return Err(format!("unexpected `{extra}` after `}}`"));
    }
    Ok(f)
}

/// One function, from its header line to its closing `}`.
fn parse_function(lines: &mut dyn Iterator<Item = &str>) -> Result<Function, String> {
    let header = lines.next().ok_or("empty IR text")?;
    let rest = header
        .strip_prefix("fn ")
        .ok_or("IR text must start with `fn`")?;
    let open = rest.find('(').ok_or("missing `(` in header")?;
    let close = rest.rfind(')').ok_or("missing `)` in header")?;
    let mut f = Function::new(rest[..open].trim());
    // Values are renumbered densely as they are defined.
    let mut vars: std::collections::HashMap<String, Var> = Default::default();
    for p in split_top(&rest[open + 1..close]) {
        let (lhs, ty) = p
            .split_once(':')
            .ok_or_else(|| format!("bad param `{p}`"))?;
        let mut it = lhs.split_whitespace();
        let (name, var) = (
            it.next().ok_or("param name")?,
            it.next().ok_or("param value")?,
        );
        let v = f.add_param(name, parse_type(ty.trim())?);
        if vars.insert(var.to_string(), v).is_some() {
            return Err(format!("value `{var}` defined twice"));
        }
    }
    let mut closed = false;
    while let Some(line) = lines.next() {
        if line == "}" {
            closed = true;
            break;
        }
        if let Some(outs) = line.strip_prefix("return") {
            for o in outs.split(',').map(str::trim).filter(|o| !o.is_empty()) {
                f.outs
                    .push(*vars.get(o).ok_or_else(|| format!("unknown value `{o}`"))?);
            }
            continue;
        }
        let (lhs, rhs) = line
            .split_once('=')
            .ok_or_else(|| format!("bad line `{line}`"))?;
        let mut results = Vec::new();
        for r in split_top(lhs) {
            let (name, ty) = r
                .split_once(':')
                .ok_or_else(|| format!("bad line `{line}`"))?;
            results.push((name.trim().to_string(), parse_type(ty.trim())?));
        }
        let (rhs, nested) = match rhs.trim_end().strip_suffix('{') {
            Some(r) => (r, true),
            None => (rhs, false),
        };
        let mut words = rhs.split_whitespace();
        let word = words.next().ok_or("missing op")?;
        let ins = words
            .map(|w| {
                vars.get(w)
                    .copied()
                    .ok_or_else(|| format!("unknown value `{w}` in `{line}`"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut op = if nested {
            let mut fns = Vec::new();
            loop {
                match lines.next() {
                    Some("}") => break,
                    Some(l) if l.starts_with("fn ") => {
                        let mut one = std::iter::once(l).chain(&mut *lines);
                        fns.push(parse_function(&mut one)?);
                    }
                    _ => return Err(format!("`{line}`: expected its functions and `}}`")),
                }
            }
            parse_control(word, fns)?
        } else {
            let [(_, ty)] = &results[..] else {
                return Err(format!("`{line}`: one result expected"));
            };
            parse_op(word, ty)?
        };
        if let Op::Concatenate { operands, .. } = &mut op {
            *operands = ins.len();
        }
        let outs = f
            .push_all(op, &ins)
            .map_err(|e| format!("{e} in `{line}`"))?;
        if outs.len() != results.len() {
            return Err(format!("`{line}`: the op gives {} results", outs.len()));
        }
        for (out, (name, ty)) in outs.iter().zip(results) {
            if f.ty(*out) != &ty {
                return Err(format!(
                    "`{line}`: the op gives {}, the text says {ty}",
                    f.ty(*out)
                ));
            }
            if vars.insert(name.clone(), *out).is_some() {
                return Err(format!("value `{name}` defined twice"));
            }
        }
    }
    if !closed {
        return Err("missing `}` at the end".into());
    }
    Ok(f)
}

/// An op that holds functions: its name and arguments, and the functions.
fn parse_control(word: &str, fns: Vec<Function>) -> Result<Op, String> {
    let (name, arg) = word
        .split_once('[')
        .and_then(|(n, a)| Some((n, a.strip_suffix(']')?)))
        .ok_or_else(|| format!("bad op `{word}`"))?;
    use crate::ops::control::{Cond, Loop, LoopReverse};
    match name {
        "loop" | "loop_tangent" => Ok(Op::Loop(Box::new(Loop::from_text(name, arg, fns)?))),
        "loop_reverse" | "loop_reverse_tangent" => Ok(Op::LoopReverse(Box::new(
            LoopReverse::from_text(name, arg, fns)?,
        ))),
        "cond" => Ok(Op::Cond(Box::new(Cond::from_text(arg, fns)?))),
        "pmap" => Ok(Op::Pmap(Box::new(crate::ops::control::Pmap::from_text(
            arg, fns,
        )?))),
        "custom_jvp_call" | "custom_vjp_call" | "custom_lin" => Ok(Op::Custom(Box::new(
            crate::ops::control::Custom::from_text(name, arg, fns)?,
        ))),
        _ => Err(format!("`{name}` holds no functions")),
    }
}

fn split_top(s: &str) -> Vec<&str> {
    // Split on commas outside brackets.
    let (mut out, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

pub fn parse_type(s: &str) -> Result<Type, String> {
    let open = s.find('[').ok_or_else(|| format!("bad type `{s}`"))?;
    let dtype = DType::parse(&s[..open]).ok_or_else(|| format!("bad dtype in `{s}`"))?;
    let dims = s[open + 1..]
        .strip_suffix(']')
        .ok_or_else(|| format!("bad type `{s}`"))?;
    let shape = dims
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| parse_dim(d).ok_or_else(|| format!("bad dimension `{d}` in `{s}`")))
        .collect::<Result<_, String>>()?;
    Ok(Type::new(dtype, Shape(shape)))
}

fn parse_op(word: &str, out: &Type) -> Result<Op, String> {
    let (name, arg) = match word.split_once('[') {
        Some((n, a)) => (
            n,
            Some(
                a.strip_suffix(']')
                    .ok_or_else(|| format!("bad op `{word}`"))?,
            ),
        ),
        None => (word, None),
    };
    if let Some(c) = arg.and_then(|a| crate::ops::collective::Collective::from_text(name, a, out)) {
        return Ok(Op::Collective(c));
    }
    let list = |a: Option<&str>| -> Result<Vec<usize>, String> {
        a.unwrap_or("")
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().map_err(|_| format!("bad op `{word}`")))
            .collect()
    };
    let with_arg = [
        "powi",
        "literal",
        "broadcast",
        "reduce_sum",
        "reduce_max",
        "reduce_min",
        "transpose",
        "dot_general",
        "dim_size",
        "iota",
        "slice",
        "pad",
        "concatenate",
        "gather",
        "scatter_add",
        "reduce_prod",
        "linear_scan",
        "argsort",
        "triangular_solve",
        "solve",
        "conv",
    ];
    if let Some(name) = crate::ops::linalg::LinalgOp::NAMES
        .into_iter()
        .find(|n| *n == name)
    {
        return crate::ops::linalg::LinalgOp::parse(name, arg).map(Op::Linalg);
    }
    if arg.is_some() && !with_arg.contains(&name) {
        return Err(format!("bad op `{word}`: `{name}` takes no `[…]` argument"));
    }
    if let Some(op) = UnaryOp::SIMPLE.into_iter().find(|o| o.name() == name) {
        return Ok(Op::Unary(op));
    }
    if let Some(op) = SpecialFn::from_name(name) {
        return Ok(Op::Special(op));
    }
    if let Some(op) = BinaryOp::ALL.into_iter().find(|o| o.name() == name) {
        return Ok(Op::Binary(op));
    }
    if let Some(op) = CmpOp::ALL.into_iter().find(|o| o.name() == name) {
        return Ok(Op::Cmp(op));
    }
    Ok(match name {
        "powi" => Op::Unary(UnaryOp::Powi(
            arg.unwrap_or("")
                .parse()
                .map_err(|_| format!("bad op `{word}`"))?,
        )),
        "select" => Op::Select,
        "dot" => Op::Dot,
        "literal" => Op::Literal {
            value: arg
                .unwrap_or("")
                .parse()
                .map_err(|_| format!("bad literal `{word}`"))?,
            dtype: out.dtype,
        },
        "broadcast" => Op::Broadcast {
            shape: out.shape.clone(),
            dims: list(arg)?,
        },
        "reduce_sum" => Op::ReduceSum { axes: list(arg)? },
        "reduce_max" => Op::ReduceMax { axes: list(arg)? },
        "reduce_min" => Op::ReduceMin { axes: list(arg)? },
        "reduce_prod" => Op::ReduceProd { axes: list(arg)? },
        "linear_scan" => {
            let a = arg.unwrap_or("");
            let (axis, reverse) = match a.strip_suffix(",rev") {
                Some(axis) => (axis, true),
                None => (a, false),
            };
            Op::LinearScan {
                axis: axis.parse().map_err(|_| format!("bad op `{word}`"))?,
                reverse,
            }
        }
        "transpose" => Op::Transpose { perm: list(arg)? },
        "reshape" => Op::Reshape {
            shape: out.shape.clone(),
        },
        "stop_gradient" => Op::StopGradient,
        "convert" => Op::Convert { dtype: out.dtype },
        "dot_general" => {
            let parts: Vec<&str> = arg.unwrap_or("").split(';').collect();
            let [lc, rc, lb, rb] = parts[..] else {
                return Err(format!(
                    "bad op `{word}`: dot_general takes four `;`-separated axis lists"
                ));
            };
            Op::DotGeneral(DotDims {
                lhs_contract: list(Some(lc))?,
                rhs_contract: list(Some(rc))?,
                lhs_batch: list(Some(lb))?,
                rhs_batch: list(Some(rb))?,
            })
        }
        "conv" => Op::Conv(
            crate::ops::conv::ConvParams::parse(arg.unwrap_or(""), &out.shape.0).ok_or_else(
                || {
                    format!(
                    "bad op `{word}`: expected conv[a,b,c,d;..;feature_groups;batch_groups;lead]"
                )
                },
            )?,
        ),
        "dim_size" => {
            let d = arg.unwrap_or("");
            Op::DimSize {
                dim: parse_dim(d).ok_or_else(|| format!("bad op `{word}`"))?,
                dtype: out.dtype,
            }
        }
        "iota" => Op::Iota {
            shape: out.shape.clone(),
            axis: arg
                .unwrap_or("")
                .parse()
                .map_err(|_| format!("bad op `{word}`"))?,
            dtype: out.dtype,
        },
        "slice" | "pad" => {
            let (starts, steps) = crate::ops::slicing::parse_window(arg.unwrap_or(""))
                .ok_or_else(|| format!("bad op `{word}`: expected starts`;`steps"))?;
            let shape = out.shape.clone();
            if name == "slice" {
                Op::Slice {
                    shape,
                    starts,
                    steps,
                }
            } else {
                Op::Pad {
                    shape,
                    starts,
                    steps,
                }
            }
        }
        // The operand count is set from the operands that follow.
        "concatenate" => Op::Concatenate {
            axis: arg
                .unwrap_or("")
                .parse()
                .map_err(|_| format!("bad op `{word}`"))?,
            operands: 0,
        },
        "gather" | "scatter_add" => {
            let [axis, batch] = list(arg)?[..] else {
                return Err(format!("bad op `{word}`: expected [axis,batch]"));
            };
            if name == "gather" {
                Op::Gather { axis, batch }
            } else {
                Op::ScatterAdd {
                    axis,
                    batch,
                    shape: out.shape.clone(),
                }
            }
        }
        "argsort" => {
            let parts: Vec<&str> = arg.unwrap_or("").split(',').collect();
            let bad = || format!("bad op `{word}`: expected [axis,asc|desc] or [axis,asc|desc,k]");
            let (axis, dir, k) = match parts[..] {
                [a, d] => (a, d, None),
                [a, d, k] => (a, d, Some(k.parse().map_err(|_| bad())?)),
                _ => return Err(bad()),
            };
            Op::Argsort {
                axis: axis.parse().map_err(|_| bad())?,
                descending: match dir {
                    "asc" => false,
                    "desc" => true,
                    _ => return Err(bad()),
                },
                k,
            }
        }
        _ => return Err(format!("unknown op `{word}`")),
    })
}

/// A constant, a symbol, or a derived dimension (`shape::derived`).
pub(crate) fn parse_dim(d: &str) -> Option<Dim> {
    match d.parse::<u64>() {
        Ok(c) => Some(Dim::Const(c)),
        Err(_) if crate::shape::derived::is_derived(d) => crate::shape::derived::parse_dim(d),
        Err(_) if is_ident(d) => Some(Dim::sym(d)),
        Err(_) => None,
    }
}

/// Print one equation (for error messages).
pub fn eqn_text(f: &Function, e: &Eqn) -> String {
    let ins: Vec<String> = e.ins.iter().map(|v| v.to_string()).collect();
    let lhs: Vec<String> = e
        .outs
        .iter()
        .map(|o| format!("{o}: {}", f.ty(*o)))
        .collect();
    format!("{} = {} {}", lhs.join(", "), e.op, ins.join(" "))
}

/// Whether `s` can be a dimension symbol: it starts with a letter or `_`
/// (so `-1` is not taken for a symbol) and holds no space, comma or bracket.
fn is_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && !s.contains(|c: char| c.is_whitespace() || "[],".contains(c))
}
