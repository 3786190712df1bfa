//! One transform with its arguments, as a value: what an attribute asks for
//! (`#[grad(wrt = x)]` is `Step::Grad([0])`), applied by `Step::apply`, with
//! a text form. The macros apply steps to build each generated function;
//! the runtime applies the same steps again to a specialized copy of the
//! original function (see `broadcast::size_one_params`), so that a program
//! derived at run time is the one the macros would have derived.

use super::{hessian, jacfwd, jacrev, jvp_wrt, simplify, value_and_grad, vjp_wrt, vmap_axes};
use crate::ir::Function;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// `jax.grad`, with respect to the parameters at these indices.
    Grad(Vec<usize>),
    ValueAndGrad(Vec<usize>),
    Jvp(Vec<usize>),
    Vjp(Vec<usize>),
    /// `jax.vmap(in_axes, out_axes, axis_name)`, over every parameter and
    /// result.
    Vmap {
        in_axes: Vec<Option<usize>>,
        out_axes: Vec<Option<usize>>,
        axis_name: Option<String>,
    },
    /// `jax.pmap(axis_name, in_axes, out_axes)` (see `transforms::pmap`).
    Pmap {
        axis_name: String,
        in_axes: Vec<Option<usize>>,
        out_axes: Vec<Option<usize>>,
    },
    Jacfwd(usize),
    Jacrev(usize),
    Hessian(usize),
}

impl Step {
    /// The transformed function, simplified.
    pub fn apply(&self, f: &Function) -> Result<Function, String> {
        let g = match self {
            Step::Grad(wrt) => super::grad(f, wrt)?,
            Step::ValueAndGrad(wrt) => value_and_grad(f, wrt)?,
            Step::Jvp(wrt) => jvp_wrt(f, wrt),
            Step::Vjp(wrt) => vjp_wrt(f, wrt),
            Step::Vmap {
                in_axes,
                out_axes,
                axis_name: None,
            } => vmap_axes(f, in_axes, out_axes)?,
            Step::Vmap {
                in_axes,
                out_axes,
                axis_name: Some(name),
            } => super::vmap::vmap_named(f, in_axes, out_axes, name)?,
            Step::Pmap {
                axis_name,
                in_axes,
                out_axes,
            } => super::pmap::pmap(f, axis_name, in_axes, out_axes)?,
            Step::Jacfwd(i) => jacfwd(f, *i)?,
            Step::Jacrev(i) => jacrev(f, *i)?,
            Step::Hessian(i) => hessian(f, *i)?,
        };
        Ok(simplify(&g))
    }

    /// `steps` applied in order to `f`, the result renamed `name`.
    pub fn apply_all(steps: &[Step], f: &Function, name: &str) -> Result<Function, String> {
        let mut g = f.clone();
        for s in steps {
            g = s.apply(&g)?;
        }
        g.name = name.to_string();
        Ok(g)
    }

    /// Parse the text of `Display` for a list of steps (`;`-separated).
    pub fn parse_all(text: &str) -> Result<Vec<Step>, String> {
        text.split(';')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Step::parse)
            .collect()
    }

    /// The text of a list of steps, read back by `parse_all`.
    pub fn print_all(steps: &[Step]) -> String {
        let parts: Vec<String> = steps.iter().map(Step::to_string).collect();
        parts.join("; ")
    }

    fn parse(text: &str) -> Result<Step, String> {
        let bad = || format!("not a transform step: `{text}`");
        let (kind, rest) = text.split_once('[').ok_or_else(bad)?;
        let rest = rest.strip_suffix(']').ok_or_else(bad)?;
        let indices = |s: &str| -> Result<Vec<usize>, String> {
            s.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| t.parse().map_err(|_| bad()))
                .collect()
        };
        let axes = |s: &str| -> Result<Vec<Option<usize>>, String> {
            s.split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| match t {
                    "-" => Ok(None),
                    _ => t.parse().map(Some).map_err(|_| bad()),
                })
                .collect()
        };
        let one = |s: &str| -> Result<usize, String> { s.trim().parse().map_err(|_| bad()) };
        Ok(match kind.trim() {
            "grad" => Step::Grad(indices(rest)?),
            "value_and_grad" => Step::ValueAndGrad(indices(rest)?),
            "jvp" => Step::Jvp(indices(rest)?),
            "vjp" => Step::Vjp(indices(rest)?),
            "vmap" => {
                let parts: Vec<&str> = rest.split("][").collect();
                match parts[..] {
                    [i, o] | [i, o, _] => Step::Vmap {
                        in_axes: axes(i)?,
                        out_axes: axes(o)?,
                        axis_name: parts.get(2).map(|n| n.to_string()),
                    },
                    _ => return Err(bad()),
                }
            }
            "pmap" => {
                let parts: Vec<&str> = rest.split("][").collect();
                let [n, i, o] = parts[..] else {
                    return Err(bad());
                };
                Step::Pmap {
                    axis_name: n.to_string(),
                    in_axes: axes(i)?,
                    out_axes: axes(o)?,
                }
            }
            "jacfwd" => Step::Jacfwd(one(rest)?),
            "jacrev" => Step::Jacrev(one(rest)?),
            "hessian" => Step::Hessian(one(rest)?),
            _ => return Err(bad()),
        })
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |xs: &[usize]| {
            xs.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let axes = |xs: &[Option<usize>]| {
            xs.iter()
                .map(|a| a.map_or("-".to_string(), |a| a.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        };
        match self {
            Step::Grad(w) => write!(f, "grad[{}]", list(w)),
            Step::ValueAndGrad(w) => write!(f, "value_and_grad[{}]", list(w)),
            Step::Jvp(w) => write!(f, "jvp[{}]", list(w)),
            Step::Vjp(w) => write!(f, "vjp[{}]", list(w)),
            Step::Vmap {
                in_axes,
                out_axes,
                axis_name,
            } => {
                write!(f, "vmap[{}][{}]", axes(in_axes), axes(out_axes))?;
                match axis_name {
                    Some(n) => write!(f, "[{n}]"),
                    None => Ok(()),
                }
            }
            Step::Pmap {
                axis_name,
                in_axes,
                out_axes,
            } => write!(
                f,
                "pmap[{axis_name}][{}][{}]",
                axes(in_axes),
                axes(out_axes)
            ),
            Step::Jacfwd(i) => write!(f, "jacfwd[{i}]"),
            Step::Jacrev(i) => write!(f, "jacrev[{i}]"),
            Step::Hessian(i) => write!(f, "hessian[{i}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_back_from_their_text() {
        let steps = vec![
            Step::Grad(vec![0, 2]),
            Step::ValueAndGrad(vec![1]),
            Step::Jvp(vec![]),
            Step::Vjp(vec![0]),
            Step::Vmap {
                in_axes: vec![Some(0), None, Some(2)],
                out_axes: vec![Some(1)],
                axis_name: None,
            },
            Step::Vmap {
                in_axes: vec![Some(1)],
                out_axes: vec![None],
                axis_name: Some("j".into()),
            },
            Step::Pmap {
                axis_name: "i".into(),
                in_axes: vec![Some(0), None],
                out_axes: vec![Some(0), None],
            },
            Step::Jacfwd(0),
            Step::Jacrev(3),
            Step::Hessian(1),
        ];
        let text = Step::print_all(&steps);
        assert_eq!(Step::parse_all(&text).unwrap(), steps, "{text}");
        assert!(Step::parse_all("grad[x]").is_err());
        assert!(Step::parse_all("spin[0]").is_err());
        assert_eq!(Step::parse_all("").unwrap(), vec![]);
    }
}
