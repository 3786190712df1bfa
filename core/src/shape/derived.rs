//! Derived dimensions: sizes computed from other dimensions when a call binds
//! its symbols, e.g. the length `n - 1` of `x[1..]` for a vector of length `n`.
//!
//! A derived dimension is a `Dim::Sym` whose name is its definition, in
//! parentheses (a base symbol never starts with `(`):
//!
//! - `(D:B:B:s)`: the length of the slice `start..stop` with step `s` of a
//!   dimension `D`, where a bound `B` is an index `k` or `e-k` (the end minus
//!   `k`; `e` is the end). Evaluating it checks `start <= stop <= D`, so a
//!   slice out of range is an error at the call, never an access.
//! - `(D+D+…)`: a sum (the length of a concatenation, or an offset in it).
//! - `(D|K|s|lo|hi|ld|rd)`: the number of windows of `K` taps (`rd`
//!   apart) with stride `s` over an axis of `D` points (`ld` apart) padded
//!   by `lo` and `hi` (which may be negative): a convolution's output
//!   length, `(dilated D + lo + hi − dilated K) / s + 1`, 0 when the window
//!   does not fit.
//!
//! `D` is a constant, a symbol or another derived dimension. Because the
//! name is the definition, every pass that copies a shape (transforms, the
//! text form, fusion, kernel `sizes`) carries it unchanged, and equal
//! definitions are equal dimensions. The constructors below put names in a
//! canonical form (`x[1..]` and `x[..-1]` are both `(n:0:e-1:1)`).

use super::Dim;
use std::collections::BTreeMap;
use std::fmt;

/// A slice bound: an index from the start, or from the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bound {
    Start(u64),
    /// The end minus this many.
    End(u64),
}

impl Bound {
    /// The index this bound names in an axis of size `n`, if within it.
    pub fn resolve(self, n: u64) -> Option<u64> {
        match self {
            Bound::Start(k) => (k <= n).then_some(k),
            Bound::End(k) => n.checked_sub(k),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Start(k) => write!(f, "{k}"),
            Bound::End(0) => f.write_str("e"),
            Bound::End(k) => write!(f, "e-{k}"),
        }
    }
}

/// The definition of a derived dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Derived {
    Slice {
        of: Dim,
        start: Bound,
        stop: Bound,
        step: u64,
    },
    Sum(Vec<Dim>),
    /// A convolution's output length (`window_len`).
    Window {
        of: Dim,
        window: Dim,
        geometry: WindowGeometry,
    },
}

/// A window's stride, padding and dilations along one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WindowGeometry {
    pub stride: u64,
    pub lo: i64,
    pub hi: i64,
    pub lhs_dilation: u64,
    pub rhs_dilation: u64,
}

impl WindowGeometry {
    /// The number of windows over `n` points with windows of `k` taps.
    pub fn count(&self, n: u64, k: u64) -> u64 {
        let dilate = |n: u64, d: u64| if n == 0 { 0 } else { (n - 1) * d + 1 };
        let padded = dilate(n, self.lhs_dilation) as i64 + self.lo + self.hi;
        let w = dilate(k, self.rhs_dilation) as i64;
        if padded < w || w == 0 {
            0
        } else {
            ((padded - w) / self.stride as i64 + 1) as u64
        }
    }
}

/// The number of windows of `window` taps over an axis of `of` (a
/// constant when both are).
pub fn window_len(of: &Dim, window: &Dim, geometry: WindowGeometry) -> Dim {
    match (of, window) {
        (Dim::Const(n), Dim::Const(k)) => Dim::Const(geometry.count(*n, *k)),
        _ => derived(Derived::Window {
            of: of.clone(),
            window: window.clone(),
            geometry,
        }),
    }
}

/// Whether `name` is a derived dimension's name.
pub fn is_derived(name: &str) -> bool {
    name.starts_with('(')
}

