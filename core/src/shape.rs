//! Shapes whose dimensions are constants or named symbols, and products of
//! dimensions (`Size`) used for element counts and strides.

pub mod derived;

use std::collections::BTreeMap;
use std::fmt;

/// One dimension: a constant, or a symbol bound when the function is called.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Dim {
    Const(u64),
    Sym(String),
}

impl Dim {
    pub fn sym(name: &str) -> Dim {
        Dim::Sym(name.to_string())
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Const(c) => write!(f, "{c}"),
            Dim::Sym(s) => f.write_str(s),
        }
    }
}

/// A tensor shape; the empty shape is a scalar.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Shape(pub Vec<Dim>);

impl Shape {
    pub fn scalar() -> Shape {
        Shape(Vec::new())
    }
    pub fn vector(d: Dim) -> Shape {
        Shape(vec![d])
    }
    pub fn rank(&self) -> usize {
        self.0.len()
    }
    pub fn is_scalar(&self) -> bool {
        self.0.is_empty()
    }
    /// Number of elements, as a product of dimensions.
    pub fn numel(&self) -> Size {
        self.0
            .iter()
            .fold(Size::one(), |acc, d| acc.mul(&Size::of(d)))
    }
    /// Row-major strides, one per axis.
    pub fn strides(&self) -> Vec<Size> {
        let mut out = vec![Size::one(); self.rank()];
        let mut acc = Size::one();
        for i in (0..self.rank()).rev() {
            out[i] = acc.clone();
            acc = acc.mul(&Size::of(&self.0[i]));
        }
        out
    }
    /// Every symbol named in this shape.
    pub fn symbols(&self) -> impl Iterator<Item = &str> {
        self.0.iter().filter_map(|d| match d {
            Dim::Sym(s) => Some(s.as_str()),
            Dim::Const(_) => None,
        })
    }
    /// Concrete dimensions under a binding of the symbols.
    pub fn concrete(&self, env: &BTreeMap<String, u64>) -> Result<Vec<usize>, String> {
        self.0
            .iter()
            .map(|d| match d {
                Dim::Const(c) => Ok(*c as usize),
                Dim::Sym(s) => env
                    .get(s)
                    .map(|v| *v as usize)
                    .ok_or_else(|| format!("dimension `{s}` is not bound")),
            })
            .collect()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// A product of a constant and symbols: an element count or a stride.
/// `factor == 0` is the zero size (a broadcast stride).
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Size {
    pub factor: u64,
    /// Sorted, with repetition.
    pub syms: Vec<String>,
}

impl Size {
    pub fn zero() -> Size {
        Size {
            factor: 0,
            syms: Vec::new(),
        }
    }
    pub fn one() -> Size {
        Size::constant(1)
    }
    pub fn constant(c: u64) -> Size {
        Size {
            factor: c,
            syms: Vec::new(),
        }
    }
    pub fn of(d: &Dim) -> Size {
        match d {
            Dim::Const(c) => Size::constant(*c),
            Dim::Sym(s) => Size {
                factor: 1,
                syms: vec![s.clone()],
            },
        }
    }
    pub fn is_zero(&self) -> bool {
        self.factor == 0
    }
    pub fn is_one(&self) -> bool {
        self.factor == 1 && self.syms.is_empty()
    }
    pub fn mul(&self, other: &Size) -> Size {
        if self.is_zero() || other.is_zero() {
            return Size::zero();
        }
        let mut syms = self.syms.clone();
        syms.extend(other.syms.iter().cloned());
        syms.sort();
        Size {
            factor: self.factor * other.factor,
            syms,
        }
    }
    /// Value under a binding given as a lookup by symbol name.
    pub fn eval(&self, lookup: impl Fn(&str) -> u64) -> u64 {
        if self.is_zero() {
            return 0;
        }
        self.syms.iter().fold(self.factor, |acc, s| acc * lookup(s))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.syms.is_empty() || self.factor != 1 {
            write!(f, "{}", self.factor)?;
            if !self.syms.is_empty() {
                f.write_str("*")?;
            }
        }
        f.write_str(&self.syms.join("*"))
    }
}