/// The length of `start..stop` with `step` (>= 1) of an axis of size `of`:
/// a constant when it is known statically, else a derived dimension whose
/// evaluation checks the bounds. A constant axis with bounds outside it is
/// an error (what the message says goes to the user).
pub fn slice_len(of: &Dim, start: Bound, stop: Bound, step: u64) -> Result<Dim, String> {
    if step == 0 {
        return Err("a slice step must be at least 1".into());
    }
    if let Dim::Const(n) = of {
        return const_slice_len(*n, start, stop, step).map(Dim::Const);
    }
    let len = |a: u64, b: u64| Dim::Const((b.saturating_sub(a)).div_ceil(step));
    match (start, stop) {
        (Bound::Start(0), Bound::End(0)) if step == 1 => Ok(of.clone()),
        // Both from the end: the length is fixed; the start index (a derived
        // dimension itself, `start_index`) checks the axis is long enough.
        (Bound::End(a), Bound::End(b)) if a >= b => Ok(len(b, a)),
        (Bound::Start(a), Bound::Start(b)) if a <= b => Ok(derived(Derived::Slice {
            of: of.clone(),
            start,
            stop,
            step,
        })),
        // Only `stop - start` matters: shift the start to 0 (canonical).
        (Bound::Start(a), Bound::End(b)) => Ok(derived(Derived::Slice {
            of: of.clone(),
            start: Bound::Start(0),
            stop: Bound::End(a + b),
            step,
        })),
        (Bound::End(_), Bound::Start(_)) => Err(format!(
            "a slice of the axis of run-time size `{of}` from a bound counted from the end to one counted from the start is not supported"
        )),
        _ => Err(format!(
            "the slice {start}..{stop} is empty backwards (start after stop)"
        )),
    }
}

fn const_slice_len(n: u64, start: Bound, stop: Bound, step: u64) -> Result<u64, String> {
    let show = |b: Bound| match b {
        Bound::Start(k) => k.to_string(),
        Bound::End(k) => format!("-{k}"),
    };
    match (start.resolve(n), stop.resolve(n)) {
        (Some(a), Some(b)) if a <= b => Ok((b - a).div_ceil(step)),
        _ => Err(format!(
            "the slice {}..{} is out of range for an axis of size {n}",
            show(start),
            show(stop)
        )),
    }
}

/// The index a bound names in an axis of size `of`: a constant, or (from the
/// end of a symbolic axis) the derived `of - k`, which checks `k <= of`.
pub fn start_index(of: &Dim, b: Bound) -> Result<Dim, String> {
    match (of, b) {
        (_, Bound::Start(k)) => Ok(Dim::Const(k)),
        (Dim::Const(n), Bound::End(k)) => n
            .checked_sub(k)
            .map(Dim::Const)
            .ok_or_else(|| format!("the index -{k} is out of range for an axis of size {n}")),
        (Dim::Sym(_), Bound::End(0)) => Ok(of.clone()),
        (Dim::Sym(_), Bound::End(_)) => slice_len(of, Bound::Start(0), b, 1),
    }
}

/// The sum of dimensions, in a normal form so that equal sizes written
/// differently are one dimension (`(n - 1) + 1` is `n`: `x[1..]`
/// concatenated with `x[..1]` has `x`'s length). A step-1 slice is its
/// length: `b - a` for `a..b`, `D - k` for `..e-k` of an axis `D`. The
/// terms left are sorted, constants folded into one trailing term; a
/// negative constant is taken from the whole (`S - k` as the slice
/// `(S:0:e-k:1)`). A constant when every term is. A slice's own range check
/// stays with the slice (its result has that dimension), so the sum needs
/// none.
pub fn sum(dims: &[Dim]) -> Dim {
    fn add(d: &Dim, c: &mut i128, syms: &mut Vec<Dim>) {
        let s = match d {
            Dim::Const(k) => {
                *c += *k as i128;
                return;
            }
            Dim::Sym(s) => s,
        };
        match parse(s) {
            Some(Derived::Sum(terms)) => terms.iter().for_each(|t| add(t, c, syms)),
            Some(Derived::Slice {
                start: Bound::Start(a),
                stop: Bound::Start(b),
                step: 1,
                ..
            }) => *c += b as i128 - a as i128,
            Some(Derived::Slice {
                of,
                start: Bound::Start(0),
                stop: Bound::End(k),
                step: 1,
            }) => {
                add(&of, c, syms);
                *c -= k as i128;
            }
            _ => syms.push(d.clone()),
        }
    }
    let mut c = 0i128;
    let mut syms: Vec<Dim> = Vec::new();
    for d in dims {
        add(d, &mut c, &mut syms);
    }
    syms.sort();
    let whole = |mut syms: Vec<Dim>| match syms.len() {
        1 => syms.pop().expect("one term"),
        _ => derived(Derived::Sum(syms)),
    };
    if syms.is_empty() {
        return Dim::Const(u64::try_from(c.max(0)).unwrap_or(u64::MAX));
    }
    if c < 0 {
        // Taken from the whole sum: its check (`k` ≤ the sum) is implied by
        // the slices' own, never stricter.
        return derived(Derived::Slice {
            of: whole(syms),
            start: Bound::Start(0),
            stop: Bound::End(u64::try_from(-c).unwrap_or(u64::MAX)),
            step: 1,
        });
    }
    if c > 0 {
        syms.push(Dim::Const(u64::try_from(c).unwrap_or(u64::MAX)));
    }
    whole(syms)
}

fn derived(d: Derived) -> Dim {
    Dim::Sym(d.to_string())
}

impl fmt::Display for Derived {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Derived::Slice {
                of,
                start,
                stop,
                step,
            } => write!(f, "({of}:{start}:{stop}:{step})"),
            Derived::Sum(terms) => {
                let t: Vec<String> = terms.iter().map(|d| d.to_string()).collect();
                write!(f, "({})", t.join("+"))
            }
            Derived::Window {
                of,
                window,
                geometry: g,
            } => write!(
                f,
                "({of}|{window}|{}|{}|{}|{}|{})",
                g.stride, g.lo, g.hi, g.lhs_dilation, g.rhs_dilation
            ),
        }
    }
}

/// Split `s` at `sep` outside parentheses.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Parse one dimension of a derived definition: a constant, a base symbol
/// or a parenthesized derived dimension.
pub fn parse_dim(s: &str) -> Option<Dim> {
    if let Ok(c) = s.parse::<u64>() {
        return Some(Dim::Const(c));
    }
    if is_derived(s) {
        return parse(s).map(|_| Dim::Sym(s.to_string()));
    }
    let ok = s.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_');
    ok.then(|| Dim::Sym(s.to_string()))
}

fn parse_bound(s: &str) -> Option<Bound> {
    match s.strip_prefix('e') {
        Some("") => Some(Bound::End(0)),
        Some(rest) => rest.strip_prefix('-')?.parse().ok().map(Bound::End),
        None => s.parse().ok().map(Bound::Start),
    }
}

/// The definition of a derived dimension's name; `None` for a base symbol
/// or a malformed name.
pub fn parse(name: &str) -> Option<Derived> {
    let inner = name.strip_prefix('(')?.strip_suffix(')')?;
    if let [of, window, stride, lo, hi, ld, rd] = split_top(inner, '|')[..] {
        let positive = |s: &str| s.parse::<u64>().ok().filter(|v| *v > 0);
        return Some(Derived::Window {
            of: parse_dim(of)?,
            window: parse_dim(window)?,
            geometry: WindowGeometry {
                stride: positive(stride)?,
                lo: lo.parse().ok()?,
                hi: hi.parse().ok()?,
                lhs_dilation: positive(ld)?,
                rhs_dilation: positive(rd)?,
            },
        });
    }
    let parts = split_top(inner, ':');
    if let [of, start, stop, step] = parts[..] {
        let step: u64 = step.parse().ok().filter(|s| *s > 0)?;
        return Some(Derived::Slice {
            of: parse_dim(of)?,
            start: parse_bound(start)?,
            stop: parse_bound(stop)?,
            step,
        });
    }
    let terms = split_top(inner, '+');
    if terms.len() < 2 {
        return None;
    }
    terms
        .into_iter()
        .map(parse_dim)
        .collect::<Option<Vec<_>>>()
        .map(Derived::Sum)
}

/// The base symbols a dimension is defined from (itself, for a base symbol).
pub fn base_symbols(d: &Dim, out: &mut Vec<String>) {
    let Dim::Sym(s) = d else { return };
    match parse(s) {
        Some(Derived::Slice { of, .. }) => base_symbols(&of, out),
        Some(Derived::Sum(terms)) => terms.iter().for_each(|t| base_symbols(t, out)),
        Some(Derived::Window { of, window, .. }) => {
            base_symbols(&of, out);
            base_symbols(&window, out);
        }
        None => {
            if !out.contains(s) {
                out.push(s.clone())
            }
        }
    }
}

/// The value of a dimension given the base symbols' values; an error says
/// which slice is out of range (or which symbol is unbound).
pub fn eval(d: &Dim, lookup: &dyn Fn(&str) -> Option<u64>) -> Result<u64, String> {
    let s = match d {
        Dim::Const(c) => return Ok(*c),
        Dim::Sym(s) => s,
    };
    match parse(s) {
        None => lookup(s).ok_or_else(|| format!("dimension `{s}` is not bound")),
        Some(Derived::Sum(terms)) => terms.iter().try_fold(0u64, |acc, t| {
            acc.checked_add(eval(t, lookup)?)
                .ok_or_else(|| format!("dimension `{s}` overflows"))
        }),
        Some(Derived::Slice {
            of,
            start,
            stop,
            step,
        }) => {
            let n = eval(&of, lookup)?;
            const_slice_len(n, start, stop, step).map_err(|e| {
                format!("{e} (the axis of size `{of}`, a slice that needs dimension `{s}`)")
            })
        }
        Some(Derived::Window {
            of,
            window,
            geometry,
        }) => Ok(geometry.count(eval(&of, lookup)?, eval(&window, lookup)?)),
    }
}

/// A derived dimension with its symbols resolved to indices once, so a
/// call evaluates it without parsing its name (`eval` is the same
/// arithmetic on names, and gives the error messages).
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    Const(u64),
    Sym(usize),
    Sum(Vec<Plan>),
    Slice {
        of: Box<Plan>,
        start: Bound,
        stop: Bound,
        step: u64,
    },
    Window {
        of: Box<Plan>,
        window: Box<Plan>,
        geometry: WindowGeometry,
    },
}

impl Plan {
    /// `d` resolved through `index` (a base symbol's position); `None` when
    /// a base symbol has none.
    pub fn new(d: &Dim, index: &dyn Fn(&str) -> Option<usize>) -> Option<Plan> {
        let s = match d {
            Dim::Const(c) => return Some(Plan::Const(*c)),
            Dim::Sym(s) => s,
        };
        Some(match parse(s) {
            None => Plan::Sym(index(s)?),
            Some(Derived::Sum(terms)) => Plan::Sum(
                terms
                    .iter()
                    .map(|t| Plan::new(t, index))
                    .collect::<Option<_>>()?,
            ),
            Some(Derived::Slice {
                of,
                start,
                stop,
                step,
            }) => Plan::Slice {
                of: Box::new(Plan::new(&of, index)?),
                start,
                stop,
                step,
            },
            Some(Derived::Window {
                of,
                window,
                geometry,
            }) => Plan::Window {
                of: Box::new(Plan::new(&of, index)?),
                window: Box::new(Plan::new(&window, index)?),
                geometry,
            },
        })
    }

    /// The value given each base symbol's (`None`: unbound); `None` also
    /// when a slice does not fit or a sum overflows, where `eval` says why.
    pub fn eval(&self, value: &dyn Fn(usize) -> Option<u64>) -> Option<u64> {
        match self {
            Plan::Const(c) => Some(*c),
            Plan::Sym(i) => value(*i),
            Plan::Sum(terms) => terms
                .iter()
                .try_fold(0u64, |acc, t| acc.checked_add(t.eval(value)?)),
            Plan::Slice {
                of,
                start,
                stop,
                step,
            } => const_slice_len(of.eval(value)?, *start, *stop, *step).ok(),
            Plan::Window {
                of,
                window,
                geometry,
            } => Some(geometry.count(of.eval(value)?, window.eval(value)?)),
        }
    }
}

/// Add the value of every derived symbol among `symbols` to `env`, which
/// binds the base symbols.
pub fn bind_derived<'a>(
    symbols: impl IntoIterator<Item = &'a str>,
    env: &mut BTreeMap<String, u64>,
) -> Result<(), String> {
    for s in symbols {
        if is_derived(s) && !env.contains_key(s) {
            let v = eval(&Dim::Sym(s.to_string()), &|b| env.get(b).copied())?;
            env.insert(s.to_string(), v);
        }
    }
    Ok(())
}

/// `d` with the symbol `from` replaced by `to`, inside derived definitions
/// too (re-put in canonical form).
pub fn rename(d: &Dim, from: &str, to: &Dim) -> Dim {
    let Dim::Sym(s) = d else { return d.clone() };
    if s == from {
        return to.clone();
    }
    match parse(s) {
        None => d.clone(),
        Some(Derived::Sum(terms)) => {
            let terms: Vec<Dim> = terms.iter().map(|t| rename(t, from, to)).collect();
            sum(&terms)
        }
        Some(Derived::Window {
            of,
            window,
            geometry,
        }) => window_len(&rename(&of, from, to), &rename(&window, from, to), geometry),
        Some(Derived::Slice {
            of,
            start,
            stop,
            step,
        }) => {
            let of = rename(&of, from, to);
            // A constant axis gives a constant length (in range: the
            // renamed definition was).
            slice_len(&of, start, stop, step).unwrap_or_else(|_| {
                derived(Derived::Slice {
                    of,
                    start,
                    stop,
                    step,
                })
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(s: &str) -> Dim {
        Dim::sym(s)
    }

    fn drop_end(d: &Dim, k: u64) -> Dim {
        slice_len(d, Bound::Start(0), Bound::End(k), 1).unwrap()
    }

    #[test]
    fn sums_of_slices_have_one_normal_form() {
        let n = sym("n");
        // `x[1..]` then `x[..1]`: n − 1 + 1 = n, in either order and with
        // the one-element slice written as a range of a symbolic axis.
        let head = slice_len(&n, Bound::Start(0), Bound::Start(1), 1).unwrap();
        assert_eq!(sum(&[drop_end(&n, 1), Dim::Const(1)]), n);
        assert_eq!(sum(&[head.clone(), drop_end(&n, 1)]), n);
        assert_eq!(sum(&[drop_end(&n, 1), head]), n);
        // (n − 2) + (m − 1) + 3 = m + n.
        let m = sym("m");
        assert_eq!(
            sum(&[drop_end(&n, 2), drop_end(&m, 1), Dim::Const(3)]),
            sum(&[m.clone(), n.clone()])
        );
        // A slice alone stays itself; n − 3 + 1 is the slice of n by 2.
        assert_eq!(sum(&[drop_end(&n, 3)]), drop_end(&n, 3));
        assert_eq!(sum(&[drop_end(&n, 3), Dim::Const(1)]), drop_end(&n, 2));
        // Associative: nested sums flatten to the same name.
        let inner = sum(&[drop_end(&n, 1), m.clone()]);
        assert_eq!(sum(&[inner, Dim::Const(1)]), sum(&[m.clone(), n.clone()]));
    }

    #[test]
    fn a_remaining_negative_is_checked_against_the_whole_sum() {
        // (a+b) − 3 is defined whenever a + b ≥ 3, even with a = 1.
        let (a, b) = (sym("a"), sym("b"));
        let d = sum(&[drop_end(&sum(&[a.clone(), b.clone()]), 3)]);
        let env = |s: &str| match s {
            "a" => Some(1),
            "b" => Some(5),
            _ => None,
        };
        assert_eq!(eval(&d, &env), Ok(3));
        assert_eq!(eval(&sum(&[d, Dim::Const(3)]), &env), Ok(6));
    }
}
